"""``[workload] replay = "FILE"`` and ``speed`` parsed and planned: the workload file's dump
as the point's dataset (kit "replay", with its roles and databases), refused with why when
the file is missing, given with another load, has no dump or is of a newer pglab."""

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
