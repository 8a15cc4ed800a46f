"""Storage micro-benchmarks of a directory: ``pg_test_fsync`` and, where installed, ``fio``.

Both tools run as the server account (as root: ``pglab``), the account PostgreSQL itself writes
as, on files in a private temporary directory made inside the target directory and removed
afterwards (also after an error or Ctrl-C). What they print is parsed by ``storage_output``;
each tool's result is a :class:`StorageResult` with the mount facts of the directory, the same
facts ``fingerprint`` records for PGDATA, so that runs and micro-benchmarks can be matched.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pglab import procs
from pglab.campaign.spec import ServerSpec
from pglab.errors import LabError
from pglab.fingerprints import Fingerprint, Mount
from pglab.lab import Lab
from pglab.postgres import fingerprint, sources
from pglab.records import StorageResult
from pglab.targets.output import parse_fio, parse_pg_test_fsync

FIO_SIZE = "32M"  # per job file: small enough for a tmpfs, big enough to leave the page cache
# pg_test_fsync runs 16 tests of --seconds each (5 methods x 2, 5 sizes, 2 fd tests, 1 write)
PG_TEST_FSYNC_TESTS = 16
FIO_JOBS = 4  # fio_argv's jobs, one after the other, --runtime each


def server_spec(bindir: str | None) -> ServerSpec:
    return ServerSpec(source="bindir", bindir=bindir) if bindir else ServerSpec()


def measure(
    lab: Lab,
    directory: Path,
    *,
    seconds: int = 2,
    fio: bool | None = None,
    bindir: str | None = None,
    binaries: sources.Binaries | None = None,
    status: Callable[[str], None] = lambda _: None,
) -> list[StorageResult]:
    """Run pg_test_fsync (and fio: ``None`` means where installed) on ``directory``; the
    pg_test_fsync of ``binaries``, else of ``bindir``, else the embedded one."""
    if seconds < 1:
        raise LabError("--seconds must be at least 1")
    directory = directory.absolute()
    if not directory.is_dir():
        raise LabError(
            f"{directory} is not a directory",
            hint="give the directory whose storage to measure, e.g. where PGDATA or pg_wal lives",
        )
    fio_exe = shutil.which("fio")
    if fio and fio_exe is None:
        raise LabError(
            "fio is not installed",
            hint="install Debian's fio package (apt-get install fio), or leave out --fio",
        )
    if fio is None and fio_exe is None:
        status("fio is not installed: only pg_test_fsync (apt-get install fio adds IOPS and MB/s)")
    binaries = binaries or sources.resolve(server_spec(bindir), lab)
    exe = binaries.bindir / "pg_test_fsync"
    if not exe.is_file():
        raise LabError(
            f"{binaries.bindir} has no pg_test_fsync",
            hint="on Debian it is in postgresql-NN (the server package); or use --bindir",
        )
    lab.check_reachable(directory)
    mount = fingerprint.mount_of(directory)
    host = fingerprint.host()
    results = []
    with private_dir(lab, directory) as work:
        status(
            f"pg_test_fsync {binaries.version}: about {seconds * PG_TEST_FSYNC_TESTS} s "
            f"on {directory} ({mount.get('fstype')} {mount.get('device')})"
        )
        results.append(_pg_test_fsync(lab, exe, binaries.version, work, seconds, mount, host))
        if fio is not False and fio_exe is not None:
            direct = supports_direct_io(work)
            status(
                f"fio: 4 jobs of {seconds} s ({'O_DIRECT' if direct else 'buffered: no O_DIRECT'})"
            )
            results.append(_fio(lab, fio_exe, work, seconds, direct, mount, host))
    return results


@contextlib.contextmanager
def private_dir(lab: Lab, directory: Path) -> Iterator[Path]:
    """A 0700 directory inside ``directory`` owned by the server account; removed on exit."""
    try:
        path = Path(tempfile.mkdtemp(prefix=".pglab-storage-", dir=directory))
    except OSError as exc:
        raise LabError(
            f"cannot make a work directory in {directory}: {exc.strerror}",
            hint="give a directory pglab can write to (as root: any local filesystem)",
        ) from exc
    try:
        lab.give(path)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def supports_direct_io(directory: Path) -> bool:
    """Whether files in ``directory`` can be opened with O_DIRECT (tmpfs before Linux 6.6,
    for instance, cannot)."""
    probe = directory / ".direct-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | getattr(os, "O_DIRECT", 0), 0o600)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return False
        raise
    os.close(fd)
    probe.unlink(missing_ok=True)
    return hasattr(os, "O_DIRECT")


def _pg_test_fsync(
    lab: Lab,
    exe: Path,
    version: str,
    work: Path,
    seconds: int,
    mount: Mount,
    host: Fingerprint,
) -> StorageResult:
    started, t0 = time.time(), time.monotonic()
    argv = [str(exe), "-s", str(seconds), "-f", str(work / "pg_test_fsync.out")]
    out = procs.run(
        argv, timeout=seconds * PG_TEST_FSYNC_TESTS * 3 + 60, run_as=lab.run_as, cwd=work
    ).stdout
    try:
        parsed = parse_pg_test_fsync(out)
    except ValueError as exc:
        raise LabError(f"pg_test_fsync printed no results: {procs.tail(out)}") from exc
    return StorageResult(
        target_path=str(work.parent),
        tool="pg_test_fsync",
        tool_version=version,
        measured_at=started,
        elapsed_s=time.monotonic() - t0,
        mount=mount,
        results=parsed,
        output=out,
        host=host,
    )


def fio_argv(exe: str, work: Path, seconds: int, direct: bool) -> list[str]:
    """4k random read, 4k random write with an fsync after every write, 1M sequential read
    and write, one after the other (``--stonewall``), each ``seconds`` long."""
    d = f"--direct={int(direct)}"
    return [
        exe,
        "--output-format=json",
        f"--directory={work}",
        f"--size={FIO_SIZE}",
        f"--runtime={seconds}",
        "--time_based",
        "--ioengine=psync",
        "--filename=fio.dat",
        "--name=randread-4k",
        "--rw=randread",
        "--bs=4k",
        d,
        "--name=randwrite-4k-fsync",
        "--stonewall",
        "--rw=randwrite",
        "--bs=4k",
        d,
        "--fsync=1",
        "--name=seqread-1M",
        "--stonewall",
        "--rw=read",
        "--bs=1M",
        d,
        "--name=seqwrite-1M",
        "--stonewall",
        "--rw=write",
        "--bs=1M",
        d,
        "--end_fsync=1",
    ]


def _fio(
    lab: Lab,
    exe: str,
    work: Path,
    seconds: int,
    direct: bool,
    mount: Mount,
    host: Fingerprint,
) -> StorageResult:
    started, t0 = time.time(), time.monotonic()
    proc = procs.run(
        fio_argv(exe, work, seconds, direct),
        timeout=seconds * 4 + 120,
        run_as=lab.run_as,
        cwd=work,
        check=False,
    )
    try:
        parsed = parse_fio(json.loads(proc.stdout[proc.stdout.find("{") :]))
    except (ValueError, json.JSONDecodeError) as exc:
        raise LabError(
            f"fio failed (exit {proc.returncode}): {procs.tail(proc.stderr or proc.stdout)}",
            hint="run it again with --no-fio to measure with pg_test_fsync only",
        ) from exc
    return StorageResult(
        target_path=str(work.parent),
        tool="fio",
        tool_version=parsed.get("version") or "?",
        measured_at=started,
        elapsed_s=time.monotonic() - t0,
        mount=mount,
        results=parsed,
        output=proc.stdout,
        host=host,
    )
