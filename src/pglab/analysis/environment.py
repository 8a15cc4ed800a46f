"""One description of where a run ran, as (name, text) facts: the server, the load generator,
the machine, its CPUs and where the data lay. ``pglab show RUN`` prints them as lines, the
report and ``pglab serve`` as the environment table; neither words a fact of its own, so the
two cannot drift apart again (they had: show knew sysbench and compared the WAL's mount by its
mount point, the report did neither)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pglab.campaign.os_checks import cpu_list
from pglab.fingerprints import Fingerprint, lease_of, mount_options
from pglab.units import size_text
from pglab.workloads import generator_said

Fact = tuple[str, str]


def facts(
    fp: Fingerprint, versions: Sequence[str] = (), builds: Sequence[Mapping[str, str]] = ()
) -> list[Fact]:
    """What ``fp`` says of a run's environment. ``versions``: every server version of a
    campaign (the report's); ``builds``: each server pglab built, in words (``build.facts``)."""
    lease = lease_of(fp)  # the server as its lease described itself
    version = ", ".join(versions) or str(fp.get("server_version", "?"))
    out: list[Fact] = [("PostgreSQL", f"{version} ({fp.get('source', '?')})")]
    if "server" in lease:
        out.append(("server", lease["server"]))
    out.append(("load generator", generator(fp)))
    if lease.get("client_said"):
        out.append(("load generator ran", str(fp.get("client", "?"))))
    machine = lease.get("machine", "machine")
    model = f"{fp['cpu_model']}, " if fp.get("cpu_model") else ""
    out.append(
        (
            machine,
            f"{model}{fp.get('cpus', '?')} CPU(s), "
            f"{(fp.get('ram_bytes') or 0) / 2**30:.1f} GiB RAM",
        )
    )
    out.append(("kernel", str(fp.get("kernel", "?"))))
    if lease.get("os_here", True):  # pglab's machine's, not a server host's: not read there
        out.append(("CPU governor", str(fp.get("governor") or "none")))
        out.append(("transparent huge pages", str(fp.get("thp") or "?")))
    for made in builds:
        out.append(
            (
                "built by pglab",
                "; ".join(f"{k.removeprefix('build ')}: {v}" for k, v in made.items()),
            )
        )
    if aff := fp.get("cpu_affinity"):  # [os] cpus / client_cpus
        shared = " (shared)" if aff["shared"] else ""
        client = cpu_list(aff["client"]) if aff["client"] else "other hosts"  # [] on a host
        cpus = f"server on {cpu_list(aff['server'])}, load generator on {client}"
        out.append(("CPUs", cpus + shared))
    if mem := fp.get("memory_limit"):  # [os] memory: the server's cgroup
        used = f", used at most {size_text(mem['peak_bytes'])}" if "peak_bytes" in mem else ""
        limit = f"{size_text(mem.get('read'))} (cgroup v{mem.get('cgroup_version')})"
        out.append(("memory", f"server limited to {limit}{used}"))
    data = fp.get("pgdata_mount") or {}
    if data:
        out.append(("PGDATA", _mount(data)))
    wal = fp.get("pg_wal_mount") or {}
    if wal and wal.get("mountpoint") != data.get("mountpoint"):
        out.append(("pg_wal", _mount(wal)))
    out.append(("host", str(fp.get("hostname", "?"))))
    return out


def generator(fp: Fingerprint) -> str:
    """The load generator as it is: a kind's own as its fingerprint tells it (sysbench's
    version when its phases ran sysbench, ``workloads.generator_said``), else pgbench's and the
    source it came from."""
    if said := generator_said(fp):
        return said
    return f"pgbench {fp.get('pgbench_version', '?')}" + (
        f" (from {fp['pgbench_from']})" if fp.get("pgbench_from") else ""
    )


def _mount(m: Mapping[str, object]) -> str:
    return (
        f"{m.get('fstype')} on {m.get('device')} ({mount_options(m)}), "
        f"scheduler {m.get('scheduler') or '?'}"
    )
