"""Why it changed, on real runs: each known case ranks the right item first in ``pglab compare``.

- ``synchronous_commit`` on vs off: the waits for the WAL flush (IO:WALSync, LWLock:WALWrite)
  vanish with off, and rank first, in tpcb-like's ``END`` (``compute_query_id = on``: waits by
  statement class). The lab is on disk for this one (the tests' lab is on tmpfs,
  where an fsync costs nothing and no commit would wait for one).
- A CPU-bound neighbour: a busy loop started by the test (not a child of pglab: a double fork)
  during one campaign and not the other, on the server's CPU (``[os] cpus = 1``) at a higher
  priority; the busy machine (other processes' CPU) ranks first, and ``pglab show`` warns of it
  on the busy campaign. Skipped on a machine other work already keeps busy (a CI runner's other
  jobs): the neighbour would take the others' share, not the server's, and what the others used
  in all would not change.
- The OS sampler tells a neighbour from the server's processes on this machine, busy or not: two
  samplers side by side, one told the neighbour is a postgres process; their others' CPU
  differs by what the neighbour used.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import psutil
import pytest
from helpers.asgi import call
from markupsafe import escape

from pglab.campaign.os_checks import usable_cpus
from pglab.cli import main
from pglab.lab import Lab
from pglab.serve import make_app
from pglab.store import open_store
from pglab.telemetry.os_stats import OsSampler

pytestmark = pytest.mark.integration

WAL_FLUSH = ("wait:io:walsync", "wait:lwlock:walwrite", "wait:io:walwrite")


@pytest.fixture(scope="module")
def disk_lab() -> Iterator[Path]:
    """A lab home on disk (/var/tmp), reachable by the server's account."""
    home = Path(tempfile.mkdtemp(prefix="pglab-evidence-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    Lab.open(home)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _run(home: Path, store: Path, campaign: Path) -> None:
    assert main(["run", str(campaign), "--lab-dir", str(home), "--store", str(store)]) == 0


def _compare(store: Path, a: str, b: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["compare", a, b, "--json", "--store", str(store)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert main(["compare", a, b, "--store", str(store)]) == 0
    found["shown"] = capsys.readouterr().out
    return found


def test_synchronous_commit_off_ranks_the_wal_flush_waits_first(
    tmp_path: Path, disk_lab: Path, capsys: pytest.CaptureFixture[str], no_leftovers: None
) -> None:
    campaign = tmp_path / "sync.toml"
    campaign.write_text(
        'name = "sync"\nrepeats = 3\norder = "interleaved"\n[dataset]\nscale = 1\n'
        '[server.settings]\ncompute_query_id = "on"\n'  # waits by statement class
        "[workload]\nclients = 4\nduration = 4\n[variants.on]\n"
        '[variants.off]\nsettings = { synchronous_commit = "off" }\n'
    )
    store = tmp_path / "r.sqlite"
    _run(disk_lab, store, campaign)
    found = _compare(store, "sync:on", "sync:off", capsys)
    (pair,) = found["evidence"]
    # first of what the run could have caused: a rise from outside it ranks before by design
    # (another test's servers and pgbench beside this one, busier in one round than another)
    caused = [i for i in pair["items"] if not i["outside"]]
    first = caused[0]
    assert first["key"].lower() in WAL_FLUSH, pair["items"]
    with open_store(str(store)) as opened:  # every run kept the others' CPU
        for row in opened.list_runs("sync"):
            run = opened.get_run(row.id)
            assert run is not None and run.ok
            assert "others_cpu_pct" in run.series["0"]["os.procs"]["columns"]
    assert first["method"] == "paired"  # one interleaved campaign: by round
    assert first["delta"] < 0 and first["ci_high"] < 0 and first["b"] < first["a"] / 4
    # the commits wait for the flush: tpcb-like's END (query ids computed: waits.statements)
    assert first["statement"] == "END;" and first["statement_pct"] > 50, first
    assert first["text"].endswith("% of it in `END;`)")
    assert "why it changed" in found["shown"]
    assert first["text"] in " ".join(found["shown"].split()), found["shown"]
    # show prints the same for its comparison, when it is significant (the issue: "each
    # significant difference"; this machine's noise may leave it unresolved)
    assert main(["show", "sync", "--store", str(store)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    page = tmp_path / "sync.html"  # and so does the report (serve's page draws its sections)
    assert main(["report", "sync", "--store", str(store), "-o", str(page)]) == 0
    html = page.read_text()
    app = make_app(str(store), tmp_path / "serve-lab")  # serve's compare page: the same items
    code, _, served = call(app, "/compare?" + urlencode({"a": "sync:on", "b": "sync:off"}))
    assert code == 200 and "Why it changed: on → off" in served
    assert str(escape(first["text"])) in served
    if found["pairs"][0]["comparison"]["verdict"] in "+-":
        assert "why it changed (on → off)" in shown and first["text"] in shown, shown
        assert '<h2 id="evidence">Why it changed</h2>' in html and first["text"] in html
    else:
        assert "why it changed" not in shown and 'id="evidence"' not in html


def test_the_os_sampler_counts_a_neighbour_among_the_others_and_ours_not(
    tmp_path: Path, neighbour: int
) -> None:
    proc = psutil.Process(neighbour)
    told = OsSampler([tmp_path], lambda: [], lambda: [neighbour])  # as if it were postgres
    blind = OsSampler([tmp_path], lambda: [], lambda: [])
    for sampler in (told, blind):  # each alone, its window inside the one measured around it
        before, t0 = proc.cpu_times(), time.time()
        sampler.start(t0)
        time.sleep(2)
        sampler.sample(t1 := time.time())
        after, t2 = proc.cpu_times(), time.time()
        used = after.user + after.system - before.user - before.system  # CPU seconds
        outside = t2 - t0 - (t1 - t0)  # the measured window's time outside the sampler's
        assert used > 0.2  # it ran
        (row,) = sampler.finish(t2)["os.procs"].rows
        least = 100 * (used - outside) / (t1 - t0) - 5  # % of a core, at the least
        if sampler is told:
            assert least <= row[2] <= 100 * used / (t1 - t0) + 5  # the server's, as told
        else:
            assert row[3] >= least  # among the others


@pytest.fixture
def neighbour() -> Iterator[int]:
    """A CPU-bound process that is not a child of this one (pglab runs in this process and
    leaves its own descendants out): started by a shell that exits at once, on the CPU the
    server gets with ``[os] cpus = 1``, at a higher priority than the server."""
    code = "while True: pass"
    cpu = usable_cpus()[0]
    out = subprocess.run(
        ["sh", "-c", f'taskset -c {cpu} nice -n -20 {sys.executable} -c "{code}" '
         ">/dev/null 2>&1 & echo $!"],
        capture_output=True, text=True, check=True, timeout=10,
    )  # fmt: skip
    pid = int(out.stdout.strip())
    proc = psutil.Process(pid)
    assert proc.ppid() != os.getpid()
    try:
        yield pid
    finally:
        if proc.is_running() and code in " ".join(proc.cmdline()):
            os.kill(pid, signal.SIGKILL)
            proc.wait(10)


@pytest.mark.alone  # the other worker's servers and pgbench would be a busy machine of their own
def test_a_cpu_bound_neighbour_ranks_the_busy_machine_first(
    tmp_path: Path, lab_home: Path, capsys: pytest.CaptureFixture[str], request, no_leftovers
) -> None:
    busy = psutil.cpu_percent(interval=3) * psutil.cpu_count() / 100  # cores, this one idle
    if busy > 0.5:
        pytest.skip(
            f"the machine is busy with other work ({100 * busy:.0f}% of a core): a neighbour "
            "would take the others' share of it, not the server's (what the others used in all "
            "would not change), so no busy machine could be told from the other one"
        )
    doc = ('name = "{name}"\nrepeats = 4\n[dataset]\nscale = 1\n'
           "[workload]\nclients = 2\nduration = 3\n[os]\ncpus = 1\nclient_cpus = 1\n")  # fmt: skip
    store = tmp_path / "r.sqlite"
    for name in ("quiet", "busy"):
        campaign = tmp_path / f"{name}.toml"
        campaign.write_text(doc.format(name=name))
        if name == "busy":
            request.getfixturevalue("neighbour")
        _run(lab_home, store, campaign)
    found = _compare(store, "quiet", "busy", capsys)
    (pair,) = found["evidence"]
    first = pair["items"][0]
    assert first["key"] == "others_cpu_pct", pair["items"]
    assert first["method"] == "welch"  # points of two campaigns: no rounds to pair
    assert first["ci_low"] > 0  # % of a core: the neighbour's, taken from the server
    assert "busy machine" in found["shown"]
    capsys.readouterr()
    assert main(["show", "busy", "--store", str(store)]) == 0
    assert "busy-machine" in capsys.readouterr().out  # the warning, by its kind
