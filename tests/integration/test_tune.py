"""``pglab tune`` on real servers: a study end to end (trials stored as runs, confirmation,
the answer), resume after SIGKILL of pglab mid-trial (trial counts exact), a knob value the
server refuses becoming a failed trial with its reason, and bad [tune] tables refused before
any run. Trials are 2-3 s at scale 1: what is checked is the plumbing, not the tuning."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from conftest import assert_stopped_cleanly, lab_processes, pglab_in_background, wait_for

from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store
from pglab.tune import study as studies

pytestmark = pytest.mark.integration

POINT = """
name = "{name}"
[dataset]
scale = 1
[workload]
script = "tpcb-like"
clients = 2
duration = {duration}
"""


def tune_file(tmp_path: Path, name: str, tune: str, duration: int = 2) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(POINT.format(name=name, duration=duration) + tune)
    return path


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


def trials_of(store: Path, name: str) -> list[optuna.trial.FrozenTrial]:
    study = optuna.load_study(study_name=name, storage=studies.storage(str(store)))
    return [t for t in study.get_trials() if t.state != optuna.trial.TrialState.WAITING]


def test_a_tune_study_end_to_end(tmp_path: Path, lab: Lab, capsys, no_leftovers) -> None:
    store = tmp_path / "r.sqlite"
    path = tune_file(tmp_path, "e2e", """
[tune]
trials = 3
confirm_repeats = 2
confirm_max = 3
confirm_top = 1
[tune.knobs]
shared_buffers = {min = "16MB", max = "256MB", log = true}
wal_compression = ["off", "pglz"]
""")  # fmt: skip
    assert cli("tune", str(path), lab=lab, store=store) == 0
    out = capsys.readouterr().out
    trials = trials_of(store, "e2e")
    assert [t.user_attrs["source"] for t in trials] == ["default", "pgtune", "sampler"]
    assert all(t.user_attrs["outcome"] == "ok" for t in trials)
    assert trials[0].params["wal_compression"] == "off"  # the server's own value
    # PGTune's shared_buffers (a quarter of RAM) clamped to the range; what it does not set at
    # the server's own value
    assert trials[1].params == {"shared_buffers": 32768, "wal_compression": "off"}
    with open_store(str(store)) as st:
        runs = st.list_runs("e2e")
    by_variant: dict[str, int] = {}
    for r in runs:
        assert r.ok, r.error
        by_variant[r.variant] = by_variant.get(r.variant, 0) + 1
    # every trial one stored run with its TPS; every candidate confirmed twice, then (adaptive)
    # a third time: 2 rounds give no anytime-valid interval, so nothing was decided
    assert by_variant == {"trial 0": 1, "trial 1": 1, "trial 2": 1, "confirm default": 3,
                          "confirm pgtune": 3, f"confirm {_best(trials)}": 3}  # fmt: skip
    for t in trials:
        run = next(r for r in runs if r.variant == f"trial {t.number}")
        assert t.value == pytest.approx(run.tps)
        assert run.metrics["latency_p99_ms"] > 0
    # what a person reads: the trials as they ran, then the study and its answer
    assert "trial 1/3 #0 default: ✓" in out and "trial 3/3 #2 sampler" in out
    assert "optimization history" in out and "then 6–9 confirmation run(s)" in out
    assert "confirmation: adaptive, 2–3 rounds" in out and "p (Bonferroni)" in out
    assert "answer: " in out
    assert cli("show", "e2e", lab=lab, store=store) == 0
    shown = capsys.readouterr().out
    assert "tune study e2e: maximize tps" in shown and "3 of 3 trial(s) run (3 ok)" in shown
    assert f"\n  {_best(trials)} " in shown  # its confirmation row
    assert cli("show", "e2e", "--json", lab=lab, store=store) == 0
    doc = json.loads(capsys.readouterr().out)["tune"]
    assert [t["number"] for t in doc["trials"]] == [0, 1, 2] and doc["budget"] == 3
    assert [r["label"] for r in doc["confirmation"]] == ["default", "pgtune", _best(trials)]
    comparison = doc["confirmation"][1]["comparison"]
    assert comparison["n_b"] == 3 and "sequential" in comparison["reason"] and doc["answer"]
    # the report: the study's section first, its history drawn
    page = tmp_path / "e2e.html"
    assert cli("report", "e2e", "-o", str(page), lab=lab, store=store) == 0
    html = page.read_text()
    for part in ('id="tuning"', 'id="tune-answer"', 'id="tune-confirmation"', 'id="tune-trials"'):
        assert part in html
    assert html.index('id="tuning"') < html.index("<h2>Summary</h2>")
    assert "(confidence sequence of the within-round ratios), Bonferroni" in html
    assert "<th>p (Bonferroni)</th>" in html
    assert (tmp_path / "e2e-charts" / "tune-history.png").stat().st_size > 1000
    _as_a_reader_sees_it(page, tmp_path, out[out.index("answer: ") + 8 :].splitlines()[0])
    capsys.readouterr()
    # run again: nothing to do, the same answer
    assert cli("tune", str(path), lab=lab, store=store) == 0
    again = capsys.readouterr().out
    assert len(trials_of(store, "e2e")) == 3
    assert out[out.index("answer: ") :].splitlines()[0] in again
    # the point edited since: its trials would not compare; refused, nothing run
    path.write_text(path.read_text().replace("duration = 2", "duration = 3"))
    assert cli("tune", str(path), lab=lab, store=store) == 2
    assert "the point of 'e2e' (its workload, dataset or [server.settings]) changed" in (
        capsys.readouterr().err
    )
    assert len(trials_of(store, "e2e")) == 3


def _as_a_reader_sees_it(page: Path, tmp_path: Path, answer: str) -> None:
    """The Tuning section in headless Chromium: every chart drawn (the optimization history
    among them), no script error, the answer the terminal gave, the trials' rows."""
    from test_report_browser import body_state, browse, console_errors, with_script

    shown = with_script(page, tmp_path / "seen.html", (
        "var h = document.querySelector('img[data-chart=\"tune-history\"]');"
        "document.body.dataset.history = h ? String(h.naturalWidth) : 'none';"
        "document.body.dataset.answer = document.getElementById('tune-answer').innerText;"
        "document.body.dataset.trials = String("
        "document.querySelectorAll('#tune-trials tbody tr').length);"
    ))  # fmt: skip
    dom, stderr = browse(shown, tmp_path, "--virtual-time-budget=10000", "--dump-dom")
    state = body_state(dom)
    assert state["errors"] == "" and state["charts-drawn"] == state["charts-total"], state
    assert int(state["history"]) > 300, state  # decoded and drawn, not a broken image
    assert state["trials"] == "3" and html_text(state["answer"]) == answer, state
    assert console_errors(stderr) == []


def html_text(value: str) -> str:
    import html

    return html.unescape(value).strip()


def _best(trials: list[optuna.trial.FrozenTrial]) -> str:
    return f"trial {max(trials, key=lambda t: t.value or 0).number}"


def test_a_value_the_server_refuses_is_a_failed_trial(
    tmp_path: Path, lab: Lab, capsys, no_leftovers
) -> None:
    """max_wal_size = 2MB is in pg_settings' range, but the server will not start with it."""
    store = tmp_path / "r.sqlite"
    path = tune_file(tmp_path, "refused", """
[tune]
trials = 2
confirm_repeats = 0
pgtune = false
enqueue = [{max_wal_size = "2MB"}]
[tune.knobs]
max_wal_size = {min = "2MB", max = "1GB", log = true}
""")  # fmt: skip
    assert cli("tune", str(path), lab=lab, store=store) == 0
    out = capsys.readouterr().out
    default, refused = trials_of(store, "refused")
    assert default.user_attrs["outcome"] == "ok"
    assert refused.user_attrs["outcome"] == "failed"
    assert refused.state == optuna.trial.TrialState.PRUNED  # penalised, below every measured one
    reason = '"max_wal_size" must be at least twice "wal_segment_size"'
    assert reason in refused.user_attrs["error"]
    assert f"✗ failed: FATAL:  {reason}" in out or f"✗ failed: FATAL: {reason}" in out
    with open_store(str(store)) as st:
        run = next(r for r in st.list_runs("refused") if r.variant == "trial 1")
    assert run.status == "failed" and reason in (run.error or "")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=lambda s: s.name)
def test_killed_or_interrupted_mid_trial_then_tune_again_resumes(
    tmp_path: Path, lab: Lab, sig: signal.Signals, no_leftovers
) -> None:
    """SIGKILL gives pglab no say: the next start marks the trial it left running. Ctrl-C:
    pglab stops everything, marks it itself, and exits 130."""
    store = tmp_path / "r.sqlite"
    path = tune_file(tmp_path, "killed", """
[tune]
trials = 3
confirm_repeats = 0
pgtune = false
[tune.knobs]
checkpoint_completion_target = {min = 0.5, max = 0.9}
""", duration=4)  # fmt: skip
    argv = [sys.executable, "-m", "pglab", "tune", str(path), "--lab-dir", str(lab.home),
            "--store", str(store)]  # fmt: skip
    err = tmp_path / "err.txt"

    def second_trial_running() -> bool:
        if not store.exists():
            return False
        with open_store(str(store)) as st:
            stored = len(st.list_runs("killed"))
        names = {p.info["name"] for p in lab_processes(lab.home)}
        return stored == 1 and "pgbench" in names

    with pglab_in_background(argv, err) as proc:
        wait_for(second_trial_running, proc, err, "the second trial")
        time.sleep(1)
        proc.send_signal(sig)
        proc.wait(timeout=60)
    assert_stopped_cleanly(proc, sig, lab.home, err)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said = "resuming: trial(s) 1 of a pglab that stopped" in done.stdout
    assert said == (sig == signal.SIGKILL)  # after Ctrl-C, pglab marked it itself
    trials = trials_of(store, "killed")
    outcomes = [t.user_attrs["outcome"] for t in trials]
    assert outcomes == ["ok", "interrupted", "ok", "ok"]
    assert trials[1].state == optuna.trial.TrialState.FAIL
    assert trials[2].user_attrs.get("retry_of") == 1  # the killed configuration, run again
    assert trials[2].params == trials[1].params
    with open_store(str(store)) as st:
        runs = st.list_runs("killed")
    assert sorted(r.variant for r in runs) == ["trial 0", "trial 2", "trial 3"]
    assert all(r.ok for r in runs)


def test_bad_tune_tables_are_refused_before_any_run(tmp_path: Path, lab: Lab, capsys) -> None:
    store = tmp_path / "r.sqlite"
    path = tune_file(tmp_path, "bad", """
[tune]
enqueue = [{work_mem = "4MB"}]
[tune.knobs]
shared_bufers = {min = "16MB", max = "1GB"}
checkpoint_timeout = {min = "10min", max = "1min"}
fsync = ["on", "off"]
""")  # fmt: skip
    assert cli("tune", str(path), lab=lab, store=store) == 2
    err = capsys.readouterr().err
    assert "4 problem(s)" in err
    assert "[tune] enqueue #1: work_mem is not one of the knobs" in err
    assert 'unknown setting "shared_bufers" — did you mean shared_buffers' in err
    assert 'checkpoint_timeout: min "10min" is above max "1min"' in err
    assert "fsync can lose committed data" in err and "unsafe = true" in err
    # a constraint no configuration meets: said before anything runs, nothing stored
    path = tune_file(tmp_path, "tight", """
[tune]
memory_share = 0.01
[tune.knobs]
shared_buffers = {min = "1GB", max = "2GB"}
""")  # fmt: skip
    assert cli("tune", str(path), lab=lab, store=store) == 2
    err = capsys.readouterr().err
    assert "the memory constraint excludes every configuration" in err
    assert "shared_buffers 1.0 GiB" in err and "memory_share = 0.01" in err
    assert not store.exists()  # nothing written
    # --dry-run of a good file: what would run, nothing written
    path = tune_file(tmp_path, "dry", """
[tune]
trials = 5
enqueue = [{shared_buffers = "64MB"}]
[tune.knobs]
shared_buffers = {min = "32MB", max = "256MB", log = true}
""")  # fmt: skip
    assert cli("tune", str(path), "--dry-run", lab=lab, store=store) == 0
    out = capsys.readouterr().out
    assert "shared_buffers: 32MB … 256MB, log" in out
    assert "first trials: the server's defaults; PGTune's rules; shared_buffers=64MB" in out
    assert "PGTune's rules here: " in out and "no problems" in out
    assert not store.exists()


def test_a_p99_limit_no_trial_meets_leaves_no_best(
    tmp_path: Path, lab: Lab, capsys, no_leftovers
) -> None:
    """TPS under a p99 limit of 1 µs: every trial measured, none feasible, none the best."""
    store = tmp_path / "r.sqlite"
    path = tune_file(tmp_path, "limit", """
[tune]
p99_limit_ms = 0.001
trials = 2
confirm_repeats = 0
pgtune = false
[tune.knobs]
checkpoint_completion_target = {min = 0.5, max = 0.9}
""")  # fmt: skip
    assert cli("tune", str(path), lab=lab, store=store) == 0
    out = capsys.readouterr().out
    trials = trials_of(store, "limit")
    assert [t.user_attrs["outcome"] for t in trials] == ["ok", "ok"]
    for t in trials:
        assert t.value == pytest.approx(t.user_attrs["tps"])  # the objective stays TPS
        assert t.constraints["violation"] == pytest.approx(t.user_attrs["p99_ms"] / 0.001 - 1)
    assert "over the limit) · best –" in out
    assert "maximize tps with p99 ≤ 0.001 ms" in out and "(p99 over)" in out


def test_p99_objective_with_the_study_in_a_postgresql_store(
    tmp_path: Path, lab: Lab, pg_store: str, capsys, no_leftovers
) -> None:
    """The study lives in the PostgreSQL store's own database, beside pglab's tables."""
    path = tune_file(tmp_path, "p99", """
[tune]
objective = "p99"
trials = 2
confirm_repeats = 0
pgtune = false
[tune.knobs]
wal_writer_delay = {min = "10ms", max = "1s", log = true}
""")  # fmt: skip
    assert main(["tune", str(path), "--lab-dir", str(lab.home), "--store", pg_store]) == 0
    out = capsys.readouterr().out
    assert "minimize ms p99" in out
    study = optuna.load_study(study_name="p99", storage=studies.storage(pg_store))
    assert study.direction == optuna.study.StudyDirection.MINIMIZE
    with open_store(pg_store) as st:
        runs = {r.variant: r for r in st.list_runs("p99")}
    assert set(runs) == {"trial 0", "trial 1"}
    for t in study.get_trials():
        assert t.value == pytest.approx(runs[f"trial {t.number}"].metrics["latency_p99_ms"])
    import psycopg

    with psycopg.connect(pg_store) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables")}
    assert {"studies", "trials", "runs", "campaigns"} <= tables
