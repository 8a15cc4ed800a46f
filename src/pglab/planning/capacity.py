"""What a campaign needs of the machine and its servers, checked before anything starts:
connections, disk, memory and time.

- **connections**: each point's busiest phase opens its clients, pglab's own sessions (one per
  telemetry sampler with a connection, in measured phases) and pgbench's setup session; with
  ``connect = true`` a client reconnects while its last backend may still be exiting, one per
  pgbench thread. pglab and pgbench connect as a superuser, who may use every one of
  max_connections (superuser_reserved_connections and reserved_connections keep slots free from
  other roles, not from a superuser). A campaign that leaves max_connections to the server's
  default gets it raised to fit, with those reserved slots on top as a margin (an
  administrator's psql still gets in); one that sets it too low is refused.
- **disk**: the working copies of the datasets the runs keep at once (one per dataset, one per
  point with ``reset = "point"``), the templates still to be made, and room for pg_wal to grow
  to max_wal_size, against the free space (or the size) of where each part lands.
- **memory**: shared_buffers and each session's work_mem against RAM (and a point's
  ``[os] memory`` limit): a warning, an error only when shared_buffers alone is more than RAM
  (or than the limit, with the server's own processes).
- **clients**: pgbench here opens a socket per client, and wants clients + 3 open files
  (``client_files``: the limit pglab has, or ``[os] limits``' nofile).
- **time**: the plan's estimate against ``max_duration`` (or ``--budget``).

The functions over numbers are pure (tested on plans with known figures); ``check`` gathers the
facts (catalogs, dataset sizes, free space, RAM) and calls them.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import psutil

from pglab.campaign.spec import (
    COPY_RESETS,
    PhaseSpec,
    RunSpec,
    TargetSpec,
    TelemetrySpec,
    dataset_key,
)
from pglab.errors import CampaignError
from pglab.lab import Lab
from pglab.pgbench.invoke import auto_threads
from pglab.planning import client_files
from pglab.planning.plan import Plan
from pglab.postgres import dataset as datasets
from pglab.postgres import settings
from pglab.postgres.settings import SettingDef
from pglab.postgres.sources import Binaries
from pglab.telemetry.watch import own_sessions
from pglab.units import duration_text, size_text
from pglab.workloads import dataset_kind, described

MIB = 2**20
PGBENCH_SETUP_SESSIONS = 1  # pgbench checks its tables and vacuums on a session of its own; it
# closes it before its clients connect, but its backend may still be exiting as they do
BACKEND_BYTES = 2 * MIB  # a backend's own memory beside work_mem (catalog caches, buffers)
# a loop filesystem's room for files: measured 0.73-0.92 of its size for ext4, xfs and btrfs of
# 300 MB and 1 GB (metadata, the journal or log, ext's 5% kept for root: not the server's)
LOOP_USABLE = 0.9
LOOP_OVERHEAD = 80 * MIB
UNKNOWN_ROOM = 2**62  # a place whose free space cannot be read is not judged


# -- settings --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """The settings the checks read for one point: the campaign's, else the server version's
    defaults (from its ``pg_settings``)."""

    max_connections: int
    max_connections_set: bool  # by the campaign (else the version's default)
    reserved: int  # superuser_reserved_connections + reserved_connections (16+)
    shared_buffers: int  # bytes
    work_mem: int  # bytes
    max_wal_size: int  # bytes
    version: str = ""  # "18.6", for messages


def limits_of(
    point_settings: Mapping[str, str], catalog: Mapping[str, SettingDef], version: str = ""
) -> Limits:
    """The point's values, by the server's own names (``Max_Connections`` is max_connections);
    a value the server would reject (reported by the settings check) counts as the default."""
    given = {}
    for name, text in point_settings.items():
        defn = settings.lookup(name, catalog)
        if defn is not None:
            given[defn.name] = text

    def value(name: str, memory: bool = False) -> float:
        defn = catalog.get(name)
        if defn is None:
            return 0.0  # reserved_connections before 16
        read = settings.in_bytes if memory else settings.number
        for said in (given.get(name), defn.reset_val, defn.boot_val):
            if said is not None and (found := read(defn, said)) is not None:
                return found
        return 0.0

    max_conn_ok = (
        "max_connections" in given
        and settings.number(catalog["max_connections"], given["max_connections"]) is not None
    )
    return Limits(
        max_connections=int(value("max_connections")),
        max_connections_set=max_conn_ok,
        reserved=int(value("superuser_reserved_connections") + value("reserved_connections")),
        shared_buffers=int(value("shared_buffers", memory=True)),
        work_mem=int(value("work_mem", memory=True)),
        max_wal_size=int(value("max_wal_size", memory=True)),
        version=version,
    )


# -- connections -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sessions:
    """The connections one phase holds at its peak."""

    phase: str
    clients: int
    own: int  # pglab's telemetry sessions
    setup: int  # pgbench's setup session
    lingering: int  # connect = true: backends still exiting as their clients reconnect

    @property
    def total(self) -> int:
        return self.clients + self.own + self.setup + self.lingering

    def describe(self) -> str:
        parts = [f"{self.clients} clients"]
        if self.own:
            parts.append(f"{self.own} telemetry sessions of pglab")
        parts.append(f"{self.setup} pgbench setup session")
        if self.lingering:
            parts.append(f"{self.lingering} reconnecting (connect = true, one per thread)")
        return " + ".join(parts)


def phase_sessions(phase: PhaseSpec, telemetry: TelemetrySpec, cpus: int | None = None) -> Sessions:
    threads = phase.threads or auto_threads(phase.clients, cpus)
    return Sessions(
        phase=phase.name,
        clients=phase.clients,
        own=own_sessions(telemetry, phase.measured),
        setup=PGBENCH_SETUP_SESSIONS,
        lingering=min(threads, phase.clients) if phase.pgbench.connect else 0,
    )


def peak_sessions(point: RunSpec, cpus: int | None = None) -> Sessions:
    """The phase of the point that needs the most connections (the first of equals)."""
    found = [phase_sessions(ph, point.telemetry, cpus) for ph in point.phases]
    return max(found, key=lambda s: s.total)


@dataclass(frozen=True)
class ConnectionFit:
    point: str  # label
    sessions: Sessions
    limits: Limits
    raise_to: int | None = None  # the campaign leaves max_connections to the default: raised
    problem: str | None = None  # the campaign sets it too low


def fit_connections(point: RunSpec, limits: Limits, cpus: int | None = None) -> ConnectionFit:
    """Whether the point's busiest phase fits in max_connections: fits, raised to fit (with
    the reserved slots as a margin) or a problem naming the numbers and the setting."""
    need = peak_sessions(point, cpus)
    fit = ConnectionFit(point.label, need, limits)
    if need.total <= limits.max_connections:
        return fit
    if not limits.max_connections_set:
        return replace(fit, raise_to=need.total + limits.reserved)
    where = (
        "[matrix.settings]"
        if any(k == "settings.max_connections" for k, _ in point.axes)
        else "[server.settings] or the variant's settings"
    )
    return replace(
        fit,
        problem=(
            f'point "{point.label}", phase {need.phase!r}: {need.describe()} = {need.total} '
            f"connections, but max_connections = {limits.max_connections}: set max_connections = "
            f"{need.total} or more in {where}, or use fewer clients"
        ),
    )


def raise_notes(fits: Sequence[ConnectionFit]) -> list[str]:
    """One line per raised value, naming its points (a few) and why."""
    by_value: dict[int, list[ConnectionFit]] = {}
    for f in fits:
        if f.raise_to is not None:
            by_value.setdefault(f.raise_to, []).append(f)
    lines = []
    for value, group in sorted(by_value.items()):
        first = group[0]
        names = ", ".join(f'"{f.point}"' for f in group[:3])
        more = f" and {len(group) - 3} more" if len(group) > 3 else ""
        lines.append(
            f"max_connections raised to {value} for point{'s' if len(group) > 1 else ''} "
            f"{names}{more}: {first.sessions.total} connections at most (phase "
            f"{first.sessions.phase!r}: {first.sessions.describe()}), more than PostgreSQL "
            f"{first.limits.version}'s default of {first.limits.max_connections}; "
            f"{value} keeps the {first.limits.reserved} reserved slots free "
            "(superuser_reserved_connections, reserved_connections). Set max_connections in "
            "the campaign to choose it yourself"
        )
    return lines


# -- disk ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where files land: a filesystem (the lab home, a path target) or a target pglab makes."""

    key: str  # what is one place: "target:NAME", or "fs:DEVICE" for existing directories
    label: str
    available: int  # bytes


@dataclass(frozen=True)
class Copy:
    """What one run puts on disk: its working copy of a dataset, and where the parts land."""

    name: str  # the working copy's: one per dataset, or per point with reset = "point"
    dataset: str  # the dataset's key
    described: str  # "scale 10"
    size: datasets.Size
    data: Place
    wal: Place  # the data place when pg_wal stays in PGDATA
    template: Place | None  # the lab home when the template is still to be made, else None
    max_wal_size: int


def disk_problems(copies: Iterable[Copy]) -> list[str]:
    """For each place, what the runs put there at once against what it has: every working copy
    (kept until the campaign ends), every template still to be made, and room for the pg_wal of
    the running server to grow to max_wal_size (its copy's own pg_wal counts towards that)."""
    parts: dict[str, dict[str, list[int]]] = {}  # place key -> what -> sizes
    places: dict[str, Place] = {}
    seen_copies: set[tuple[str, str]] = set()
    seen_templates: set[str] = set()
    headroom: dict[str, tuple[int, int]] = {}  # wal place -> (bytes, max_wal_size)

    def add(place: Place, what: str, size: int) -> None:
        places.setdefault(place.key, place)
        parts.setdefault(place.key, {}).setdefault(what, []).append(size)

    for c in copies:
        how = "measured" if c.size.measured else "estimated"
        if (c.name, c.data.key) not in seen_copies:
            seen_copies.add((c.name, c.data.key))
            if c.wal.key == c.data.key:
                add(c.data, f"copies of the dataset {c.described} ({how})", c.size.total)
            else:
                add(
                    c.data,
                    f"copies of the dataset {c.described} without pg_wal ({how})",
                    c.size.total - c.size.wal,
                )
                add(c.wal, f"pg_wal of copies of the dataset {c.described} ({how})", c.size.wal)
        if c.template is not None and c.dataset not in seen_templates:
            seen_templates.add(c.dataset)
            add(c.template, f"the template of the dataset {c.described} ({how})", c.size.total)
        room = max(0, c.max_wal_size - c.size.wal)
        if room > headroom.get(c.wal.key, (-1, 0))[0]:
            places.setdefault(c.wal.key, c.wal)
            headroom[c.wal.key] = (room, c.max_wal_size)
    problems = []
    for key, place in places.items():
        items = [(what, sizes) for what, sizes in parts.get(key, {}).items()]
        total = sum(sum(sizes) for _, sizes in items)
        said = [_each(what, sizes) for what, sizes in items]
        if headroom.get(key, (0, 0))[0] > 0:
            room, max_wal = headroom[key]
            total += room
            said.append(
                f"{size_text(room)} for pg_wal to grow to max_wal_size ({size_text(max_wal)})"
            )
        if total > place.available:
            problems.append(
                f"{place.label}: about {size_text(total)} needed ({'; '.join(said)}), but "
                f"{size_text(place.available)} {'free' if key.startswith('fs:') else 'usable'}"
            )
    return problems


def _each(what: str, sizes: list[int]) -> str:
    if len(sizes) == 1:
        return f"{what.replace('copies of', 'a copy of')}: {size_text(sizes[0])}"
    if len(set(sizes)) == 1:
        return f"{len(sizes)} {what}: {len(sizes)} × {size_text(sizes[0])}"
    return f"{len(sizes)} {what}: {size_text(sum(sizes))}"


def target_room(target: TargetSpec) -> int:
    """What a target pglab makes holds: a tmpfs its size; a loop filesystem less its own
    metadata and journal (an explicit ``-J size=N`` counted whole)."""
    size = target.size or 0
    if target.kind == "tmpfs":
        return size
    journal = 0
    opts = " ".join(target.mkfs_options)
    if m := re.search(r"(?:^|\s)-J\s+(?:\S*,)?size=([0-9]+)", opts):
        journal = int(m.group(1)) * MIB
    return max(0, int(size * LOOP_USABLE) - LOOP_OVERHEAD - journal)


# -- memory ----------------------------------------------------------------------------------


def memory_fit(
    limits: Limits, sessions: int, ram: int, machine: str = "the machine's"
) -> tuple[str | None, str | None]:
    """(warning, error) about a point's memory: shared_buffers over RAM cannot start; with
    every session's work_mem and its own memory over RAM, the server may swap or be killed.
    ``machine``: whose RAM it is, as the message says it ("gen3's" for a server on a host)."""
    sb = limits.shared_buffers
    if sb > ram:
        return None, (
            f"shared_buffers = {size_text(sb)} is more than {machine} "
            f"{size_text(ram)} of RAM: the server cannot start"
        )
    total = sb + sessions * (limits.work_mem + BACKEND_BYTES)
    if total > ram:
        return (
            f"{_sessions_sum(limits, sessions, total)}, more than {machine} {size_text(ram)} of "
            "RAM: the server may swap or be ended by the OOM killer, which would be measured"
        ), None
    return None, None


def limit_fit(limits: Limits, sessions: int, limit: int) -> tuple[str | None, str | None]:
    """(warning, error) about a point's memory under its ``[os] memory`` limit, which counts
    shared_buffers as the server fills them (and the page cache, which the kernel reclaims):
    buffers it cannot hold end the server; sessions beyond it may."""
    sb, cap = limits.shared_buffers, f"its [os] memory limit of {size_text(limit)}"
    if sb + 3 * BACKEND_BYTES > limit:  # the postmaster and two of its processes at least
        return None, (
            f"shared_buffers = {size_text(sb)} and the server's own processes are more than "
            f"{cap}: the kernel would end the server once its buffers fill"
        )
    total = sb + sessions * (limits.work_mem + BACKEND_BYTES)
    if total > limit:
        return (
            f"{_sessions_sum(limits, sessions, total)}, more than {cap}: the kernel may end a "
            "backend (the server restarts), which would be measured"
        ), None
    return None, None


def _sessions_sum(limits: Limits, sessions: int, total: int) -> str:
    """What a server's sessions may take beside its buffers, as the memory warnings say it."""
    return (
        f"shared_buffers {size_text(limits.shared_buffers)} + {sessions} sessions × (work_mem "
        f"{size_text(limits.work_mem)} + ~{size_text(BACKEND_BYTES)} of their own) ≈ "
        f"{size_text(total)}"
    )


# -- time ------------------------------------------------------------------------------------


def budget_problem(estimated_s: float, runs: int, budget_s: float, source: str) -> str | None:
    if estimated_s <= budget_s:
        return None
    estimated, budget = duration_text(estimated_s, True), duration_text(budget_s, True)
    return (
        f"the plan's {runs} run(s) are estimated at {estimated}, more than "
        f"the time budget of {budget} ({source})"
    )


# -- the whole plan --------------------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    plan: Plan  # with max_connections raised where needed, and the notes to say
    errors: tuple[CampaignError, ...]


def check(
    plan: Plan,
    lab: Lab,
    binaries: Mapping[str, Binaries],
    catalogs: Mapping[str, Mapping[str, SettingDef]],
    budget: tuple[float, str] | None = None,
    ram: int | None = None,
    host_ram: Mapping[str, int] | None = None,
    host_disk: Mapping[tuple[str, str], int] | None = None,
) -> Fit:
    """Every check over the points and runs still to do on servers pglab makes (and the time
    budget of them all). ``budget``: (seconds, where it was said). ``ram``: this machine's
    (read here unless given); ``host_ram``: the RAM of each host a server is made on, as that
    host reports it (its server's memory is checked against it, not this machine's);
    ``host_disk``: the free bytes of each directory where such a server's files go on its host,
    by (host, directory): ``/tmp``, and its storage targets' paths."""
    todo = {r.point_key for r in plan.runs}
    # an existing server's limits are its own (checked by preflight against the server itself)
    points = [pt for pt in plan.points if pt.point_key in todo and not pt.server.existing]

    def limits(pt: RunSpec) -> Limits:
        b = binaries[pt.server.binaries_key]
        return limits_of(dict(pt.server.settings), catalogs[b.label], b.version)

    by_point = {pt.point_key: limits(pt) for pt in points}
    fits = [fit_connections(pt, by_point[pt.point_key]) for pt in points]
    raised = {pt.point_key: f.raise_to for pt, f in zip(points, fits, strict=True) if f.raise_to}
    notes = raise_notes(fits)
    # pgbench runs here for every point, an existing server's too
    errors = client_files.errors([pt for pt in plan.points if pt.point_key in todo])
    if problems := [f.problem for f in fits if f.problem]:
        errors.append(
            CampaignError(
                "the servers would refuse connections:\n  " + "\n  ".join(problems),
                hint="pglab connects as a superuser, so every one of max_connections counts; "
                "leave max_connections out of the campaign and pglab raises it to fit",
            )
        )
    ram = ram if ram is not None else psutil.virtual_memory().total
    warned: dict[str, list[str]] = {}
    refused: dict[str, list[str]] = {}
    for pt in points:
        sessions = peak_sessions(pt).total
        host = pt.server.host
        if host is not None and host in (host_ram or {}):
            assert host_ram is not None
            fit = memory_fit(by_point[pt.point_key], sessions, host_ram[host], f"{host}'s")
        else:
            fit = memory_fit(by_point[pt.point_key], sessions, ram)
        if pt.os.memory is not None and fit == (None, None):
            fit = limit_fit(by_point[pt.point_key], sessions, pt.os.memory)
        warning, error = fit
        for said, into in ((warning, warned), (error, refused)):
            if said:
                into.setdefault(said, []).append(pt.label)
    notes += [f"warning: {_points(labels)}: {text}" for text, labels in warned.items()]
    if refused:
        errors.append(
            CampaignError(
                "not enough memory:\n  "
                + "\n  ".join(f"{_points(labels)}: {text}" for text, labels in refused.items()),
                hint="lower shared_buffers where the campaign sets it (or raise [os] memory)",
            )
        )
    places: dict[str | None, Place] = {}
    sizes: dict[str, datasets.Size] = {}
    copies = [
        _copy_of(run, lab, by_point[run.point_key], places, sizes)
        for run in plan.runs
        if not run.server.over_network  # no files here to copy
    ]
    host_disk = host_disk or {}
    reached = {host for host, _ in host_disk}
    on_host = [
        _on_host(run, lab, by_point[run.point_key], host_disk)
        for run in plan.runs
        if run.server.host is not None and run.server.host in reached
    ]
    copies += on_host
    if problems := disk_problems(copies):
        labels = {p.label for c in on_host for p in (c.data, c.wal)}
        on_hosts = all(any(p.startswith(label) for label in labels) for p in problems)
        errors.append(
            CampaignError(
                "not enough disk space for the datasets:\n  " + "\n  ".join(problems),
                hint="free space there on the host, lower the scale or set a lower max_wal_size (a "
                "server on a host loads its dataset in place)"
                if on_hosts
                else "free space, give the storage target a larger size, lower the scale, use "
                'reset = "run" rather than "point" (one copy per dataset, not per point), or set '
                "a lower max_wal_size",
            )
        )
    if budget is not None:
        budget_s, source = budget
        said = budget_problem(plan.estimated_seconds(), len(plan.runs), budget_s, source)
        if said:
            errors.append(
                CampaignError(
                    said,
                    hint="raise the budget, or run fewer points, repeats or shorter phases",
                )
            )

    def raise_(spec: RunSpec) -> RunSpec:
        value = raised.get(spec.point_key)
        if value is None:
            return spec
        return replace(spec, lab_settings=(("max_connections", str(value)),))

    plan = replace(
        plan,
        points=tuple(raise_(pt) for pt in plan.points),
        runs=tuple(raise_(r) for r in plan.runs),
        notes=tuple(notes),
    )
    return Fit(plan, tuple(errors))


def _points(labels: list[str]) -> str:
    more = f" and {len(labels) - 1} more" if len(labels) > 1 else ""
    return f'point "{labels[0]}"{more}'


def _copy_of(
    run: RunSpec,
    lab: Lab,
    limits: Limits,
    places: dict[str | None, Place],
    sizes: dict[str, datasets.Size],
) -> Copy:
    """A run's Copy; ``places`` (by target name, None the lab home) and ``sizes`` (by dataset
    key) keep what was looked up for the next runs."""
    key = dataset_key(run.server, run.dataset, run.storage)
    if key not in sizes:
        sizes[key] = datasets.size_of(
            lab, run.server, run.dataset, run.storage, dataset_kind(run.dataset)
        )
    for target in (None, run.storage.data, run.storage.wal):
        name = target.name if target is not None else None
        if name not in places:
            places[name] = place_of(target, lab)
    data = places[run.storage.data.name if run.storage.data else None]
    return Copy(
        name=run.point_key if run.dataset.reset == "point" else key,
        dataset=key,
        described=described(run.dataset),
        size=sizes[key],
        data=data,
        wal=places[run.storage.wal.name] if run.storage.wal is not None else data,
        template=None if sizes[key].measured else places[None],
        max_wal_size=limits.max_wal_size,
    )


def _on_host(run: RunSpec, lab: Lab, limits: Limits, free: Mapping[tuple[str, str], int]) -> Copy:
    """What a run's server made on a host puts there, in a cluster under the host's /tmp: its
    dataset, loaded in place; with a reset by copy also the files kept as the dataset was made
    (counted as its template) and a copy per point (``reset = "point"``) or one (``"run"``)."""
    host = str(run.server.host)

    def place(target: TargetSpec | None) -> Place:
        where = target.path if target is not None and target.path else "/tmp"
        return Place(f"fs:host:{host}:{where}", f"{where} on {host}", free[(host, where)])

    data = place(run.storage.data)
    wal = place(run.storage.wal) if run.storage.wal is not None else data
    size = datasets.size_of(lab, run.server, run.dataset, run.storage, dataset_kind(run.dataset))
    key = dataset_key(run.server, run.dataset, run.storage)
    name = run.point_key if run.dataset.reset == "point" else key
    kept = data if run.dataset.reset in COPY_RESETS else None
    return Copy(name, key, described(run.dataset), size, data, wal, kept, limits.max_wal_size)


def place_of(target: TargetSpec | None, lab: Lab) -> Place:
    """The place of a target (None: the lab home) and what it holds now: the free space of
    an existing directory's filesystem, the room of one pglab makes."""
    if target is not None and target.kind != "path":
        what = f"{target.kind}, size {size_text(target.size or 0)}"
        return Place(
            f"target:{target.name}", f'storage target "{target.name}" ({what})', target_room(target)
        )
    path = Path(str(target.path)) if target is not None else lab.home
    label = f'storage target "{target.name}" ({path})' if target else f"the lab home {path}"
    try:
        found = _existing(path)
        return Place(f"fs:{os.stat(found).st_dev}", label, shutil.disk_usage(found).free)
    except OSError:  # a directory pglab cannot reach: the targets' check says so
        return Place(f"unknown:{path}", label, UNKNOWN_ROOM)


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


# -- words -----------------------------------------------------------------------------------
