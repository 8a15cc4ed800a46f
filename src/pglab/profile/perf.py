"""Linux perf, the profiler: whether it can run here (checked before a profiled campaign starts
anything), ``perf record`` on a set of processes for as long as a phase runs, and
``perf script``'s text of what it recorded.

``perf record -e cpu-clock`` is the software clock: it works on virtual machines, which have no
hardware counters. Stacks are unwound from a copy of each sample's user stack (``--call-graph
dwarf``): PostgreSQL is built without frame pointers (``-O2``), and with ``-g`` (frame pointers)
its stacks break after the first frame. Here ``-a`` samples every CPU (the server's samples are
picked out by pid afterwards); on a host (``host.py``) ``-p`` attaches to the postmaster and its
children as the host's user, and backends forked later inherit the sampling. perf is started
through ``procs`` like every child: its own session and the parent-death signal, so it dies
with pglab even when pglab is SIGKILLed; it is stopped with SIGINT, which makes it write its
file out. It keeps no copy of the binaries it sampled (``--no-buildid-cache``: perf would copy
each into ``~/.debug``, which grows without end); ``perf script`` reads them where they are.
What perf still writes of build ids (``PERF_BUILDID_DIR``: ``~/.debug`` by default, of whoever
runs pglab) goes beside the recording, in the lab's own directory (``buildid_dir``), and is
removed with it.

``PGLAB_PERF`` names another perf executable (a perf of the running kernel built elsewhere).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from pglab import procs
from pglab.errors import CommandError, ProfileError

MIN_HZ, MAX_HZ, DEFAULT_HZ = 1, 999, 99
STACK_BYTES = 8192  # the user stack copied with each sample (dwarf unwinding)
STOP_GRACE_S = 60.0  # perf writes out its buffers on SIGINT
SCRIPT_TIMEOUT_S = 600.0
START_TIMEOUT_S = 60.0  # perf reads every process's memory maps before it samples
OFF = "or leave profiling off (no --profile, no [profile] in the file)"
INSTALL_HINT = f"install Debian's linux-perf (apt-get install linux-perf), {OFF}"


def executable() -> str:
    return os.environ.get("PGLAB_PERF", "perf")


def record_argv(out: Path | str, hz: int, exe: str | None = None) -> list[str]:
    """``perf record``'s words for a phase (``exe``: the perf of a host; this machine's by
    default)."""
    return [
        exe or executable(),
        "record",
        "--quiet",
        "-e",
        "cpu-clock",
        "-F",
        str(hz),
        "--call-graph",
        f"dwarf,{STACK_BYTES}",
        "--no-buildid-cache",
        "-o",
        str(out),
    ]


def script_argv(data: Path | str, exe: str | None = None) -> list[str]:
    """``perf script``'s words: per sample a ``comm pid`` line, then its frames ``address
    symbol (binary)``, innermost first, and a blank line; between them a line per fork, exec and
    exit (``--show-task-events``: who forked a process the watcher never saw)."""
    return [
        exe or executable(),
        "script",
        "-i",
        str(data),
        "-F",
        "comm,pid,ip,sym,dso",
        "--no-inline",
        "--show-task-events",
    ]


def buildid_dir(data: Path) -> Path:
    """Where perf keeps build ids for a recording: beside it, never ``~/.debug``."""
    return data.with_suffix(".debug")


def env_for(data: Path) -> dict[str, str]:
    """perf's environment for a recording: its build-id directory (``buildid_dir``)."""
    return {"PERF_BUILDID_DIR": str(buildid_dir(data))}


def problem(hz: int = DEFAULT_HZ) -> ProfileError | None:
    """Why perf cannot profile here, or None: it is run once on ``true`` as a phase would run it
    (the same event, frequency and unwinding), so that missing, forbidden and broken all show."""
    exe = executable()
    if shutil.which(exe) is None:
        return ProfileError(f"profiling needs Linux perf, and {exe!r} is not found", INSTALL_HINT)
    with tempfile.TemporaryDirectory(prefix="pglab-perf-") as tmp:
        probe = Path(tmp) / "probe.data"
        argv = [*record_argv(probe, hz), "-a", "--", "true"]
        try:
            done = procs.run(argv, timeout=60, check=False, what="perf record", env=env_for(probe))
        except CommandError as exc:
            return ProfileError(f"perf could not be run: {exc}", INSTALL_HINT)
    if done.returncode == 0:
        return None
    said = procs.tail(done.stderr or done.stdout, 6)
    if "perf_event_paranoid" in said or "Permission denied" in said or "EACCES" in said:
        return ProfileError(
            f"perf is not allowed to sample every CPU here: kernel.perf_event_paranoid is "
            f"{_paranoid()} and pglab runs as uid {os.geteuid()} (sampling every CPU needs "
            "root, the capability CAP_PERFMON, or perf_event_paranoid 0 or less)",
            f"run pglab as root (as it runs its servers), or sysctl kernel.perf_event_paranoid=0, "
            f"{OFF}",
        )
    if "not found for kernel" in said:
        return ProfileError(f"perf does not match the running kernel:\n{said}", INSTALL_HINT)
    return ProfileError(f"perf record failed (exit {done.returncode}):\n{said}", INSTALL_HINT)


def start(out: Path, hz: int) -> subprocess.Popen[Any]:
    """``perf record`` of every CPU (``-a``) into ``out``, sampling from when this returns: perf
    starts with its events off (``-D -1``) and reads every process's memory maps first, then
    is told to enable them over a FIFO and says when it has (``--control``), so that its
    start-up costs the phase nothing. The samples of the server's processes are picked out by
    pid afterwards. Its errors go to ``out`` with ``.err`` after it. The caller stops it with
    ``stop``."""
    ctl, ack = out.with_suffix(".ctl"), out.with_suffix(".ack")
    for fifo in (ctl, ack):
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo, 0o600)
    argv = [*record_argv(out, hz), "-a", "-D", "-1", f"--control=fifo:{ctl},{ack}"]
    with out.with_suffix(".err").open("w") as err:
        proc = procs.spawn(argv, stderr=err, cwd=out.parent, env=env_for(out))
    try:
        enable(proc, ctl, ack)
    except BaseException:
        procs.terminate(proc, signal.SIGKILL)
        raise
    return proc


def disable(proc: subprocess.Popen[Any], out: Path) -> None:
    """Tell perf to stop sampling (its events off: at once), and wait until it says it has;
    ``stop`` ends it later (writing its file out takes a second or two)."""
    enable(proc, out.with_suffix(".ctl"), out.with_suffix(".ack"), command=b"disable")


def enable(
    proc: subprocess.Popen[Any],
    ctl: Path,
    ack: Path,
    what: str = "perf record",
    command: bytes = b"enable",
) -> None:
    """Tell perf (started with ``-D -1 --control=fifo:CTL,ACK``) to enable its events (or
    ``disable`` them), and wait until it says it has (or has died)."""
    # opened read-write, the FIFOs never block on perf; perf keeps its ends open
    wfd = os.open(ctl, os.O_RDWR)
    rfd = os.open(ack, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(wfd, command + b"\n")
        deadline = time.monotonic() + START_TIMEOUT_S
        said = b""
        while b"ack" not in said:
            if proc.poll() is not None:
                raise CommandError(f"{what} ended as it started (exit {proc.returncode})")
            if time.monotonic() > deadline:
                raise CommandError(f"{what} did not start within {START_TIMEOUT_S:.0f} s")
            ready, _, _ = select.select([rfd], [], [], 0.2)
            if ready:
                said += os.read(rfd, 64)
    finally:
        os.close(wfd)
        os.close(rfd)


def stop(proc: subprocess.Popen[Any], out: Path) -> str | None:
    """Stop perf record (SIGINT: it writes its file); why it failed, or None."""
    procs.terminate(proc, signal.SIGINT, STOP_GRACE_S)
    said = _read(out.with_suffix(".err"))
    if proc.returncode not in (0, -signal.SIGINT, 130) or not out.exists():
        return f"perf record failed (exit {proc.returncode}): {procs.tail(said, 4)}"
    return None


def script(data: Path) -> str:
    """``perf script``'s text of a recording (``script_argv``)."""
    return procs.run(
        script_argv(data), timeout=SCRIPT_TIMEOUT_S, what="perf script", env=env_for(data)
    ).stdout


def _paranoid() -> str:
    return _read(Path("/proc/sys/kernel/perf_event_paranoid")).strip() or "unknown"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def no_symbols(binary: str, owner: str | None = None, where: str = "") -> str:
    """What to say of a binary most of whose sampled frames had no symbol, naming the Debian
    package with its debug symbols when a package owns it (``owner``: what ``dpkg -S BINARY``
    said, on the host ``where`` names; asked here when None)."""
    said = f"{binary}{where} has no symbols (stripped): its functions show as [unknown]"
    if owner is None:
        owner = _dpkg_owner(binary)
    if owner is None:
        return f"{said}; profile a build that keeps them"
    package = owner.split(":", 1)[0].strip() if ":" in owner else ""
    if not package or "," in package:
        return f"{said}; profile a build that keeps them (pglab's [server.build] does)"
    return (
        f"{said}; install {package}-dbgsym (Debian's debug symbols, from the debian-debug "
        "archive) to name them"
    )


def _dpkg_owner(binary: str) -> str | None:
    """What ``dpkg -S`` says of a binary here; None without dpkg."""
    if shutil.which("dpkg") is None:
        return None
    try:
        return procs.run(["dpkg", "-S", binary], timeout=30, check=False).stdout
    except CommandError:
        return ""
