"""What a person sees of CPU profiles (golden file under tests/data/golden/, rewritten with
PGLAB_UPDATE_GOLDEN=1): `pglab show CAMPAIGN --profile` (each point's hot functions with their
intervals), `pglab show RUN --profile` (one run: no intervals) and the differential `pglab
compare` ends with; on stored runs whose stacks are known."""

from __future__ import annotations

import io
import os
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.synthetic_runs import _run
from rich.console import Console

from pglab.cli import compare, profiles, show
from pglab.cli.common import Where
from pglab.errors import LabError
from pglab.profile import folded
from pglab.store import open_store

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"
NAME = "profiled"
T0 = 1_790_000_000.0


def _stacks(variant: str, rng: random.Random) -> dict[str, Counter[str]]:
    """A select-only backend; with pglz its WAL insertion compresses (about 20% of samples)."""
    main = "PostgresMain;exec_simple_query"
    c = Counter({
        f"{main};PortalRun;standard_ExecutorRun;ExecScan;IndexNext;_bt_search": 400,
        f"{main};pg_parse_query;raw_parser;base_yyparse": 150,
        f"{main};finish_xact_command;CommitTransaction;XLogInsert;XLogInsertRecord": 100,
        "PostgresMain;socket_flush;__send": 250,
    })  # fmt: skip
    if variant == "pglz":
        c[f"{main};finish_xact_command;CommitTransaction;XLogInsert;pglz_compress"] = 220
    for stack in c:
        c[stack] = max(1, int(c[stack] * rng.gauss(1, 0.05)))
    # a background writer sampled once a run (issue 52: its 0 -> 100% led the differential)
    wait = "WaitEventSetWait" if variant == "pglz" else "pg_usleep"
    return {"backend": c, "walwriter": Counter({"WalWriterMain;XLogBackgroundFlush": 40}),
            "background writer": Counter({f"BackgroundWriterMain;{wait}": 1})}  # fmt: skip


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("golden-profile") / "r.sqlite"
    rng = random.Random(7)
    with open_store(str(path)) as store:
        store.ensure_campaign(NAME, {"name": NAME, "variants": {"off": {}, "pglz": {}}}, None)
        now = T0
        for rep in (1, 2, 3):
            for variant in ("off", "pglz"):
                run = _run(NAME, variant, "tpcb-like", 2, rep, 1000.0, now, 5, "ok", rng)
                stacks = {folded.TABLE: folded.table(folded.Folded(_stacks(variant, rng)))}
                phases = tuple(replace(ph, tables={**ph.tables, **stacks}) for ph in run.phases)
                store.save_run(replace(run, phases=phases))
                now += 10
        unprofiled = _run("plain", "base", "tpcb-like", 2, 1, 1000.0, now, 5, "ok", rng)
        store.ensure_campaign("plain", {"name": "plain"}, None)
        store.save_run(unprofiled)
    return path


def test_profiles_as_a_person_sees_them(store_path: Path, monkeypatch) -> None:
    console = Console(width=100, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    for module in (show, compare, profiles):
        monkeypatch.setattr(module, "console", console)
    where = Where(store=str(store_path))
    assert show.run(where, NAME, profile=4) == 0
    assert show.run(where, "1", profile=3) == 0
    assert compare.run(where, f"{NAME}:off", f"{NAME}:pglz") == 0
    with open_store(str(store_path)) as store:
        profiles.print_summary(store.get_run(2))
    text = console.export_text()
    assert "mean of 3 runs with 95% intervals" in text
    assert "CPU profile: samples by process: backend 1,1" in text  # show RUN's line
    assert "run 1 (off script=tpcb-like clients=2): hot functions by CPU samples" in text
    diff = text.split("CPU profile differential, off script=tpcb-like clients=2 → pglz")[1]
    first = next(line for line in diff.splitlines() if "backend" in line)
    assert "pglz_compress" in first and "clear" in first, diff  # the top rise, its CI off 0
    assert "WaitEventSetWait" not in text  # below the floor: named, not compared
    assert "(their shares would be noise): background writer (A 3, B 3)" in diff
    golden = GOLDEN / "profile_100.txt"
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"differs from {golden}: PGLAB_UPDATE_GOLDEN=1 rewrites it"


def test_a_campaign_without_profiles_says_how_to_get_one(store_path: Path) -> None:
    with pytest.raises(LabError) as err:
        show.run(Where(store=str(store_path)), "plain", profile=10)
    assert "run with --profile" in err.value.message


SCANS = "scans"


def _scan(vacuumed: bool, rng: random.Random) -> dict[str, Counter[str]]:
    """A sequential scan's backend: before VACUUM it checks each dead tuple's visibility."""
    scan = "PostgresMain;exec_simple_query;PortalRun;ExecAgg;SeqNext;heap_getnextslot"
    c = Counter({f"{scan};heapgettup_pagemode": 300, f"{scan[:-17]};advance_aggregates": 200,
                 f"{scan};heapgettup_pagemode;heap_prepare_pagescan": 100})  # fmt: skip
    if not vacuumed:
        c[f"{scan};heapgettup_pagemode;heap_prepare_pagescan;HeapTupleSatisfiesMVCC"] = 250
    return {"backend": Counter({s: max(1, int(n * rng.gauss(1, 0.05))) for s, n in c.items()})}


def _scan_phases(run, rng: random.Random) -> tuple:
    """dirty (unmeasured), the scan before VACUUM, vacuum (unmeasured), the scan after."""
    (ph,) = run.phases
    out = []
    for name, measured in (("dirty", False), ("scan before vacuum", True), ("vacuum", False),
                           ("scan after vacuum", True)):  # fmt: skip
        tables = dict(ph.tables)
        if measured:
            found = folded.Folded(_scan(name.endswith("after vacuum"), rng))
            tables[folded.TABLE] = folded.table(found)
        out.append(replace(ph, name=name, measured=measured, tables=tables))
    return tuple(out)


@pytest.fixture(scope="module")
def scans_path(tmp_path_factory) -> Path:
    """Two runs of one point, each profiling two measured phases (seed 004's scans)."""
    path = tmp_path_factory.mktemp("golden-scans") / "r.sqlite"
    rng = random.Random(11)
    with open_store(str(path)) as store:
        store.ensure_campaign(SCANS, {"name": SCANS}, None)
        for rep in (1, 2):
            run = _run(SCANS, "base", "seqscan", 1, rep, 50.0, T0 + 10 * rep, 5, "ok", rng)
            store.save_run(replace(run, phases=_scan_phases(run, rng)))
    return path


def test_each_profiled_phase_is_shown_on_its_own(scans_path: Path, monkeypatch) -> None:
    """Two profiled phases: `pglab show RUN --profile` and `pglab show CAMPAIGN --profile`
    print each phase's hot functions under its name; the run's line says how many."""
    console = Console(width=100, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    for module in (show, profiles):
        monkeypatch.setattr(module, "console", console)
    where = Where(store=str(scans_path))
    assert show.run(where, "1", profile=3) == 0
    assert show.run(where, SCANS, profile=4) == 0
    with open_store(str(scans_path)) as store:
        profiles.print_summary(store.get_run(1))
    text = console.export_text()
    before, after = (text.split(f"phase 'scan {w} vacuum': hot functions")[1] for w in
                     ("before", "after"))  # fmt: skip
    assert "HeapTupleSatisfiesMVCC" in before.split("phase 'scan after")[0]
    assert "HeapTupleSatisfiesMVCC" not in after.split("base script=")[0]
    assert "dirty" not in text and "'vacuum'" not in text  # unmeasured: not profiled
    assert "in 2 measured phases; `pglab show 1 --profile` for each one's" in text
    golden = GOLDEN / "profile_phases_100.txt"
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"differs from {golden}: PGLAB_UPDATE_GOLDEN=1 rewrites it"
