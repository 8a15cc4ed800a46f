"""``[os]`` on hosts: a run's sysctls written on its server's host and on its generator hosts
through ``sudo -n`` (``[hosts.NAME] sudo = true``, checked when the file is read and before the
first run), journaled on each host before the first write (``hosts/sudo``), put back as on this
machine (``run/os_state``): what an earlier run set and this one does not ask for before it
writes its own, everything at the campaign's end (also on errors, Ctrl-C and SIGTERM), and after
a SIGKILL by the next ``pglab run`` that reaches the host (``put_back_leftovers``, from
``Hosts.clean_leftovers``: journals of a pglab of this machine that no longer runs).

Limits are not journaled: they are the processes' own (``hosts/sudo.with_limits``: the server
started on a host with them soft and hard, pgbench on a generator host), and end with them;
as do the CPUs a server on a host is confined to (``cpus``: its processes' affinity, set by
the SSH user, whose processes they are)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable
from pathlib import Path

from pglab.campaign.os_checks import cpu_list
from pglab.campaign.os_where import hosts_of
from pglab.campaign.spec import RunSpec
from pglab.errors import HostError, LabError
from pglab.fingerprints import CpuFacts, Fingerprint, OsFacts
from pglab.hosts import facts, sudo
from pglab.hosts.pool import HostPool
from pglab.hosts.ssh import Remote
from pglab.postgres import altered
from pglab.postgres.interface import OsView
from pglab.run.os_state import COUNTERPART, DROP_CACHES, LIMIT_LINES, OsJournal, sysctl_path


class HostJournal(OsJournal):
    """A host's journal, kept on that host (``hosts.sudo.HostJournalFile``)."""

    def __init__(
        self,
        remote: Remote,
        name: str,
        originals: dict[str, str] | None = None,
        owner: sudo.Owner | None = None,
    ):
        self.host_kernel = sudo.HostKernel(remote)
        super().__init__(Path(name), originals, self.host_kernel)
        self.file = sudo.HostJournalFile(remote, name)
        self.owner = owner or sudo.me()
        self.host = remote.spec.name

    @property
    def where(self) -> str:
        return f"{self.file.path} on {self.host}"

    def _save(self) -> None:
        self.file.save(self.owner, self.originals)

    def _remove(self) -> None:
        self.file.remove()


class HostsOs:
    """The [os] sysctls runs set on hosts: ``apply`` before a run, ``close`` at the end."""

    def __init__(self) -> None:
        self.journals: dict[str, HostJournal] = {}
        self.confined: set[str] = set()  # hosts whose server [os] cpus confined
        self.name = f"{socket.gethostname()}-{os.getpid()}.json"

    def apply(self, run: RunSpec, pool: HostPool) -> dict[str, dict[str, str]]:
        """Set the run's sysctls on its hosts (putting back what an earlier run set and this
        one does not); what each host's files read back then, by host."""
        hosts = hosts_of(run)
        for name in [n for n in self.journals if n not in hosts]:
            self.journals.pop(name).put_back()
        files = {str(sysctl_path(n)): v for n, v in run.os.sysctl}
        counter = [str(sysctl_path(COUNTERPART[n])) for n, _ in run.os.sysctl if n in COUNTERPART]
        read = {}
        for name in hosts:
            if name not in self.journals:
                self.journals[name] = HostJournal(pool.ssh(name), self.name)
            journal = self.journals[name]
            journal.put_back(keep=files)
            journal.record([*files, *counter])
            for path, value in files.items():
                journal.kernel.write(path, value)
            read[name] = journal.host_kernel.read_all(list(files))
        return read

    def record(
        self, run: RunSpec, view: OsView | None, read: dict[str, dict[str, str]], fp: Fingerprint
    ) -> None:
        """What [os] set on the run's hosts, into its fingerprint: the files as the server's
        host read them back (``os.read``) and every host's (``os.hosts``); the limits its server
        on a host runs under; the CPUs it is confined to there (``cpus``, set now)."""
        if read:
            fp["os"] = OsFacts(
                asked=run.os.identity(),
                devices=[],
                read=read.get(run.server.host or "", {}),
                hosts=read,
            )
        if view is None or view.remote is None:
            return
        if run.os.limits and view.remote.spec.sudo:
            fp["server_limits"] = server_limits(view.remote, str(view.datadir), dict(run.os.limits))
        if cpus := self.confine(run.os.cpus, view.remote, str(view.datadir)):
            fp["cpu_affinity"] = cpus
        if run.os.drop_caches:  # a cold run: once its server runs, before the phases
            fp["dropped_caches"] = drop_caches(view.remote)

    def confine(self, n: int | None, remote: Remote, datadir: str) -> CpuFacts | None:
        """``[os] cpus`` of a server on a host: its postmaster and the processes it forked
        confined to the first ``n`` CPUs its SSH user may use (its own processes: no sudo),
        or given them all back (``n`` None) when an earlier run confined it; what it reads."""
        host = remote.spec.name
        if n is None and host not in self.confined:
            return None
        said = remote.run(
            ["sed", "-n", "s/^Cpus_allowed_list:[[:space:]]*//p", "/proc/self/status"]
        )
        usable = cpu_numbers(said.stdout)
        want = usable[:n] if n is not None else usable
        done = remote.run(["sh", "-c", _CONFINE, datadir, cpu_list(want)], check=False)
        if done.returncode != 0:
            raise HostError(
                f"could not confine the server on {remote.spec.label} to CPUs "
                f"{cpu_list(want)}: {(done.stderr or done.stdout).strip()}",
                hint="taskset (util-linux) and ps (procps) must be there",
            )
        if n is None:
            self.confined.discard(host)
        else:
            self.confined.add(host)
        return CpuFacts(server=cpu_numbers(done.stdout), client=[], shared=False)

    def close(self) -> list[str]:
        """Put back everything on every host; what could not be, as warnings (the journal stays
        there for the next pglab)."""
        said = []
        for name, journal in self.journals.items():
            try:
                journal.put_back()
            except LabError as exc:
                said.append(
                    f"warning: could not put back the kernel settings pglab changed on {name}: "
                    f"{exc.message}; the next pglab run will try again"
                )
        self.journals.clear()
        self.confined.clear()  # (their servers are stopped)
        return said


_ALLOWED = "s/^Cpus_allowed_list:[[:space:]]*//p"  # sed: a process's CPUs in its status
# the postmaster ("$0": its data directory) and the processes it forked, every thread of each,
# confined to the CPUs "$1"; what the postmaster's affinity reads then
_CONFINE = (
    'p=$(head -n 1 "$0/postmaster.pid"); taskset -a -p -c "$1" "$p" >/dev/null || exit 1; '
    'for c in $(ps -o pid= --ppid "$p"); do taskset -a -p -c "$1" "$c" >/dev/null 2>&1; done; '
    'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" "/proc/$p/status"'
)


def cpu_numbers(text: str) -> list[int]:
    """The CPUs of a list as the kernel writes one ("0-3,6")."""
    out: list[int] = []
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        if first.strip().isdigit():
            out += range(int(first), int(last or first) + 1)
    return out


def drop_caches(remote: Remote) -> float:
    """sync, then the host's page cache, dentries and inodes dropped as root; when, as a time."""
    sudo.HostKernel(remote).write(str(DROP_CACHES), "3", sync=True)
    return time.time()


def put_back_leftovers(pool: HostPool, names: Iterable[str]) -> list[str]:
    """What a killed pglab of this machine had set in the kernels of the hosts ``names``, put
    back now; a line each."""
    lines = []
    for name in names:
        try:
            remote = pool.ssh(name)
            for file, (owner, originals) in sudo.journals(remote).items():
                ran = altered.Owner(
                    pid=owner.get("pid", 0), create_time=owner.get("create_time", 0)
                )
                if owner.get("machine") != socket.gethostname() or altered.alive(ran):
                    continue
                back = HostJournal(remote, file, originals, owner).put_back()
                lines.append(
                    f"put back kernel settings an earlier, killed pglab had changed on "
                    f"{name}: {', '.join(back)}"
                )
        except LabError as exc:
            lines.append(
                f"warning: could not put back kernel settings a killed pglab had "
                f"changed on {name}: {exc.message}"
            )
    return lines


def server_limits(remote: Remote, datadir: str, names: Iterable[str]) -> dict[str, str]:
    """What /proc/PID/limits of the postmaster on a host says of ``names`` ("soft hard")."""
    said = remote.run(
        ["sh", "-c", 'cat "/proc/$(head -n 1 "$0/postmaster.pid")/limits"', datadir], check=False
    ).stdout.splitlines()
    return {
        name: " ".join(line[len(LIMIT_LINES[name]) :].split()[:2])
        for name in names
        for line in said
        if line.startswith(LIMIT_LINES[name])
    }


def limits_for(run: RunSpec, pool: HostPool) -> dict[str, int]:
    """The limits a server on a host starts with: the run's, where its host has sudo."""
    spec = pool.specs.get(run.server.host or "")
    return dict(run.os.limits) if spec is not None and spec.sudo else {}


def refresh_generators(fp: Fingerprint, pool: HostPool) -> None:
    """The generator hosts' OS facts as they are for this run (their other facts are read once
    a campaign)."""
    for name, found in (fp.get("generators") or {}).items():
        remote = pool.remotes.get(name)
        if isinstance(remote, Remote):
            said = remote.run(
                ["sh", "-c", facts.OS_PROBE, "sh", *facts.os_probe_args()], check=False
            ).stdout
            fp["generators"][name] = {**found, "os_state": facts.os_state(said)}


class OnHosts:
    """``HostsOs`` on a campaign's hosts, as a lease asks it (``postgres/lease.HostOs``)."""

    def __init__(self, host_os: HostsOs, pool: HostPool) -> None:
        self.host_os, self.pool = host_os, pool

    def apply(self, run: RunSpec) -> dict[str, dict[str, str]]:
        return self.host_os.apply(run, self.pool)

    def record(
        self, run: RunSpec, view: OsView | None, read: dict[str, dict[str, str]], fp: Fingerprint
    ) -> None:
        self.host_os.record(run, view, read, fp)

    def limits_for(self, run: RunSpec) -> dict[str, int]:
        return limits_for(run, self.pool)
