"""pglab's own machine as a load generator beside remote hosts (``generators = ["local",
"gen1"]``): what ``ssh.Remote`` offers the generators (start a command whose stderr lines stream
back, a run directory, files written and fetched, the facts, the clock), done here.

Its commands run on the SSH event loop like the remote ones, so that all generators start in the
same step, through ``procs.start_async`` (a session of its own, ``setpriv --pdeathsig KILL``:
nothing outlives pglab). Its clock is pglab's: offset 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import shutil
import signal
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import psutil

from pglab import procs
from pglab.campaign.spec import LOCAL, HostSpec
from pglab.hosts import facts
from pglab.hosts.facts import HostFacts
from pglab.hosts.ssh import Finished

SPEC = HostSpec(name=LOCAL, address="localhost")


class LocalProcess:
    """A command started by ``LocalHost.start``: ``wait`` streams its stderr lines."""

    def __init__(self, process: asyncio.subprocess.Process, argv: Sequence[str]):
        self._process = process
        self.argv = list(argv)
        self.stderr_lines: list[str] = []

    async def wait(self, on_line: Callable[[str], None] | None = None) -> Finished:
        assert self._process.stdout is not None and self._process.stderr is not None

        async def pump() -> None:
            assert self._process.stderr is not None
            async for raw in self._process.stderr:
                line = raw.decode(errors="replace")
                self.stderr_lines.append(line.rstrip("\n"))
                if on_line is not None:
                    on_line(line)

        pumping = asyncio.ensure_future(pump())
        stdout = (await self._process.stdout.read()).decode(errors="replace")
        await pumping
        code = await self._process.wait()
        return Finished(code if code >= 0 else 128 - code, stdout, "\n".join(self.stderr_lines))

    def stop(self) -> None:
        """End it (a no-op once it has ended); safe from any thread."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGTERM)


class LocalHost:
    """This machine, with the part of ``Remote``'s interface a generator uses."""

    spec = SPEC

    def open(self) -> LocalHost:
        return self

    def close(self) -> None:
        pass

    async def start(
        self, argv: Sequence[str], env: Mapping[str, str] | None = None, stop_signal: str = "TERM"
    ) -> LocalProcess:
        del stop_signal  # pgbench ends on TERM
        return LocalProcess(await procs.start_async(argv, env=env), argv)

    def run(
        self,
        argv: Sequence[str],
        timeout: float = 120,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> Finished:
        """A command run here to its end (``check``: a failure raises, as on a host)."""
        done = procs.run(list(argv), timeout=timeout, env=env, check=check)
        return Finished(done.returncode, done.stdout, done.stderr)

    def make_dir(self) -> str:
        return tempfile.mkdtemp(prefix="pglab-")

    def remove_dir(self, path: str) -> None:
        if Path(path).name.startswith("pglab-"):
            shutil.rmtree(path, ignore_errors=True)

    def write(self, path: str, data: bytes, mode: int = 0o600) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def copy_in(self, local: Path) -> str:
        """A file of this machine's is already here."""
        return str(local)

    def fetch(self, remote_dir: str, prefix: str, local_dir: Path) -> list[Path]:
        local_dir.mkdir(parents=True, exist_ok=True)
        got = []
        for path in sorted(Path(remote_dir).iterdir()):
            if path.name.startswith(prefix):
                got.append(Path(shutil.copy(path, local_dir / path.name)))
        return got

    def facts(self, pgbench: str) -> HostFacts:
        said = procs.run([pgbench, "--version"], timeout=30, check=False)
        uname = platform.uname()
        return HostFacts(
            host=LOCAL,
            address="localhost",
            hostname=uname.node,
            kernel=f"{uname.system} {uname.release}",
            cpus=os.cpu_count(),
            ram_bytes=psutil.virtual_memory().total,
            pgbench=said.stdout.strip() or None,
            os_state=facts.os_state(
                procs.run(
                    ["sh", "-c", facts.OS_PROBE, "sh", *facts.os_probe_args()], timeout=30
                ).stdout
            ),
        )

    def clock_offset(self, samples: int = 7) -> tuple[float, float]:
        del samples
        return 0.0, 0.0
