"""Issue 58's bisection, run again: are builds of identical source judged different in its steps?

A git history of 16 commits is made from one PostgreSQL source (Debian's 15.18 tarball, as the
build tests use): only ``c11`` changes code (a busy loop in ``CommitTransaction``); ``c6``
breaks ``configure`` and ``c7`` mends it; every other commit changes a README, so each has a
tree (and a build) of its own while its code is ``c0``'s (before ``c11``) or ``c11``'s (from
it on). ``pglab bisect`` runs over it (``--repeats`` rounds per step, select-only at 2 clients,
scale 1) and each step's two comparisons are read from what it prints: a step before ``c11``
against the good end (``c0``), a step from ``c11`` on against the bad end, are between builds
of identical code, and a ``+``/``-`` there is a false finding.

Prints the bisect's own output, then one line per step (the commit, which end it shares its code
with, that comparison and its verdict), and the last lines ``identical_source_comparisons: N``,
``identical_source_false_findings: K`` and ``first_bad_commit_named: c11|…``.

    nice -n 10 .venv/bin/python bench/bisect_bias.py [--repeats 3] [--duration 5]

Every step builds a commit (ccache makes the later ones cheaper): about 2–4 minutes a step here.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path

os.environ["COLUMNS"] = "400"  # the steps' lines unwrapped, as the regex reads them
from pglab.cli import main as pglab  # noqa: E402

TARBALL = Path("/var/tmp/pglab-build-cache/src/postgresql-15_15.18.orig.tar.bz2")
ANCHOR = '\tShowTransactionState("CommitTransaction");\n'
BUSY = "\t{ volatile long spin; for (spin = 0; spin < 2000000L; spin++) ; }\n"
BAD = 11
COMMITS = 16
FILE = """
name = "busy-commit"
[server]
build = {{ git = "{clone}", ref = "main" }}
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = {duration}
"""
STEP = re.compile(
    r"^\s+(?P<sha>[0-9a-f]{12}) (?P<subject>c\d+)[^(]*\((?:against good (?P<good>[^;]*?)); "
    r"against bad (?P<bad>[^)]*)\)"
)


def git(repo: Path, *args: str) -> str:
    argv = ["git", "-c", "safe.directory=*", "-c", "user.name=b", "-c", "user.email=b@x"]
    done = subprocess.run([*argv, "-C", str(repo), *args], check=True, capture_output=True)
    return done.stdout.decode().strip()


def history(tarball: Path, root: Path) -> Path:
    """The clone: c0 the tarball's tree, c1..c15 as the module's docstring says."""
    with tarfile.open(tarball) as tar:
        tar.extractall(root, filter="data")
    (repo,) = root.iterdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A", ".")
    git(repo, "commit", "-q", "-m", "c0: PostgreSQL as released")
    configure = repo / "configure"
    as_released = configure.read_text()
    readme = repo / "README"
    for i in range(1, COMMITS):
        if i == BAD:
            xact = repo / "src/backend/access/transam/xact.c"
            text = xact.read_text()
            xact.write_text(text.replace(ANCHOR, ANCHOR + BUSY, 1))
            git(repo, "commit", "-q", "-am", f"c{i}: a busy loop in every commit")
        elif i == 6:
            configure.write_text(as_released.replace("\n", "\necho broken by c6 >&2; exit 1\n", 1))
            git(repo, "commit", "-q", "-am", "c6: break configure")
        elif i == 7:
            configure.write_text(as_released)
            git(repo, "commit", "-q", "-am", "c7: mend configure")
        else:
            readme.write_text(readme.read_text() + f"\nc{i}\n")
            git(repo, "commit", "-q", "-am", f"c{i}: the README")
    return repo


def verdict(said: str) -> str:
    """The verdict at the end of "+9.5% [+4.6, +14.6] +"."""
    return said.strip().rsplit(" ", 1)[-1]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tarball", type=Path, default=TARBALL)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--lab-dir", type=Path, default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pglab-bisect-bias-") as tmp:
        repo = history(a.tarball, Path(tmp))
        good = git(repo, "rev-list", "--max-parents=0", "main")
        path = Path(tmp) / "busy.toml"
        path.write_text(FILE.format(clone=repo, duration=a.duration))
        argv = ["bisect", str(path), "--good", good, "--bad", "main"]
        argv += ["--repeats", str(a.repeats), "--store", str(Path(tmp) / "bisect.sqlite")]
        if a.lab_dir:
            argv += ["--lab-dir", str(a.lab_dir)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = pglab(argv)
        text = out.getvalue()
    print(text)
    compared = false = 0
    for line in text.splitlines():
        if not (m := STEP.match(line)):
            continue
        n = int(m["subject"][1:])
        end, said = ("good", m["good"]) if n < BAD else ("bad", m["bad"])
        compared += 1
        false += verdict(said) in ("+", "-")
        print(f"{m['subject']:>4}: code of the {end} end; against it {said.strip()}")
    named = re.search(r"first bad commit: \S+ (c\d+)", text)
    print(f"pglab bisect exit status: {status}")
    print(f"identical_source_comparisons: {compared}")
    print(f"identical_source_false_findings: {false}")
    print(f"first_bad_commit_named: {named[1] if named else 'none'}")


if __name__ == "__main__":
    main()
