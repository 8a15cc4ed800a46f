"""One interface over the servers a run measures, whoever started them.

Three kinds implement it: a cluster pglab makes and starts here (``server.Cluster``), a server
pglab reaches by a dsn and never starts (``existing.ExistingServer``), and a server pglab makes
on another host over SSH (``on_host.HostServer``). The executor, the phase runners and the
telemetry take a ``Server`` and ask it; none of them asks which kind it is. A new kind (a server
in a container, a cloud instance) implements this and nothing else changes.

The two kinds reached by a dsn also share :class:`DsnServer`, what the executor asks of them
before a run (the dataset in pglab's database, the run's settings, resets by copy where pglab
owns the files, their journal or their directories put back at the end): each holds a
``reach.Reach`` (connections, facts, catalog, round trip) and neither inherits from the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import psycopg

from pglab.fingerprints import Fingerprint
from pglab.postgres.sources import Binaries

if TYPE_CHECKING:  # asyncssh takes a while to import; a local server never needs it
    from collections.abc import Mapping

    from pglab.campaign.spec import ServerSpec
    from pglab.hosts.ssh import Remote
    from pglab.postgres.reach import Facts
    from pglab.postgres.settings import SettingDef


@dataclass(frozen=True)
class OsView:
    """Where the telemetry reads the server's machine: this one (``remote`` None: the data
    directory here, the postmaster's processes by ``postgres_pids``) or a host over SSH."""

    datadir: Path | str
    remote: Remote | None = None
    postgres_pids: Callable[[], list[int]] | None = None


class Server(Protocol):
    # samplers it cannot have, and why: said in every watched phase's notes (never zeros)
    unwatched: tuple[tuple[str, str], ...]
    # pglab started it: its log is pglab's to read (checkpoints, the run's complaints)
    owned: bool
    # its processes are this machine's (a maintenance operation reads their CPU)
    local_processes: bool

    def connect(self) -> psycopg.Connection:
        """A session for pglab's samplers, in the database of pgbench's tables."""
        ...

    def bench_session(self) -> psycopg.Connection:
        """A session as pgbench's are: that database, with the run's session settings."""
        ...

    def client_conninfo(self, dbname: str | None = None) -> str:
        """What a client program (pg_dump, pg_basebackup) connects with, as pgbench does."""
        ...

    def pgbench_conn_args(self) -> list[str]: ...

    def client_env(self) -> dict[str, str] | None:
        """libpq's variables pgbench needs beside its arguments (None: pglab's own)."""
        ...

    def os_view(self) -> OsView | None:
        """Where its machine is read, or None when it is not pglab's to read."""
        ...

    def log_size(self) -> int: ...

    def log_since(self, offset: int) -> str: ...

    def lost(self, grace: float = ...) -> str | None:
        """Why a failed run's server cannot be trusted (it died, it cannot be reached)."""
        ...

    def changed_under_run(self) -> str | None:
        """Why a run that went well cannot be trusted because of its server (someone restarted
        it during the run), or None."""
        ...

    def fingerprint(self, binaries: Binaries) -> Fingerprint:
        """The server and the machines of the run, as its fingerprint records them."""
        ...


class DsnServer(Server, Protocol):
    """A server reached by a dsn: an existing one (``existing.ExistingServer``) or one pglab
    made on a host (``on_host.HostServer``)."""

    @property
    def key(self) -> str:
        """Names it in messages, journals and the store (never with a password)."""
        ...

    @property
    def where(self) -> str: ...

    @property
    def spec(self) -> ServerSpec: ...

    def connect(
        self, dbname: str | None = None, with_options: bool = False, admin: bool = False
    ) -> psycopg.Connection:
        """A session in pglab's database (``admin``: in the dsn's own database)."""
        ...

    def facts(self) -> Facts: ...

    def catalog(self) -> dict[str, SettingDef]: ...

    def for_run(self, spec: ServerSpec) -> None:
        """The same server and database, for this run's spec."""
        ...

    def wait_ready(self, timeout: float = ..., on_status: Callable[[str], None] = ...) -> None:
        """Until it accepts connections again (someone, or pglab on a host, restarted it)."""
        ...

    def pause(self, host: str) -> None:
        """Stopped while another server pglab made on ``host`` is measured."""
        ...

    def use_copy(self, dataset: str, name: str, fresh: bool) -> float | None: ...

    def keep_dataset(self, dataset: str) -> float: ...

    def apply(self, values: Mapping[str, str], catalog: Mapping[str, SettingDef]) -> str:
        """Bring it to the run's settings: "session", "none", "reload" or "restart"."""
        ...

    def mark_start(self) -> None:
        """Remember when its postmaster started, to tell a restart during the run."""
        ...

    def close(self) -> None:
        """What pglab changed on it put back, or what it made there removed."""
        ...
