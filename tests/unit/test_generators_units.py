"""The pure parts of remote load generators: clients split, reports merged, progress merged
on one clock, the password file line, the remote command line, the hosts of a campaign file."""

from __future__ import annotations

import shlex

import pytest

from pglab.campaign import parse
from pglab.campaign.spec import PhaseSpec, Script
from pglab.errors import CampaignError
from pglab.hosts.ssh import WATCHER, Remote
from pglab.pgbench.generators import Generator, _Merger, merge_reports, passfile_line, split_clients
from pglab.records import PgbenchReport
from pglab.workloads.work import PgbenchWork


def test_clients_are_split_as_evenly_as_can_be() -> None:
    assert split_clients(4, 2) == [2, 2]
    assert split_clients(5, 3) == [2, 2, 1]
    assert split_clients(2, 2) == [1, 1]
    assert sum(split_clients(97, 4)) == 97


def test_merged_reports_sum_counts_and_pool_the_latency() -> None:
    a = PgbenchReport(tps=1000.0, transactions=10_000, failed=0, latency_avg_ms=2.0,
                      latency_stddev_ms=1.0, initial_connection_ms=3.0, clients=2, threads=2,
                      duration_s=10.0)  # fmt: skip
    b = PgbenchReport(tps=500.0, transactions=5_000, failed=2, latency_avg_ms=4.0,
                      latency_stddev_ms=2.0, initial_connection_ms=9.0, clients=2, threads=1,
                      duration_s=10.0)  # fmt: skip
    m = merge_reports([a, b])
    assert m.tps == 1500.0 and m.transactions == 15_000 and m.failed == 2
    assert m.clients == 4 and m.threads == 3 and m.initial_connection_ms == 9.0
    assert m.latency_avg_ms == pytest.approx((10_000 * 2 + 5_000 * 4) / 15_000)
    # the pooled standard deviation of all 15,000 transactions
    second = (10_000 * (1 + 4) + 5_000 * (4 + 16)) / 15_000
    assert m.latency_stddev_ms == pytest.approx((second - m.latency_avg_ms**2) ** 0.5)


class _Host:
    def __init__(self, name: str):
        self.spec = type("S", (), {"name": name})()


def _gen(name: str, offset: float) -> Generator:
    return Generator(remote=_Host(name), pgbench="pgbench", cpus=2, offset_s=offset)  # type: ignore[arg-type]


def test_progress_is_merged_on_pglab_s_clock_where_every_host_ran() -> None:
    seen = []
    merger = _Merger(["a", "b"], seen.append)
    a, b = merger.feeder(_gen("a", 0.0)), merger.feeder(_gen("b", 30.0))  # b is 30 s ahead
    a("progress: 1000.0 s, 100.0 tps, lat 1.000 ms stddev 0.100, 0 failed\n")
    a("progress: 1001.0 s, 110.0 tps, lat 1.000 ms stddev 0.100, 0 failed\n")
    b("progress: 1031.0 s, 50.0 tps, lat 3.000 ms stddev 0.100, 1 failed\n")  # = 1001 here
    b("pgbench: some other line\n")
    assert [(s.t, s.tps) for s in seen] == [(1001.0, 160.0)]
    merged = merger.merged(started=999.5)
    assert [(s.t, s.tps, s.failed) for s in merged] == [(1.5, 160.0, 1)]
    assert merged[0].latency_avg_ms == pytest.approx((110 * 1 + 50 * 3) / 160)


def test_the_password_file_line_escapes_what_libpq_reads() -> None:
    assert passfile_line("a:b\\c") == b"*:*:*:*:a\\:b\\\\c\n"


def test_the_remote_command_is_the_watcher_then_the_words_quoted() -> None:
    line = Remote.command(["pgbench", "-c", "2", "host=x options='-c a=b'"], {"PGSSLMODE": "y"})
    words = shlex.split(line)
    assert words[:3] == ["sh", "-c", WATCHER] and words[3] == "pglab-watch"
    assert words[4:] == ["env", "PGSSLMODE=y", "pgbench", "-c", "2", "host=x options='-c a=b'"]


def test_hosts_and_generators_in_a_campaign_file() -> None:
    doc = {
        "hosts": {"gen1": {"ssh": "root@10.0.0.1", "port": 2222, "accept_new": True},
                  "gen2": {"ssh": "10.0.0.2", "bindir": "/opt/pg/bin"}},
        "workload": {"clients": 4, "generators": ["gen1", "gen2"]},
    }  # fmt: skip
    camp = parse.parse(doc, "t")
    assert [h.label for h in camp.hosts] == ["gen1 (root@10.0.0.1:2222)", "gen2 (10.0.0.2)"]
    (phase,) = camp.variants[0].phases
    assert phase.generators == ("gen1", "gen2") and phase.remote
    local = parse.parse({"workload": {"generators": "local"}}, "t")
    assert local.variants[0].phases[0].generators == ()  # "local" is the default, same key


@pytest.mark.parametrize(
    ("doc", "said"),
    [
        ({"workload": {"generators": ["gen9"]}}, 'generator "gen9" is not a [hosts.NAME]'),
        ({"hosts": {"g": {"ssh": "a@b@c"}}}, 'expected "user@host"'),
        ({"hosts": {"g": {"ssh": "h", "port": 70000}}}, "port = 70000"),
        ({"hosts": {"g": {"ssh": "h", "identity": "key"}}}, "expected an absolute path"),
        ({"hosts": {"local": {"ssh": "h"}}}, "give the host another name"),
        ({"hosts": {"g": {"ssh": "h"}}, "workload": {"generators": ["g", "g"]}}, "each once"),
        (
            {
                "hosts": {"a": {"ssh": "h"}, "b": {"ssh": "i"}},
                "workload": {"generators": ["a", "b"], "clients": 1},
            },
            "each needs one",
        ),
    ],
)
def test_bad_hosts_and_generators_are_named(doc: dict, said: str) -> None:
    with pytest.raises(CampaignError, match=".*" + said.replace("[", r"\[").replace("]", r"\]")):
        parse.parse(doc, "t")


def test_a_local_phase_keeps_the_point_key_it_had_before_generators() -> None:
    phase = PhaseSpec("main", PgbenchWork(scripts=(Script(builtin="tpcb-like"),)))
    from pglab.campaign.identity import phase_identity

    assert "generators" not in phase_identity(phase)


def test_a_loosely_measured_clock_offset_is_flagged() -> None:
    from types import SimpleNamespace

    from pglab.analysis.generator_hosts import warnings

    cols = ["host", "clients", "threads", "tps", "transactions", "failed", "latency_avg_ms",
            "clock_offset_ms", "clock_uncertainty_ms"]  # fmt: skip
    table = {"columns": cols, "rows": [["gen1", 2, 1, 1.0, 1, 0, 1.0, 3.0, 0.4],
                                       ["gen2", 2, 1, 1.0, 1, 0, 1.0, 30000.0, 250.0]]}  # fmt: skip
    ((kind, message),) = warnings([SimpleNamespace(idx=0)], {"0": {"generators": table}})  # type: ignore[list-item]
    assert kind == "clock" and "gen2 is known to ±250 ms" in message


def test_a_clock_that_moved_during_a_phase_is_flagged() -> None:
    """The offset measured after the phase against the one before: a drift beyond 100 ms plus
    the offset's uncertainty is said; within it, nothing."""
    from types import SimpleNamespace

    from pglab.analysis.generator_hosts import warnings

    cols = ["host", "clients", "threads", "tps", "transactions", "failed", "latency_avg_ms",
            "clock_offset_ms", "clock_uncertainty_ms", "clock_offset_after_ms",
            "clock_drift_ms"]  # fmt: skip
    table = {"columns": cols, "rows": [["gen1", 2, 1, 1.0, 1, 0, 1.0, 3.0, 0.4, 80.0, 77.0],
                                       ["gen2", 2, 1, 1.0, 1, 0, 1.0, 5.0, 0.5, -345.0, -350.0],
                                       ]}  # fmt: skip
    ((kind, message),) = warnings([SimpleNamespace(idx=0)], {"0": {"generators": table}})  # type: ignore[list-item]
    assert kind == "clock" and "gen2 moved by up to 350 ms" in message


def test_a_generator_that_used_the_cpus_it_could_is_client_bound() -> None:
    """pgbench's CPU against the CPUs it could use (its threads, the host's CPUs and cgroup
    quota): 19% of a core is all of a 0.2-CPU quota; 40% of two threads' two CPUs is not."""
    from types import SimpleNamespace

    from pglab.analysis.generator_hosts import warnings
    from pglab.pgbench.generators import cpu_load

    rows = [[1.0, "gen1", 12.0, 19.0], [2.0, "gen1", 11.0, 19.4], [1.0, "gen2", 30.0, 40.0],
            [2.0, "gen2", 31.0, None]]  # fmt: skip
    assert cpu_load(rows, "gen1", 2, 0.2) == [11.5, 19.2, 1]
    assert cpu_load(rows, "gen2", 2, 2.0) == [30.5, 40.0, 0]
    assert cpu_load(rows, "gen3", 2, 2.0) == [None, None, None]  # no second came
    assert cpu_load(rows, "gen2", 1, 2.0)[2] == 0 and cpu_load(rows, "gen2", 1, 0.4)[2] == 1
    # a quota that held it back in most periods: bound, though sshd's share left pgbench 80%
    assert cpu_load(rows, "gen1", 2, 0.25, throttled_pct=96.0)[2] == 1
    assert cpu_load(rows, "gen1", 2, 0.25, throttled_pct=10.0)[2] == 0
    cols = ["host", "clock_uncertainty_ms", "cpus_available", "cpu_throttled_pct",
            "host_cpu_busy_pct", "pgbench_cpu_pct", "client_bound"]  # fmt: skip
    table = {"columns": cols, "rows": [["gen1", 0.3, 0.2, 97.0, 11.5, 19.2, 1],
                                       ["gen2", 0.3, 2.0, None, 30.5, 40.0, 0]]}  # fmt: skip
    ((kind, message),) = warnings([SimpleNamespace(idx=0)], {"0": {"generators": table}})  # type: ignore[list-item]
    assert kind == "client-bound"
    assert "pgbench on generator gen1 used 19% of a core" in message and "0.2 CPU(s)" in message
    assert "held it back in 97% of periods" in message


def test_cpu_limits_read_from_the_probe() -> None:
    from pglab.hosts.proc import CpuLimits, cpu_limits

    v1 = cpu_limits("2\nv1 10000 100000\nnr_periods 50\nnr_throttled 45\nthrottled_time 9\n")
    assert v1 == CpuLimits(0.1, 50, 45)
    assert v1.throttled_pct(CpuLimits(0.1, 10, 5)) == 100.0
    assert cpu_limits("2\nv1 -1 100000\nnr_periods 0\nnr_throttled 0\n").cpus == 2.0
    assert cpu_limits("4\nv2 150000 100000\nusage_usec 9\nnr_periods 3\n").cpus == 1.5
    assert cpu_limits("4\nv2 max 100000\n").cpus == 4.0
    assert cpu_limits("8\n") == CpuLimits(8.0)
    assert CpuLimits(8.0).throttled_pct(CpuLimits(8.0)) is None


def test_merged_reports_merge_each_script_and_statement() -> None:
    from pathlib import Path

    from pglab.pgbench.output import parse_report

    data = Path(__file__).resolve().parents[1] / "data" / "pgbench"
    a, b = (parse_report((data / f"pg{v}_multi_failures_detailed.stdout").read_text())
            for v in (16, 18))  # fmt: skip
    m = merge_reports([a, b])
    assert [s.name for s in m.scripts] == [s.name for s in a.scripts] and len(m.scripts) == 2
    for merged, sa, sb in zip(m.scripts, a.scripts, b.scripts, strict=True):
        assert merged.transactions == sa.transactions + sb.transactions
        assert merged.tps == pytest.approx((sa.tps or 0) + (sb.tps or 0))
        assert (merged.failed, merged.retries) == (
            (sa.failed or 0) + (sb.failed or 0),
            (sa.retries or 0) + (sb.retries or 0),
        )
        n = sa.transactions + sb.transactions
        assert merged.latency_avg_ms == pytest.approx(
            (sa.transactions * (sa.latency_avg_ms or 0) + sb.transactions
             * (sb.latency_avg_ms or 0)) / n)  # fmt: skip
        assert merged.share_pct == round(100 * merged.counted / sum(
            s.counted for s in m.scripts), 1)  # fmt: skip
        first = merged.statements[1]
        assert first.command == sa.statements[1].command
        assert first.latency_ms == pytest.approx((sa.transactions * sa.statements[1].latency_ms
                                                  + sb.transactions * sb.statements[1].latency_ms)
                                                 / n)  # fmt: skip
        assert first.failures == (sa.statements[1].failures or 0) + (sb.statements[1].failures
                                                                     or 0)  # fmt: skip
    # hosts whose sections differ (never with pglab's one argv): left out rather than wrong
    one = parse_report((data / "pg18_multi_insert3_select1.stdout").read_text())
    assert merge_reports([a, one]).scripts == ()


def test_limits_on_a_generator_host_up_to_its_users_hard_limits() -> None:
    """[os] limits there: what the probe says of the host (run here for real, then as a host
    with lower hard limits and one without prlimit would say it)."""
    import subprocess

    from pglab.planning.preflight import LIMITS_PROBE, limit_problems

    here = subprocess.run(["sh", "-c", LIMITS_PROBE], capture_output=True, text=True, check=True)
    assert limit_problems("local", {"nofile": 64, "nproc": 64}, here.stdout) == []
    said = ("Max processes             100                  200                  processes\n"
            "Max open files            1024                 4096                 files\n"
            "/usr/bin/prlimit\n")  # fmt: skip
    assert limit_problems("gen1", {"nofile": 4096, "nproc": 200}, said) == []
    assert limit_problems("gen1", {"nofile": 4097, "nproc": 201}, said) == [
        "gen1: limits nproc = 201 is above the hard limit its user has there (200), which only "
        "root can raise",
        "gen1: limits nofile = 4097 is above the hard limit its user has there (4096), which "
        "only root can raise",
    ]
    unlimited = said.replace("200 ", "unlimited ")
    assert limit_problems("gen1", {"nproc": 10**6}, unlimited) == []
    assert limit_problems("gen2", {"nofile": 8}, said.replace("/usr/bin/prlimit", "none")) == [
        "gen2: prlimit is not installed (util-linux)"]  # fmt: skip


def test_a_hosts_os_facts_as_the_probe_says_them() -> None:
    """The probe run here for real (sh, the same files a host's are read from), and its text."""
    import subprocess
    from pathlib import Path

    from pglab.hosts import facts

    argv = ["sh", "-c", facts.OS_PROBE, "sh", *facts.os_probe_args(), "none=/no/such/file"]
    state = facts.os_state(subprocess.run(argv, capture_output=True, text=True).stdout)
    assert state["vm.swappiness"] == Path("/proc/sys/vm/swappiness").read_text().strip()
    assert "none" not in state and set(state) <= set(facts.OS_FILES)
    said = "transparent_hugepages\talways [madvise] never\nvm.dirty_bytes\t0\nbroken line\n"
    assert facts.os_state(said) == {"transparent_hugepages": "madvise", "vm.dirty_bytes": "0"}
