"""The documentation site (mkdocs.yml, docs/): ``mkdocs build --strict`` passes (a broken link, a
page missing from the navigation or a failed generator fails it), its reference holds every
command's ``--help`` and every campaign key as the code has them, the built site works opened
from disk in headless Chromium (navigation and search, nothing fetched from the network), and
every guide's example file passes ``pglab run --dry-run``."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_report_browser import CHROMIUM, browse, console_errors

from pglab.campaign.schema import TABLES, TUNE_TABLES
from pglab.cli import main
from pglab.lab import Lab

pytestmark = pytest.mark.integration  # mkdocs, a browser and dry runs: seconds each

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
HOOK = REPO / "docs" / "hooks" / "reference.py"

# Each guide's example files: dry-run here, or (what needs SSH hosts, an existing server, a
# PostgreSQL source tarball or a PostgreSQL store) only parsed and planned, as every example is
# by tests/unit/test_campaign_plan.py::test_examples_parse.
GUIDES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "first-campaign": (("first-campaign.toml",), ()),
    "explaining-a-difference": (("why-it-changed.toml",), ()),
    "profiles": (("seed004-hot-functions.toml", "seed004-seqscan-vacuum.toml"), ()),
    "reading-results": (("auto-repeats.toml",), ()),
    "sweeps": (
        (
            "settings-sweep.toml",
            "seed003-matrix.toml",
            "seed000-phases.toml",
            "seed004-insert-scaling.toml",
        ),
        (),
    ),  # fmt: skip
    "storage": (("seed003-ext4-journal.toml", "seed000-filesystems.toml"), ()),
    "os": (("seed002-os-tuning.toml",), ()),
    "versions": (("versions.toml",), ("patch-ab.toml", "wal-compression.toml")),
    "existing-server": ((), ("existing-server.toml",)),
    "remote-hosts": ((), ("server-on-host.toml",)),
    "fleet": ((), ("settings-sweep.toml",)),
    "maintenance": (("seed004-maintenance.toml",), ()),
    "your-own-workload": (("replay.toml",), ("replay-on-hosts.toml",)),
    "workload-kits": (
        (
            "tpcc-scaling.toml",
            "tpcc-vs-tpcb.toml",
            "ycsb-zipf.toml",
            "sysbench-vs-pgbench.toml",
            "tpch-work-mem.toml",
            "tpch-work-mem-plans.toml",
            "tpch-versions.toml",
            "tpce-scaling.toml",
        ),
        (),
    ),  # fmt: skip
    "tuning": (("tune.toml",), ()),
    "export": (("first-campaign.toml",), ()),
    "live-view": (("live-view.toml",), ()),
    "history": (("nightly.toml",), ()),
    "serve": ((), ("first-campaign.toml",)),
}
NEEDS_ROOT = {"seed003-ext4-journal.toml", "seed000-filesystems.toml", "seed002-os-tuning.toml"}


def load_hook():
    spec = importlib.util.spec_from_file_location("docs_reference_hook", HOOK)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text_of(page: Path) -> str:
    """A built page's text: tags out, entities decoded, runs of blanks as one space."""
    raw = re.sub(r"<[^>]+>", "", page.read_text())
    return re.sub(r"\s+", " ", html.unescape(raw))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_build_is_strict_and_every_page_is_in_it(site: Path) -> None:
    nav = re.findall(r":\s+([\w/-]+\.md)$", (REPO / "mkdocs.yml").read_text(), re.M)
    nav += re.findall(r"^\s+- ([\w/-]+\.md)$", (REPO / "mkdocs.yml").read_text(), re.M)
    sources = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert sources == set(nav), "every page in docs/ is in mkdocs.yml's nav, and only those"
    for page in nav:
        assert (site / page.replace(".md", ".html")).is_file(), page


def test_the_reference_has_every_command_s_help(site: Path) -> None:
    page = text_of(site / "reference" / "commands.html")
    parsers = load_hook().command_helps()
    assert len(parsers) >= 15  # pglab, its commands, worker and status
    for title, help_text in parsers:
        assert re.sub(r"\s+", " ", help_text).strip() in page, f"{title} --help"


def test_the_reference_has_every_campaign_key(site: Path) -> None:
    page = text_of(site / "reference" / "campaign-file.html")
    for table in TABLES + TUNE_TABLES:  # a tune file's [tune] too
        if table.name:
            assert table.header in page, table.header
        for key in table.keys:
            doc = re.sub(r"\s+", " ", html.unescape(re.sub(r"`", "", key.doc)))
            assert f"{key.name} " in page and doc in page, (table.name, key.name)


def test_generated_reference_pages_are_the_code_s(site: Path) -> None:
    from pglab.analysis import tidy
    from pglab.analysis.notice_kinds import KINDS

    columns = text_of(site / "reference" / "export-columns.html")
    assert all(c.name in columns and c.doc in columns for c in tidy.COLUMNS)
    warnings = text_of(site / "reference" / "warnings.html")
    assert all(kind in warnings for kind in KINDS)
    from pglab.telemetry import os_stats

    figures = text_of(site / "reference" / "figures.html")
    assert all(c.name in figures for c in tidy.COLUMNS[tidy.NAMES.index("tps") :])
    assert all(c in figures for c in (*os_stats.DISK_COLUMNS, *os_stats.MEM_COLUMNS))
    assert '"$schema": "https://json-schema.org/draft/2020-12/schema"' in text_of(
        site / "reference" / "json-schema.html"
    )


def test_the_hook_fails_on_a_missing_path_an_unknown_marker_and_a_failed_generator() -> None:
    from types import SimpleNamespace

    from mkdocs.exceptions import PluginError

    hook = load_hook()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="guides/x.md"))
    assert "| `tps` |" in hook.on_page_markdown("<!-- pglab:figures -->", page, None, None)
    assert hook.on_page_markdown("`src/pglab/NAME.py`, `examples/first-campaign.toml`", page,
                                 None, None)  # fmt: skip
    with pytest.raises(PluginError, match="src/pglab/nowhere.py"):
        hook.on_page_markdown("see `src/pglab/nowhere.py`", page, None, None)
    with pytest.raises(PluginError, match="no generator 'nothing'"):
        hook.on_page_markdown("<!-- pglab:nothing -->", page, None, None)
    hook.GENERATORS["broken"] = lambda: 1 / 0
    with pytest.raises(PluginError, match="ZeroDivisionError"):
        hook.on_page_markdown("<!-- pglab:broken -->", page, None, None)


def test_nothing_is_fetched_from_the_network(site: Path) -> None:
    for page in site.rglob("*.html"):
        found = re.findall(
            r'<(?:script|link|img)[^>]+(?:src|href)="(https?:[^"]+)"', page.read_text()
        )
        assert found == [], (page, found)


@pytest.mark.skipif(CHROMIUM is None, reason="apt-get install chromium")
def test_the_site_opened_from_disk_navigates_and_searches(site: Path, tmp_path: Path) -> None:
    dom, stderr = browse(site / "index.html", tmp_path, "--dump-dom")
    assert console_errors(stderr) == []
    links = set(re.findall(r'class="md-nav__link[^"]*"[^>]*href="([^"#]+)"', dom))
    links |= set(re.findall(r'href="([^"#]+)"[^>]*class="md-nav__link', dom))
    pages = {(site / link).resolve() for link in links if link.endswith(".html")}
    assert len(pages) >= 30, links
    assert all(p.is_file() for p in pages), sorted(p for p in pages if not p.is_file())
    # a query in the address: the search runs in the page's worker (docs/javascripts/
    # iframe-worker.js on file://) and lists its results
    query = (site / "index.html").as_uri() + "?q=vacuum"
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", f"--user-data-dir={tmp_path / 'chromium'}", "--virtual-time-budget=15000",
         "--dump-dom", query],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert console_errors(done.stderr) == []
    results = re.findall(r'<a href="([^"]+)" class="md-search-result__link"', done.stdout)
    assert any("guides/maintenance.html" in href for href in results), results
    shot = REPO / "artifacts" / "docs.png"
    shot.parent.mkdir(exist_ok=True)
    browse(site / "guides" / "first-campaign.html", tmp_path, "--window-size=1300,1000",
           f"--screenshot={shot}")  # fmt: skip
    assert shot.stat().st_size > 50_000


def test_every_guide_names_its_example_files() -> None:
    guides = {p.stem for p in (REPO / "docs" / "guides").glob("*.md")} - {"index"}
    assert guides == set(GUIDES)
    for guide, (dry, parsed) in GUIDES.items():
        text = (REPO / "docs" / "guides" / f"{guide}.md").read_text()
        for name in (*dry, *parsed):
            assert f"examples/{name}" in text, (guide, name)
            assert (EXAMPLES / name).is_file()


@pytest.mark.parametrize(
    "name", sorted({n for dry, _ in GUIDES.values() for n in dry}), ids=lambda n: n
)
def test_a_guide_s_example_passes_a_dry_run(name: str, lab: Lab, tmp_path: Path) -> None:
    if name in NEEDS_ROOT and os.geteuid() != 0:
        pytest.skip("storage targets pglab makes need root")
    command = "tune" if name == "tune.toml" else "run"
    argv = [command, str(EXAMPLES / name), "--dry-run", "--lab-dir", str(lab.home)]
    assert main([*argv, "--store", str(tmp_path / "r.sqlite")]) == 0
