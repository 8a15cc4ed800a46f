"""Malformed input, generated: campaign files, setting values and custom pgbench scripts must give
a LabError (a message and a hint), never a traceback; hostile names must come back unchanged."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from helpers.campaign_fuzz import DOCUMENTS
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from markupsafe import escape

from pglab.campaign import parse as campaign
from pglab.cli import main
from pglab.errors import LabError
from pglab.lab import Lab
from pglab.planning.plan import make_plan
from pglab.planning.preflight import preflight
from pglab.store import open_store

HOSTILE = [
    "x'; DROP TABLE runs; --",
    "<script>alert(1)</script>",
    "$(touch /tmp/pglab-pwned) `id` ; | & > < \" '",
    "größe ✓ 数据",
]


@hsettings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=DOCUMENTS)
def test_any_campaign_document_parses_or_says_what_is_wrong(doc: dict) -> None:
    try:
        camp = campaign.parse(doc, default_name="fuzz")
    except LabError as exc:
        assert str(exc).strip()
        return
    make_plan(camp)  # a campaign that parses can be planned


@hsettings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=string.printable + "äß✓\x00", max_size=200))
def test_any_campaign_text_loads_or_says_what_is_wrong(tmp_path_factory, text: str) -> None:
    path = tmp_path_factory.mktemp("toml") / "c.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        campaign.load(path)
    except LabError as exc:
        assert str(exc).strip()


SCRIPT_LINES = st.sampled_from(
    [
        "\\set aid random(1, 100000 * :scale)",
        "\\set x 1 +",
        "\\set",
        "\\sleep 1 ms",
        "\\sleep banana",
        "\\if :x",
        "\\endif",
        "\\bogus 1",
        "SELECT 1;",
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
        "BEGIN;",
        "END;",
        "\\gset",
        "-- comment",
        "",
        "\\setshell x echo 1",
    ]
)


@pytest.mark.integration
@hsettings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(SCRIPT_LINES, min_size=1, max_size=6))
def test_custom_scripts_are_checked_by_pgbench_before_any_run(
    tmp_path: Path, lab: Lab, lines: list[str]
) -> None:
    """pgbench itself parses each custom script before the campaign starts: a script it rejects
    is a LabError naming the file; one it accepts passes."""
    script = tmp_path / "fuzz.sql"
    script.write_text("\n".join(lines) + "\n")
    doc = {"name": "fuzz", "workload": {"script": "fuzz.sql", "clients": 1, "duration": 1}}
    camp = campaign.parse(doc, default_name="fuzz", base_dir=tmp_path)
    try:
        preflight(camp, lab)
    except LabError as exc:
        assert "fuzz.sql" in str(exc), str(exc)


@pytest.mark.integration
def test_hostile_variant_names_round_trip_unchanged(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    """Names with quotes, SQL, shell and HTML metacharacters and non-ASCII go through run, store,
    show and export unchanged, and run nothing they contain."""
    variants = "\n".join(f"[variants.{json.dumps(name)}]" for name in HOSTILE)
    path = tmp_path / "c.toml"
    path.write_text(
        'name = "hostile \' \\" <b>"\n[dataset]\nscale = 1\n'
        '[workload]\nclients = 1\nduration = 1\nlatency_log = "off"\n' + variants + "\n"
    )
    store_path = tmp_path / "r.sqlite"
    common = ["--lab-dir", str(lab.home), "--store", str(store_path)]
    assert main(["run", str(path), *common]) == 0
    with open_store(str(store_path)) as store:
        runs = store.list_runs()
        assert sorted(r.variant for r in runs) == sorted(HOSTILE)
        assert {r.campaign for r in runs} == {"hostile ' \" <b>"}
        assert all(r.status == "ok" for r in runs)
    assert not Path("/tmp/pglab-pwned").exists()
    capsys.readouterr()
    assert main(["show", "hostile ' \" <b>", "--json", *common]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert sorted(r["variant"] for r in shown["runs"]) == sorted(HOSTILE)
    assert main(["export", "hostile ' \" <b>", "--format", "json", *common]) == 0
    exported = json.loads(capsys.readouterr().out)
    exported_runs = exported["runs"] if isinstance(exported, dict) else exported
    assert sorted(r["variant"] for r in exported_runs) == sorted(HOSTILE)
    assert main(["show", "hostile ' \" <b>", *common]) == 0
    text = capsys.readouterr().out
    for name in HOSTILE:
        assert name.split()[0] in text  # printed literally (rich markup escaped)
    page = tmp_path / "report.html"
    assert main(["report", "hostile ' \" <b>", "-o", str(page), *common]) == 0
    html_text = page.read_text()
    for name in HOSTILE:
        assert escape(name) in html_text  # shown, escaped
        if "<" in name:
            assert name not in html_text  # never as markup
    assert escape("hostile ' \" <b>") in html_text  # the campaign's name, escaped too
    assert "hostile ' \" <b>" not in html_text
