"""``[workload] replay = "FILE"`` and ``speed`` parsed and planned: the workload file's dump
as the point's dataset (kit "replay", with its roles and databases), refused with why when
the file is missing, given with another load, has no dump or is of a newer pglab; replayed
from generator hosts (no `clients` asked for them: a host needs a session, not a client) and
refused with more hosts than sessions, or on an existing server."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from helpers.campaign_text import parsed, refused

from pglab.errors import CampaignError, WorkloadError
from pglab.planning.plan import expand_points
from pglab.workloads.replay import capture, workload_file

LOG = Path(__file__).parents[1] / "data" / "replay" / "pg18-pgbench.log"


def workload(tmp_path: Path, dump: str | None = "/var/tmp/app-dump", **more: object) -> Path:
    data = {**capture.from_log(LOG).data, "dump": dump, **more}
    path = tmp_path / "w.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def test_a_replay_is_planned_on_its_dump(tmp_path: Path) -> None:
    path = workload(tmp_path)
    camp = parsed(f'[workload]\nreplay = "{path}"\nspeed = 2.5\n')
    (point,) = expand_points(camp)
    (phase,) = point.phases
    assert (
        phase.work.replay == str(path) and phase.work.speed == 2.5 and phase.pgbench.vacuum is False
    )
    assert phase.script_label == "replay w.json.gz ×2.5"
    # the window at that speed: what the plan estimates
    assert phase.duration == max(1, -(-capture.from_log(LOG).duration // 2.5))
    d = point.dataset
    assert (d.kit, d.dump, d.roles, d.databases) == ("replay", "/var/tmp/app-dump", ("admin",),
                                                     ("postgres",))  # fmt: skip
    assert d.identity()["dump"] == "/var/tmp/app-dump"  # another dump: another dataset


def test_a_replay_refused_with_why(tmp_path: Path) -> None:
    assert "no such workload file" in refused('[workload]\nreplay = "nowhere.json.gz"\n')
    path = workload(tmp_path)
    said = refused(f'[workload]\nreplay = "{path}"\nscript = "tpcb-like"\n')
    assert "replay with script: a phase replays a captured workload or runs a load" in said
    with pytest.raises(CampaignError, match="has no dump"):
        expand_points(parsed(f'[workload]\nreplay = "{workload(tmp_path, dump=None)}"\n'))
    newer = workload(tmp_path, version=workload_file.VERSION + 1)
    with pytest.raises(WorkloadError, match="format version 2"):
        expand_points(parsed(f'[workload]\nreplay = "{newer}"\n'))


def hosts(n: int) -> str:
    return "".join(f'[hosts.gen{i}]\nssh = "root@10.0.0.{i}"\n' for i in range(1, n + 1))


def test_a_replay_from_generator_hosts_needs_a_session_each(tmp_path: Path) -> None:
    path = workload(tmp_path)
    sessions = len(capture.from_log(LOG).data["sessions"])
    assert sessions == 3
    # as many hosts as sessions, with the phase's clients left at 1: a replay's concurrency is
    # its captured sessions, not clients (pgbench's phases keep their rule: tests/unit/
    # test_generators_units.py)
    gens = ", ".join(f'"gen{i}"' for i in range(1, sessions + 1))
    camp = parsed(f'[workload]\nreplay = "{path}"\ngenerators = [{gens}]\n' + hosts(sessions))
    (point,) = expand_points(camp)
    (phase,) = point.phases
    assert phase.clients == 1 and phase.remote and len(phase.generators) == sessions
    # one host more: refused when the plan reads the file, naming both numbers
    gens += f', "gen{sessions + 1}"'
    camp = parsed(f'[workload]\nreplay = "{path}"\ngenerators = [{gens}]\n' + hosts(4))
    with pytest.raises(CampaignError) as err:
        expand_points(camp)
    said = err.value.message
    assert "has 3 session(s) for 4 generator hosts (gen1, gen2, gen3, gen4)" in said, said
    assert "each host replays whole sessions" in said
    assert "at most 3 generator(s)" in str(err.value.hint)


def test_a_replay_on_an_existing_server_refused(tmp_path: Path) -> None:
    path = workload(tmp_path)
    camp = parsed(f'[server]\ndsn = "postgresql://app@db1/app"\n[workload]\nreplay = "{path}"\n')
    with pytest.raises(CampaignError, match="a replay on an existing server") as err:
        expand_points(camp)
    assert "[server] host" in str(err.value.hint)
