"""The one place through which pglab runs external commands.

Every child gets an argv list (never a shell), a clean environment (no PG* variables, C locale),
its own session (so its whole process group can be signalled), and the parent-death signal
SIGKILL through ``setpriv --pdeathsig`` so that it dies with pglab even when pglab is SIGKILLed.
When pglab runs as root, the child can be switched to an unprivileged user in the same step.

Children must be spawned from the main thread: the parent-death signal fires when the *thread*
that forked the child exits.

Commands on other hosts do not come through here: ``hosts/ssh.py`` runs them over SSH under a
watcher that ends them with their channel (``hosts/local.py`` gives this machine the same
interface, through ``start_async`` here).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pglab.errors import CommandError

DEFAULT_GRACE = 10.0


@dataclass(frozen=True, slots=True)
class RunAs:
    """An unprivileged OS account that children run as (only used when pglab is root)."""

    user: str
    uid: int
    gid: int


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for children: PATH and HOME kept, PG* removed, C locale forced."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("PG") and not k.startswith("LC_")
    }
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if extra:
        env.update(extra)
    return env


SERVER_PATH = "/usr/local/bin:/usr/bin:/bin"
SERVER_KEPT = ("LD_LIBRARY_PATH",)  # kept when set: a bindir's own libraries may need it


def server_env() -> dict[str, str]:
    """The environment of every PostgreSQL server pglab starts: fixed and minimal, the same
    bytes whoever started pglab and from where (a cron job, a shell, a test), since the
    environment's size moves the stack of the postmaster and of every backend it forks, and
    with it what is measured (Mytkowicz et al., ASPLOS 2009; docs/concepts/statistics.md)."""
    env = {"PATH": SERVER_PATH, "LC_ALL": "C", "LANG": "C"}
    env.update({k: os.environ[k] for k in SERVER_KEPT if os.environ.get(k)})
    return env


def _wrap(
    argv: Sequence[str],
    run_as: RunAs | None,
    pdeathsig: str = "KILL",
    cpus: Collection[int] | None = None,
    limits: Mapping[str, int] | None = None,
) -> list[str]:
    if cpus is not None:  # the command confined to those CPUs before it starts (util-linux)
        taskset = shutil.which("taskset")
        if taskset is None:
            raise CommandError(
                "cannot confine a command to CPUs: taskset is not installed",
                hint="install Debian's util-linux package",
            )
        argv = [taskset, "--cpu-list", ",".join(str(c) for c in sorted(cpus)), *argv]
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        if run_as is not None:
            raise CommandError(
                "cannot switch to an unprivileged user: setpriv is not installed",
                hint="install Debian's util-linux package (apt-get install util-linux)",
            )
        return [str(a) for a in argv]
    prefix = [setpriv, "--pdeathsig", pdeathsig]
    if run_as is not None:
        prefix += [f"--reuid={run_as.uid}", f"--regid={run_as.gid}", "--clear-groups"]
    return _limited(limits) + prefix + ["--"] + [str(a) for a in argv]


def _limited(limits: Mapping[str, int] | None) -> list[str]:
    """util-linux's prlimit, setting ``limits`` (nofile, nproc) soft and hard on itself before
    it runs the rest: as root, before the command drops to its user, so that a hard limit may
    be raised where pglab has CAP_SYS_RESOURCE (lowering one needs nothing)."""
    if not limits:
        return []
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise CommandError(
            "cannot set a command's hard limits: prlimit is not installed",
            hint="install Debian's util-linux package",
        )
    return [prlimit, *prlimit_options(limits), "--"]


def prlimit_options(limits: Mapping[str, int]) -> list[str]:
    """prlimit's options setting ``limits`` soft and hard: ``--nofile=N:N``."""
    return [f"--{name}={n}:{n}" for name, n in sorted(limits.items())]


def spawn(
    argv: Sequence[str],
    *,
    run_as: RunAs | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    stdout: int | IO[Any] | None = subprocess.DEVNULL,
    stderr: int | IO[Any] | None = subprocess.DEVNULL,
    text: bool = True,
    cpus: Collection[int] | None = None,
    limits: Mapping[str, int] | None = None,
    environ: Mapping[str, str] | None = None,
) -> subprocess.Popen[Any]:
    """Start a child in its own session; the caller owns it (see ``owned``/``terminate``).
    ``cpus``: the only CPUs it (and what it starts) may run on (``taskset``); ``limits``: its
    resource limits (nofile, nproc), soft and hard (``prlimit``); ``environ``: its whole
    environment (a server's, ``server_env``), instead of ``clean_env`` with ``env``."""
    try:
        return subprocess.Popen(
            _wrap(argv, run_as, cpus=cpus, limits=limits),
            cwd=cwd,
            env=dict(environ) if environ is not None else clean_env(env),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            text=text,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise CommandError(f"cannot run {argv[0]}: {exc.strerror}") from exc


async def start_async(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = False,
    pdeathsig: str = "KILL",
    stdin: int = subprocess.DEVNULL,
) -> asyncio.subprocess.Process:
    """Start a child from an event loop (its stdout and stderr piped), in its own session and
    with the parent-death signal ``pdeathsig`` (INT lets a child pglab clean up after its
    worker died). ``inherit_env``: this process's environment as it is (a child pglab needs
    the PG* variables its user gave), else ``clean_env``; ``env`` is added either way."""
    environ = {**os.environ, **(env or {})} if inherit_env else clean_env(env)
    try:
        return await asyncio.create_subprocess_exec(
            *_wrap(argv, None, pdeathsig),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environ,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise CommandError(f"cannot run {argv[0]}: {exc.strerror}") from exc


def terminate(
    proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, grace: float = DEFAULT_GRACE
) -> None:
    """Signal the child's process group with ``sig``, then SIGKILL after ``grace``; always reap."""
    if proc.poll() is not None:
        return
    _killpg(proc.pid, sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


@contextmanager
def owned(
    proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, grace: float = DEFAULT_GRACE
) -> Iterator[subprocess.Popen[Any]]:
    """Yield the child; on leaving (normally, by exception or Ctrl-C) stop and reap it."""
    try:
        yield proc
    finally:
        terminate(proc, sig, grace)


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    run_as: RunAs | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    what: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion with a timeout; stdout and stderr are captured as text.

    On timeout or Ctrl-C the whole process group is stopped. With ``check`` a non-zero exit
    raises CommandError carrying the command's own last lines of error output.
    """
    label = what or Path(str(argv[0])).name
    proc = spawn(
        argv, run_as=run_as, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    with owned(proc):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            terminate(proc)
            raise CommandError(f"{label} did not finish within {timeout:.0f} s") from None
    result = subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
    if check and proc.returncode != 0:
        raise CommandError(f"{label} failed (exit {proc.returncode}): {tail(err or out)}")
    return result


def tail(text: str, lines: int = 12) -> str:
    """The last lines of a command's output, for error messages."""
    return "\n".join(text.strip().splitlines()[-lines:])


def wait_until(predicate: Callable[[], object], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
