"""The load generators a phase may run, and sysbench's tests."""

from __future__ import annotations

GENERATORS = ("pgbench", "sysbench")  # the load generator a phase runs
# sysbench 1.0's OLTP tests (/usr/share/sysbench/*.lua) a phase may run, on its sbtest tables
SYSBENCH_TESTS = (
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
)
