"""Where perf's files go: its build ids beside the recording in the lab (never ``~/.debug``),
removed with it, and by the sweep of a dead pglab's files; a recording kept for later folding
is folded once."""

from __future__ import annotations

from pathlib import Path

import psutil

from pglab.campaign.spec import ProfileSpec
from pglab.lab import Lab
from pglab.profile import perf
from pglab.profile.watch import ProfileWatch, sweep_leftovers


def test_perf_keeps_its_build_ids_beside_the_recording() -> None:
    data = Path("/lab/work/0000042-p/perf-main_1.data")
    assert perf.env_for(data) == {"PERF_BUILDID_DIR": "/lab/work/0000042-p/perf-main_1.debug"}
    assert "--no-buildid-cache" in perf.record_argv(data, 99)


def test_a_dead_pglab_s_build_ids_are_swept(tmp_path: Path) -> None:
    dead = next(pid for pid in range(4_194_000, 4_194_304) if not psutil.pid_exists(pid))
    work = tmp_path / "work" / f"{dead:07d}-point"
    (work / "perf-main_1.debug" / ".build-id").mkdir(parents=True)
    (work / "perf-main_1.data").write_bytes(b"x")
    mine = tmp_path / "work" / f"{psutil.Process().pid:07d}-point"
    (mine / "perf-main_1.debug").mkdir(parents=True)
    said = sweep_leftovers(Lab(home=tmp_path, run_as=None))
    assert said == ["removed 2 perf file(s) of a dead pglab"]
    assert not list(work.iterdir())
    assert (mine / "perf-main_1.debug").is_dir()  # a live pglab's: kept


def test_folding_later_without_a_recording_does_nothing(tmp_path: Path) -> None:
    class NoServer:  # never asked: profiling is off
        pass

    prof = ProfileWatch(NoServer(), ProfileSpec(), tmp_path, "main-1", later=True)  # type: ignore[arg-type]
    with prof:
        pass
    assert not prof.pending
    prof.fold()
    assert prof.tables == {} and prof.seconds == 0.0 and prof.folding == 0.0
