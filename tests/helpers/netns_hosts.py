"""Real hosts on one machine, for the tests of remote load generators: network namespaces joined
by a bridge (veth pairs), each running Debian's openssh-server (``/usr/sbin/sshd -D -e -f`` a
config of its own, its own host key and pid file, ``lo`` up), reachable from the root namespace
at 10.231.N.11, .12, ... with the bridge at 10.231.N.1. Names and the subnet are chosen per test
session, so that two sessions on the machine do not meet.

Each host has its own view of the file system (a mount namespace, held by a process of its own
for the session, so that its files outlive a restart of its sshd as a disk does): ``/tmp``,
``/var/tmp``, ``/dev/shm``, ``/root`` and ``/home`` are its own (empty tmpfs, the login user's
home made there), so the lab's directories (the tests' lab home is on /dev/shm), the tests'
files and anything pglab writes on this machine's ``/tmp`` are not there; what a host needs must
travel over SSH. The rest is shared: a host's pgbench is the embedded wheel's, at the same path
in the virtual environment (which, where it lies under one of those directories, as a clone of
the repository in ``/tmp`` has it, is bind-mounted back at its own path in each host's view: the
one thing kept). ``NsHost.run`` runs a command in the host's namespaces, to look at what is
there.

The tests log in as root with a key made here, or as ``LOGIN_USER`` (an unprivileged account
made here, for a PostgreSQL server on a host: PostgreSQL refuses root); ``known_hosts`` is
theirs to write.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
LOGIN_USER = "pglabssh"
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


def _ip(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    argv = ["ip", *(["netns", "exec", ns, "ip"] if ns else []), *args]
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=30)


PRIVATE = ("/tmp", "/var/tmp", "/dev/shm", "/root", "/home")  # each host has its own (tmpfs)


def _own_files(stash: Path) -> str:
    """The script that makes a host's own /tmp, /var/tmp, /root and /home in its mount namespace
    (the virtual environment kept where it lies under one of them, by way of ``stash``), its
    cgroup cpu controller mounted, then says "ready"."""
    venv = Path(sys.prefix).resolve()
    keep = any(venv.is_relative_to(d) for d in PRIVATE)
    return (
        "set -e; "
        + (f"mkdir -p {stash}; mount --bind {venv} {stash}; " if keep else "")
        + 'for d in /tmp /var/tmp /dev/shm; do mount -t tmpfs -o mode=1777 pglab-host "$d"; done; '
        "mount -t tmpfs -o mode=0700 pglab-host /root; "
        "mount -t tmpfs -o mode=0755 pglab-host /home; "
        + (f"mkdir -p {venv}; mount --bind {stash} {venv}; " if keep else "")
        # ip netns exec gave it a sysfs of its own, without the cgroup file systems: the cpu
        # controller mounted again (v1, else v2), as a host or a container has it
        + "{ mount -t tmpfs -o mode=0755 pglab-cg /sys/fs/cgroup && mkdir /sys/fs/cgroup/cpu && "
        "mount -t cgroup -o cpu pglab-cg /sys/fs/cgroup/cpu; } 2>/dev/null || "
        "mount -t cgroup2 pglab-cg /sys/fs/cgroup 2>/dev/null || true; "
        f"mkdir -m 0755 /home/{LOGIN_USER}; chown {LOGIN_USER}: /home/{LOGIN_USER}; "
        "echo ready; exec tail -f /dev/null"  # not "sleep": tests look for theirs
    )


@dataclass
class NsHost:
    name: str
    ns: str
    address: str
    dir: Path
    sshd: subprocess.Popen | None = None
    holder: subprocess.Popen | None = None  # holds the host's mount namespace

    def own_files(self) -> None:
        """Make the host's mount namespace (its own /tmp, /var/tmp, /root, /home)."""
        self.holder = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "unshare", "--mount", "--propagation", "private",
             "sh", "-c", _own_files(self.dir / "venv")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert self.holder.stdout is not None
        said = self.holder.stdout.readline()
        assert said.strip() == "ready", said + self.holder.stdout.read()

    def enter(self) -> list[str]:
        """The argv prefix that runs a command in the host's network and mount namespaces."""
        assert self.holder is not None
        return ["nsenter", "-t", str(self.holder.pid), "-m", "-n", "--"]

    def run(self, *argv: str) -> subprocess.CompletedProcess:
        """A command run on the host (as root, in its namespaces), its output as text."""
        return subprocess.run([*self.enter(), *argv], capture_output=True, text=True, timeout=30)

    def has(self, path: str | Path) -> bool:
        """Whether ``path`` exists in the host's view of the file system."""
        return self.run("test", "-e", str(path)).returncode == 0

    def glob(self, pattern: str) -> list[str]:
        """The host's paths matching a shell pattern (``/tmp/pglab-*``)."""
        out = self.run("sh", "-c", f'for p in {pattern}; do [ -e "$p" ] && echo "$p"; done')
        return out.stdout.split()

    @contextlib.contextmanager
    def memory(self, total_kb: int) -> Iterator[None]:
        """The host reports ``total_kb`` of RAM while inside (its /proc/meminfo bind-mounted over
        by one that says so, in its mount namespace only: what LXCFS does for a container)."""
        real = self.run("cat", "/proc/meminfo").stdout
        fake = self.dir / "meminfo"
        fake.write_text("".join(
            f"MemTotal:       {total_kb} kB\n" if line.startswith("MemTotal:") else line + "\n"
            for line in real.splitlines()
        ))  # fmt: skip
        done = self.run("mount", "--bind", str(fake), "/proc/meminfo")
        assert done.returncode == 0, done.stderr
        try:
            yield
        finally:
            self.run("umount", "/proc/meminfo")

    @contextlib.contextmanager
    def cpu_quota(self, cpus: float) -> Iterator[None]:
        """The processes sshd starts while inside may use ``cpus`` CPUs at most (a cgroup v1
        CPU quota with sshd moved into it: its new sessions and their children inherit it)."""
        root = Path("/sys/fs/cgroup/cpu")
        assert (root / "cgroup.procs").exists(), "needs the cgroup v1 cpu controller"
        assert self.sshd is not None
        group = root / f"pglab-{self.ns}"
        group.mkdir(exist_ok=True)
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text(str(int(cpus * 100000)))
        (group / "cgroup.procs").write_text(str(self.sshd.pid))
        try:
            yield
        finally:
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):  # gone meanwhile
                    (root / "cgroup.procs").write_text(pid)
            group.rmdir()

    @contextlib.contextmanager
    def hard_nofile(self, n: int) -> Iterator[None]:
        """The SSH sessions started while inside get ``n`` open files at most, soft and hard
        (sshd restarted under prlimit, then as before)."""
        self.stop_sshd()
        self.start_sshd((f"--nofile={n}:{n}",))
        try:
            yield
        finally:
            self.stop_sshd()
            self.start_sshd()

    def host_key(self) -> str:
        """The host's public key as a known_hosts line."""
        kind, key = (self.dir / "host_key.pub").read_text().split()[:2]
        return f"{self.address} {kind} {key}"

    def pids(self) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", self.ns], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def processes(self, name: str) -> list[int]:
        """Pids of processes called ``name`` in the namespace."""
        found = []
        for pid in self.pids():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() == name:
                    found.append(pid)
        return found

    def stop_sshd(self) -> None:
        if self.sshd is not None and self.sshd.poll() is None:
            self.sshd.terminate()
            self.sshd.wait(10)

    _starts = 0

    def start_sshd(self, limits: tuple[str, ...] = ()) -> None:
        """sshd started (``limits``: prlimit's options it runs under, with its sessions)."""
        self._starts += 1
        log = open(self.dir / "sshd.log", "ab")  # noqa: SIM115 - sshd keeps writing to it
        bounded = ["prlimit", *limits, "--"] if limits else []
        self.sshd = subprocess.Popen(
            [*self.enter(), *bounded, SSHD, "-D", "-e", "-f", str(self.dir / "sshd_config")],
            stdout=log, stderr=log,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + 10
        while (self.dir / "sshd.log").read_bytes().count(b"Server listening") < self._starts:
            assert self.sshd.poll() is None, (self.dir / "sshd.log").read_text()
            assert time.monotonic() < deadline, "sshd did not start"
            time.sleep(0.05)


class Hosts:
    """``count`` hosts (gen1, gen2, ...) and the client key that logs in to all of them."""

    def __init__(self, count: int):
        self.tag = f"{os.getpid() % 10000:04d}"
        self.subnet = self._free_subnet()
        self.bridge = f"pglbr{self.tag}"
        # not under /tmp, which the hosts do not see: sshd reads its config and keys there
        self.root = Path(tempfile.mkdtemp(prefix="pglab-hosts-", dir="/run"))
        self.key = self.root / "client_key"
        self.hosts = [
            NsHost(
                f"gen{i}",
                f"pgl{self.tag}-gen{i}",
                f"10.231.{self.subnet}.{10 + i}",
                self.root / f"gen{i}",
            )  # fmt: skip
            for i in range(1, count + 1)
        ]

    @staticmethod
    def _free_subnet() -> int:
        used = _ip("-4", "-o", "addr").stdout
        for n in [os.getpid() % 200 + 20, *range(20, 250)]:
            if f"10.231.{n}." not in used:
                return n
        raise RuntimeError("no free 10.231.N.0/24 subnet for the test hosts")

    @property
    def gateway(self) -> str:
        """The root namespace's address on the bridge (where a server for the hosts listens)."""
        return f"10.231.{self.subnet}.1"

    @staticmethod
    def _login_user() -> None:
        """An unprivileged account SSH lets in (a shell, a home, a password field that is not
        "locked", which sshd refuses without PAM)."""
        import pwd

        try:
            pwd.getpwnam(LOGIN_USER)
        except KeyError:
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", LOGIN_USER],
                           check=True)  # fmt: skip
        subprocess.run(["usermod", "-p", "*", LOGIN_USER], check=True)

    def start(self) -> Hosts:
        missing = [t for t in ("ip", "ssh-keygen", "useradd", "unshare", "nsenter", SSHD)
               if not shutil.which(t)]  # fmt: skip
        assert not missing, f"missing {missing}: apt-get install openssh-server iproute2"
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
        self._login_user()
        self.root.chmod(0o755)  # the login user's sshd reads authorized_keys under it
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)],
                       check=True)  # fmt: skip
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, h in enumerate(self.hosts, 1):
            veth = f"pgv{self.tag}g{i}"
            _ip("netns", "add", h.ns)
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
            _ip("link", "set", veth, "master", self.bridge, "up")
            _ip("addr", "add", f"{h.address}/24", "dev", "eth0", ns=h.ns)
            _ip("link", "set", "eth0", "up", ns=h.ns)
            _ip("link", "set", "lo", "up", ns=h.ns)
            h.dir.mkdir(mode=0o755)
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            str(h.dir / "host_key")], check=True)  # fmt: skip
            shutil.copy(f"{self.key}.pub", h.dir / "authorized_keys")
            (h.dir / "authorized_keys").chmod(0o644)
            h.own_files()
            (h.dir / "sshd_config").write_text(
                f"Port 22\nListenAddress {h.address}\nHostKey {h.dir / 'host_key'}\n"
                f"PidFile {h.dir / 'sshd.pid'}\nAuthorizedKeysFile {h.dir / 'authorized_keys'}\n"
                "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                "Subsystem sftp internal-sftp\n"
                # a lost link is given up within ~6 s: its sessions' processes then end
                "ClientAliveInterval 2\nClientAliveCountMax 3\n"
            )
            h.start_sshd()
        return self

    def shift_clock(self, host: NsHost, seconds: float | None) -> None:
        """Give the host's SSH sessions a clock ``seconds`` ahead (libfaketime, through sshd's
        SetEnv), or their own again (None); sshd is restarted for it."""
        conf = host.dir / "sshd_config"
        lines = [x for x in conf.read_text().splitlines() if not x.startswith("SetEnv")]
        if seconds is not None and not Path(FAKETIME).exists():
            import pytest

            pytest.skip("a shifted clock needs libfaketime (apt-get install libfaketime)")
        if seconds is not None:
            lines.append(f"SetEnv LD_PRELOAD={FAKETIME} FAKETIME={seconds:+g}s")
        conf.write_text("\n".join(lines) + "\n")
        host.stop_sshd()
        host.start_sshd()

    def known_hosts(self, path: Path) -> Path:
        path.write_text("".join(h.host_key() + "\n" for h in self.hosts))
        return path

    def link(self, host: NsHost, up: bool) -> None:
        i = self.hosts.index(host) + 1
        _ip("link", "set", f"pgv{self.tag}g{i}", "up" if up else "down")

    def stop(self) -> None:
        for h in self.hosts:
            for pid in h.pids():  # whatever a test left: sshd, and anything that outlived it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)
            h.stop_sshd()
            if h.holder is not None:
                h.holder.kill()
                h.holder.wait(10)
                if h.holder.stdout is not None:
                    h.holder.stdout.close()
            _ip("netns", "del", h.ns, check=False)
        _ip("link", "del", self.bridge, check=False)
        shutil.rmtree(self.root, ignore_errors=True)
