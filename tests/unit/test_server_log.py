"""What a failed run's error quotes from the server log (server.complaints, on log text)."""
# ruff: noqa: E501  (server log lines, as PostgreSQL writes them)

from __future__ import annotations

from pglab.postgres.server import complaints

LOG = """\
2026-11-23 09:00:00.001 UTC [100] LOG:  database system is ready to accept connections
2026-11-23 09:00:01.002 UTC [201] ERROR:  could not extend file "base/5/16390": No space left on device
2026-11-23 09:00:01.003 UTC [201] HINT:  Check free disk space.
2026-11-23 09:00:01.004 UTC [202] ERROR:  could not extend file "base/5/16390": No space left on device
2026-11-23 09:00:01.005 UTC [203] ERROR:  could not extend file "base/5/16390": No space left on device
2026-11-23 09:00:01.006 UTC [204] FATAL:  terminating connection due to unexpected postmaster exit
2026-11-23 09:00:02.007 UTC [100] PANIC:  could not write to file "pg_wal/xlogtemp.100": No space left on device
"""


def test_the_same_message_from_many_backends_is_quoted_once_with_its_count() -> None:
    said = complaints(LOG).splitlines()
    assert said == [
        '2026-11-23 09:00:01.005 UTC [203] ERROR:  could not extend file "base/5/16390": '
        "No space left on device  (3 times)",
        '2026-11-23 09:00:02.007 UTC [100] PANIC:  could not write to file "pg_wal/xlogtemp.100": '
        "No space left on device",
    ]


def test_only_the_last_messages_are_kept() -> None:
    log = "".join(f"2026-11-23 09:00:00.000 UTC [{i}] ERROR:  relation t{i} does not exist\n"
                  for i in range(8))  # fmt: skip
    said = complaints(log, limit=5).splitlines()
    assert [line.split("relation ")[1] for line in said] == [
        f"t{i} does not exist" for i in range(3, 8)
    ]
    assert complaints("2026-11-23 LOG:  checkpoint starting: time\n") == ""
