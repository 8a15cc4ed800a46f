"""Shared fixtures: a lab home that the unprivileged server account can reach, and a guard that
fails any test which leaves a PostgreSQL or pgbench process of that lab running."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from pglab.lab import Lab

REPO = Path(__file__).resolve().parents[1]

# every campaign or tune document a test shows refused is judged by the JSON Schema too; the
# slowest test files, and how busy the CPUs were meanwhile, are printed at the end of a run;
# with pytest-xdist's -n, a file's tests go to one worker, and files sharing the machine's too
pytest_plugins = ("helpers.collect_refusals", "helpers.file_times", "helpers.xdist_files",
                  "pytester")  # fmt: skip

# The Ctrl-C tests send SIGINT to pglab processes started from here. A shell that starts the suite
# in the background (`nohup .ci/run &`) leaves SIGINT ignored, and children inherit an ignored
# signal: Python would then never raise KeyboardInterrupt in them. With a handler here (reset to
# the default on exec) every child starts with SIGINT as a terminal gives it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# pytest-xdist's workers (``-n 2``) start with GNU readline loaded, which exports COLUMNS=80 and
# LINES=24: pglab's console would then print 80 columns where the tests read 120 (a captured
# console's width, cli/common.py). A worker gets the environment pytest was started with back.
if "PYTEST_XDIST_WORKER" in os.environ:
    for _name in ("COLUMNS", "LINES"):
        _given = os.environ.get(f"PGLAB_TEST_GIVEN_{_name}")
        if _given is not None and _given != "-":
            os.environ[_name] = _given
        elif _given == "-":
            os.environ.pop(_name, None)
else:
    for _name in ("COLUMNS", "LINES"):
        os.environ[f"PGLAB_TEST_GIVEN_{_name}"] = os.environ.get(_name, "-")


def lab_parent() -> str:
    """Where the tests' lab home goes: ``PGLAB_TEST_LAB_IN`` if set, else /dev/shm when it has
    8 GiB free, else /tmp. On tmpfs a server's files are made and copied in memory: on this
    project's CI machine creating a file on disk costs ~0.5 ms and an fsync ~7 ms, so initdb,
    every dataset copy and every shutdown checkpoint ran at disk speed for no test's sake.
    What tests disks does so on storage targets it makes."""
    if os.environ.get("PGLAB_TEST_LAB_IN"):
        return os.environ["PGLAB_TEST_LAB_IN"]
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free >= 8 * 2**30:
        return str(shm)
    return "/tmp"


@pytest.fixture(scope="session")
def lab_home() -> Iterator[Path]:
    """One lab home for the whole session (catalogs and datasets are reused between tests)."""
    home = Path(tempfile.mkdtemp(prefix="pglab-test-", dir=lab_parent()))
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


@contextmanager
def pglab_in_background(
    argv: list[str], err_path: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen]:
    """A pglab command running in the background (unbuffered, stderr to ``err_path``), killed
    if it still runs when the block ends: a failed check never leaves it running into the
    next test."""
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err,
                                env={**(env or os.environ), "PYTHONUNBUFFERED": "1"})  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def pglab_run_argv(campaign: Path, home: Path, store: Path | str) -> list[str]:
    """The command line of ``pglab run CAMPAIGN`` in a child Python, on this lab and store."""
    return [sys.executable, "-m", "pglab", "run", str(campaign), "--lab-dir", str(home),
            "--store", str(store)]  # fmt: skip


def pglab_run_in_background(
    campaign: Path, home: Path, store: Path, err_path: Path
) -> AbstractContextManager[subprocess.Popen]:
    """``pglab run CAMPAIGN`` in the background (see pglab_in_background), with this process's
    environment as it is now (a password a test put in PGPASSWORD, say)."""
    argv = pglab_run_argv(campaign, home, store)
    return pglab_in_background(argv, err_path, env=dict(os.environ))


def pgbench_measuring(home: Path) -> bool:
    """Whether a pgbench of the lab at ``home`` is measuring (running, not initializing)."""
    for p in lab_processes(home):
        try:
            if p.name() == "pgbench" and "-i" not in p.cmdline():
                return True
        except psutil.Error:
            continue
    return False


def wait_for(
    started: Callable[[], bool], proc: subprocess.Popen, err_path: Path, what: str,
    seconds: float = 120,
) -> None:  # fmt: skip
    """Wait (``seconds`` at most) until ``started()``, failing with pglab's stderr if it ends."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not started():
        assert proc.poll() is None, err_path.read_text()
        time.sleep(0.1)
    assert started(), f"{what} never started; pglab said:\n{err_path.read_text()[-3000:]}"


def assert_stopped_cleanly(
    proc: subprocess.Popen, sig: signal.Signals, home: Path, err_path: Path
) -> None:
    """After pglab got ``sig`` and ended: nothing of the lab runs, and (SIGKILL aside, which
    gives pglab no say) it exited as a signalled command does, with 128 + the signal."""
    time.sleep(1)
    left = [p for p in lab_processes(home) if _alive(p)]
    assert not left, f"left running after {sig.name}: {left}"
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig, err_path.read_text()


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture(scope="session")
def outside_server(lab: Lab) -> Iterator[Any]:
    """A server the tests start outside pglab (``existing_server.py``), shared by the tests of
    existing servers: each leaves its settings as they were (what they assert pglab does)."""
    from helpers.existing_server import OutsideServer

    server = OutsideServer(lab).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def ns_hosts() -> Iterator[Any]:
    """Three SSH hosts in network namespaces (``netns_hosts.py``), shared by the session:
    gen1 and gen2 for load generators, gen3 for a server pglab makes there."""
    from helpers.netns_hosts import SSHD, Hosts

    if os.geteuid() != 0 or not shutil.which("ip") or not Path(SSHD).exists():
        pytest.skip("SSH hosts in network namespaces need root, iproute2 and openssh-server "
                    "(apt-get install openssh-server iproute2; .ci/run does)")  # fmt: skip
    hosts = Hosts(3)
    try:
        yield hosts.start()
    finally:
        hosts.stop()


@pytest.fixture(scope="module")
def net_server(lab: Lab, ns_hosts: Any) -> Iterator[Any]:
    """A server outside pglab listening on the bridge the generator hosts are on (and on
    127.0.0.1), letting in their subnet with a password: one per test file that asks."""
    from helpers.existing_server import OutsideServer

    server = OutsideServer(lab, listen=("127.0.0.1", ns_hosts.gateway),
                           allow=f"10.231.{ns_hosts.subnet}.0/24").start()  # fmt: skip
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A throwaway PostgreSQL 18 for results stores (``pg_store.py``), shared by the session: the
    URL of its ``postgres`` database."""
    from helpers.pg_store import pg_store_server

    with pg_store_server() as url:
        yield url


@pytest.fixture
def pg_store(pg_server: str) -> Iterator[str]:
    """An empty database of ``pg_server`` for each test, as a store URL."""
    from helpers.pg_store import fresh_database

    with fresh_database(pg_server) as url:
        yield url


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


# -- lanes: `pytest -m "not integration"` is the fast lane; `-m faults` the fault suite -----------

FAULTS = Path(__file__).resolve().parent / "faults"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/faults/ carries the ``faults`` marker."""
    for item in items:
        if FAULTS in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.faults)


# -- skips: in CI, a skip is a test that did not run ---------------------------------------------

_SKIPPED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and os.environ.get("PGLAB_NO_SKIPS"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        _SKIPPED.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With PGLAB_NO_SKIPS=1 (``.ci/run`` sets it after installing what the tests need), a
    skipped test fails the session: the machine could have run it. The shared memory of
    servers the tests killed is removed (``helpers.ipc_sweep``): by pytest-xdist's controller
    alone, once every worker is done (a worker that ends first could catch another's server
    starting)."""
    if hasattr(session.config, "workerinput"):
        return
    from helpers.ipc_sweep import sweep

    from pglab.lab import DEFAULT_RUN_USER

    files, segments = sweep(os.environ.get("PGLAB_RUN_USER", DEFAULT_RUN_USER))
    if files or segments:
        print(f"\nremoved the shared memory of killed servers: {files} DSM file(s), "
              f"{segments} System V segment(s)")  # fmt: skip
    if _SKIPPED:
        print(f"\nPGLAB_NO_SKIPS: {len(_SKIPPED)} test(s) skipped that this machine should run:")
        for line in _SKIPPED:
            print(f"  {line}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- PostgreSQL built by the lab (tests/integration/test_builds.py) -------------------------------

# builds and Debian's source tarball are kept here between test sessions (and CI runs on one
# machine): a build of PostgreSQL 15 takes minutes, a cached one a second
BUILD_CACHE = Path(os.environ.get("PGLAB_TEST_BUILDS", "/var/tmp/pglab-build-cache"))


@pytest.fixture(scope="session")
def pg15_tarball() -> Path:
    """PostgreSQL 15's release tarball: the .orig.tar.bz2 of Debian's source package
    (``apt-get source --download-only``, with the deb-src entry ``.ci/run`` adds), fetched once
    into BUILD_CACHE/src."""
    src = BUILD_CACHE / "src"
    found = sorted(src.glob("postgresql-15_*.orig.tar.bz2"))
    if not found:
        src.mkdir(parents=True, exist_ok=True)
        installed = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "postgresql-15"],
                                   capture_output=True, text=True).stdout.strip()  # fmt: skip
        # the installed version first: the archive serves it (a newer candidate may be gone)
        for name in ([f"postgresql-15={installed}"] if installed else []) + ["postgresql-15"]:
            got = subprocess.run(["apt-get", "source", "--download-only", name], cwd=src,
                                 capture_output=True, text=True)  # fmt: skip
            found = sorted(src.glob("postgresql-15_*.orig.tar.bz2"))
            if found:
                break
        if not found:
            pytest.skip("no PostgreSQL 15 source: apt-get source postgresql-15 needs a deb-src "
                        f"entry (.ci/run adds it): {got.stderr.strip()[-300:]}")  # fmt: skip
    return found[-1]


@pytest.fixture(scope="session")
def build_cache() -> Iterator[Path]:
    """PGLAB_BUILDS pointed at BUILD_CACHE for the session (subprocesses inherit it)."""
    before = os.environ.get("PGLAB_BUILDS")
    os.environ["PGLAB_BUILDS"] = str(BUILD_CACHE / "builds")
    yield BUILD_CACHE / "builds"
    if before is None:
        os.environ.pop("PGLAB_BUILDS", None)
    else:
        os.environ["PGLAB_BUILDS"] = before


@pytest.fixture(scope="session")
def pg15_build(lab: Lab, pg15_tarball: Path, build_cache: Path) -> dict[str, Any]:
    """PostgreSQL 15 built by pglab from the tarball with the default options, once (or found
    in the cache): the server spec, the build, and how long ``ensure`` took."""
    from pglab.campaign.spec import BuildSpec, ServerSpec
    from pglab.postgres import build

    spec = ServerSpec(source="build", build=BuildSpec(source=str(pg15_tarball)))
    assert spec.build is not None
    t0 = time.monotonic()
    made = build.ensure(spec.build, lab)
    took = time.monotonic() - t0
    print(f"\npg15_build: {'built' if made.built_now else 'from the cache'} in {took:.1f} s")
    return {"spec": spec, "build": made, "seconds": took}


@pytest.fixture(scope="session")
def pg15_patched(lab: Lab, pg15_build: dict[str, Any], pg15_tarball: Path) -> dict[str, Any]:
    """The same tarball with ``examples/checkpoint-completion-0.5.patch`` (15's default
    checkpoint_completion_target 0.9 -> 0.5), built once (or found in the cache)."""
    from pglab.campaign.spec import BuildSpec, ServerSpec
    from pglab.postgres import build

    patch = REPO / "examples" / "checkpoint-completion-0.5.patch"
    spec = ServerSpec(source="build", build=BuildSpec(str(pg15_tarball), patches=(str(patch),)))
    assert spec.build is not None
    t0 = time.monotonic()
    made = build.ensure(spec.build, lab)
    took = time.monotonic() - t0
    print(f"\npg15_patched: {'built' if made.built_now else 'from the cache'} in {took:.1f} s")
    return {"spec": spec, "build": made, "patch": patch, "seconds": took}
