"""``[server] build = {git = CLONE, ref = REF}``: the ref resolved to its commit when the file
is read (a real git clone made here), the commit in the point and the build's label, and bad
input refused by name. (Building a commit is ``postgres/build.py``'s export step.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pglab.campaign import parse
from pglab.errors import CampaignError
from pglab.planning.plan import make_plan


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin"}  # fmt: skip
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()  # fmt: skip


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    repo = tmp_path / "postgresql"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    for i in (1, 2):
        (repo / "configure").write_text(f"# {i}\n")
        git(repo, "add", "configure")
        git(repo, "commit", "-q", "-m", f"commit {i}")
    git(repo, "tag", "first", "HEAD~1")
    return repo


def doc(build: dict) -> dict:
    return {"server": {"build": build}, "variants": {"a": {}}}


def test_a_ref_is_resolved_to_its_commit_when_the_file_is_read(clone: Path, tmp_path) -> None:
    head, first = git(clone, "rev-parse", "HEAD"), git(clone, "rev-parse", "first")
    camp = parse.parse(doc({"git": "postgresql", "ref": "master"}), "g", base_dir=tmp_path)
    build = camp.variants[0].server.build
    assert build is not None and (build.source, build.git_ref, build.commit) == (
        str(clone), "master", head
    )  # fmt: skip
    assert build.label.startswith(f"build:postgresql@{head[:10]}@")
    older = parse.parse(doc({"git": str(clone), "ref": "first"}), "g").variants[0].server.build
    assert older is not None and older.commit == first
    # a point per commit: the branch moving on makes new points
    keys = {make_plan(c).points[0].point_key for c in (camp, parse.parse(
        doc({"git": str(clone), "ref": "first"}), "g"))}  # fmt: skip
    assert len(keys) == 2
    assert parse.parse(doc({"git": str(clone)}), "g").variants[0].server.build.git_ref == "HEAD"


def test_a_tree_or_tarball_build_keeps_its_key(tmp_path) -> None:
    (tmp_path / "pg.tar.gz").write_bytes(b"x")
    build = parse.parse(doc({"source": "pg.tar.gz"}), "g", base_dir=tmp_path).variants[0]
    ident = build.server.identity()["build"]
    assert set(ident) == {"source", "options", "patches"}  # as before git builds


@pytest.mark.parametrize(
    ("build", "said"),
    [
        ({"git": "nowhere"}, "not a git clone"),
        ({"git": "postgresql", "ref": "REL_99_STABLE"}, "ref = 'REL_99_STABLE': no such branch"),
        ({"git": "postgresql", "source": "x.tar.gz"}, "give source or git, not both"),
        ({"ref": "master"}, "source: a PostgreSQL source tree or release tarball"),
    ],
)
def test_bad_git_builds_are_refused_by_name(clone: Path, tmp_path, build: dict, said: str):
    with pytest.raises(CampaignError) as err:
        parse.parse(doc(build), "g", base_dir=tmp_path)
    assert said in err.value.message


def test_a_build_exports_the_commit_not_the_clone_s_state(clone: Path, tmp_path) -> None:
    from pglab.postgres import build

    first = git(clone, "rev-parse", "first")
    (clone / "configure").write_text("# not committed\n")  # the work tree moved on
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    tree = build._unpack(build._Steps(scratch, lambda step: None), clone, first)
    assert (tree / "configure").read_text() == "# 1\n" and not (tree / ".git").exists()
    assert f"exporting {first[:10]} from git" in (scratch / "build.log").read_text()
