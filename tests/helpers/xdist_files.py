"""A pytest plugin (loaded by ``tests/conftest.py``): how pytest-xdist shares this suite among
its workers when asked to (``pytest -n 2``; the README's command runs without it). A test file's
tests run in one worker, as ``--dist loadfile`` does (a file's module fixtures are made once),
and the files that use something of the whole machine's run in one worker, one after another:

- the build cache (``/var/tmp/pglab-build-cache``): ``test_builds.py`` looks at what it holds
  and at which compilers run in it, while ``test_bisect.py`` builds into it;
- the kernel: ``[os]`` campaigns compare sysctls and every loop device's queue before and
  after, while storage targets make loop devices and mounts.

Everything else a test starts is its own or its session's (a lab home, PostgreSQL stores, SSH
hosts in network namespaces with names and a subnet of their own, ports asked of the kernel),
as it already had to be for sessions of several people running tests on one machine.

pytest-xdist's own ``--dist loadgroup`` would say the same with ``xdist_group`` marks, but here
(pytest 9.2, pytest-xdist 3.8) it grouped nothing: the tests of a file marked with one group
still went to both workers. The scheduler is chosen here instead."""

from __future__ import annotations

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
