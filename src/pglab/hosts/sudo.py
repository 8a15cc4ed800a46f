"""What pglab does as root on a host through ``sudo -n`` (``[hosts.NAME] sudo = true``): its
kernel's files read and written (``[os] sysctl``), the journal of their originals kept there,
and a command's hard resource limits raised (``[os] limits``). An SSH user that is root needs
no sudo; any other must be allowed ``sudo -n`` (no password asked) for ``true``, ``tee`` and
``prlimit`` (``check`` says so before anything runs).

The journal is a file of the SSH user's on the host
(``~/.local/state/pglab/os/<machine>-<pid>.json``): the originals of the files pglab is about
to write and the pglab that wrote it (this machine's name, its pid and start time), written
before the first write, removed once everything reads as before; a killed pglab's is found by
the next ``pglab run`` that reaches the host (``run/os_hosts``)."""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

from pglab.errors import HostError, LabError
from pglab.procs import prlimit_options

if TYPE_CHECKING:  # asyncssh takes a while to import: only with a host
    from pglab.hosts.ssh import Remote

JOURNALS = ".local/state/pglab/os"  # under the SSH user's home on the host
# the commands pglab runs under sudo (a sudoers line may name them alone)
COMMANDS = ("true", "tee", "prlimit")
# as root if not root already: ``$SUDO`` is "" for root, "sudo -n" otherwise
_AS_ROOT = 'if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; '
# one file's text written as root (sh -c SCRIPT PATH VALUE)
_WRITE = _AS_ROOT + 'printf "%s\\n" "$1" | $SUDO tee "$0" >/dev/null'
# the files' texts (sh -c SCRIPT PATH...): PATH<TAB>first line, for those that exist
_READ = 'for f in "$@"; do [ -e "$f" ] && printf "%s\\t%s\\n" "$f" "$(head -n 1 "$f")"; done; true'
# this shell's limits set (by itself up to its hard ones, else as root: raising a hard limit,
# or another user's, takes CAP_SYS_RESOURCE), then it becomes the command
# (sh -c SCRIPT OPTIONS ARGV...)
_RAISE = _AS_ROOT + (
    "o=$1; shift; prlimit --pid $$ $o 2>/dev/null || "
    '$SUDO prlimit --pid $$ $o >&2 || exit 125; exec "$@"'
)


class Owner(TypedDict):
    """The pglab that wrote a journal on a host: this machine's name, its pid and start time."""

    machine: str
    pid: int
    create_time: float


def me() -> Owner:
    import psutil

    proc = psutil.Process()
    return Owner(machine=socket.gethostname(), pid=proc.pid, create_time=proc.create_time())


def check(remote: Remote) -> HostError | None:
    """Why pglab cannot act as root on the host (None: it is root there, or ``sudo -n
    true`` works)."""
    said = remote.run(["sh", "-c", _AS_ROOT + "$SUDO true"], check=False)
    if said.returncode == 0:
        return None
    spec = remote.spec
    user = spec.user or "the SSH user"
    why = (said.stderr or said.stdout).strip().splitlines()
    return HostError(
        f"[os] is applied on {spec.label} through sudo, and `sudo -n true` failed there as "
        f"{user}: {why[-1] if why else f'exit {said.returncode}'}",
        hint=f"allow it there without a password (visudo -f /etc/sudoers.d/pglab: "
        f'"{user} ALL=(root) NOPASSWD: ALL", or only {", ".join(COMMANDS)}; Debian\'s sudo '
        f"package), or leave [os] sysctl out for [hosts.{spec.name}]",
    )


def with_limits(argv: Sequence[str], limits: Mapping[str, int]) -> list[str]:
    """``argv`` run with ``limits`` soft and hard, its hard ones raised as root first (what a
    user's own prlimit cannot do)."""
    if not limits:
        return list(argv)
    return ["sh", "-c", _RAISE, "pglab-limits", " ".join(prlimit_options(limits)), *argv]


class HostKernel:
    """A host's kernel files (/proc/sys), read as the SSH user and written as root."""

    def __init__(self, remote: Remote):
        self.remote = remote
        self.host = remote.spec.name

    def read_all(self, paths: Sequence[str]) -> dict[str, str]:
        """The texts of those of ``paths`` that exist there (their first line)."""
        if not paths:
            return {}
        said = self.remote.run(["sh", "-c", _READ, "pglab-read", *paths]).stdout
        return dict(line.split("\t", 1) for line in said.splitlines() if "\t" in line)

    def read(self, path: str) -> str:
        found = self.read_all([path])
        if path not in found:
            raise HostError(f"{path} does not exist on {self.remote.spec.label}")
        return found[path]

    def exists(self, path: str) -> bool:
        return path in self.read_all([path])

    def write(self, path: str, value: str, sync: bool = False) -> None:
        """``value`` written to ``path`` as root (``sync``: the host's dirty pages written out
        first)."""
        script = f"sync; {_WRITE}" if sync else _WRITE
        said = self.remote.run(["sh", "-c", script, path, value], check=False, timeout=600)
        if said.returncode != 0:
            raise LabError(
                f"could not write {value!r} to {path} on {self.remote.spec.label}: "
                f"{(said.stderr or said.stdout).strip()}",
                hint="the kernel (or sudo) refused it; what pglab had changed is put back",
            )


class HostJournalFile:
    """Where a journal lives on a host (``JOURNALS``), written whole as the SSH user."""

    def __init__(self, remote: Remote, name: str):
        self.remote = remote
        self.path = f"{remote.home()}/{JOURNALS}/{name}"

    def save(self, owner: Owner, originals: Mapping[str, str]) -> None:
        directory = self.path.rsplit("/", 1)[0]
        self.remote.run(["mkdir", "-p", "-m", "700", directory])
        partial = self.path + ".partial"
        text = json.dumps({"owner": owner, "originals": dict(originals)}, indent=2)
        self.remote.write(partial, text.encode())
        self.remote.run(["sh", "-c", 'sync "$0" 2>/dev/null; mv -f "$0" "$1"', partial, self.path])

    def remove(self) -> None:
        self.remote.run(["rm", "-f", "--", self.path], check=False)


def journals(remote: Remote) -> dict[str, tuple[Owner, dict[str, str]]]:
    """The journals kept on the host, by file name: (owner, originals) each."""
    home = remote.home()
    listed = remote.run(
        [
            "sh",
            "-c",
            'for f in "$0"/*.json; do [ -f "$f" ] && echo "$f"; done; true',
            f"{home}/{JOURNALS}",
        ],
    )
    found = {}
    for path in listed.stdout.split():
        try:
            data = json.loads(remote.read(path))
            owner: Owner = data["owner"]
            found[path.rsplit("/", 1)[1]] = (
                owner,
                {str(k): str(v) for k, v in data["originals"].items()},
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return found
