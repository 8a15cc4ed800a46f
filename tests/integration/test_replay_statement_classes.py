"""A replay's statement classes compared and named on a real campaign: the workload of
``examples/replay.toml`` (pgbench's simple-update load, captured by ``test_replay.py``)
replayed with Debian's pgreplay, four interleaved rounds, on a variant whose planner may
not use an index (``enable_indexscan``, ``enable_bitmapscan``, ``enable_indexonlyscan`` off:
pgbench_accounts' statements seq scan its 100,000 rows) and the default. ``pglab show``
says the total execution time moved and names the accounts' classes first among the slower
ones; ``pglab compare`` of the two points gives the same answer (the campaign's own), and so
do the report and ``pglab serve``'s compare page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).parents[2] / "examples" / "replay" / "pgbench-simple-update.json.gz"
CAMPAIGN = """\
name = "replay-index"
repeats = 4

[server.settings]
shared_preload_libraries = "pg_stat_statements"

[workload]
replay = "{workload}"

[variants.index]

[variants.noindex]
settings = {{ enable_indexscan = "off", enable_bitmapscan = "off", enable_indexonlyscan = "off" }}
"""
UPDATE = "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
SELECT = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"


def _pglab(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pglab", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "120"},
    )


def test_the_slower_statement_classes_are_named(lab_home: Path, tmp_path: Path) -> None:
    campaign = tmp_path / "replay-index.toml"
    campaign.write_text(CAMPAIGN.format(workload=EXAMPLE))
    store = str(tmp_path / "store.sqlite")
    done = _pglab("run", str(campaign), "--lab-dir", str(lab_home), "--store", store, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    shown = _pglab("show", "replay-index", "--store", store)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    print(text)  # what the guide shows (pytest -s)
    said = next(line for line in text.splitlines() if line.startswith("on noindex"))
    assert said.startswith("on noindex (against index) your workload's statements take +"), said
    assert " + in total; " in said, said  # the total execution time, significantly more
    slower = [line for line in text.splitlines() if line.startswith("  slower +")]
    # the seq scans first, ranked: 100 times slower and more; another class may follow (on
    # the busy machine, the INSERT into pgbench_history waited for the CPU the scans took)
    assert {line.split(" ms  ", 1)[1] for line in slower[:2]} == {SELECT, UPDATE}, text
    assert "Holm-corrected over all" in text

    compared = _pglab(
        "compare", "replay-index:index", "replay-index:noindex", "--json", "--store", store
    )
    assert compared.returncode == 0, compared.stderr
    items = json.loads(compared.stdout)["items"]
    # the campaign's own answer, in the same words (the points' labels may be longer)
    assert items["said"].partition(") ")[2] == said.partition(") ")[2]
    assert {m["item"] for m in items["slower"][:2]} == {UPDATE, SELECT}
    top = items["slower"][0]
    assert top["b"] > 10 * top["a"], top  # a seq scan of 100,000 rows against an index lookup

    # the report says the same, in its "Statement classes" section
    page = tmp_path / "replay-index.html"
    made = _pglab("report", "replay-index", "--store", store, "--lab-dir", str(lab_home),
                  "-o", str(page))  # fmt: skip
    assert made.returncode == 0, made.stderr
    html = page.read_text()
    assert 'id="statement-classes"' in html
    assert html.count(said.partition(") ")[2].replace("'", "&#39;")) == 1, said

    # and pglab serve's compare page
    from helpers.asgi import call

    from pglab.serve.app import make_app

    app = make_app(store, lab_home)
    code, _, served = call(app, "/compare?a=replay-index%3Aindex&b=replay-index%3Anoindex")
    assert code == 200 and 'id="statement-classes"' in served, served[-2000:]
    assert items["said"].partition(") ")[2].replace("'", "&#39;") in served
