"""The shape ARCHITECTURE.md states, checked on the source: which package may import which (no
import runs back up the pipeline), no module over the size one reads in a sitting, and a CLI
that holds no SQL, statistics or file-format parsing."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "pglab"

# The stages in pipeline order. A package may import its own stage and the ones before it,
# never one after it. "core" is the top-level modules every stage shares.
STAGES: list[set[str]] = [
    # errors, records, procs, lab: the lab itself and the data passed between stages; stats: the
    # statistics every stage judges with (pure functions on numbers)
    {"core", "stats"},
    # what each kind of workload's phase is, declared in its own package (workloads/work.py,
    # the union, and workloads/KIND/work.py or the package workloads/KIND/work/: its parsed spec
    # type, the keys it owns, its tables such as the kits'), before the campaign that parses
    # them; the registry (workloads/__init__) stays with the kinds
    {"declarations"},
    {"campaign"},  # the file, parsed and checked into specs
    {"hosts"},  # other machines over SSH: commands, files, clocks (beside procs)
    # servers, settings, datasets (pgbench's tables; a kind's own by the DatasetKind the caller
    # gives from the workloads' registry: no loader imported here), fingerprints
    {"postgres"},
    # the instruments (never each other); profile: perf on the server's processes; replay: a
    # captured workload and pgreplay
    {"pgbench", "targets", "telemetry", "profile"},
    # the kinds of workload, one package each, and their registry (kind -> runner, metrics,
    # dataset and its loader, figures): after the servers they load and the instruments they
    # drive, before the store and the analysis that reads their figures (the executor's run/
    # looks a phase's runner up in it, and gives a lease each dataset's kind)
    {"workloads"},
    {"store"},  # results: written by run (which takes a Store, typed) and read by what follows
    # the plan, the checks before the first run, what the runs need, the rounds of repeats =
    # "auto": all said before anything runs, so never the executor's (run comes after)
    {"planning"},
    # points, verdicts, warnings, comparisons, tidy rows: what the stored runs say (before run,
    # whose use case measures the run overhead on them and refreshes the tidy rows it stored)
    {"analysis"},
    # the use case "run a campaign" (campaign_run), the executor, the phase runners, run
    # metrics, the live state
    {"run"},
    {"fleet"},  # a campaign's runs as jobs for workers on lab hosts (procrastinate, in the store)
    # automatic tuning: Optuna over a point's settings, trials as runs, confirmation; bisect:
    # the first bad commit between two, each step a campaign judged by the verdicts
    {"tune", "bisect"},
    {"report"},  # the HTML page
    {"serve"},  # the store in a browser: the report's pages and more, served (pglab serve)
    {"cli"},  # the only part that prints
]
STAGE_OF = {pkg: i for i, stage in enumerate(STAGES) for pkg in stage}
MAX_LINES = 600


def is_declaration(parts: tuple[str, ...]) -> bool:
    """Whether a module's path under ``src/pglab`` (its parts, without ``.py``) is a kind's
    work declaration: ``workloads/work``, ``workloads/KIND/work`` or a module of the package
    ``workloads/KIND/work/`` (its ``__init__`` and the modules under it: the kits' table, TPC-C's
    pacing, TPC-H's queries)."""
    return parts[0] == "workloads" and (
        parts[1:] == ("work",) or (len(parts) >= 3 and parts[2] == "work")
    )


def package_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    if rel == Path("__main__.py"):
        return "cli"  # `python -m pglab`: the command itself
    if is_declaration(rel.with_suffix("").parts):
        return "declarations"
    return rel.parts[0] if len(rel.parts) > 1 else "core"


def imported_packages(path: Path) -> set[str]:
    """The pglab packages a module imports (anywhere in it, lazy imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import (pglab uses absolute ones)"
            if node.module == "pglab" or (node.module or "").startswith("pglab.workloads"):
                # from pglab import x: x is a module or package; from pglab.workloads.kits
                # import work: a declaration
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif node.module:
                names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "pglab" and "work" in parts[2:4] and parts[1] == "workloads":
                found.add("declarations")  # pglab.workloads[.KIND].work[.NAME]
            elif parts[0] == "pglab" and len(parts) > 1:
                found.add(parts[1] if (SRC / parts[1]).is_dir() else "core")
    return found


MODULES = sorted(p for p in SRC.rglob("*.py"))


def test_every_package_has_a_stage() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(STAGE_OF) - {"core", "declarations"}


def backward_imports(path: Path, mine: str) -> list[str]:
    """What a module of stage ``mine`` imports from a stage after its own (or beside it)."""
    return [
        f"{path.name} ({mine}) imports {other}, which comes after it"
        if STAGE_OF[other] > STAGE_OF[mine]
        else f"{path.name} ({mine}) imports {other}, an instrument beside it"
        for other in sorted(imported_packages(path))
        if not (STAGE_OF[other] < STAGE_OF[mine] or other == mine)
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_import_runs_back_up_the_pipeline(path: Path) -> None:
    assert backward_imports(path, package_of(path)) == [], path.relative_to(SRC)


def test_the_kinds_work_is_declared_before_the_campaign(tmp_path: Path) -> None:
    """``workloads/work.py`` and ``workloads/KIND/work.py`` are declarations, which
    ``campaign/`` imports (the registry and the rest of a kind's package come after it); a
    work module that imports ``campaign/`` (or a kind's runner) is caught."""
    assert package_of(SRC / "workloads" / "work.py") == "declarations"
    assert package_of(SRC / "workloads" / "pgbench" / "work.py") == "declarations"
    assert package_of(SRC / "workloads" / "kits" / "work" / "__init__.py") == "declarations"
    assert package_of(SRC / "workloads" / "kits" / "work" / "kits.py") == "declarations"
    assert package_of(SRC / "workloads" / "kits" / "runner.py") == "workloads"
    assert package_of(SRC / "workloads" / "kits" / "__init__.py") == "workloads"
    assert package_of(SRC / "workloads" / "__init__.py") == "workloads"
    assert package_of(SRC / "workloads" / "tpch" / "workers.py") == "workloads"
    assert STAGE_OF["declarations"] < STAGE_OF["campaign"] < STAGE_OF["workloads"]
    spec = tmp_path / "spec.py"
    spec.write_text(
        "from pglab.workloads.kits.work import KitWork\nimport pglab.workloads.work\n"
        "from pglab.workloads.tpch import work\nfrom pglab.workloads import work as w\n"
    )
    assert imported_packages(spec) == {"declarations"}
    assert backward_imports(spec, "campaign") == []
    bad = tmp_path / "work.py"
    bad.write_text(
        "from pglab.campaign.spec import PhaseSpec\nfrom pglab.workloads.kits import runner\n"
        "from pglab.workloads.pgbench.work import PgbenchWork\nfrom pglab import units\n"
    )
    assert imported_packages(bad) == {"campaign", "workloads", "declarations", "core"}
    assert backward_imports(bad, "declarations") == [
        "work.py (declarations) imports campaign, which comes after it",
        "work.py (declarations) imports workloads, which comes after it",
    ]


def test_a_module_of_a_kinds_declaration_package_is_held_to_the_rule(tmp_path: Path) -> None:
    """A module under ``workloads/KIND/work/`` is a declaration too: importing the standard
    library, the core and other declarations passes; importing ``campaign/`` is caught."""
    good = tmp_path / "queries.py"
    good.write_text(
        "import random\nfrom pglab.script import Script\n"
        "from pglab.workloads.kits.work.kits import KITS\nfrom pglab.workloads.tpch import work\n"
        "from pglab.workloads.tpch.work.queries import query\n"
    )
    assert imported_packages(good) == {"core", "declarations"}
    where = package_of(SRC / "workloads" / "tpch" / "work" / "queries.py")
    assert where == "declarations"
    assert backward_imports(good, where) == []
    bad = tmp_path / "kits.py"
    bad.write_text("from pglab.campaign.spec import Script\nfrom pglab.lab import command_home\n")
    where = package_of(SRC / "workloads" / "kits" / "work" / "kits.py")
    assert backward_imports(bad, where) == [
        "kits.py (declarations) imports campaign, which comes after it"
    ]


def test_planning_never_imports_the_executor() -> None:
    """A plan is made and checked (``pglab run --dry-run``, a fleet's submission) without
    anything that runs: no module of ``planning/`` imports ``run/``."""
    assert STAGE_OF["planning"] < STAGE_OF["run"]
    for path in sorted((SRC / "planning").glob("*.py")):
        assert "run" not in imported_packages(path), path.name


def calls(text: str) -> set[str]:
    """The names a module's text calls (``f(...)``, ``x.f(...)``: ``f``)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call):
            func = node.func
            found.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return found


# the steps of running a campaign that only its use case (run/campaign_run.py) takes
USE_CASE_STEPS = {"clean_leftovers", "find_stale", "ensure_campaign", "run_overhead",
                  "sequential_plan"}  # fmt: skip


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_a_campaign_is_run_through_one_use_case(path: Path) -> None:
    """``run/campaign_run.py`` is the one sequence of running a campaign (leftovers, stale
    check, overhead, rounds, live state, executor, tidy rows): ``pglab run``, ``quick``,
    ``--fleet``, the fleet's job and ``tune`` call it; no other module takes its steps."""
    if path == SRC / "run" / "campaign_run.py":
        assert calls(path.read_text()) >= USE_CASE_STEPS
        return
    assert not calls(path.read_text()) & USE_CASE_STEPS


def test_a_step_of_the_use_case_is_caught() -> None:
    assert calls("stale = find_stale(store, c, pts)\nstore.ensure_campaign(n, d, f)") == {
        "find_stale",
        "ensure_campaign",
    }


# what an executor runs: only run/ (the use case's session) asks for it
EXECUTOR_RUNS = {"run_one", "run_stored", "run_plan", "for_session"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_only_the_use_case_asks_an_executor_for_a_run(path: Path) -> None:
    """Every run goes through a session of ``run/campaign_run`` (tune's trials and
    confirmation too: ``Session.run``): no module outside ``run/`` calls ``Executor.run_one``
    or the executor's other ways of running."""
    if path.parent == SRC / "run":
        return
    assert not calls(path.read_text()) & EXECUTOR_RUNS


def test_a_run_asked_of_an_executor_is_caught() -> None:
    text = "result = executor.run_one(run, b)\nwith executor.for_session(plan, b): pass\n"
    assert calls(text) & EXECUTOR_RUNS == {"run_one", "for_session"}
    assert not calls("run_id, result = session.run(run, 1, 3)") & EXECUTOR_RUNS


def test_the_check_catches_a_backward_import(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text("from pglab.report import charts\nimport pglab.cli.fmt\nfrom pglab import lab\n")
    assert imported_packages(bad) == {"report", "cli", "core"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_is_too_long_to_read_in_a_sitting(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_the_cli_holds_no_sql_statistics_or_parsing() -> None:
    for path in (SRC / "cli").glob("*.py"):
        text = path.read_text()
        tree = ast.parse(text)
        imported = {
            a.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for a in (
                node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
            )
        }
        assert not imported & {"sqlite3", "psycopg", "scipy", "numpy", "statistics", "re", "csv",
                               "tomllib"}, (path.name, imported)  # fmt: skip
        for word in ("SELECT ", "INSERT ", "UPDATE ", "DELETE FROM"):
            assert word not in text, (path.name, word)


# One question, one answer (issue 52): the views render analysis/engine.py's answers and
# compute none of their own: no numerical library, no test of pglab.stats (its significance
# level and the scipy it imports on first use are allowed: serve warms it), no call that judges
# (differences.measure is caught by its import: a storage's fsbench.measure is no statistics)
VIEWS = ("cli", "report", "serve")
NUMERIC = {"scipy", "numpy"}
STATS_ALLOWED = ("pglab.stats.significance",)
JUDGES = {"ask", "judged", "compare_family", "compare_rounds", "compare_sequential", "welch",
          "mannwhitneyu", "ttest_ind", "ttest_rel"}  # fmt: skip


def statistics_in(text: str) -> list[str]:
    """What a module does of statistics: numerical libraries and pglab.stats modules it
    imports, and the calls that judge a comparison (by their names)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found += [a.name for a in node.names if a.name in JUDGES]
        for name in names:
            top = name.split(".")[0]
            stats = name.startswith("pglab.stats.") and not name.startswith(STATS_ALLOWED)
            if top in NUMERIC or stats:
                found.append(name)
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in JUDGES:
                found.append(f"{called}()")
    return sorted(set(found))


@pytest.mark.parametrize(
    "path",
    [p for view in VIEWS for p in sorted((SRC / view).rglob("*.py"))],
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_the_views_compute_no_statistics(path: Path) -> None:
    assert statistics_in(path.read_text()) == []


def test_the_statistics_check_catches_a_view_that_judges() -> None:
    bad = (
        "import numpy as np\nfrom scipy import stats\nfrom pglab.stats import differences\n"
        "from pglab.stats.significance import ALPHA\nfrom pglab.analysis import engine\n"
        "x = engine.ask(q)\ny = differences.welch(a, b)\n"
    )
    assert statistics_in(bad) == ["ask()", "numpy", "pglab.stats.differences", "scipy",
                                  "scipy.stats", "welch()"]  # fmt: skip


# the kinds of server (postgres/interface.py's Server) and where each is defined
SERVER_CLASSES = {"Cluster": "postgres/server.py", "ExistingServer": "postgres/existing.py",
                  "HostServer": "postgres/on_host.py"}  # fmt: skip


def kind_checks(text: str) -> list[str]:
    """The server classes a module's ``isinstance`` calls ask about."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            found += sorted(names & set(SERVER_CLASSES))
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_asks_which_kind_of_server_it_has(path: Path) -> None:
    """Servers are used through their one interface; only a class's own module may ask."""
    own = {c for c, where in SERVER_CLASSES.items() if SRC / where == path}
    assert set(kind_checks(path.read_text())) <= own


def test_the_kind_check_is_caught() -> None:
    assert kind_checks("if isinstance(srv, Cluster | HostServer): pass") == [
        "Cluster",
        "HostServer",
    ]
    assert kind_checks("isinstance(x, (int, ExistingServer))") == ["ExistingServer"]
    assert kind_checks("isinstance(x, Table)") == []


def server_bases(text: str) -> list[tuple[str, str]]:
    """(class, base) for each class of a module that inherits from a server class."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            names = {n.id for b in node.bases for n in ast.walk(b) if isinstance(n, ast.Name)}
            names |= {n.attr for b in node.bases for n in ast.walk(b)
                      if isinstance(n, ast.Attribute)}  # fmt: skip
            found += [(node.name, base) for base in sorted(names & set(SERVER_CLASSES))]
    return found


def test_no_kind_of_server_inherits_from_another() -> None:
    """Each kind implements ``interface.Server`` by itself, sharing by composition (a server
    on a host and an existing one each hold a ``reach.Reach``): a server pglab starts is not a
    kind of the servers pglab never starts."""
    found = [hit for path in MODULES for hit in server_bases(path.read_text())]
    assert found == []


def test_the_inheritance_is_caught() -> None:
    assert server_bases("class HostServer(ExistingServer): pass") == [
        ("HostServer", "ExistingServer")
    ]
    assert server_bases("class X(existing.ExistingServer, Protocol): pass") == [
        ("X", "ExistingServer")
    ]
    assert server_bases("class DsnServer(Server, Protocol): pass") == []


def test_the_executor_runs_every_phase_through_one_runner() -> None:
    """The executor does not tell kinds of phase apart (``run/phases.runner_for`` does): no
    branch on a phase's generators, no call of a load generator or an operation of its own."""
    text = (SRC / "run" / "executor.py").read_text()
    for word in ("phase.remote", "run_phase(", "Operation(", "operations."):
        assert word not in text, word
    assert "runner_for(" in text


# what names a kind of server: its classes, its leases', and the spec's words for it
SERVER_KIND_WORDS = {"ExistingServer", "HostServer", "DsnServer", "LocalLease", "DsnLease",
                     "over_network", "existing"}  # fmt: skip


def server_kinds_named(text: str) -> list[str]:
    """The words of ``SERVER_KIND_WORDS`` a module uses (names and attributes), and the
    clusters it makes (``Cluster(...)``)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name) and node.id in SERVER_KIND_WORDS:
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in SERVER_KIND_WORDS:
            found.add(node.attr)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Cluster":
            found.add("Cluster()")
    return sorted(found)


def test_the_executor_has_one_path_for_every_kind_of_server() -> None:
    """A server is a lease (``postgres/lease.py``): ``provision`` tells the kinds apart, once;
    the executor prepares, uses and releases every lease the same way."""
    assert server_kinds_named((SRC / "run" / "executor.py").read_text()) == []
    assert "provision(" in (SRC / "run" / "executor.py").read_text()


def test_the_server_kind_check_is_caught() -> None:
    bad = (
        "if run.server.over_network:\n    srv = HostServer(spec) if h else ExistingServer(s)\n"
        "else:\n    srv = Cluster(b, lab, d, n)\n"
    )
    assert server_kinds_named(bad) == ["Cluster()", "ExistingServer", "HostServer",
                                       "over_network"]  # fmt: skip
    assert server_kinds_named("lease = provision(run.server, run.storage, lab)") == []


def stored_kind_reads(text: str) -> list[str]:
    """The string constants ``"server_kind"`` in a module: reads of the stored kind."""
    return [n.value for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.Constant) and n.value == "server_kind"]  # fmt: skip


@pytest.mark.parametrize(
    "path",
    [p for view in (*VIEWS, "analysis") for p in sorted((SRC / view).rglob("*.py"))],
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_no_view_branches_on_the_stored_server_kind(path: Path) -> None:
    """The views render the lease's own description (``fingerprints.lease_of``, which alone
    reads the kind stored before leases described themselves)."""
    assert stored_kind_reads(path.read_text()) == []


def test_the_stored_kind_read_is_caught() -> None:
    assert stored_kind_reads('kind = fp.get("server_kind")') == ["server_kind"]
    assert stored_kind_reads("lease = lease_of(fp)") == []


def executor_assignments(text: str) -> list[str]:
    """``something.executor.NAME = ...`` or ``executor.NAME = ...``: an executor's attributes
    set from outside, after it was built."""
    found = []
    for node in ast.walk(ast.parse(text)):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for t in targets:
            if isinstance(t, ast.Attribute):
                owner = t.value
                name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                if "executor" in name.lower():
                    found.append(f"{name}.{t.attr}")
    return found


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if p != SRC / "run" / "executor.py"]
    + sorted((SRC.parents[1] / "bench").glob("*.py")),
    ids=lambda p: p.name,
)
def test_an_executor_is_built_once_with_what_it_needs(path: Path) -> None:
    """Hosts, worker and events are given when it is built (``execute`` takes a campaign's
    hosts and live events), never assigned after; and it reads no stored runs in the middle of
    a campaign (the plan's hints carry what stored runs say)."""
    assert executor_assignments(path.read_text()) == []


def test_the_executor_reads_no_stored_runs() -> None:
    text = (SRC / "run" / "executor.py").read_text()
    assert "list_runs(" not in text and "get_run(" not in text


def test_an_assignment_to_an_executor_is_caught() -> None:
    bad = "executor.hosts = Hosts(c)\nself.executor.worker = w\nsearch.executor.events = e\n"
    assert executor_assignments(bad) == ["executor.hosts", "executor.worker", "executor.events"]
    assert executor_assignments("executor = Executor(lab, store, worker=w)") == []


TESTS = SRC.parents[1] / "tests"


def path_edits(text: str) -> list[str]:
    """The ``sys.path`` changes a module makes (``sys.path.insert(...)``, ``.append``, ...)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            is_sys = isinstance(target, ast.Attribute) and getattr(target.value, "id", "") == "sys"
            if is_sys and target.attr == "path":
                found.append(f"sys.path.{node.func.attr}")
    return found


def test_the_tests_find_their_helpers_as_a_package() -> None:
    """A newcomer finds the shared test code in one place, ``tests/helpers/``, imported as
    ``helpers.NAME`` through pytest's ``pythonpath``: no other module at the top of ``tests/``
    than ``conftest.py``, and no test that edits ``sys.path``."""
    assert {p.name for p in TESTS.glob("*.py")} == {"conftest.py"}
    assert (TESTS / "helpers" / "__init__.py").exists()
    for path in TESTS.rglob("*.py"):
        assert not path_edits(path.read_text()), path.relative_to(TESTS)


def test_the_path_edit_is_caught() -> None:
    assert path_edits("import sys\nsys.path.insert(0, 'tests')\nsys.path.append('x')") == [
        "sys.path.insert",
        "sys.path.append",
    ]
    assert path_edits("os.path.join('a', 'b')\nsys.modules.pop('x')") == []


def modules_imported(text: str) -> set[str]:
    """The pglab modules a module's text imports (``from pglab.a import b``: ``pglab.a`` and
    ``pglab.a.b``, one of which is a module), lazy imports too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pglab"):
            found |= {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("pglab")}
    return found


# what is made from the campaign's declarations never feeds back into them
MADE_FROM_SCHEMA = {"pglab.campaign.json_schema", "pglab.campaign.parse", "pglab.tune.spec"}


def test_the_schema_imports_nothing_made_from_it() -> None:
    declarations = sorted((SRC / "campaign" / "schema").glob("*.py"))
    assert len(declarations) >= 4  # the package of declarations (tables, [tune], …)
    for path in declarations + [SRC / "campaign" / "shapes.py"]:
        assert not modules_imported(path.read_text()) & MADE_FROM_SCHEMA, path.name


def test_a_schema_import_cycle_is_caught() -> None:
    lazy = "def f():\n    from pglab.campaign.json_schema import build\n    return build()\n"
    assert modules_imported(lazy) & MADE_FROM_SCHEMA
    assert modules_imported("from pglab.campaign import json_schema") & MADE_FROM_SCHEMA
    assert not modules_imported("from pglab.campaign.shapes import SHAPES") & MADE_FROM_SCHEMA


def test_no_two_test_files_share_a_name() -> None:
    """pytest imports a test file by its name alone (tests/ has no packages): two files of one
    name in unit/ and integration/ make the second an import error of the whole run, which a
    lane run alone never shows (tests/integration/test_tpcc_pacing.py met its unit twin)."""
    names = [p.name for p in TESTS.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


# A workload is a plug-in (issue 51): everything of a kind lives in its package under
# workloads/, so no module outside it names a kind. Counted on the parsed code: identifiers
# (names, attributes, imports, definitions, arguments) and string constants, docstrings left
# out (prose may say "sysbench"); a word of an identifier counts (``sysbench_version``,
# ``pglab.workloads.tpch``), a longer word does not (``pgreplay``, ``tpchgen``).
KINDS = ("sysbench", "tpch", "tpcc", "tpce", "ycsb", "replay")
KIND_WORD = re.compile(r"(?<![a-z0-9])(" + "|".join(KINDS) + r")(?![a-z0-9])")
# The modules outside workloads/ that still name a kind. This ceiling only goes down: lower it
# when a kind's code moves into its package, never raise it (a new module that needs a kind
# belongs in that kind's package, or asks the registry). 57 before workloads/ existed, 40 with
# the runners in it, 33 with the kinds' data loaders too, 14 with what the views, the plan and
# tune ask of a kind declared on its Workload, 12 with each kind's phase declared in it too
# (workloads/KIND/work.py), 8 with each kind's keys, their schema rows, what it refuses beside
# it and its [tune] objective declared there (campaign/workload, schema/tables, schema/tune and
# shapes assemble them), 1 with the kits' table, TPC-C's pacing and TPC-H's queries in the
# kinds' declaration packages (workloads/KIND/work/) and what campaign/ and metric_units said
# of a kind declared by it (whether it writes, its dataset's fields, its scales, its metrics'
# namespace), 0 with stored_spec's PhaseJson typing only the keys every phase has (a kind's
# own stored keys are read back by the kind).
KIND_NAMING_CEILING = 0


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _words(text: str) -> list[str]:
    """The identifiers and string constants of a module's text (docstrings left out)."""
    tree = ast.parse(text)
    prose = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Attribute):
            found.append(node.attr)
        elif isinstance(node, ast.alias):
            found += [node.name, node.asname or ""]
        elif isinstance(node, ast.ImportFrom):
            found.append(node.module or "")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(node.name)
        elif isinstance(node, ast.arg):
            found.append(node.arg)
        elif isinstance(node, ast.keyword):
            found.append(node.arg or "")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [] if id(node) in prose else [node.value]
    return found


def kinds_named(text: str) -> set[str]:
    """The kinds of workload a module's code names."""
    return {kind for word in _words(text) for kind in KIND_WORD.findall(word.lower())}


def modules_naming_a_kind(root: Path = SRC) -> dict[str, set[str]]:
    """The modules under ``root`` but outside its ``workloads/`` that name a kind, with
    the kinds they name."""
    return {
        str(path.relative_to(root)): kinds
        for path in sorted(root.rglob("*.py"))
        if path.relative_to(root).parts[0] != "workloads"
        and (kinds := kinds_named(path.read_text()))
    }


def check_kind_ceiling(found: dict[str, set[str]], ceiling: int) -> None:
    listed = "\n".join(f"  {m}: {', '.join(sorted(k))}" for m, k in sorted(found.items()))
    assert len(found) <= ceiling, (
        f"{len(found)} modules outside workloads/ name a kind (ceiling {ceiling}):\n{listed}\n"
        "move the kind's code into workloads/KIND/, or ask the registry (workloads.kind_of)"
    )


def test_modules_outside_workloads_name_no_more_kinds_than_before() -> None:
    check_kind_ceiling(modules_naming_a_kind(), KIND_NAMING_CEILING)


def test_the_kind_check_catches_a_kind_named(tmp_path: Path) -> None:
    assert kinds_named('if phase.generator == "sysbench":\n    pass\n') == {"sysbench"}
    assert kinds_named("from pglab.workloads.tpch import power\n") == {"tpch"}
    assert kinds_named("v = kit_load.sysbench_version()\nx = ph.replay\n") == {"sysbench", "replay"}
    assert kinds_named('KITS = {"tpcc": 1, "ycsb": 2, "tpce": 3}\n') == {"tpcc", "ycsb", "tpce"}
    # prose and longer words are not a kind named
    prose = '"""sysbench, as a docstring."""\nexe = "pgreplay"\nt = "tpchgen"\n'
    assert kinds_named(prose) == set()
    # a tree with one module naming a kind outside workloads/, and one inside it
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "executor.py").write_text('if ph.generator == "sysbench":\n    pass\n')
    (tmp_path / "run" / "other.py").write_text('x = "pgbench"\n')
    (tmp_path / "workloads" / "sysbench").mkdir(parents=True)
    (tmp_path / "workloads" / "sysbench" / "runner.py").write_text('KIND = "sysbench"\n')
    found = modules_naming_a_kind(tmp_path)
    assert found == {"run/executor.py": {"sysbench"}}
    check_kind_ceiling(found, 1)
    with pytest.raises(AssertionError, match="run/executor.py: sysbench"):
        check_kind_ceiling(found, 0)


# Modules that are data tables, laid out by hand as columns: the only place `# fmt: skip` stays.
DATA_TABLES = {"campaign/schema/tables.py"}
MAX_FMT_SKIPS = 50


def test_code_is_read_as_the_formatter_writes_it() -> None:
    """`# fmt: skip` only on data tables, and fewer than MAX_FMT_SKIPS of them (issue 51 item 5):
    elsewhere the formatter's layout is the one a reader sees, and the line cap holds on it."""
    bench = SRC.parents[1] / "bench"
    marked = {
        str(p.relative_to(SRC if SRC in p.parents else bench.parent)): p.read_text().count(
            "# fmt: skip"
        )
        for p in [*SRC.rglob("*.py"), *bench.rglob("*.py")]
    }
    marked = {k: n for k, n in marked.items() if n}
    assert set(marked) <= DATA_TABLES, f"# fmt: skip outside the data tables: {sorted(marked)}"
    assert sum(marked.values()) < MAX_FMT_SKIPS


# Where a metric's or a timing's stored name may be written as text (issue 51 item 4): the key
# tables (metric_units: MetricKey.text) and the store (store/numbers, and the migrations that
# edit stored objects); everywhere else a run's numbers are typed (records.RunMetrics, Timings).
STORED_NAMES_AT = ("metric_units.py", "store/")


def stored_names_written(text: str) -> list[str]:
    """The texts in a module that spell a phase's stored metric (``"phase.NAME.KEY"``) or a
    dataset step's stored timing (``"dataset_init.STEP_s"``), as strings or f-strings."""
    tree = ast.parse(text)
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings, prose
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    skip = docs | inner
    texts = [
        first
        for node in ast.walk(tree)
        if id(node) not in skip
        for first in [node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node]
        if isinstance(first, ast.Constant) and isinstance(first.value, str)
    ]
    return [t.value for t in texts if t.value.startswith(("phase.", "dataset_init."))]


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if not str(p.relative_to(SRC)).startswith(STORED_NAMES_AT)],
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_a_run_s_numbers_get_their_stored_names_at_the_store_s_edge_only(path: Path) -> None:
    assert stored_names_written(path.read_text()) == []


def test_a_stored_name_written_elsewhere_is_caught() -> None:
    assert stored_names_written('out[f"phase.{name}.nopm"] = 1.0\n') == ["phase."]
    assert stored_names_written('t[f"dataset_init.{s}_s"] = 2.0\n') == ["dataset_init."]
    assert stored_names_written('m = {"phase.main.tps": 1.0}\n') == ["phase.main.tps"]
    # a phase's name in prose, a key's parts: not a stored name
    assert stored_names_written('"""phase.NAME.KEY"""\nk = MetricKey("tps", "main")\n') == []
