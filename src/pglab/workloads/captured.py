"""A server's workload captured (``pglab capture``), as the kind that replays it keeps it: what
the command uses of ``workloads/replay`` (the window, from a live server or from a log the user
has; the workload file written) and what its ``--help`` says of it (``HELP``)."""

from __future__ import annotations

from pglab.workloads.replay.capture import Live, RemoteLog, from_log, host_of, window_seconds
from pglab.workloads.replay.workload_file import Workload, write

__all__ = [
    "HELP",
    "Live",
    "RemoteLog",
    "Workload",
    "from_log",
    "host_of",
    "window_seconds",
    "write",
]

HELP = """\
Capture a window of a server's workload into a workload file that a campaign replays
([workload] replay = "FILE", by Debian's pgreplay) against every variant.

From a running server (DSN, as a superuser): pglab sets the logging a replay needs with
ALTER SYSTEM and a reload (log_statement = 'all', log_connections, log_disconnections,
log_min_error_statement = 'log', log_line_prefix = '%m|%u|%d|%c|', lc_messages = 'C'),
written down first and put back exactly when the window closes (--for, --until or Ctrl-C;
after a killed pglab, by the next pglab capture or run), and reads the server's log of the
window: --log PATH (its stderr on this machine; with --on HOST, on that [hosts.HOST] of
--hosts FILE, read over SSH), else the logging collector's file through the server.
Sessions already connected when the window opens are not replayed.

From a log you have (--from-log FILE): a stderr log written with those settings, or a CSV
log (log_destination = 'csvlog'; its prefix does not matter).

Logging every statement costs the server (see the guide), and the log and the workload file
hold your data's values: the file is written readable by you only (0600)."""
