"""A captured workload's sessions split between generator hosts (``workload_file.split``):
disjoint, each session whole and in its order, balanced by statements; and pgreplay's
statistics of the hosts' replays merged as one replay's (``pgreplay.merged``): the slowest
host's time and lag, the sums of statements and errors."""

from __future__ import annotations

from pathlib import Path

from pglab.workloads.replay import pgreplay, workload_file

EXAMPLE = Path(__file__).parents[2] / "examples" / "replay" / "pgbench-simple-update.json.gz"
# pgreplay 1.2's statistics, as it printed them at the end of a replay (the tests' capture)
STATS = """\
Replay statistics
=================

Speed factor for replay: 1.000
Total run time: {run} seconds
Maximum lag behind schedule: {lag} seconds
Calls to the server: {calls}
Total number of connections: {conns}
Maximum number of concurrent connections: 2
Average number of concurrent connections: 1.496
Average session idle percentage: 86.553%
SQL statements executed: {statements}
({errors} or 0.074% of these completed with error)
Maximum number of concurrent SQL statements: 2
SQL statements per second: 584.393
Average SQL statement duration: {avg} seconds
Maximum SQL statement duration: {most} seconds
Statement duration histogram:
"""


def test_the_sessions_split_disjoint_whole_and_balanced() -> None:
    workload = workload_file.read(EXAMPLE)
    sizes = {s["id"]: len(s["entries"]) for s in workload.data["sessions"]}
    parts = workload_file.split(workload, 2)
    ids = [[s["id"] for s in p.data["sessions"]] for p in parts]
    assert sorted(ids[0] + ids[1]) == sorted(sizes)  # every session, once
    # the largest session alone; the others beside the second largest
    assert sorted(sum(sizes[i] for i in part) for part in ids) == sorted(
        [max(sizes.values()), sum(sizes.values()) - max(sizes.values())]
    )
    for part, names in zip(parts, ids, strict=True):
        assert part.data["summary"]["statements"] == sum(sizes[i] for i in names)
        assert part.data["summary"]["sessions"] == len(names)
        assert part.duration == workload.duration and part.start == workload.start
        # each session whole, as captured; the file's order kept within a part
        order = [s["id"] for s in workload.data["sessions"] if s["id"] in names]
        assert names == order
        for s in part.data["sessions"]:
            whole = next(w for w in workload.data["sessions"] if w["id"] == s["id"])
            assert s == whole
    # more hosts than sessions: the extra ones get none
    many = workload_file.split(workload, len(sizes) + 2)
    assert sorted(len(p.data["sessions"]) for p in many) == [0, 0] + [1] * len(sizes)


def test_the_hosts_statistics_merged_as_one_replay() -> None:
    one = pgreplay.statistics(STATS.format(run="2.412", lag=1, calls=800, conns=2,
                                           statements=700, errors=1, avg="0.000100",
                                           most="0.004000"))  # fmt: skip
    two = pgreplay.statistics(STATS.format(run="3.010", lag=2, calls=700, conns=2,
                                           statements=600, errors=0, avg="0.000200",
                                           most="0.002000"))  # fmt: skip
    assert one["run_seconds"] == 2.412 and one["statements"] == 700 and one["errors"] == 1
    merged = pgreplay.merged([one, two])
    assert merged["run_seconds"] == 3.010 and merged["max_lag_seconds"] == 2
    assert merged["statements"] == 1300 and merged["errors"] == 1 and merged["calls"] == 1500
    assert merged["connections"] == 4 and merged["statement_max_seconds"] == 0.004
    assert abs(merged["statement_avg_seconds"] - (0.0001 * 700 + 0.0002 * 600) / 1300) < 1e-12
