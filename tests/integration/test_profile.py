"""CPU profiles through real campaigns on the embedded PostgreSQL 18, recorded by real perf:
what the profiles of a read, a write and an index build name, that they are stored, shown and
exported whole, and that a CPU cause is found by the differential (pglz WAL compression)."""

from __future__ import annotations

import contextlib
import csv
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pglab import report
from pglab.analysis import profiles
from pglab.campaign import parse as campaign
from pglab.cli import main
from pglab.lab import Lab
from pglab.profile import folded
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store

pytestmark = pytest.mark.integration

needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="no perf (linux-perf)")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# a select-only phase, a tpcb-like one, then seed 004's scans before and after VACUUM with the
# scripts of examples/seed004-seqscan-vacuum.toml (a fifth of the accounts updated first), then
# a connection per transaction (connect = true: backends that live less than the watcher's poll)
READ_WRITE = f"""name = "prof-rw"
[server.settings]
autovacuum = "off"
max_parallel_workers_per_gather = 0
[dataset]
scale = 1
[workload]
clients = 2
duration = 3
latency_log = "off"
[[phases]]
name = "read"
script = "select-only"
[[phases]]
name = "write"
script = "tpcb-like"
[[phases]]
name = "dirty"
script = "{EXAMPLES / "seed004-dirty.sql"}"
transactions = 1
clients = 1
vacuum = false
measured = false
[[phases]]
name = "scan before vacuum"
script = "{EXAMPLES / "seed004-seqscan.sql"}"
clients = 1
duration = 2
vacuum = false
[[phases]]
name = "vacuum"
script = "{EXAMPLES / "seed004-vacuum.sql"}"
transactions = 1
clients = 1
vacuum = false
measured = false
[[phases]]
name = "scan after vacuum"
script = "{EXAMPLES / "seed004-seqscan.sql"}"
clients = 1
duration = 2
vacuum = false
[[phases]]
name = "connect"
script = "select-only"
connect = true
duration = 2
vacuum = false
[profile]
frequency = 199
"""


def _run(tmp_path: Path, lab: Lab, doc: str, name: str = "c.toml"):
    path = tmp_path / name
    path.write_text(doc)
    store_path = tmp_path / "r.sqlite"
    with open_store(str(store_path)) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        runs = [store.get_run(i) for i in out.run_ids]
    return store_path, runs


def _phase_stacks(run, name: str) -> dict[str, Counter[str]]:
    (ph,) = [p for p in run.phases if p.name == name]
    return folded.stacks_of(run.series[str(ph.idx)])


def _functions(stacks: Counter[str]) -> set[str]:
    return {f for s in stacks for f in s.split(";")}


@pytest.fixture(scope="module")
def read_write(tmp_path_factory, lab: Lab):
    """One profiled run: a select-only phase then a tpcb-like one (shared by the tests)."""
    tmp = tmp_path_factory.mktemp("prof")
    store_path, (run,) = _run(tmp, lab, READ_WRITE)
    assert run.status == "ok", run.error
    return store_path, run


@needs_perf
def test_a_read_names_the_executor_and_a_write_wal_insertion(read_write) -> None:
    _, run = read_write
    read = _phase_stacks(run, "read")
    assert read["backend"].total() > 50, {k: c.total() for k, c in read.items()}
    names = _functions(read["backend"])
    assert {"PostgresMain", "exec_simple_query", "standard_ExecutorRun"} <= names, names
    assert names & {"ExecIndexScan", "IndexNext", "index_getnext_slot", "_bt_search"}
    write = _functions(_phase_stacks(run, "write")["backend"])
    assert {"XLogInsert", "XLogInsertRecord"} & write, sorted(write)[:50]
    assert "pgbench" in read  # the load generator's own CPU, here on this machine
    assert run.fingerprint["hardware_counters"]  # said once: none on a virtual machine


@needs_perf
def test_the_profile_is_shown_and_exported_whole(read_write, lab: Lab, tmp_path: Path) -> None:
    store_path, run = read_write
    assert not list((lab.home / "work").glob("*/perf-*"))  # perf's files went with the phase
    base = [sys.executable, "-m", "pglab", "--store", str(store_path), "--lab-dir", str(lab.home)]
    env = {**os.environ, "COLUMNS": "120"}
    shown = subprocess.run([*base, "show", str(run.id), "--profile", "5"], capture_output=True,
                           text=True, timeout=120, env=env)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "hot functions by CPU samples" in shown.stdout
    assert "backend" in shown.stdout and "self %" in shown.stdout, shown.stdout
    titles = re.findall(r"phase '([^']+)': hot functions", shown.stdout)
    assert titles == ["read", "write", "scan before vacuum", "scan after vacuum", "connect"]
    out = tmp_path / "stacks.folded"
    done = subprocess.run([*base, "export", str(run.id), "--profile", "folded", "-o", str(out)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    back: Counter[str] = Counter()
    phases: Counter[str] = Counter()
    for stack, n in folded.parse_text(out.read_text()).items():
        root, kind, phase, _ = stack.split(";", 3)
        assert root == f"run {run.id}"
        back[kind] += n
        phases[phase] += n
    stored = profiles.run_stacks(run)
    assert back == Counter({k: c.total() for k, c in stored.items()})  # the same totals
    scan = profiles.run_stacks(run, "scan after vacuum")
    assert phases["phase scan after vacuum"] == sum(c.total() for c in scan.values())
    table = profiles.functions_table([run])
    own = table.columns.index("self_samples")
    assert sum(r[own] for r in table.rows) == sum(back.values())  # each sample once, as self
    csv_out = tmp_path / "functions.csv"
    argv = ["--store", str(store_path), "--lab-dir", str(lab.home)]
    assert main([*argv, "export", str(run.id), "--profile", "-o", str(csv_out)]) == 0
    with csv_out.open() as f:
        rows = list(csv.DictReader(f))
    assert {r["phase"] for r in rows} == {"read", "write", "scan before vacuum",
                                          "scan after vacuum", "connect"}  # fmt: skip


@needs_perf
def test_backends_of_a_connection_per_transaction_are_profiled(read_write) -> None:
    """pgbench -C: each backend lives a transaction, less than the watcher's half-second poll,
    so its title is never read; the recording's fork events keep its samples, as short-lived
    (they went to "others" before), and they show the cost of starting a backend."""
    _, run = read_write
    stacks = _phase_stacks(run, "connect")
    short = stacks.get(folded.SHORT_LIVED, Counter())
    assert short.total() > 20, {k: c.total() for k, c in stacks.items()}
    assert {"InitPostgres", "PostgresMain"} & _functions(short), short.most_common(5)
    # the postmaster forks them: its own share is larger than in the read phase
    read = _phase_stacks(run, "read")
    share = {name: st.get("postmaster", Counter()).total() / sum(c.total() for c in st.values())
             for name, st in (("connect", stacks), ("read", read))}  # fmt: skip
    assert share["connect"] > share["read"], share


VISIBILITY = {"HeapTupleSatisfiesMVCC", "HeapTupleSatisfiesVisibility"}


@needs_perf
def test_a_scan_checks_visibility_before_vacuum_and_not_after(read_write) -> None:
    """Seed 004: a sequential scan over pages a fifth of whose rows were updated checks each
    row version's visibility; after VACUUM the pages are all-visible and the checks go."""
    _, run = read_write
    assert profiles.profiled_phases([run]) == ["read", "write", "scan before vacuum",
                                               "scan after vacuum", "connect"]  # fmt: skip
    before, after = (
        profiles.hot_functions([run], phase=f"scan {w} vacuum") for w in ("before", "after")
    )
    backend = [r for r in before if r.process == "backend"]
    assert sum(r.samples for r in backend) > 100, backend[:5]
    seen = {r.function for r in backend[:15]}
    assert seen & {"heapgettup_pagemode", "heap_getnextslot", "SeqNext"}, backend[:15]
    share = {w: max((r.incl_pct for r in rows if r.process == "backend" and r.function in
                     VISIBILITY), default=0.0) for w, rows in (("before", before),
                                                              ("after", after))}  # fmt: skip
    assert share["before"] > 5 and share["after"] < share["before"] / 3, (share, backend[:15])


INDEX = """name = "prof-index"
[dataset]
scale = 5
[[phases]]
name = "index"
operation = "create_index"
columns = ["abalance"]
[profile]
frequency = 999
"""


@needs_perf
def test_create_index_names_the_sort_comparators(tmp_path: Path, lab: Lab) -> None:
    _, (run,) = _run(tmp_path, lab, INDEX)
    assert run.status == "ok", run.error
    stacks = _phase_stacks(run, "index")
    names = _functions(stacks["backend"])
    sorting = {"comparetup_index_btree", "btint4fastcmp", "btint4cmp", "ssup_datum_int32_cmp",
               "qsort_tuple", "qsort_ssup", "tuplesort_performsort", "tuplesort_puttupleslot",
               "_bt_leafbuild", "btbuild"}  # fmt: skip
    assert names & sorting, sorted(names)[:80]


PGLZ = """name = "prof-pglz"
[dataset]
scale = 2
[workload]
script = "tpcb-like"
clients = 2
duration = 5
latency_log = "off"
[server.settings]
full_page_writes = "on"
max_wal_size = "32MB"
checkpoint_timeout = "30s"
[variants.off]
settings = { wal_compression = "off" }
[variants.pglz]
settings = { wal_compression = "pglz" }
[profile]
frequency = 199
"""


@pytest.fixture(scope="module")
def pglz(tmp_path_factory, lab: Lab):
    """wal_compression off and pglz on the same writes, profiled (shared by the tests)."""
    tmp = tmp_path_factory.mktemp("pglz")
    store_path, runs = _run(tmp, lab, PGLZ)
    assert [r.status for r in runs] == ["ok", "ok"], [r.error for r in runs]
    return store_path, runs


@needs_perf
def test_the_differential_finds_pglz_compression(pglz) -> None:
    """wal_compression = pglz against off on writes with full-page images: the function
    whose share of the backends' samples rose most is the compressor."""
    _, runs = pglz
    by = {r.variant: r for r in runs}
    changes = profiles.differential([by["off"]], [by["pglz"]])
    top = next(c for c in changes if c.process == "backend")
    assert top.function == "pglz_compress", changes[:5]
    assert top.delta > 0 and top.base_pct < 0.5


@needs_perf
def test_compare_leads_with_the_backend_and_names_the_thin_kinds(pglz, lab: Lab) -> None:
    """Issue 52: `pglab compare` of two profiled points ranked first process kinds sampled a
    few times (a background writer's 2 samples: +50 points). The backend's rows come first,
    and a kind below the sample floor on a side is named under the table, not compared."""
    store_path, runs = pglz
    base = [sys.executable, "-m", "pglab", "--store", str(store_path), "--lab-dir", str(lab.home)]
    done = subprocess.run([*base, "compare", "prof-pglz:off", "prof-pglz:pglz"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    diff = done.stdout.split("CPU profile differential")[1]
    lines = [ln for ln in diff.splitlines()[2:] if ln.strip()]
    rows = [ln for ln in lines if not ln.startswith("not compared")]
    assert rows[0].split()[:2] == ["backend", "pglz_compress"], diff
    by = {r.variant: r for r in runs}
    changes = profiles.differential([by["off"]], [by["pglz"]])
    floor = profiles.MIN_KIND_SAMPLES
    thin = {c.process for c in changes if min(c.kind_a, c.kind_b) < floor}
    assert not [ln for ln in rows if any(ln.startswith(f"{k} ") for k in thin)], (thin, diff)
    for kind in thin:  # named, with its samples on each side
        assert f"fewer than {floor} samples on a side" in diff and f"{kind} (A " in diff, diff
    kinds = list(dict.fromkeys(ln.split()[0] for ln in rows))
    assert kinds[0] == "backend", kinds


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@needs_perf
@pytest.mark.skipif(CHROMIUM is None, reason="apt-get install chromium")
def test_the_report_draws_flame_graphs_that_zoom(pglz, tmp_path: Path) -> None:
    """Headless Chromium, network off: each point's flame graph and the pglz point's
    differential against the baseline are drawn; a click on a frame zooms into it."""
    store_path, _ = pglz
    with open_store(str(store_path)) as store:
        page = report.write(store, "prof-pglz", tmp_path / "r.html", tmp_path).html
    html = page.read_text()
    assert 'id="pflame-1"' in html and 'id="pflame-2"' in html
    assert 'id="pflamediff-2"' in html and 'id="pflamediff-1"' not in html  # 1: the baseline
    script = (
        "window.pglabDrawAll();"
        "var g = document.getElementById('pflamediff-2');"
        "var b = document.body.dataset;"
        "g.on('plotly_click', function (ev) { b.clicked = ev.points[0].id; });"
        "setTimeout(function () {"
        "  b.flames = String(document.querySelectorAll('div.pflame g.slice').length);"
        "  var s = Array.prototype.find.call(g.querySelectorAll('g.slice'), function (e) {"
        "    return /^backend$/.test(e.textContent.trim()); });"
        "  b.found = s ? 'yes' : 'no';"
        "  if (s) { s.dispatchEvent(new MouseEvent('click', {bubbles: true})); }"
        "}, 1000);"
        "setTimeout(function () { b.level = String(g.data[0].level); }, 4000);"
    )
    out = tmp_path / "flames.html"
    out.write_text(html.replace("</body>", f"<script>window.addEventListener('load', "
                                f"function () {{ {script} }});</script></body>"))  # fmt: skip
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'chromium'}", "--virtual-time-budget=20000",
         "--enable-logging=stderr", "--v=0", "--dump-dom", out.as_uri()],
        capture_output=True, text=True, timeout=180, check=True,
    )  # fmt: skip
    body = re.search(r"<body([^>]*)>", done.stdout)
    assert body, done.stdout[:300]
    state = dict(re.findall(r'data-([\w-]+)="([^"]*)"', body.group(1)))
    assert state.get("errors") == "", state
    assert int(state["flames"]) > 20, state  # three icicles, drawn with their frames
    assert state["found"] == "yes", state
    assert state.get("clicked", "").startswith("f"), state
    assert state.get("level") == state["clicked"], state  # zoomed into the frame


@needs_perf
@pytest.mark.skipif(CHROMIUM is None, reason="apt-get install chromium")
def test_pglab_serve_draws_a_profiled_run_s_flame_graph(pglz, lab: Lab, tmp_path: Path) -> None:
    """pglab serve (the command, in Chromium): a profiled run's page draws its flame graph."""
    from test_report_browser import body_state
    from test_serve import browse_url, serving

    store_path, runs = pglz
    run = next(r for r in runs if r.variant == "pglz")
    argv = ["--store", str(store_path), "--lab-dir", str(lab.home)]
    with contextlib.contextmanager(serving)(argv, tmp_path / "serve.err") as base:
        dom, _ = browse_url(base + f"runs/{run.id}#point-1", tmp_path, "--window-size=1400,1200")
    state = body_state(dom)
    assert state.get("errors") == "" and state["points-drawn"] == "1", state
    drawn = re.search(r'<div [^>]*id="pflame-1"[^>]*data-drawn="1"', dom)
    assert drawn and 'class="slice' in dom[drawn.start() :], dom[-3000:]
