"""A pytest plugin (loaded by ``tests/conftest.py``): how pytest-xdist shares this suite among
its workers when asked to (``pytest -n 2``; the README's command runs without it). A test file's
tests run in one worker, as ``--dist loadfile`` does (a file's module fixtures are made once),
and the files that use something of the whole machine's run in one worker, one after another:

- the build cache (``/var/tmp/pglab-build-cache``): ``test_builds.py`` looks at what it holds
  and at which compilers run in it, while ``test_bisect.py`` builds into it;
- the kernel: ``[os]`` campaigns compare sysctls and every loop device's queue before and
  after, while storage targets make loop devices and mounts.

A test marked ``alone`` (``@pytest.mark.alone``) runs while no other worker runs a test: it
asks for something of the machine that any server another worker starts would take. The huge
pages an ``[os] huge_pages`` run reserves are such: a PostgreSQL started meanwhile with the
default ``huge_pages = try`` maps them first, and the run that reserved them fails to start
(CI saw it once in a few dozen runs). Every test takes a shared lock on one file of the
session's, an ``alone`` one an exclusive lock.

Everything else a test starts is its own or its session's (a lab home, PostgreSQL stores, SSH
hosts in network namespaces with names and a subnet of their own, ports asked of the kernel),
as it already had to be for sessions of several people running tests on one machine.

pytest-xdist's own ``--dist loadgroup`` would say the same with ``xdist_group`` marks, but here
(pytest 9.2, pytest-xdist 3.8) it grouped nothing: the tests of a file marked with one group
still went to both workers. The scheduler is chosen here instead."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# test files that share something of the machine's, and what: they run in one worker
SHARED = {
    "tests/integration/test_builds.py": "the build cache",
    "tests/integration/test_bisect.py": "the build cache",
    "tests/integration/test_os_axis.py": "the kernel",
    "tests/faults/test_os_faults.py": "the kernel",
    "tests/integration/test_storage_targets.py": "the kernel",
    "tests/faults/test_storage_faults.py": "the kernel",
    "tests/integration/test_server_on_host.py": "the kernel",
}


def scope_of(nodeid: str) -> str:
    """The unit a worker is given: the test's file, or what its file shares with others."""
    path = nodeid.split("::", 1)[0]
    return SHARED.get(path, path)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """(pytest-xdist's controller, with ``-n``) work given out by ``scope_of``."""
    if config.getvalue("dist") == "each":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFileAndShare(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return ByFileAndShare(config, log)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "alone: runs while no other pytest-xdist worker runs a test (tests/helpers/"
        "xdist_files.py)")  # fmt: skip


def _lock_path(config: pytest.Config) -> Path | None:
    """The file the workers of one session lock (in the session's base temporary directory,
    which pytest removes some sessions later), or None when no worker runs beside this one."""
    if not hasattr(config, "workerinput"):
        return None
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    return factory.getbasetemp().parent / "alone.lock"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Setup, call and teardown of a test under the session's lock: shared, or exclusive for a
    test marked ``alone``."""
    path = _lock_path(item.config)
    if path is None:
        yield
        return
    alone = item.get_closest_marker("alone") is not None
    # a turnstile first, so that an ``alone`` test waiting is not passed by the other worker's
    # next tests for ever (flock has no preference for writers)
    with open(path, "a") as lock, open(path.with_suffix(".turnstile"), "a") as turnstile:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if not alone:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
