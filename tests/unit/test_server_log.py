"""What a failed run's error quotes from the server log (server.complaints, on log text)."""
# ruff: noqa: E501  (server log lines, as PostgreSQL writes them)

from __future__ import annotations

from pglab.postgres.server import complaints, start_hint

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


HUGE = """\
2026-11-29 09:09:38.136 UTC [6970] FATAL:  could not map anonymous shared memory: Cannot allocate memory
2026-11-29 09:09:38.136 UTC [6970] HINT:  This error usually means that PostgreSQL's request for a shared memory segment exceeded available memory, swap space, or huge pages. To reduce the request size (currently 157286400 bytes), reduce PostgreSQL's shared memory usage, perhaps by reducing "shared_buffers" or "max_connections".
"""


def test_a_server_without_its_huge_pages_is_told_who_took_them() -> None:
    # CI saw it: 103 pages reserved for the run, a server of the other worker's took 75
    meminfo = "MemTotal: 24000000 kB\nHugePages_Total:     103\nHugePages_Free:       28\n"
    assert start_hint(HUGE, meminfo) == (
        "28 of the 103 huge pages reserved (vm.nr_hugepages) were free when it asked for 150 MB: "
        "another process maps them (a PostgreSQL started meanwhile with the default "
        "huge_pages = try takes them), or the reservation is too small"
    )
    assert start_hint(HUGE, "HugePages_Total:       0\nHugePages_Free:        0\n") == (
        "huge_pages = on and the kernel has no huge pages (vm.nr_hugepages = 0) for 150 MB: "
        "reserve them with [os] huge_pages = true, or set huge_pages = try"
    )
    assert start_hint(LOG, meminfo).startswith("read the server log below")
