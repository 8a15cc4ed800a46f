"""CPU profiles of a server pglab made on another host (``postgres/on_host.py``), recorded
there by that host's perf over the campaign's SSH connection, as the host's user.

The user is the server's, so perf samples the server's own processes (``-p``: the postmaster
and its children; backends forked later inherit the sampling), which
``kernel.perf_event_paranoid`` 2 allows (user space only; 1 or less: the kernel's frames too);
``problem`` checks it before anything runs, with a recording like a phase's. Per phase:

- perf's files live in a directory of their own in the host's /tmp; perf runs under the SSH
  watcher (``hosts/ssh.py``) with SIGINT as its stop signal and, once it has ended however it
  ended, the directory removed unless pglab asked to keep it for ``perf script`` (a file
  ``keep``): a killed pglab or a lost link leaves no perf and no file there;
- a shell loop there prints each process of the server once with its title, twice a second
  (the kind of each pid, as ``folded.kind_of`` tells it);
- after the phase, ``perf script`` runs there (the host's binaries have the symbols) and its
  text comes back to be folded here; then the directory goes.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pglab import procs
from pglab.campaign.spec import RunSpec
from pglab.errors import HostError, ProfileError
from pglab.profile import checks, folded, perf
from pglab.units import size_text

if TYPE_CHECKING:  # asyncssh takes a while to import: only with a host
    from pglab.hosts.ssh import Background, Finished, Remote

PERF = "perf"  # the host's, on its PATH
PAGE_S = 0.5
# $0: the data directory: the paranoid level, the postmaster, its children but the workers
# that come and go (perf -p fails on a pid gone as it starts; those forked later are sampled)
PIDS = (
    'cat /proc/sys/kernel/perf_event_paranoid; pm=$(head -n 1 "$0/postmaster.pid"); '
    'echo "$pm"; for p in $(cat /proc/"$pm"/task/*/children 2>/dev/null); do '
    'case "$(tr "\\0" " " </proc/"$p"/cmdline 2>/dev/null)" in '
    '*"autovacuum worker"*|*"parallel worker"*|"") ;; *) echo "$p";; esac; done'
)
# $0: the postmaster's pid: "PID TITLE" once per process, the postmaster first; a child whose
# title is not set yet (just forked) is read again at the next turn
TITLES = (
    'pm=$0; echo "$pm postmaster"; seen=" "; while :; do '
    'for p in $(cat /proc/"$pm"/task/*/children 2>/dev/null); do case "$seen" in *" $p "*) ;; '
    '*) t=$(tr "\\0" " " </proc/"$p"/cmdline 2>/dev/null); case "$t" in postgres:*) '
    'echo "$p $t"; seen="$seen$p ";; esac;; esac; done; '
    f"sleep {PAGE_S}; done"
)
# $0: ctl FIFO, $1: ack FIFO: tell perf to sample, and wait (60 s at most) for its "ack"
ENABLE = 'exec 3<>"$0" 4<>"$1"; echo enable >&3; timeout 60 head -c 4 <&4'
# $0: a scratch directory: a perf recording of a process of the user's, as a phase attaches
PROBE = (
    'sleep 5 & p=$!; "$1" record --quiet -e cpu-clock -F "$2" --call-graph dwarf,'
    f'{perf.STACK_BYTES} -o "$0/probe.data" -p $p -- sleep 0.2; s=$?; kill $p; exit $s'
)
NOT_ALLOWED = ("perf_event_paranoid", "Permission denied", "EACCES", "not permitted")


def problem(remote: Remote, runs: Iterable[RunSpec]) -> ProfileError | None:
    """Why perf cannot profile the server on ``remote`` for the profiled ``runs`` made there
    (perf missing there, not allowed as the host's user, not matching its kernel, no room in
    its /tmp for the longest phase's recording), or None."""
    runs = [r for r in runs if r.profile.enabled]
    if not runs:
        return None
    host, label = remote.spec.name, remote.spec.label
    if remote.run(["sh", "-c", f"command -v {PERF}"], check=False).returncode != 0:
        return ProfileError(
            f"profiling the server on {label} needs Linux perf there, and {PERF} is not found "
            f"on {host} (for its user's PATH)",
            f"install it on {host} (Debian: apt-get install linux-perf), {perf.OFF}",
        )
    scratch = remote.make_dir()
    try:
        hz = max(r.profile.frequency for r in runs)
        done = remote.run(["sh", "-c", PROBE, scratch, PERF, str(hz)], timeout=60, check=False)
    finally:
        remote.remove_dir(scratch)
    if done.returncode != 0:
        return _refused(remote, procs.tail(done.stderr or done.stdout, 6))
    return _room(remote, runs)


def _refused(remote: Remote, said: str) -> ProfileError:
    host, label = remote.spec.name, remote.spec.label
    if any(word in said for word in NOT_ALLOWED):
        level = remote.run(["cat", "/proc/sys/kernel/perf_event_paranoid"], check=False)
        user = remote.run(["id", "-un"], check=False).stdout.strip() or "its user"
        return ProfileError(
            f"perf on {label} is not allowed to sample the server's processes as {user}: "
            f"kernel.perf_event_paranoid is {level.stdout.strip() or 'unknown'} there "
            "(sampling one's own processes needs 2 or less)",
            f"on {host}, as root: sysctl kernel.perf_event_paranoid=2 (or lower; "
            f"/etc/sysctl.d/ keeps it), {perf.OFF}",
        )
    if "not found for kernel" in said:
        return ProfileError(
            f"perf on {label} does not match its kernel:\n{said}",
            f"install the linux-perf of {host}'s kernel there, {perf.OFF}",
        )
    return ProfileError(
        f"perf record failed on {label}:\n{said}",
        f"run `perf record -- true` on {host} as its user, {perf.OFF}",
    )


def _room(remote: Remote, runs: list[RunSpec]) -> ProfileError | None:
    cpus = remote.facts("true").get("cpus") or 1
    need = max(
        checks.recording_bytes(ph.estimated_seconds(), r.profile.frequency, cpus)
        for r in runs
        for ph in r.phases
        if ph.measured
    )
    said = remote.run(["df", "-B1", "--output=avail", "/tmp"], check=False).stdout.split()
    free = int(said[-1]) if said and said[-1].isdigit() else None
    if free is None or need <= free:
        return None
    return ProfileError(
        f"perf's recording of the longest profiled phase needs about {size_text(need)} in "
        f"/tmp on {remote.spec.label}, which has {size_text(free)} free",
        "free space there, shorten the phase, lower [profile] frequency, or leave profiling off",
    )


class HostRecording:
    """perf recording the server on a host for one phase: ``start``, then ``stop``, then
    ``close`` (always)."""

    def __init__(self, remote: Remote, datadir: str, hz: int):
        self.remote, self.datadir, self.hz = remote, datadir, hz
        self.dir: str | None = None
        self.kinds: dict[int, str] = {}
        self.paranoid = ""
        self._perf: Background | None = None
        self._titles: Background | None = None

    @property
    def where(self) -> str:
        return f" on {self.remote.spec.name}"

    def start(self) -> str | None:
        """perf recording, sampling from when this returns; or why not."""
        found = self.remote.run(["sh", "-c", PIDS, self.datadir], check=False).stdout.split()
        if len(found) < 2 or not found[1].isdigit():
            return "no process of the server was found" + self.where
        self.paranoid, pids = found[0], found[1:]
        self.dir = d = self.remote.make_dir()
        self.remote.run(["mkfifo", "-m", "600", f"{d}/ctl", f"{d}/ack"])
        self._titles = self.remote.spawn(["sh", "-c", TITLES, pids[0]])
        argv = [
            *perf.record_argv(f"{d}/perf.data", self.hz, PERF),
            "-D",
            "-1",
            f"--control=fifo:{d}/ctl,{d}/ack",
            "-p",
            ",".join(pids),
        ]
        keep = shlex.quote(f"{d}/keep")
        self._perf = self.remote.spawn(
            argv, stop_signal="INT", then=f"[ -e {keep} ] || rm -rf -- {shlex.quote(d)}"
        )
        acked = self.remote.run(
            ["sh", "-c", ENABLE, f"{d}/ctl", f"{d}/ack"], timeout=70, check=False
        )
        if "ack" not in acked.stdout:
            ended = self._perf.stop(10)
            said = (ended.stderr if ended else "") or "no answer within 60 s"
            return f"perf record did not start{self.where}: {procs.tail(said, 4)}"
        return None

    def stop(self, keep: bool) -> str | None:
        """Stop perf (and read the titles); ``keep``: its recording kept for ``script``.
        Why it failed, or None."""
        if self._perf is None or self.dir is None:
            return "perf was not started" + self.where
        if keep:
            self.remote.run(["touch", f"{self.dir}/keep"], check=False)
        ended = self._perf.stop(perf.STOP_GRACE_S)
        if self._titles is not None:
            self._read_titles(self._titles.stop(10))
        if ended is None:
            return f"perf record did not stop{self.where} within {perf.STOP_GRACE_S:.0f} s"
        if ended.returncode not in (0, 130):
            said = procs.tail(ended.stderr, 4)
            return f"perf record failed{self.where} (exit {ended.returncode}): {said}"
        return None

    def _read_titles(self, ended: Finished | None) -> None:
        for line in (ended.stdout if ended is not None else "").splitlines():
            pid, _, title = line.partition(" ")
            if pid.isdigit() and int(pid) not in self.kinds:
                self.kinds[int(pid)] = folded.kind_of(title)

    def script(self) -> str:
        """``perf script``'s text of the recording, made there."""
        assert self.dir is not None
        return self.remote.run(
            perf.script_argv(f"{self.dir}/perf.data", PERF), timeout=perf.SCRIPT_TIMEOUT_S
        ).stdout

    def notes(self, found: folded.Folded) -> list[str]:
        """What the profile of the host cannot show: the kernel's frames where perf may sample
        user space only, binaries without symbols (with their Debian package there)."""
        out = []
        if self.paranoid.lstrip("-").isdigit() and int(self.paranoid) >= 2:
            out.append(
                f"user space only{self.where}: kernel.perf_event_paranoid is {self.paranoid} "
                "there, so time in the kernel (system calls, page faults) is not sampled "
                "(1 or less samples it)"
            )
        for binary in found.stripped():
            owner = self.remote.run(
                ["sh", "-c", 'dpkg -S "$0" 2>/dev/null', binary], check=False
            ).stdout
            out.append(perf.no_symbols(binary, owner, self.where))
        return out

    def close(self) -> None:
        """perf stopped (if it still runs) and its files removed there."""
        for bg in (self._perf, self._titles):
            if bg is not None and not bg.done:
                bg.stop(10)
        if self.dir is not None:
            with contextlib.suppress(HostError):  # a lost link: the watcher removed them
                self.remote.remove_dir(self.dir)
            self.dir = None
