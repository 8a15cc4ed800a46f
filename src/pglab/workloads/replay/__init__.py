"""A captured workload and its replay, as a workload (``[workload] replay``): a server's
statement log read into sessions (``logfile``), kept as a versioned workload file
(``workload_file``), its statements grouped in classes (``classes``), captured from a live
server with logging set and put back (``capture``), with the data's dump (``dump``); replayed
by pgreplay (``pgreplay``: the log it reads, its statistics) on a server with its figures and
divergence (``engine``), as a campaign's phase (``phase``, run by ``runner.Replay``), its run
figures in ``metrics``. The dump is restored by ``load``."""

from __future__ import annotations

# what `pglab compare --help` says of two points' statement classes
COMPARE_HELP = """\
Two points that replay a captured workload ([workload] replay): their statements' total
execution time and each statement class's mean time per call, judged as above (Δ% of time: +
slower), the classes significantly slower and faster named, the most first.
"""

# its lines among `pglab --help`'s examples
EXAMPLES = """\
  pglab capture DSN --for 10m --with-dump DIR -o app.json.gz
                                     your server's workload (and data) captured; replay
                                     it on every variant: [workload] replay = "app.json.gz"
"""
