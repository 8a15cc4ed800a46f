"""What a campaign needs of the machine (``planning/capacity.py``), on plans with known numbers
and the real pg_settings catalogs of PostgreSQL 15 and 18: connections (the boundary, the raise
of a default max_connections, the refusal of one the campaign sets), disk, memory and time."""

from __future__ import annotations

import contextlib
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from pglab.campaign import cgroups
from pglab.campaign.parse import parse as parse_doc
from pglab.campaign.spec import DatasetSpec, TargetSpec
from pglab.errors import CampaignError
from pglab.lab import Lab
from pglab.planning import capacity
from pglab.planning.capacity import Copy, Limits, Place
from pglab.planning.plan import make_plan
from pglab.postgres import dataset as datasets
from pglab.postgres import settings
from pglab.postgres.settings import SettingDef
from pglab.postgres.sources import Binaries
from pglab.telemetry.watch import SESSION_SAMPLERS, PhaseWatch
from pglab.units import parse_duration as seconds_of

DATA = Path(__file__).resolve().parents[1] / "data"
MIB = 2**20
GIB = 2**30


@functools.cache
def catalog(version: str) -> dict[str, SettingDef]:
    rows = json.loads((DATA / f"pg_settings_{version}.json").read_text())
    return settings.catalog_from_rows(rows)


def parse(doc: dict[str, Any]):
    return parse_doc(doc, default_name="t")


def limits(**kw: Any) -> Limits:
    base: dict[str, Any] = dict(
        max_connections=100, max_connections_set=False, reserved=3, shared_buffers=128 * MIB,
        work_mem=4 * MIB, max_wal_size=GIB, version="18.6",
    )  # fmt: skip
    return Limits(**{**base, **kw})


def point(doc: dict[str, Any]):
    (pt,) = make_plan(parse(doc)).points
    return pt


# -- max_duration and --budget ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "seconds"),
    [(5400, 5400.0), (90.5, 90.5), ("90s", 90.0), ("30min", 1800.0), ("2h", 7200.0),
     ("1h30min", 5400.0), ("1h 30min", 5400.0), ("45", 45.0), ("1d", 86400.0), ("2H", 7200.0)],
)  # fmt: skip
def test_durations(given: Any, seconds: float) -> None:
    assert seconds_of(given) == seconds


@pytest.mark.parametrize("given", [0, -5, True, "0s", "2 hours", "h", "1.5.2h", "", "90x", [1]])
def test_not_durations(given: Any) -> None:
    assert seconds_of(given) is None


def test_max_duration_is_a_top_level_key_checked_with_the_rest() -> None:
    assert parse({"max_duration": "2h"}).max_duration_s == 7200.0
    assert parse({}).max_duration_s is None
    with pytest.raises(CampaignError) as err:
        parse({"max_duration": "two hours", "repeats": 0})
    assert "max_duration = 'two hours': expected seconds (5400) or a duration" in err.value.message
    assert "repeats = 0" in err.value.message  # one message for every problem


def test_the_budget_boundary() -> None:
    assert capacity.budget_problem(7200, 40, 7200, "max_duration") is None
    said = capacity.budget_problem(7201, 40, 7200, "--budget")
    assert said == ("the plan's 40 run(s) are estimated at 2h00m01s, more than the time budget "
                    "of 2h00m (--budget)")  # fmt: skip


# -- the server's settings -------------------------------------------------------------------


def test_defaults_come_from_the_versions_catalog() -> None:
    for version, reserved in (("18", 3), ("15", 3)):  # reserved_connections is 16+: 0 before
        lim = capacity.limits_of({}, catalog(version), version)
        assert lim == Limits(100, False, reserved, 128 * MIB, 4 * MIB, GIB, version)
    given = {"Max_Connections": "50", "shared_buffers": "1GB", "reserved_connections": "2",
             "max_wal_size": "256MB", "work_mem": "64MB"}  # fmt: skip
    lim = capacity.limits_of(given, catalog("18"))
    assert (lim.max_connections, lim.max_connections_set, lim.reserved) == (50, True, 5)
    assert (lim.shared_buffers, lim.work_mem, lim.max_wal_size) == (GIB, 64 * MIB, 256 * MIB)
    # a value the server would reject is reported by the settings check; here it is the default
    assert capacity.limits_of({"max_connections": "lots"}, catalog("18")).max_connections == 100


def test_memory_settings_in_bytes() -> None:
    cat = catalog("18")
    assert settings.in_bytes(cat["shared_buffers"], "16384") == 128 * MIB  # 8kB blocks
    assert settings.in_bytes(cat["shared_buffers"], "1GB") == GIB
    assert settings.in_bytes(cat["work_mem"], "4096") == 4 * MIB
    assert settings.in_bytes(cat["max_connections"], "100") is None  # not a memory setting
    assert settings.number(cat["max_connections"], "0x10") == 16
    assert settings.number(cat["max_connections"], "10 MB") is None


# -- connections -----------------------------------------------------------------------------


def test_pglab_counts_the_samplers_that_hold_a_session() -> None:
    """Every sampler a measured phase starts that connects is counted: the watch's samplers are
    started on a server that refuses every connection, and each try is one session."""

    class Refusing:  # what PhaseWatch reads of a cluster, with a server that is not there
        tries = 0

        def os_view(self):
            from pglab.postgres.interface import OsView

            return OsView(Path("/nonexistent"))

        def connect(self):
            Refusing.tries += 1
            raise OSError("no server")

    from pglab.campaign.spec import TelemetrySpec

    watch = PhaseWatch(Refusing(), TelemetrySpec(), 180000)  # type: ignore[arg-type]
    samplers = watch.samplers()
    for s in samplers:
        with contextlib.suppress(Exception):  # a sampler that cannot connect is switched off
            s.start(0.0)
    assert Refusing.tries == len(SESSION_SAMPLERS) == 3
    assert {type(s) for s in samplers} >= set(SESSION_SAMPLERS)


def test_a_phase_needs_its_clients_pglabs_sessions_and_pgbenchs_setup_session() -> None:
    pt = point({"workload": {"clients": 100}})
    need = capacity.peak_sessions(pt)
    assert (need.clients, need.own, need.setup, need.lingering, need.total) == (100, 3, 1, 0, 104)
    assert need.describe() == ("100 clients + 3 telemetry sessions of pglab + 1 pgbench setup "
                               "session")  # fmt: skip
    unwatched = point({"workload": {"clients": 100}, "telemetry": {"enabled": False}})
    assert capacity.peak_sessions(unwatched).total == 101
    # -C: each thread's last backend may still be exiting as its client reconnects
    reconnecting = point({"workload": {"clients": 100, "connect": True, "threads": 4}})
    assert capacity.peak_sessions(reconnecting).lingering == 4
    assert capacity.peak_sessions(reconnecting).total == 108


def test_the_busiest_phase_counts_and_unmeasured_phases_are_not_watched() -> None:
    doc = {"phases": [{"name": "warm", "clients": 104, "measured": False},
                      {"name": "main", "clients": 100}]}  # fmt: skip
    need = capacity.peak_sessions(point(doc))
    assert (need.phase, need.total) == ("warm", 105)  # 104 + 1 > 100 + 3 + 1
    doc["phases"][0]["clients"] = 103
    assert capacity.peak_sessions(point(doc)).phase == "warm"  # the first of equals
    doc["phases"][0]["clients"] = 102
    assert capacity.peak_sessions(point(doc)).phase == "main"


def test_exactly_enough_connections_fit_and_one_more_does_not() -> None:
    set_50 = limits(max_connections=50, max_connections_set=True)
    fits = capacity.fit_connections(point({"workload": {"clients": 46}}), set_50)
    assert fits.raise_to is None and fits.problem is None  # 46 + 3 + 1 = 50
    over = capacity.fit_connections(point({"workload": {"clients": 47}}), set_50)
    assert over.raise_to is None
    assert over.problem == (
        "point \"base\", phase 'main': 47 clients + 3 telemetry sessions of pglab + 1 pgbench "
        "setup session = 51 connections, but max_connections = 50: set max_connections = 51 or "
        "more in [server.settings] or the variant's settings, or use fewer clients"
    )


def test_a_default_max_connections_is_raised_to_fit_with_the_reserved_slots_on_top() -> None:
    exact = capacity.fit_connections(point({"workload": {"clients": 96}}), limits())
    assert exact.raise_to is None and exact.problem is None  # 96 + 4 = 100: fits as it is
    raised = capacity.fit_connections(point({"workload": {"clients": 97}}), limits())
    assert raised.problem is None and raised.raise_to == 101 + 3
    assert capacity.fit_connections(point({"workload": {"clients": 100}}), limits()).raise_to == 107


def test_a_matrix_setting_is_named_where_the_campaign_sets_it() -> None:
    doc = {"workload": {"clients": 60}, "matrix": {"settings": {"max_connections": [50]}}}
    pt = point(doc)
    lim = capacity.limits_of(pt.settings, catalog("18"), "18.6")
    assert "set max_connections = 64 or more in [matrix.settings]" in str(
        capacity.fit_connections(pt, lim).problem
    )


def raise_in_plan(doc: dict[str, Any], tmp_path: Path, ram: int = 64 * GIB):
    plan = make_plan(parse(doc))
    b = Binaries(Path("/nonexistent"), "18.6", "18.6", "embedded")
    lab = Lab(home=tmp_path, run_as=None)
    return capacity.check(plan, lab, {"embedded": b}, {"embedded": catalog("18")}, ram=ram)


def test_the_plan_carries_the_raise_as_a_setting_of_the_runs_not_of_the_points_identity(
    tmp_path: Path,
) -> None:
    doc = {"repeats": 2, "dataset": {"scale": 1}, "matrix": {"clients": [4, 100]}}
    before = make_plan(parse(doc))
    fit = raise_in_plan(doc, tmp_path)
    assert fit.errors == ()
    small, big = fit.plan.points
    assert small.lab_settings == () and big.lab_settings == (("max_connections", "107"),)
    assert big.settings["max_connections"] == "107"
    assert [r.lab_settings for r in fit.plan.runs if r.axes == (("clients", 100),)] == [
        (("max_connections", "107"),)
    ] * 2
    # the same points: resuming finds the runs stored before, and before pglab raised anything
    assert [p.point_key for p in fit.plan.points] == [p.point_key for p in before.points]
    assert [r.run_key for r in fit.plan.runs] == [r.run_key for r in before.runs]
    assert big.to_dict()["lab_settings"] == {"max_connections": "107"}
    assert "lab_settings" not in small.to_dict()
    (note,) = fit.plan.notes
    assert note.startswith('max_connections raised to 107 for point "clients=100": 104 '
                           "connections at most (phase 'main': 100 clients")  # fmt: skip
    assert "PostgreSQL 18.6's default of 100" in note


def test_a_campaign_that_sets_max_connections_too_low_is_refused(tmp_path: Path) -> None:
    doc = {"server": {"settings": {"max_connections": 50}}, "workload": {"clients": 100}}
    fit = raise_in_plan(doc, tmp_path)
    (err,) = fit.errors
    assert "104 connections, but max_connections = 50" in err.message
    assert fit.plan.points[0].lab_settings == ()


def test_points_already_done_are_not_checked(tmp_path: Path) -> None:
    doc = {"server": {"settings": {"max_connections": 50}}, "workload": {"clients": 100}}
    plan = make_plan(parse(doc))
    done = make_plan(parse(doc), {r.run_key for r in plan.runs})
    b = Binaries(Path("/nonexistent"), "18.6", "18.6", "embedded")
    fit = capacity.check(done, Lab(home=tmp_path, run_as=None), {"embedded": b},
                         {"embedded": catalog("18")}, ram=64 * GIB)  # fmt: skip
    assert fit.errors == ()


# -- memory ----------------------------------------------------------------------------------


def test_memory_boundary() -> None:
    ram = 4 * GIB
    per = 4 * MIB + capacity.BACKEND_BYTES
    fits = limits(shared_buffers=ram - 104 * per)
    assert capacity.memory_fit(fits, 104, ram) == (None, None)
    warning, error = capacity.memory_fit(limits(shared_buffers=ram - 104 * per + 1), 104, ram)
    assert error is None and warning is not None
    assert warning.startswith("shared_buffers 3.4 GiB + 104 sessions × (work_mem 4 MiB + ~2 MiB")
    assert capacity.memory_fit(limits(shared_buffers=ram), 0, ram) == (None, None)
    warning, error = capacity.memory_fit(limits(shared_buffers=ram + 1), 0, ram)
    assert warning is None
    assert error == ("shared_buffers = 4 GiB is more than the machine's 4 GiB of RAM: the server "
                     "cannot start")  # fmt: skip


def test_memory_in_the_plan_warns_or_refuses(tmp_path: Path) -> None:
    doc = {"server": {"settings": {"shared_buffers": "3GB", "work_mem": "64MB"}},
           "workload": {"clients": 20}}  # fmt: skip
    fit = raise_in_plan(doc, tmp_path, ram=4 * GIB)
    assert fit.errors == ()
    (note,) = fit.plan.notes
    assert note.startswith('warning: point "base": shared_buffers 3 GiB + 24 sessions')
    fit = raise_in_plan(doc, tmp_path, ram=2 * GIB)
    (err,) = fit.errors
    assert "shared_buffers = 3 GiB is more than the machine's 2 GiB of RAM" in err.message


def test_memory_under_an_os_memory_limit(tmp_path: Path) -> None:
    """[os] memory counts the shared_buffers the server fills: buffers (and the server's own
    processes) above it refused, sessions above it a warning (the test is skipped, not the
    check, where no memory cgroup can be made: the parser refuses the key there)."""
    sb = 16 * MIB
    assert capacity.limit_fit(limits(shared_buffers=sb), 0, sb + 3 * capacity.BACKEND_BYTES) == (
        None, None)  # fmt: skip
    warning, error = capacity.limit_fit(limits(shared_buffers=sb), 0, sb + 5 * MIB)
    assert warning is None and error == (
        "shared_buffers = 16 MiB and the server's own processes are more than its [os] memory "
        "limit of 21 MiB: the kernel would end the server once its buffers fill")  # fmt: skip
    warning, error = capacity.limit_fit(limits(shared_buffers=sb), 10, 64 * MIB)
    assert error is None and warning is not None
    assert warning.endswith(
        "≈ 76 MiB, more than its [os] memory limit of 64 MiB: the kernel may "
        "end a backend (the server restarts), which would be measured"
    )
    if not isinstance(cgroups.place(), cgroups.Place):
        pytest.skip("no memory cgroup can be made here: the parser refuses [os] memory")
    fit = raise_in_plan({"os": {"memory": "64MB"}}, tmp_path)
    (err,) = fit.errors
    assert 'point "base": shared_buffers = 128 MiB and the server' in err.message, err.message
    assert "(or raise [os] memory)" in (err.hint or "")
    assert raise_in_plan({"os": {"memory": "1GB"}}, tmp_path).errors == ()


# -- disk ------------------------------------------------------------------------------------


def copy(name: str, place: Place, total: int = 300 * MIB, wal: int = 100 * MIB,
         wal_place: Place | None = None, template: Place | None = None,
         max_wal: int = 200 * MIB) -> Copy:  # fmt: skip
    size = datasets.Size(total, wal, measured=template is None)
    return Copy(name, f"ds-{name}", "scale 10", size, place, wal_place or place, template, max_wal)


def test_disk_exactly_enough_passes_and_one_byte_less_fails() -> None:
    # two datasets' copies (300 MiB each, 100 of pg_wal) and pg_wal grown to max_wal_size
    need = 2 * 300 * MIB + (200 - 100) * MIB
    enough = Place("target:t", 'storage target "t"', need)
    assert capacity.disk_problems([copy("a", enough), copy("b", enough)]) == []
    short = Place("target:t", 'storage target "t" (tmpfs, size 699 MiB)', need - 1)
    (problem,) = capacity.disk_problems([copy("a", short), copy("b", short)])
    assert problem == (
        'storage target "t" (tmpfs, size 699 MiB): about 700 MiB needed (2 copies of the dataset '
        "scale 10 (measured): 2 × 300 MiB; 100 MiB for pg_wal to grow to max_wal_size "
        "(200 MiB)), but 700 MiB usable"
    )


def test_a_copy_is_counted_once_however_many_runs_use_it() -> None:
    place = Place("fs:1", "the lab home /x", 400 * MIB)
    runs = [copy("a", place)] * 5  # reset = "run": each run replaces its dataset's copy
    assert capacity.disk_problems(runs) == []
    per_point = [copy(f"p{i}", place) for i in range(2)]  # reset = "point": one per point
    (problem,) = capacity.disk_problems(per_point)
    assert "2 copies of the dataset scale 10 (measured): 2 × 300 MiB" in problem
    assert problem.endswith("but 400 MiB free")


def test_pg_wal_elsewhere_and_a_template_still_to_make() -> None:
    home = Place("fs:1", "the lab home /x", 10 * GIB)
    data = Place("target:d", 'storage target "d"', 200 * MIB)
    wal = Place("target:w", 'storage target "w"', 200 * MIB)
    c = copy("a", data, wal_place=wal, template=home)
    assert capacity.disk_problems([c]) == []  # 200 of data, 100 + 100 of WAL, 300 at home
    small_wal = Place("target:w", 'storage target "w"', 200 * MIB - 1)
    (problem,) = capacity.disk_problems([copy("a", data, wal_place=small_wal, template=home)])
    assert problem.startswith('storage target "w": about 200 MiB needed (pg_wal of a copy')
    small_home = Place("fs:1", "the lab home /x", 300 * MIB - 1)
    (problem,) = capacity.disk_problems([copy("a", data, wal_place=wal, template=small_home)])
    assert "the template of the dataset scale 10 (estimated): 300 MiB" in problem


def test_what_a_target_holds() -> None:
    assert capacity.target_room(TargetSpec("r", "tmpfs", size=200 * MIB)) == 200 * MIB
    loop = TargetSpec("l", "loop", size=GIB, fstype="ext4")
    assert capacity.target_room(loop) == int(GIB * 0.9) - 80 * MIB
    journal = TargetSpec("j", "loop", size=GIB, fstype="ext4", mkfs_options=("-J", "size=128"))
    assert capacity.target_room(journal) == capacity.target_room(loop) - 128 * MIB


def test_the_dataset_estimate_follows_the_measured_templates() -> None:
    """Templates made on PostgreSQL 18: scale 1 69 MiB (32 of pg_wal), 10: 316 (144), 40: 1,132
    (512); the estimate is within 3% of each."""
    for scale, total, wal in ((1, 69.3, 32.0), (10, 315.9, 144.0), (40, 1132.5, 512.0)):
        est = datasets.estimated_size(DatasetSpec(scale=scale))
        assert est.total / MIB == pytest.approx(total, rel=0.03)
        assert est.wal / MIB == pytest.approx(wal, rel=0.03)
    big = datasets.estimated_size(DatasetSpec(scale=1000))
    assert big.wal == datasets.INIT_WAL_MAX_BYTES  # pg_wal stops growing at max_wal_size
    assert datasets.estimated_size(DatasetSpec(scale=10, unlogged_tables=True)).wal == 20 * MIB
    assert datasets.estimated_size(DatasetSpec(scale=10, fillfactor=50)).total > 450 * MIB


def test_a_dataset_too_large_for_a_tmpfs_target_is_refused(tmp_path: Path) -> None:
    doc = {"targets": {"ram": {"kind": "tmpfs", "size": "200MB"}}, "storage": {"data": "ram"},
           "dataset": {"scale": 10}}  # fmt: skip
    fit = raise_in_plan(doc, tmp_path)
    (err,) = fit.errors
    assert err.message.startswith("not enough disk space for the datasets:")
    assert 'storage target "ram" (tmpfs, size 200 MiB): about 1.2 GiB needed' in err.message
    assert "a copy of the dataset scale 10 (estimated): 317.5 MiB" in err.message
    assert "879 MiB for pg_wal to grow to max_wal_size (1 GiB)), but 200 MiB usable" in (
        err.message
    )
    doc["server"] = {"settings": {"max_wal_size": "160MB"}}
    doc["targets"]["ram"]["size"] = "332.5MB"  # exactly 317.5 + (160 - 145) MiB
    assert raise_in_plan(doc, tmp_path).errors == ()
    doc["targets"]["ram"]["size"] = "332MB"
    (err,) = raise_in_plan(doc, tmp_path).errors
    assert "about 332.5 MiB needed" in err.message
