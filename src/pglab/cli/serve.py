"""``pglab serve``: the results store in a browser (read-only), until Ctrl-C."""

from __future__ import annotations

import argparse
import contextlib
import errno
import socket
from pathlib import Path

from pglab.cli import commands
from pglab.cli.common import Where, console
from pglab.errors import LabError
from pglab.store import mask_url, peek_store

DESCRIPTION = """\
Serve the results store as web pages, read-only, until Ctrl-C:

  /campaigns          every campaign, searched by name and filtered by PostgreSQL version,
                      host and the date of its last run
  /campaigns/NAME     its points (median, CI, Δ%, verdicts), warnings and charts: the report's
                      page, drawn by the same code
  /runs/ID            a run: every per-second series, its telemetry, its CPU profile
  /compare?a=A&b=B    two runs, points or campaigns picked in the page, with the figures of
                      `pglab compare`; the URL can be shared
  /history/NAME       the executions of NAME (pglab run --execution) as a series per
                      point with its change points, as `pglab history` says
  /fleet              the fleet's jobs (queued, running where, finished) and its workers'
                      last heartbeats (a PostgreSQL store)
  /live               the campaigns `pglab run` is running in this lab (--lab-dir), updated
                      every second

It listens on 127.0.0.1 only, unless given a token: on any other address it refuses to start
without one, and then answers 401 to any request that does not carry it (open the address with
?token=TOKEN once: the browser keeps it as a cookie). Nothing is fetched from the internet
(plotly.js is served from pglab's own copy); no stored password is shown."""


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "serve",
        parents=[common],
        help=commands.help_of("serve"),
        description=DESCRIPTION,
        epilog="examples:\n"
        "  pglab serve                              http://127.0.0.1:8765/\n"
        "  pglab serve --store postgresql://lab@db/pglab --port 9000\n"
        "  pglab serve --host 0.0.0.0 --token-file ~/.pglab-token\n"
        "                                           the lab's address, with a token",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; any other needs a token)",
    )
    p.add_argument("--port", type=int, default=8765, help="the port (default 8765)")
    p.add_argument(
        "--token", help="the token every request must carry (visible in ps: prefer --token-file)"
    )
    p.add_argument(
        "--token-file", type=Path, metavar="FILE", help="a file whose first line is the token"
    )
    p.set_defaults(func=lambda a: run(Where.from_args(a), a.host, a.port, a.token, a.token_file))


def run(
    where: Where,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    token_file: Path | None = None,
) -> int:
    from pglab import serve  # starlette, uvicorn: imported only when serving

    token = serve.read_token(token, token_file)
    serve.check_bind(host, token)
    shown = mask_url(where.store_url)
    store = peek_store(where.store_url)
    if store is None:
        raise LabError(
            f"no results store at {shown}: nothing to serve",
            hint="give the --store that `pglab run` wrote to (or PGLAB_STORE)",
        )
    store.close()
    _check_port(host, port)
    import uvicorn

    app = serve.make_app(where.store_url, where.home, token, host)
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    console.print(
        f"pglab serve: {url} (store {shown}, lab {where.home}); Ctrl-C stops it",
        markup=False,
        soft_wrap=True,
    )
    if token is not None:
        console.print(
            "every request needs the token: open the address with ?token=… once", markup=False
        )
    # uvicorn stops gracefully on Ctrl-C or SIGTERM, then raises the signal again: that is
    # the way to stop it (SIGTERM's Terminated too), not a failure
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    console.print("pglab serve stopped")
    return 0


def _check_port(host: str, port: int) -> None:
    """A clear error, before the server starts, when the address cannot be listened on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be used: {exc}"
            raise LabError(
                f"{host}:{port} {why}", hint="give another --port, or stop what listens there"
            ) from None
