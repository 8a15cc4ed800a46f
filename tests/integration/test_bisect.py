"""``pglab bisect`` on real builds: a git clone made from Debian's PostgreSQL 15 tarball with
seven commits after its first: the fourth (``c4``) sleeps 3 ms in every commit
(``CommitTransaction``), the fifth (``c5``) breaks ``configure`` and the sixth mends it (its tree
is c4's again); the file's point (select-only, 2 clients) builds from that clone. Bisecting from
the first commit to the last measures c3 (good), skips c5 (it does not build: said), measures its
neighbour c4 (bad) and names c4, with the effect (a CI excluding 0). The bisection is SIGKILLed
in its last step and run again: it resumes from its stored steps, builds nothing (every build
is in the cache, by the commit's tree: later CI runs build nothing at all) and ends with c4.
Run once more, it runs nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import pglab_in_background, wait_for
from helpers.fleet_workers import Workers, running_workers

from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store

pytestmark = pytest.mark.integration

ANCHOR = '\tShowTransactionState("CommitTransaction");\n'
FILE = """
name = "slow-commit"
[server]
build = {{ git = "{clone}", ref = "main" }}
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = 1
"""


def git(repo: Path, *args: str) -> str:
    argv = ["git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@x",
            "-C", str(repo), *args]  # fmt: skip
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def clone(pg15_tarball: Path, tmp_path_factory) -> tuple[Path, list[str]]:
    """The clone and its commits, c0 (the tarball's tree) to c7."""
    root = tmp_path_factory.mktemp("bisect")
    with tarfile.open(pg15_tarball) as tar:
        tar.extractall(root, filter="data")
    (repo,) = root.iterdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A", ".")
    git(repo, "commit", "-q", "-m", "c0: PostgreSQL 15 as released")
    configure = repo / "configure"
    as_released = configure.read_text()
    for i in range(1, 8):
        if i == 4:
            xact = repo / "src/backend/access/transam/xact.c"
            text = xact.read_text()
            assert ANCHOR in text
            xact.write_text(text.replace(ANCHOR, ANCHOR + "\tpg_usleep(3000L);\n", 1))
            git(repo, "commit", "-q", "-am", "c4: sleep 3 ms in every commit")
        elif i == 5:
            configure.write_text(as_released.replace("\n", "\necho broken by c5 >&2; exit 1\n", 1))
            git(repo, "commit", "-q", "-am", "c5: break configure")
        elif i == 6:
            configure.write_text(as_released)
            git(repo, "commit", "-q", "-am", "c6: mend configure")
        else:
            git(repo, "commit", "-q", "--allow-empty", "-m", f"c{i}: nothing")
    commits = git(repo, "rev-list", "--reverse", "main").split()
    assert len(commits) == 8
    return repo, commits


def cli(*args: str, lab: Lab, store: str) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.fixture
def worker(pg_store: str) -> Iterator[Workers]:
    """Workers on the test's PostgreSQL store (the session's build cache through PGLAB_BUILDS)."""
    with running_workers(pg_store) as w:
        yield w


@pytest.mark.usefixtures("build_cache", "no_leftovers")
def test_bisect_names_the_commit_that_slowed_every_commit(clone, lab: Lab, pg_store, worker,
                                                          capsys):  # fmt: skip
    """Killed in its last step and resumed with ``--fleet``: the worker runs what the step still
    had to do; run once more (here), nothing runs."""
    repo, commits = clone
    path = worker.root / "slow.toml"
    path.write_text(FILE.format(clone=repo))
    store = pg_store
    args = ("bisect", str(path), "--good", commits[0], "--bad", "main", "--repeats", "3")
    step = {i: f"slow-commit@bisect-{commits[i][:12]}" for i in (3, 4, 5)}

    def runs_of(name: str) -> int:
        with open_store(store) as s:
            return len(s.list_runs(name))

    err = worker.root / "bisect.err"
    argv = [sys.executable, "-m", "pglab", *args, "--lab-dir", str(lab.home), "--store",
            store]  # fmt: skip
    with pglab_in_background(argv, err) as proc:  # killed in its last step
        # c4 built first where the build cache does not hold it yet (a new machine): minutes
        wait_for(lambda: runs_of(step[4]) >= 2, proc, err, "the step of c4", seconds=480)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    killed_at = runs_of(step[4])
    assert runs_of(step[3]) == 9 and 2 <= killed_at < 9
    worker.start("w1")
    assert cli(*args, "--fleet", lab=lab, store=store) == 0, worker.log("w1")[-3000:]
    out = " ".join(capsys.readouterr().out.split())
    with open_store(store) as s:
        on_w1 = [
            r
            for r in s.list_runs(step[4])
            if s.get_run(r.id).fingerprint.get("fleet_worker") == "w1"
        ]
    assert len(on_w1) == 9 - killed_at  # the rest of the step, by the worker
    assert f"step {step[4]}: 1 job(s) queued on pglab for {9 - killed_at} run(s)" in out, out
    assert f"bisecting slow-commit over 7 commit(s) after {commits[0][:12]}" in out
    assert f"first bad commit: {commits[4]} c4: sleep 3 ms in every commit" in out, out
    assert f"{commits[5][:12]}: skipped, it does not build" in out and "broken by c5" in out
    assert out.count(": bad (against good") + out.count(": good (against good") == 2
    assert "built PostgreSQL" not in out  # resumed: every build came from the cache
    assert runs_of(step[3]) == 9 and runs_of(step[4]) == 9  # nothing measured twice
    with open_store(store) as s:
        steps = [c["name"] for c in s.list_campaigns()]
    assert sorted(steps) == sorted(step[i] for i in (3, 4)), steps  # c5 stored nothing
    effect = out.split("effect of the bad commit against the good: ")[1].split()
    assert effect[0].startswith("-") and effect[2].rstrip("]").startswith("-")  # CI below 0
    # again: every step is stored, nothing runs
    assert cli(*args, lab=lab, store=store) == 0
    again = capsys.readouterr().out
    assert f"first bad commit: {commits[4]}" in again and "run(s) ok, 0 failed" in again
    assert "1 run(s) ok" not in again and "2 run(s) ok" not in again
