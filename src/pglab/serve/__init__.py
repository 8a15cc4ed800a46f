"""``pglab serve``: the results store in a browser, read-only.

``app.make_app`` builds the Starlette application: the campaigns (searched and filtered), each
campaign's and each run's page (the report's own template and charts, ``report.render`` with
``report.Served``), the compare picker (``analysis.compare``'s figures, at a URL one can
share), a campaign's executions as series with their change points (``history``), the fleet's
queue and workers, and the campaigns running now (the state ``pglab watch`` reads, polled by
the page). ``security`` keeps it safe: 127.0.0.1 unless a token is given, the token asked of
every request, nothing but escaped text from the store. ``views`` gathers what the list pages
show, ``rendering`` draws pages from the shared templates.
"""

from pglab.serve.app import make_app
from pglab.serve.security import check_bind, read_token

__all__ = ["check_bind", "make_app", "read_token"]
