"""A host over SSH (asyncssh): one connection per host for the campaign, commands with their
output, processes whose stderr lines stream back, files read and written by SFTP, its clock.

- **Host keys** are checked against ``known_hosts`` (``~/.ssh/known_hosts`` unless the host says
  otherwise), by pglab itself so that the error says which case it is: an unknown key is refused
  unless ``accept_new`` (then written to the file, as ``ssh -o StrictHostKeyChecking=accept-new``
  does), a changed or revoked key always.
- **Nothing outlives the link**: a remote command runs under a small POSIX-sh watcher that kills
  it when its channel's stdin closes — which happens when pglab stops it, when pglab dies
  (even by SIGKILL: the TCP connection goes, sshd closes the channel) and when sshd gives up on
  a lost link (``ClientAliveInterval``). No PTY: stderr stays apart from stdout.
- **Secrets** never go on a remote command line: a password for libpq is written to a file of
  mode 0600 in the run's remote directory (``PGPASSFILE``), removed with it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import shlex
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import asyncssh

from pglab.campaign.spec import HostSpec
from pglab.errors import HostError
from pglab.hosts import facts
from pglab.hosts.facts import HostFacts
from pglab.hosts.loop import call, loop

T = TypeVar("T")
CONNECT_TIMEOUT = 15
# kills the command ("$@") when pglab stops sending its heartbeat on stdin: at the end of stdin
# (pglab stopped it, or died: its TCP connection went, sshd closed the channel) or after
# HEARTBEAT_TIMEOUT seconds without one (the link is down: sshd may not notice for long while
# the command's output keeps its loop busy). The watcher reads a copy of stdin made first (fd 3:
# a background job's stdin is /dev/null before any redirection of its own); the command gets
# /dev/null; the exit status is the command's. Needs only POSIX sh, coreutils' timeout and head.
HEARTBEAT_S = 1.0
HEARTBEAT_TIMEOUT = 5


def watcher(stop_signal: str = "TERM", then: str = "") -> str:
    """The watcher's sh script; ``stop_signal`` is what the command gets (INT for a postmaster:
    its fast shutdown); ``then``: sh run once the command has ended, however it ended (pglab
    stopped it, or died: what it leaves removed there and then), before the watcher exits
    with the command's status."""
    return (
        'exec 3<&0; "$@" </dev/null 3<&- & c=$!; '
        f'( while [ -n "$(timeout {HEARTBEAT_TIMEOUT} head -c 1 <&3)" ]; do :; done; '
        f"kill -{stop_signal} $c 2>/dev/null ) & "
        "w=$!; exec 3<&-; wait $c; s=$?; kill $w 2>/dev/null; "
        + (f"{then}; " if then else "")
        + "exit $s"
    )


WATCHER = watcher()


def known_hosts_path(spec: HostSpec) -> Path:
    return Path(spec.known_hosts or "~/.ssh/known_hosts").expanduser()


def _entry(spec: HostSpec) -> str:
    return spec.address if spec.port == 22 else f"[{spec.address}]:{spec.port}"


class _KeyPolicy(asyncssh.SSHClient):
    """pglab's host key check (asyncssh's own is off so that the reason can be told)."""

    def __init__(self, spec: HostSpec):
        self.spec = spec
        self.problem: str | None = None

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        path = known_hosts_path(self.spec)
        mine = key.export_public_key().decode().split()[:2]
        trusted: Sequence[asyncssh.SSHKey] = ()
        revoked: Sequence[asyncssh.SSHKey] = ()
        if path.is_file():
            found = asyncssh.read_known_hosts(str(path)).match(host, addr, port)
            trusted, revoked = found[0], found[2]
        same = [k for k in trusted if k.export_public_key().decode().split()[:2] == mine]
        if any(k.export_public_key().decode().split()[:2] == mine for k in revoked):
            self.problem = f"the host key of {self.spec.label} is marked revoked in {path}"
            return False
        if same:
            return True
        if trusted:
            self.problem = (
                f"the host key of {self.spec.label} has CHANGED since it was recorded in {path} "
                f"(now {key.get_fingerprint()}): someone may be intercepting the connection, or "
                "the host was reinstalled"
            )
            return False
        if self.spec.accept_new:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(path, "a") as f:
                f.write(f"{_entry(self.spec)} {' '.join(mine)}\n")
            return True
        self.problem = (
            f"the host key of {self.spec.label} is not in {path} ({key.get_fingerprint()})"
        )
        return False


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


class RemoteProcess:
    """A command running on a host under the watcher; ``stop`` ends it by closing stdin."""

    def __init__(self, host: Remote, process: asyncssh.SSHClientProcess[Any], argv: Sequence[str]):
        self.host = host
        self._process = process
        self.argv = list(argv)
        self.stderr_lines: list[str] = []
        # the heartbeat the watcher waits for, from the start (made on the SSH loop)
        self._beating = asyncio.ensure_future(self._beat())

    async def _pump(self, on_line: Callable[[str], None] | None) -> None:
        async for line in self._process.stderr:
            self.stderr_lines.append(line.rstrip("\n"))
            if on_line is not None:
                on_line(line)

    async def _beat(self) -> None:
        """The heartbeat the watcher waits for: a byte on stdin every HEARTBEAT_S."""
        with contextlib.suppress(OSError, asyncssh.Error):
            while True:
                self._process.stdin.write(".")
                await asyncio.sleep(HEARTBEAT_S)

    async def wait(self, on_line: Callable[[str], None] | None = None) -> Finished:
        pump = asyncio.ensure_future(self._pump(on_line))
        try:
            stdout = await self._process.stdout.read()
            await pump
            await self._process.wait()
        finally:
            self._beating.cancel()
            if not pump.done():
                pump.cancel()
            elif not pump.cancelled():
                pump.exception()  # retrieved: the link's end is said by the read above
        code = self._process.exit_status
        if code is None:  # killed by a signal: 128 + its number, as a shell says
            code = 128 + 15
        return Finished(code, stdout, "\n".join(self.stderr_lines).rstrip("\n"))

    def stop(self) -> None:
        """Close stdin: the watcher kills the command (a no-op once it has ended). Safe from
        any thread: done on the SSH loop."""

        def _eof() -> None:
            self._beating.cancel()
            with contextlib.suppress(OSError, asyncssh.Error):
                self._process.stdin.write_eof()

        loop().call_soon_threadsafe(_eof)


class Background:
    """A command started by ``Remote.spawn``: ``done`` once it has ended, ``stop`` to end it."""

    def __init__(self, process: RemoteProcess, finished: concurrent.futures.Future[Finished]):
        self.process = process
        self.finished = finished

    @property
    def done(self) -> bool:
        return self.finished.done()

    def stop(self, timeout: float = 60) -> Finished | None:
        """Close its stdin (the watcher sends the stop signal) and wait for its end."""
        self.process.stop()
        try:
            return self.finished.result(timeout)
        except (concurrent.futures.TimeoutError, OSError, asyncssh.Error):
            return None


class Remote:
    """One host of the campaign, connected on first use."""

    def __init__(self, spec: HostSpec):
        self.spec = spec
        self._conn: asyncssh.SSHClientConnection | None = None
        self._files_dir: str | None = None  # where ``copy_in`` puts files, made on first use
        self._copied: dict[str, str] = {}  # content's sha256 -> its path on the host

    # -- connection ---------------------------------------------------------------------------
    async def _connect(self) -> asyncssh.SSHClientConnection:
        if self._conn is not None:
            return self._conn
        policy = _KeyPolicy(self.spec)
        try:
            self._conn = await asyncssh.connect(
                self.spec.address,
                port=self.spec.port,
                # none trusted up front: every key goes to _KeyPolicy, which can tell why not
                # (None would switch the check off, and () would read ~/.ssh/known_hosts itself)
                known_hosts=asyncssh.import_known_hosts(""),
                client_factory=lambda: policy,
                connect_timeout=CONNECT_TIMEOUT,
                keepalive_interval=2,
                keepalive_count_max=3,
                username=self.spec.user or (),  # (): asyncssh's own default, as left out
                client_keys=[self.spec.identity] if self.spec.identity else (),
            )
        except asyncssh.HostKeyNotVerifiable as exc:
            raise HostError(
                policy.problem or f"the host key of {self.spec.label} was not accepted: {exc}",
                hint=_KEY_HINT if "CHANGED" not in (policy.problem or "") else _CHANGED_HINT,
            ) from None
        except asyncssh.PermissionDenied as exc:
            raise HostError(
                f"SSH to {self.spec.label} refused the login: {exc.reason}",
                hint="check the user, the key (identity = ..., or the SSH agent) and the "
                "host's authorized_keys: `ssh` with the same user and key must work",
            ) from None
        except (OSError, TimeoutError, asyncssh.Error) as exc:
            raise HostError(
                f"cannot reach {self.spec.label} over SSH: {exc}",
                hint="is the host up, and sshd listening on that address and port?",
            ) from None
        return self._conn

    def open(self) -> Remote:
        call(self._connect(), CONNECT_TIMEOUT + 5)
        return self

    def close(self) -> None:
        if self._conn is None:
            return
        if self._files_dir is not None:
            with contextlib.suppress(HostError):  # a lost link: the directory stays in /tmp
                self.remove_dir(self._files_dir)
            self._files_dir, self._copied = None, {}
        conn, self._conn = self._conn, None

        async def _close() -> None:
            conn.close()
            await conn.wait_closed()

        with contextlib.suppress(Exception):  # closing a link that is gone already
            call(_close(), 10)

    # -- commands -----------------------------------------------------------------------------
    @staticmethod
    def command(
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        stop_signal: str = "TERM",
        then: str = "",
    ) -> str:
        """The remote command line: ``env K=V ... argv`` under the watcher (sh -c)."""
        words = [*(["env", *(f"{k}={v}" for k, v in env.items())] if env else []), *argv]
        script = watcher(stop_signal, then)
        return f"sh -c {shlex.quote(script)} pglab-watch {shlex.join(words)}"

    def run(
        self,
        argv: Sequence[str],
        timeout: float = 120,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> Finished:
        async def _run() -> Finished:
            started = await self.start(argv, env)
            try:
                return await asyncio.wait_for(started.wait(), timeout)
            finally:
                started.stop()

        done = self._call(
            _run(),
            timeout + 10,
            f"{shlex.join(argv)} did not finish within {timeout:.0f} s on {self.spec.label}",
        )
        if check and done.returncode != 0:
            said = (done.stderr or done.stdout).strip()[-2000:]
            raise HostError(
                f"{argv[0]} failed on {self.spec.label} (exit {done.returncode}): {said}"
            )
        return done

    async def start(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        stop_signal: str = "TERM",
        then: str = "",
    ) -> RemoteProcess:
        """Start a command (on the SSH loop: ``await`` it there)."""
        conn = await self._connect()
        proc = await conn.create_process(self.command(argv, env, stop_signal, then))
        return RemoteProcess(self, proc, argv)

    def spawn(self, argv: Sequence[str], stop_signal: str = "TERM", then: str = "") -> Background:
        """Start a long-running command (a server, perf) from this thread: it runs until
        ``stop``, the end of the link or pglab's; ``then``: sh run there after it ends."""
        started = self._call(
            self.start(argv, stop_signal=stop_signal, then=then),
            CONNECT_TIMEOUT + 5,
            f"{argv[0]} did not start within {CONNECT_TIMEOUT + 5} s on {self.spec.label}",
        )
        return Background(started, asyncio.run_coroutine_threadsafe(started.wait(), loop()))

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float, slow: str) -> T:
        """``coro`` on the SSH loop; a timeout said as ``slow``, any other failure as the
        link's."""
        try:
            return call(coro, timeout)
        except TimeoutError:
            raise HostError(slow) from None
        except (OSError, asyncssh.Error) as exc:
            raise HostError(f"the SSH link to {self.spec.label} failed: {exc}") from None

    # -- files --------------------------------------------------------------------------------
    def _files(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """An SFTP exchange."""
        slow = f"a file transfer with {self.spec.label} took over {timeout:.0f} s"
        return self._call(coro, timeout, slow)

    def home(self) -> str:
        return self.run(["sh", "-c", 'echo "$HOME"']).stdout.strip()

    def make_dir(self, under: str = "/tmp") -> str:
        """A new directory ``pglab-XXXXXXXX`` under ``under`` on the host (a storage target's
        path, else /tmp); a HostError naming the directory when it cannot be made there."""
        made = self.run(["mktemp", "-d", f"{under.rstrip('/') or ''}/pglab-XXXXXXXX"], check=False)
        if made.returncode != 0:
            raise HostError(
                f"cannot make a directory under {under} on {self.spec.label}: "
                f"{made.stderr.strip() or made.stdout.strip()}",
                hint=f"the directory must exist on {self.spec.name} and be writable by the SSH "
                "user",
            )
        return made.stdout.strip()

    def remove_dir(self, path: str) -> None:
        if PurePosixPath(path).name.startswith("pglab-") and path.count("/") >= 2:
            self.run(["rm", "-rf", "--", path], check=False)  # only what make_dir made

    def write(self, path: str, data: bytes, mode: int = 0o600) -> None:
        async def _write() -> None:
            conn = await self._connect()
            async with conn.start_sftp_client() as sftp:
                async with sftp.open(path, "wb", asyncssh.SFTPAttrs(permissions=mode)) as f:
                    await f.write(data)
                await sftp.chmod(path, mode)

        self._files(_write(), 60)

    def copy_in(self, local: Path) -> str:
        """A file of this machine's (a custom pgbench script) put on the host by its content,
        once per connection (a campaign); its path there. The copies live in one directory of
        the host's ``/tmp``, removed on ``close``; the file's name is kept (pgbench names a
        script by its path)."""
        data = local.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._copied:
            if self._files_dir is None:
                self._files_dir = self.make_dir()
            folder = f"{self._files_dir}/{digest[:16]}"
            self.run(["mkdir", "-p", folder])
            self.write(f"{folder}/{local.name}", data, mode=0o644)
            self._copied[digest] = f"{folder}/{local.name}"
        return self._copied[digest]

    def read(self, path: str, offset: int = 0, limit: int = 2_000_000) -> bytes:
        """Bytes of a file from ``offset`` (nothing when it does not exist)."""

        async def _read() -> bytes:
            conn = await self._connect()
            async with conn.start_sftp_client() as sftp:
                try:
                    async with sftp.open(path, "rb") as f:
                        await f.seek(offset)
                        return await f.read(limit)
                except asyncssh.SFTPNoSuchFile:
                    return b""

        return self._files(_read(), 60)

    def size(self, path: str) -> int:
        async def _size() -> int:
            conn = await self._connect()
            async with conn.start_sftp_client() as sftp:
                try:
                    return (await sftp.stat(path)).size or 0
                except asyncssh.SFTPNoSuchFile:
                    return 0

        return self._files(_size(), 60)

    def put(self, local: Path, path: str) -> None:
        async def _put() -> None:
            conn = await self._connect()
            async with conn.start_sftp_client() as sftp:
                await sftp.put(str(local), path)

        self._files(_put(), 600)

    def fetch(self, remote_dir: str, prefix: str, local_dir: Path) -> list[Path]:
        """Copy the files of ``remote_dir`` whose names start with ``prefix`` to ``local_dir``."""
        local_dir.mkdir(parents=True, exist_ok=True)

        async def _fetch() -> list[Path]:
            conn = await self._connect()
            got = []
            async with conn.start_sftp_client() as sftp:
                for name in sorted(await sftp.listdir(remote_dir)):
                    if name.startswith(prefix):
                        target = local_dir / name
                        await sftp.get(f"{remote_dir}/{name}", str(target))
                        got.append(target)
            return got

        return self._files(_fetch(), 600)

    # -- facts ----------------------------------------------------------------------------------
    def facts(self, pgbench: str) -> HostFacts:
        """The host as a run's fingerprint records it."""
        out = self.run(
            [
                "sh",
                "-c",
                'uname -n; uname -sr; nproc; grep MemTotal /proc/meminfo; "$0" --version',
                pgbench,
            ],
            check=False,
        )
        lines = out.stdout.splitlines() + [""] * 5
        mem = lines[3].split()
        probe = self.run(["sh", "-c", facts.OS_PROBE, "sh", *facts.os_probe_args()], check=False)
        return HostFacts(
            host=self.spec.name,
            address=self.spec.address,
            hostname=lines[0],
            kernel=lines[1],
            cpus=int(lines[2]) if lines[2].isdigit() else None,
            ram_bytes=int(mem[1]) * 1024 if len(mem) > 1 and mem[1].isdigit() else None,
            pgbench=lines[4].strip() or None,
            os_state=facts.os_state(probe.stdout),
        )

    def clock_offset(self, samples: int = 7) -> tuple[float, float]:
        """(offset, uncertainty) in seconds of the host's clock against this one's: from the
        sample with the shortest round trip, offset = remote time - the round trip's middle,
        uncertainty = half the round trip."""
        best: tuple[float, float] | None = None

        async def _probe() -> tuple[float, float]:
            conn = await self._connect()
            t0 = time.time()
            result = await conn.run("date +%s.%N", check=True)
            t1 = time.time()
            remote = float(str(result.stdout).strip())
            return remote - (t0 + t1) / 2, (t1 - t0) / 2

        for _ in range(samples):
            found = call(_probe(), 30)
            if best is None or found[1] < best[1]:
                best = found
        assert best is not None
        return best


_KEY_HINT = (
    "check the key with the host's administrator, then add it (ssh-keyscan HOST >> known_hosts "
    "after comparing the fingerprint), or set accept_new = true in [hosts.NAME] to record it "
    "on first use"
)
_CHANGED_HINT = (
    "if the host was reinstalled, remove its old line (ssh-keygen -R HOST) and connect again; "
    "pglab never accepts a changed key by itself"
)
