"""Shared fixtures: a lab home that the unprivileged server account can reach, and a guard that
fails any test which leaves a PostgreSQL or pgbench process of that lab running."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pglab.lab import Lab

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def lab_home() -> Iterator[Path]:
    """One lab home for the whole session (catalogs and datasets are reused between tests)."""
    home = Path(tempfile.mkdtemp(prefix="pglab-test-", dir="/tmp"))
    os.chmod(home, 0o755)
    yield home
    leftovers = lab_processes(home)
    for proc in leftovers:
        proc.kill()
    shutil.rmtree(home, ignore_errors=True)
    assert not leftovers, f"processes left running: {leftovers}"


@pytest.fixture(scope="session")
def lab(lab_home: Path) -> Lab:
    return Lab.open(lab_home)


def lab_processes(home: Path) -> list[psutil.Process]:
    """postgres or pgbench processes working under ``home`` (by data dir or socket dir)."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            if proc.info["name"] not in ("postgres", "pgbench", "postmaster"):
                continue
            by_arg = any(str(home) in arg for arg in proc.info["cmdline"] or [])
            # pgbench names home in its --log-prefix; postgres children have PGDATA as cwd
            by_cwd = proc.info["name"] != "pgbench" and str(home) in proc.cwd()
            if by_arg or by_cwd:
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def no_leftovers(lab_home: Path) -> Iterator[None]:
    """Fail the test if it leaves a server or pgbench of the lab running."""
    yield
    procs = [p for p in lab_processes(lab_home) if _alive(p)]
    for p in procs:
        p.kill()
    assert not procs, f"left running: {[(p.pid, p.info['name']) for p in procs]}"


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture(scope="session")
def pg16_bindir(lab_home: Path) -> Path:
    """PostgreSQL 16 from the ``pgserver`` wheel (a test dependency), copied where the
    unprivileged server account can run it. The package is found, not imported (importing it
    starts nothing, but needs nothing either)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the pgserver wheel (PostgreSQL 16) is not installed")
    package = Path(spec.submodule_search_locations[0])
    target = lab_home / "pgserver16"
    if not target.exists():
        # the binaries find their libraries at $ORIGIN/../../../pgserver.libs: keep the layout
        shutil.copytree(package / "pginstall", target / "pgserver" / "pginstall", symlinks=True)
        libs = package.parent / "pgserver.libs"
        if libs.is_dir():
            shutil.copytree(libs, target / "pgserver.libs", symlinks=True)
        for path in (target, *target.rglob("*")):
            if path.is_dir():
                path.chmod(0o755)
    return target / "pgserver" / "pginstall" / "bin"
