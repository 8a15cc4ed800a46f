"""``pglab capture``: a window of a server's workload kept as a workload file, from a running
server (its logging set for the window and put back) or from a log the user has."""

from __future__ import annotations

import argparse
import time
from datetime import datetime
from pathlib import Path

from pglab.campaign.spec import ServerSpec
from pglab.cli import commands
from pglab.cli.common import Where, console, err_console
from pglab.errors import LabError
from pglab.hosts.ssh import Remote
from pglab.lab import Lab
from pglab.postgres.sources import resolve
from pglab.run.resume import put_back_leftovers
from pglab.units import duration_text
from pglab.workloads import captured as capture
from pglab.workloads.captured import Workload, write


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "capture",
        parents=[common],
        help=commands.help_of("capture"),
        description=capture.HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dsn", nargs="?", help="the server (a superuser's connection string)")
    p.add_argument(
        "--from-log", metavar="FILE", type=Path, help="read a log you have instead of capturing"
    )
    p.add_argument(
        "--for",
        dest="duration",
        metavar="DURATION",
        help="the window: 90s, 10m, 1h (else --until or Ctrl-C)",
    )
    p.add_argument("--until", metavar="TIME", help="close the window at this time (HH:MM[:SS])")
    p.add_argument(
        "--log",
        metavar="PATH",
        type=Path,
        help="the server's stderr log here (no logging collector)",
    )
    p.add_argument(
        "--on",
        metavar="HOST",
        help="the server runs on this [hosts.HOST] (of --hosts FILE): --log is the path "
        "there, read over SSH",
    )
    p.add_argument(
        "--hosts",
        metavar="FILE",
        type=Path,
        help="a TOML file with [hosts.HOST] tables (a campaign file will do), for --on",
    )
    p.add_argument(
        "--with-dump",
        metavar="DIR",
        type=Path,
        help="pg_dump -Fd the DSN's database as the window opens, into DIR",
    )
    p.add_argument(
        "--dump",
        metavar="DIR",
        type=Path,
        help="with --from-log: a pg_dump -Fd of the data at its start",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        type=Path,
        help="the workload file (default workload-DATE-TIME.json.gz)",
    )
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a),
            a.dsn,
            from_log=a.from_log,
            duration=a.duration,
            until=a.until,
            log=a.log,
            output=a.output,
            with_dump=a.with_dump,
            dump=a.dump,
            on=a.on,
            hosts=a.hosts,
        )
    )


def run(
    where: Where,
    dsn: str | None,
    from_log: Path | None = None,
    duration: str | None = None,
    until: str | None = None,
    log: Path | None = None,
    output: Path | None = None,
    with_dump: Path | None = None,
    dump: Path | None = None,
    on: str | None = None,
    hosts: Path | None = None,
) -> int:
    lab = Lab.open(where.home)
    for line in put_back_leftovers(lab):
        err_console.print(line, markup=False, soft_wrap=True)
    out = output or Path(f"workload-{datetime.now():%Y%m%d-%H%M%S}.json.gz")
    if (from_log is None) == (dsn is None):
        raise LabError(
            "give a server's DSN to capture from, or --from-log FILE",
            hint="pglab capture 'host=db1 user=postgres' --for 10m",
        )
    if (dump is not None and from_log is None) or (with_dump is not None and dsn is None):
        raise LabError("--dump goes with --from-log, --with-dump with a DSN")
    binaries = resolve(ServerSpec(), lab) if dump or with_dump else None  # pg_dump, pg_restore
    if from_log is not None:
        workload = capture.from_log(from_log, dump, binaries)
    else:
        assert dsn is not None
        seconds = capture.window_seconds(duration, until)
        remote = _remote(on, hosts, log)
        try:
            workload = _live(
                capture.Live(
                    ServerSpec(dsn=dsn),
                    lab,
                    capture.RemoteLog(remote, str(log)) if remote is not None else log,
                    on_status=_status,
                    dump_to=with_dump,
                    binaries=binaries,
                ),
                seconds,
            )
        finally:
            if remote is not None:
                remote.close()
    written = write(workload, out)
    _said(written, out)
    return 0


def _remote(on: str | None, hosts: Path | None, log: Path | None) -> Remote | None:
    """The server's host over SSH (``--on``), connected; None when it runs here."""
    if on is None:
        if hosts is not None:
            raise LabError("--hosts goes with --on HOST")
        return None
    if hosts is None or log is None:
        raise LabError(
            "--on HOST needs --hosts FILE (where [hosts.HOST] is) and --log PATH (the "
            "server's stderr log on that host)",
            hint="pglab capture DSN --on db1 --hosts campaign.toml --log /var/log/pg.log",
        )
    spec = capture.host_of(hosts, on)
    _status(f"reading the server's log {log} on {spec.label} over SSH")
    return Remote(spec).open()


def _status(msg: str) -> None:
    err_console.print(msg, markup=False, soft_wrap=True)


def _live(live: capture.Live, seconds: float | None) -> Workload:
    status = _status
    with live:
        said = duration_text(seconds) if seconds is not None else "until Ctrl-C"
        status(f"capturing {live.server.where}: window open ({said})")
        t0 = time.monotonic()
        try:
            while seconds is None or time.monotonic() - t0 < seconds:
                time.sleep(min(1.0, seconds - (time.monotonic() - t0)) if seconds else 1.0)
        except KeyboardInterrupt as exc:
            if type(exc) is not KeyboardInterrupt:  # SIGTERM: abandon, settings put back
                raise
            status("Ctrl-C: the window closes now")
        workload = live.close()
        status(f"window closed after {duration_text(time.monotonic() - t0)}; settings put back")
    return workload


def _said(workload: Workload, path: Path) -> None:
    d = workload.data
    s = d["summary"]
    console.print(
        f"workload written to {path} (mode 0600: it holds your data's values, as the "
        "server's log did)",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"{duration_text(d['duration_s'])} captured: {s['sessions']:,} sessions, "
        f"{s['statements']:,} statements, {s['errors']:,} errors; databases "
        f"{', '.join(d['databases'])}; users {', '.join(d['users'])}",
        markup=False,
        soft_wrap=True,
    )
    kinds = ", ".join(f"{k} {n:,}" for k, n in s["by_kind"].items())
    console.print(f"by kind: {kinds}", markup=False, soft_wrap=True)
    if d["dump"]:
        console.print(
            f"the data at the window's start: {d['dump']} (pg_dump -Fd, mode 0700)",
            markup=False,
            soft_wrap=True,
        )
    if s["before_window"]:
        console.print(
            f"{s['before_window']} session(s) connected before the window: not replayed",
            markup=False,
            soft_wrap=True,
        )
    console.print("busiest statements:", markup=False)
    for c in s["busiest"][:5]:
        console.print(f"  {c['count']:>8,}  {c['statement'][:100]}", markup=False)
