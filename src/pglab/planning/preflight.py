"""Everything checked before the first run, so that a campaign fails in seconds rather than
hours: the server sources resolve, every setting of every point exists in its server's version
and takes its value (checked against that version's own ``pg_settings``), settings pglab manages
are not set, custom scripts parse (by pgbench itself: here, and on each load generator host by
that host's pgbench, the script copied there as the phase will copy it), storage targets can be
made, fio is there when asked for, and the campaign fits the machine (``capacity``: connections,
disk, memory, time).
Every problem is listed in one error: settings, scripts, storage and capacity problems are all
checked before anything is said, so that one attempt shows them all."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pglab import procs
from pglab.campaign.parse import Campaign
from pglab.campaign.phase_work import kit_of, works
from pglab.campaign.spec import LOCAL, RunSpec, TargetSpec
from pglab.errors import CampaignError, HostError, LabError
from pglab.hosts.pool import HostPool
from pglab.lab import Lab
from pglab.planning import capacity, devices, os_on_hosts
from pglab.planning.plan import Plan, make_plan
from pglab.postgres import dataset as datasets
from pglab.postgres import on_host, server, settings
from pglab.postgres.build import Progress
from pglab.postgres.lease import Check, lease_key, provision
from pglab.postgres.sources import Binaries, resolve, with_pgbench
from pglab.profile import checks as profile_checks
from pglab.profile import host as profile_host
from pglab.targets import targets as storage_targets
from pglab.workloads import dataset_kind
from pglab.workloads.kits.work.kits import KITS
from pglab.workloads.work import OperationWork

Catalog = Mapping[str, settings.SettingDef]  # a version's pg_settings


def preflight(
    campaign: Campaign,
    lab: Lab,
    done_keys: set[str] | frozenset[str] = frozenset(),
    budget_s: float | None = None,
    reinit: bool = False,
    progress: Progress | None = None,
) -> tuple[Plan, dict[str, Binaries]]:
    """Resolve sources and check every setting and script of every point, and what the runs
    still to do (those not in ``done_keys``) need of the machine; raise listing all. The plan
    returned has max_connections raised where the campaign leaves it too low, and in
    ``notes`` what to say about it. ``budget_s`` (``--budget``) replaces ``max_duration``.
    The binaries are by ``ServerSpec.binaries_key`` (a source, and the pgbench that runs with
    it); ``progress`` is told the steps of a build being made."""
    plan = make_plan(campaign, done_keys)
    for kind in dict.fromkeys(dataset_kind(pt.dataset) for pt in plan.points):
        if kind is not None:
            kind.check()  # its generator missing (sysbench, tpchgen-cli): said before anything
    resolved: dict[str, Binaries] = {}
    problems: list[str] = []
    for point in plan.points:
        label = point.server.source_label
        if label not in resolved:
            resolved[label] = resolve(point.server, lab, progress)
    binaries = with_pgbench([pt.server for pt in plan.points], resolved)
    owned = {pt.server.source_label for pt in plan.points if not pt.server.existing}
    catalogs = {
        label: datasets.load_catalog(lab, b) for label, b in resolved.items() if label in owned
    }
    found: list[LabError] = []
    problems += _check_servers(plan, lab, found, reinit)
    on_hosts = _check_generators(
        campaign, plan, lab, binaries[plan.points[0].server.binaries_key], found
    )
    Settings = tuple[tuple[str, str], ...]
    checked: set[tuple[str, str | None, Settings]] = set()  # (source, host, settings)
    for point in plan.points:
        if point.server.existing:
            continue
        b = binaries[point.server.binaries_key]
        host_catalog = on_hosts.catalogs.get(point.server.host or "")
        version = f"{b.version}" if host_catalog is None else f"on {point.server.host}"
        where = f'point "{point.label}" (PostgreSQL {version}): '
        # an operation's options differ between points of the same settings (a [matrix] axis)
        problems += _parallel_problems(point, host_catalog or catalogs[b.label], where)
        problems += index_problems(point, b.major, b.version, where)
        problems += kit_problems(point, b.major, b.version, where)
        key = (b.label, point.server.host, point.server.settings)
        if key in checked:
            continue
        checked.add(key)
        problems += _setting_problems(point, b, where, host_catalog, binaries, catalogs)
    budget: tuple[float, str] | None = None
    if budget_s is not None:
        budget = (budget_s, "--budget")
    elif campaign.max_duration_s is not None:
        budget = (campaign.max_duration_s, "max_duration in the campaign file")
    fit = capacity.check(
        plan, lab, binaries, catalogs, budget, host_ram=on_hosts.ram, host_disk=on_hosts.disk
    )
    checks: tuple[Callable[[], None], ...] = (
        lambda: settings.raise_if_problems(list(dict.fromkeys(problems))),
        lambda: _check_scripts(plan, binaries),
        lambda: _check_pgbench_options(plan, binaries),
        lambda: storage_targets.require(targets_of(plan.points), lab),
        lambda: _check_fio(campaign),
        lambda: _raise(profile_checks.problem(plan.runs, lab.home / "work")),  # perf
        lambda: _raise(devices.problem(plan.points, lab)),  # [os] on the storage's devices
    )
    for check in checks:
        try:
            check()
        except LabError as exc:
            found.append(exc)
    found += fit.errors
    if len(found) == 1:
        raise found[0]
    if found:  # every kind of problem at once, not one per attempt
        raise CampaignError(
            f"the campaign cannot run; {len(found)} kinds of problem:\n"
            + "\n".join(
                f"- {e.message}" + (f"\n  hint: {e.hint}" if e.hint else "") for e in found
            ),
            hint="nothing was started or made; fix the above and run again",
        )
    notes = tuple(profile_checks.notes(plan.runs))
    return replace(fit.plan, notes=fit.plan.notes + notes), binaries


def _setting_problems(
    point: RunSpec,
    b: Binaries,
    where: str,
    host_catalog: Catalog | None,
    binaries: Mapping[str, Binaries],
    catalogs: Mapping[str, Catalog],
) -> list[str]:
    """What is wrong with a point's settings on its version: a setting pglab manages, one only
    other versions of the campaign have, a name or value its ``pg_settings`` refuses."""
    problems: list[str] = []
    names = [n for n, _ in point.server.settings]
    managed = sorted(n for n in names if n.lower() in server.LAB_MANAGED)
    for name in managed:
        problems.append(f"{where}{name} is managed by pglab and cannot be set")
    catalog = host_catalog or catalogs[b.label]
    other_versions = {} if host_catalog else _versions_having(names, b, binaries, catalogs)
    for name, versions in other_versions.items():
        problems.append(
            f"{where}{name} does not exist in PostgreSQL {b.version}, only in "
            f"{versions}: set it in the settings of the variants of those versions"
        )
    problems += settings.validate(
        {
            n: v
            for n, v in point.server.settings
            if n.lower() not in server.LAB_MANAGED and n not in other_versions
        },
        catalog,
        where=where,
    )
    return problems


def _raise(error: LabError | None) -> None:
    if error is not None:
        raise error


# the first PostgreSQL that builds an index of each method with parallel workers (None: never)
PARALLEL_BUILDS_SINCE: dict[str, int | None] = {"btree": 11, "brin": 17, "hash": None}
# what limits the parallel workers of a maintenance operation (it sets
# max_parallel_maintenance_workers itself, for its session)
PARALLEL_LIMITS = ("max_worker_processes", "max_parallel_workers")


def _parallel_problems(point: RunSpec, catalog: Mapping[str, Any], where: str) -> list[str]:
    """An operation's ``parallel`` beyond what the point's settings let the server launch."""
    asked = max((w.parallel for w in works(point, OperationWork)), default=0)
    out = []
    for name in PARALLEL_LIMITS:
        got = dict(point.server.settings).get(name) or getattr(catalog.get(name), "boot_val", None)
        if got is not None and got.isdigit() and asked > int(got):
            out.append(
                f"{where}parallel = {asked} is more than {name} = {got} allows: "
                f"raise {name} in [server.settings] (or ask for fewer workers)"
            )
    return out


def kit_problems(point: RunSpec, major: int, version: str, where: str) -> list[str]:
    """A workload kit on a server (or its pgbench) older than the kit needs, refused by name."""
    kits = {k for ph in point.phases if (k := kit_of(ph))}
    return [
        f"{where}kit {kit!r} needs PostgreSQL {KITS[kit].since} or later ({KITS[kit].needs}); "
        f"this is {version}: use a newer server source for this point"
        for kit in sorted(kits)
        if major < KITS[kit].since
    ]


def index_problems(point: RunSpec, major: int, version: str, where: str) -> list[str]:
    """An index build the point's PostgreSQL cannot make as asked: parallel workers for a
    method whose builds are serial in that version, a hash index of several columns."""
    out = []
    for ph in point.phases:
        op = ph.work
        if not isinstance(op, OperationWork) or op.operation != "create_index":
            continue
        since = PARALLEL_BUILDS_SINCE.get(op.method)
        if op.parallel and since is None:
            out.append(
                f"{where}phase {ph.name}: {op.method} indexes are built by one process "
                f"in every PostgreSQL version: parallel = {op.parallel} asks for workers "
                "it cannot use (give parallel = 0)"
            )
        elif op.parallel and since is not None and major < since:
            out.append(
                f"{where}phase {ph.name}: parallel {op.method} index builds came in "
                f"PostgreSQL {since}; {version} builds them with one process (give "
                f"parallel = 0, or PostgreSQL {since} or later)"
            )
        if op.method == "hash" and len(op.columns) > 1:
            out.append(
                f"{where}phase {ph.name}: a hash index takes one column, not "
                f"{len(op.columns)} ({', '.join(op.columns)})"
            )
    return out


def _check_servers(plan: Plan, lab: Lab, found: list[LabError], reinit: bool = False) -> list[str]:
    """The servers that exist before the first run (each point's lease checks itself: an
    existing server is reached now, the others have nothing to reach yet): reachable, 15 or
    later, pglab's database makeable and usable, every setting of every point one the server
    lets the role vary as ``manage`` says, and room for the busiest phase's connections.
    Connection failures and database problems go to ``found``; the settings problems are
    returned."""
    problems: list[str] = []
    database: list[str] = []
    servers: dict[str, Check | None] = {}  # by lease: what it said of itself
    # (server, settings) -> its problems, said once
    checked: dict[tuple[str, tuple[tuple[str, str], ...]], list[str]] = {}
    said: dict[tuple[str, str], list[str]] = {}  # (server, problem) -> the points it concerns
    counted: dict[str, int] = {}  # server -> its points
    tight: list[str] = []
    for point in plan.points:
        key = lease_key(point.server, point.storage)
        if key not in servers:
            try:  # a server that exists before the first run is reached now
                servers[key] = provision(point.server, point.storage, lab).check(reinit)
            except LabError as exc:
                found.append(exc)
                servers[key] = None
            if (srv := servers[key]) is not None:
                database += srv.database
        srv = servers[key]
        if srv is None:
            continue
        if (key, point.server.settings) not in checked:
            checked[key, point.server.settings] = srv.settings(dict(point.server.settings), "")
        counted[srv.where] = counted.get(srv.where, 0) + 1
        for problem in checked[key, point.server.settings]:
            said.setdefault((srv.where, problem), []).append(point.label)
        facts = srv.facts
        where = f'point "{point.label}" ({srv.where}, PostgreSQL {facts.short_version}): '
        for check in (index_problems, kit_problems):
            problems += check(point, facts.version_num // 10000, facts.short_version, where)
        need = capacity.peak_sessions(point).total
        if need > facts.room():
            tight.append(
                f'point "{point.label}" needs {need} connections; {srv.where} has room for '
                f"{facts.room()} (max_connections {facts.max_connections}"
                + ("" if facts.superuser else f", {facts.reserved} reserved for superusers")
                + f", {facts.in_use} in use)"
            )
    for (where, problem), labels in said.items():
        if len(labels) == counted[where] and len(labels) > 1:
            who = f"every point on {where}"
        else:
            more = f" and {len(labels) - 1} more" if len(labels) > 1 else ""
            who = f'point "{labels[0]}"{more} on {where}'
        problems.append(f"{who}: {problem}")
    if database:
        found.append(
            CampaignError(
                "pglab cannot make its database for the pgbench tables:\n  "
                + "\n  ".join(database),
                hint="pglab touches no other database; docs/guides/existing-server.md says "
                "which privileges it needs",
            )
        )
    if tight:
        found.append(
            CampaignError(
                "the existing server would refuse connections:\n  " + "\n  ".join(tight),
                hint="run fewer clients, or ask its administrator for a higher max_connections "
                "(pglab never restarts a server it did not start)",
            )
        )
    return problems


@dataclass
class OnHosts:
    """What the hosts servers are made on report, for the checks: RAM by host, free bytes by
    (host, directory), and the settings catalog of a host's own PostgreSQL (its ``bindir``)."""

    ram: dict[str, int] = field(default_factory=dict)
    disk: dict[tuple[str, str], int] = field(default_factory=dict)
    catalogs: dict[str, dict[str, settings.SettingDef]] = field(default_factory=dict)


def _check_generators(
    campaign: Campaign, plan: Plan, lab: Lab, binaries: Binaries, found: list[LabError]
) -> OnHosts:
    """Remote load generators: a server they can reach (an existing one, by its dsn, or one
    pglab makes on a host), and every host reachable over SSH, its key the known one, pgbench
    there; a server's host reachable, as a user that is not root, its perf able to sample the
    server when its runs are profiled. What each host a server is made on reports
    (``OnHosts``)."""
    names: set[str] = set()
    local_server: list[str] = []
    for point in plan.points:
        remote = [ph for ph in point.phases if ph.remote]
        names |= {g for ph in remote for g in ph.generators}
        if remote and not point.server.over_network:
            local_server.append(point.label)
    if local_server:
        found.append(
            CampaignError(
                f'point "{local_server[0]}"'
                + (f" and {len(local_server) - 1} more" if len(local_server) > 1 else "")
                + " runs its load on other hosts (pgbench, pgreplay) against a server pglab "
                "makes on this machine, which listens on a private socket only",
                hint='make the server on a host too ([server] host = "db1"), or use an existing '
                'server they reach over TCP ([server] dsn = "postgresql://user@address/db")',
            )
        )
    servers = sorted({pt.server.host for pt in plan.points if pt.server.host})
    facts = OnHosts()
    if not names and not servers:
        return facts
    hosts = HostPool(campaign.hosts, binaries.exe("pgbench"))
    try:
        hosts.check(sorted(names))
        _check_generator_scripts(plan, hosts)
        found += _generator_limits(plan, hosts)
        found += os_on_hosts.problems(plan, hosts)  # sudo there, and the sysctls' names
        for name in servers:
            if hosts.ssh(name).run(["id", "-u"]).stdout.strip() == "0":
                raise HostError(
                    f"the server on {hosts.specs[name].label} would run as root, which "
                    "PostgreSQL refuses",
                    hint=f'log in as an unprivileged user: ssh = "user@address" in [hosts.{name}]',
                )
            if said := hosts.ssh(name).facts("true").get("ram_bytes"):
                facts.ram[name] = said
            profiled = [r for r in plan.runs if r.server.host == name and not r.server.existing]
            if (perf_there := profile_host.problem(hosts.ssh(name), profiled)) is not None:
                found.append(perf_there)
            for where in _host_dirs(plan, name):
                if (free := _free(hosts.ssh(name), where)) is not None:
                    facts.disk[(name, where)] = free
            if hosts.specs[name].bindir:  # not the embedded binaries pglab copies there
                point = next(pt for pt in plan.points if pt.server.host == name)
                facts.catalogs[name] = on_host.host_catalog(
                    lab, point.server, hosts.ssh(name), binaries
                )
    except LabError as exc:
        found.append(exc)
    finally:
        hosts.close()
    return facts


# the hard limits of the host's user (its shell's own ulimit lacks -u in dash), and prlimit
LIMITS_PROBE = (
    "grep -E '^Max (open files|processes) ' /proc/self/limits; command -v prlimit || echo none"
)


def _generator_limits(plan: Plan, hosts: HostPool) -> list[LabError]:
    """[os] limits of pgbench on generator hosts: set there soft and hard by the host's
    prlimit, as its SSH user, who may lower a hard limit but not raise one."""
    asked: dict[str, dict[str, int]] = {}
    for point in plan.points:
        for name in {g for ph in point.phases if ph.remote for g in ph.generators}:
            for key, n in point.os.limits:
                asked.setdefault(name, {})[key] = max(n, asked.get(name, {}).get(key, 0))
    problems = []
    for name, limits in sorted(asked.items()):
        if hosts.specs[name].sudo:  # raised there as root (os_on_hosts checks sudo)
            continue
        said = hosts.remote(name).run(["sh", "-c", LIMITS_PROBE]).stdout
        problems += limit_problems(name, limits, said)
    if not problems:
        return []
    return [
        CampaignError(
            "[os] limits cannot be set on pgbench's generator hosts:\n  " + "\n  ".join(problems),
            hint="lower them, or raise the hard limits there (limits.conf) for the SSH user",
        )
    ]


def limit_problems(name: str, limits: Mapping[str, int], probe: str) -> list[str]:
    """What stops ``limits`` on host ``name``, from what ``LIMITS_PROBE`` said there."""
    said = probe.splitlines()
    if not said or said[-1].strip() == "none":
        return [f"{name}: prlimit is not installed (util-linux)"]
    hards = {
        "nofile" if ln.startswith("Max open") else "nproc": ln.split()[-2] for ln in said[:-1]
    }  # "Max open files  1024  4096  files": the hard one
    return [
        f"{name}: limits {key} = {limits[key]} is above the hard limit its user has there "
        f"({hard}), which only root can raise"
        for key, hard in hards.items()
        if key in limits and hard != "unlimited" and limits[key] > int(hard)
    ]


def _host_dirs(plan: Plan, host: str) -> list[str]:
    """Where a server made on ``host`` puts files: /tmp, and its storage targets' paths."""
    paths = {
        t.path
        for pt in plan.points
        if pt.server.host == host
        for t in (pt.storage.data, pt.storage.wal)
        if t is not None and t.path
    }
    return ["/tmp", *sorted(paths)]


def _free(remote: Any, where: str) -> int | None:
    """Free bytes of a directory on a host, None if df says none; a HostError naming it when
    it is not there (a storage target's path must exist on the host)."""
    said = remote.run(["df", "-B1", "--output=avail", where], check=False)
    if said.returncode != 0:
        raise HostError(
            f"{where} on {remote.spec.label}: {said.stderr.strip() or 'df failed'}",
            hint="a storage target's path for a server on a host is a directory there, "
            "writable by the SSH user",
        )
    out = said.stdout.split()
    return int(out[-1]) if out and out[-1].isdigit() else None


def _check_fio(campaign: Campaign) -> None:
    if campaign.storage_bench.enabled and campaign.storage_bench.fio and not shutil.which("fio"):
        raise CampaignError(
            "[storage_bench] fio = true, but fio is not installed",
            hint="install Debian's fio package (apt-get install fio), or set fio = false",
        )


def _versions_having(
    names: list[str],
    mine: Binaries,
    binaries: Mapping[str, Binaries],
    catalogs: Mapping[str, Catalog],
) -> dict[str, str]:
    """Settings unknown to ``mine`` that another server version of the campaign has:
    name -> "PostgreSQL 18.6 (embedded)"."""
    found: dict[str, str] = {}
    for name in names:
        if settings.exists(name, catalogs[mine.label]):
            continue
        having = [
            f"PostgreSQL {b.version} ({b.label})"
            for b in {b.label: b for b in binaries.values()}.values()
            if b.major != mine.major and settings.exists(name, catalogs.get(b.label, {}))
        ]
        if having:
            found[name] = ", ".join(having)
    return found


def targets_of(runs: Iterable[RunSpec]) -> list[TargetSpec]:
    """The storage targets the runs on this machine use (PGDATA's and pg_wal's), each once (a
    server on a host has its targets' paths there)."""
    found = {}
    for run in runs:
        if run.server.host is not None:
            continue
        for t in (run.storage.data, run.storage.wal):
            if t is not None:
                found[t.name] = t
    return list(found.values())


def _check_scripts(plan: Plan, binaries: Mapping[str, Binaries]) -> None:
    """pgbench parses its scripts before it connects: a parse that ends at connecting is clean."""
    seen: set[tuple[str, str]] = set()
    for point in plan.points:
        b = binaries[point.server.binaries_key]
        for phase in point.phases:
            for script in phase.pgbench.scripts:
                if script.path is None or (b.label, script.path) in seen:
                    continue
                seen.add((b.label, script.path))
                res = procs.run(parse_argv(b.exe("pgbench"), script.path), timeout=30, check=False)
                err = (res.stderr or "") + (res.stdout or "")
                if not parsed(err):
                    raise _invalid(script.path, f"pgbench {b.pgbench_version}", err)


def parse_argv(pgbench: str, script: str) -> list[str]:
    """pgbench asked to run ``script`` against no server: it parses the script, then fails to
    connect."""
    return [
        pgbench,
        "-n",
        "-t",
        "1",
        "-f",
        script,
        "-h",
        "/nonexistent-pglab-socket-dir",
        "-p",
        "1",
        "postgres",
    ]


def parsed(said: str) -> bool:
    """Whether pgbench's output of ``parse_argv`` ends at connecting (the script is clean)."""
    return "connection to server" in said or "could not connect" in said


def _invalid(path: str, which: str, said: str) -> CampaignError:
    return CampaignError(
        f"custom script {path} is not valid for {which}:\n{procs.tail(said)}",
        hint="fix the script; `pgbench --help` and the pgbench docs list the "
        "meta-commands (\\set, \\sleep, ...)",
    )


def _check_generator_scripts(plan: Plan, hosts: HostPool) -> None:
    """Each custom script copied to the generator hosts that run it (as the phase will) and
    parsed there by the host's own pgbench."""
    seen: set[tuple[str, str]] = set()
    for point in plan.points:
        for phase in point.phases:
            for script in phase.pgbench.scripts:
                for name in phase.generators:
                    if script.path is None or name == LOCAL or (name, script.path) in seen:
                        continue
                    seen.add((name, script.path))
                    remote = hosts.ssh(name)
                    there = remote.copy_in(Path(script.path))
                    res = remote.run(
                        parse_argv(hosts.pgbench_of(name), there), timeout=30, check=False
                    )
                    err = res.stderr + res.stdout
                    if not parsed(err):
                        version = hosts.facts[name].get("pgbench") or "pgbench"
                        raise _invalid(
                            script.path,
                            f"{version} on {remote.spec.label}",
                            err.replace(there, script.path),
                        )


# pgbench options by the first pgbench that has them (earlier ones refuse them)
PGBENCH_SINCE = {
    "max_tries": ("--max-tries", 15, 1),  # (option, since, the value that leaves it out)
    "failures_detailed": ("--failures-detailed", 15, False),
}


def _check_pgbench_options(plan: Plan, binaries: Mapping[str, Binaries]) -> None:
    """Options a phase asks of a pgbench too old to have them, all named at once."""
    found: list[str] = []
    for point in plan.points:
        b = binaries[point.server.binaries_key]
        digits = re.match(r"\d+", b.pgbench_version)
        major = int(digits.group()) if digits else 0
        for phase in point.phases:
            kit = kit_of(phase)
            if kit is not None and major < KITS[kit].since:
                found.append(
                    f'kit {kit!r} in phase "{phase.name}" of point "{point.label}": '
                    f"pgbench {b.pgbench_version} ({b.label}) lacks {KITS[kit].needs}, "
                    f"which came in {KITS[kit].since}"
                )
            for key, (option, since, unset) in PGBENCH_SINCE.items():
                if getattr(phase.pgbench, key) != unset and major < since:
                    found.append(
                        f'{key} (pgbench {option}) in phase "{phase.name}" of point '
                        f'"{point.label}": pgbench {b.pgbench_version} ({b.label}) has it only '
                        f"from {since} on"
                    )
    if found:
        raise CampaignError(
            "\n".join(dict.fromkeys(found)),
            hint="use a PostgreSQL 15 or later bindir (or the embedded 18) for these points, "
            "or leave the key out",
        )
