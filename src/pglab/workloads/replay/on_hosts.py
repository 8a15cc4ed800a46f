"""A captured workload replayed from several generator hosts at once (a replaying phase's
``generators = ["gen1", "gen2"]``): its sessions split in disjoint sets, one per host
(``workload_file.split``: each session whole, in its order, balanced by statements), each set
written there as the log pgreplay reads and replayed by the host's pgreplay against the
server's address (``engine.play_apart`` runs them together; the figures merged by
``pgreplay.merged``: the lag the slowest host's); "local" among them replays its set here
(``here``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pglab import procs
from pglab.errors import CommandError
from pglab.workloads.replay import engine, pgreplay
from pglab.workloads.replay.engine import Player
from pglab.workloads.replay.workload_file import Workload

if TYPE_CHECKING:  # asyncssh is imported only where a host is reached
    from pglab.hosts.ssh import Remote


def player(
    remote: Remote,
    host: str,
    port: int,
    speed: float = 1.0,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Player:
    """A player that replays its set of sessions on ``remote`` with pgreplay, against
    ``host``:``port`` as the host reaches the server (a time limit as ``engine.run``'s); the
    log, which holds the workload's values, written there readable by its user only and
    removed after."""

    def play(part: Workload, workdir: Path) -> str:
        del workdir  # everything is on the host
        limit = timeout if timeout is not None else 60 + 4 * part.duration / speed
        folder = remote.make_dir()
        try:
            path = f"{folder}/replay.log"
            remote.write(path, pgreplay.log_for(part).encode(), mode=0o600)
            argv = ["pgreplay", "-h", host, "-p", str(port), "-s", f"{speed:g}", path]
            done = remote.run(argv, timeout=limit, env=env, check=False)
        finally:
            remote.remove_dir(folder)
        output = done.stdout + done.stderr
        if done.returncode != 0 or "Replay statistics" not in output:
            raise CommandError(
                f"pgreplay failed on {remote.spec.label} (exit {done.returncode}): "
                f"{procs.tail(output)}",
                hint="is Debian's pgreplay installed there (apt-get install pgreplay), and "
                "the server reachable from it at that address?",
            )
        return output

    return play


def here(host: str, port: int, speed: float = 1.0, env: Mapping[str, str] | None = None) -> Player:
    """A player on this machine ("local" among the generators): its pgreplay, against the
    server's address as this machine reaches it (``engine.run``)."""

    def play(part: Workload, workdir: Path) -> str:
        return engine.run(part, host, port, workdir, speed, env=dict(env or {}))

    return play
