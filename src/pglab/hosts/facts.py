"""What pglab reads of a host (one of the campaign's ``[hosts.NAME]``, or this machine as
"local"): the same keys from ``ssh.Remote.facts`` and ``local.LocalHost.facts``.

A :class:`HostFacts` is what the checks before a run look at (pgbench answers there, the RAM a
server on the host may use) and what a run's fingerprint keeps of its generator hosts
(``Fingerprint.generators``, name -> facts) and of the host of a server pglab made there.
"""

from __future__ import annotations

from pglab.fingerprints import HostFacts as HostFacts  # core: a fingerprint keeps them

# The OS facts every run records of a host, asked for or not (as ``run/os_state.observed``
# records this machine's): name -> the file that says it.
OS_FILES = {
    "transparent_hugepages": "/sys/kernel/mm/transparent_hugepage/enabled",
    **{
        name: "/proc/sys/" + name.replace(".", "/")
        for name in (
            "vm.dirty_bytes",
            "vm.dirty_background_bytes",
            "vm.dirty_ratio",
            "vm.dirty_background_ratio",
            "vm.swappiness",
            "vm.overcommit_memory",
            "vm.nr_hugepages",
        )
    },
    "cpu_governor": "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
}
# one line per file that exists: NAME<TAB>its first line
OS_PROBE = (
    'for f in "$@"; do [ -r "${f#*=}" ] && '
    'printf "%s\\t%s\\n" "${f%%=*}" "$(head -n1 "${f#*=}")"; done; true'
)


def os_probe_args() -> list[str]:
    """The arguments of ``sh -c OS_PROBE sh ...``: NAME=PATH each."""
    return [f"{name}={path}" for name, path in OS_FILES.items()]


def os_state(said: str) -> dict[str, str]:
    """What ``OS_PROBE`` said, as a fingerprint's ``os_state`` keeps it: THP's bracketed
    choice ("always [madvise] never" → "madvise"), else the text."""
    out = {}
    for line in said.splitlines():
        name, sep, value = line.partition("\t")
        if not sep:
            continue
        chosen = [w[1:-1] for w in value.split() if w.startswith("[") and w.endswith("]")]
        out[name] = chosen[0] if chosen else value.strip()
    return out
