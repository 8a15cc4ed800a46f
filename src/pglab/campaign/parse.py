"""Campaign files: TOML parsed and checked into a ``Campaign`` of frozen specs.

Every problem in a file is collected and reported in one message, each naming where it is
(``[variants.big] unknown key "setings" — did you mean "settings"?``). Settings are checked against
the server's own catalog later (``settings.validate``), before the first run.

The layout (tables, keys, types, ranges, defaults) is declared in ``schema``, which gives the
key sets checked here, the JSON Schema of ``pglab schema`` and the layout of ``pglab run --help``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pglab.campaign import (
    declared,
    os_table,
    os_where,
    profiling,
    questions,
    schema,
    sections,
    server_source,
)
from pglab.campaign import hosts as host_parts
from pglab.campaign import storage as storage_parts
from pglab.campaign.checks import Problems, table_of
from pglab.campaign.os_spec import OsSpec
from pglab.campaign.phase_work import operation_of
from pglab.campaign.schema import (
    DATASET_KEYS,
    DERIVED_KEYS,
    MATRIX_KEYS,
    PHASE_KEYS,
    SERVER_KEYS,
    STORAGE_AXES,
    TOP_KEYS,
    VARIANT_KEYS,
    WORKLOAD_KEYS,
)
from pglab.campaign.spec import (
    COPY_RESETS,
    DEFAULT_EFFECT_PCT,
    DatasetSpec,
    DerivedSpec,
    HostSpec,
    PhaseSpec,
    ProfileSpec,
    Script,
    ServerSpec,
    StorageBenchSpec,
    StorageSpec,
    TargetSpec,
    TelemetrySpec,
    mask_dsn,
)
from pglab.campaign.workload import (
    apply_workload,
    for_phase,
    kits_checked,
    load_of,
    progress_problem,
    takes,
)
from pglab.errors import CampaignError
from pglab.jsonish import TomlTable
from pglab.stats.sequential import SequentialSpec
from pglab.workloads.work import OPERATION_KEYS, OPERATION_OPTIONS, PgbenchWork


@dataclass(frozen=True)
class Variant:
    name: str
    server: ServerSpec
    dataset: DatasetSpec
    phases: tuple[PhaseSpec, ...]
    storage: StorageSpec = StorageSpec()
    os: OsSpec = OsSpec()  # [os] and the variant's os = {...}


@dataclass(frozen=True)
class Campaign:
    name: str
    description: str
    repeats: int
    order: str
    on_error: str
    variants: tuple[Variant, ...]
    matrix: tuple[tuple[str, tuple[Any, ...]], ...]
    derived: tuple[DerivedSpec, ...]
    source_file: str | None
    document: TomlTable
    base_dir: Path
    telemetry: TelemetrySpec = TelemetrySpec()
    targets: tuple[tuple[str, TargetSpec], ...] = ()
    storage_bench: StorageBenchSpec = StorageBenchSpec()
    effect_pct: float = DEFAULT_EFFECT_PCT  # [analysis] effect: the difference worth finding
    max_duration_s: float | None = None  # the time budget: the plan's estimate must fit in it
    hosts: tuple[HostSpec, ...] = ()  # [hosts.NAME]: where remote generators run
    # repeats = "auto": rounds until decided (then ``repeats`` is its max)
    sequential: SequentialSpec | None = None
    # [analysis] equivalence: the margin of an "=" verdict, % (None: effect_pct)
    equivalence_pct: float | None = None
    profile: ProfileSpec = ProfileSpec()  # [profile]: perf in measured phases
    spread: str = "coordinates"  # [fleet] spread: a fleet job per coordinate, or per round too
    # [analysis] reference: ("variant", NAME) and (AXIS, value as its points write it)
    reference: tuple[tuple[str, str], ...] = ()

    def host(self, name: str) -> HostSpec:
        return next(h for h in self.hosts if h.name == name)

    def target(self, name: str) -> TargetSpec:
        return dict(self.targets)[name]


def load(path: str | Path) -> Campaign:
    """Read and check a campaign file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise CampaignError(f"cannot read campaign file {path}: {exc.strerror}") from exc
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(
            f"{path}: not valid TOML: {exc}", hint="see examples/ for campaign files that work"
        ) from exc
    return parse(
        doc,
        default_name=path.stem,
        base_dir=path.parent.absolute(),
        source_file=str(path.absolute()),
    )


def parse(
    doc: TomlTable,
    default_name: str,
    base_dir: Path | None = None,
    source_file: str | None = None,
) -> Campaign:
    """Check a campaign document (the parsed TOML) and resolve it into specs."""
    p = Problems()
    base_dir = base_dir or Path.cwd()
    if "tune" in doc:  # a tune file (pglab/tune/spec.py takes its [tune] table off first)
        p.add("[tune]", "this is a tune file: run it with `pglab tune FILE`")
        doc = {k: v for k, v in doc.items() if k != "tune"}
    top = declared.check(schema.TOP, doc, p, "", allowed=TOP_KEYS)
    order = top.get("order", "interleaved")
    sequential = sections.sequential(doc, order, p)
    spread = sections.fleet(table_of(doc, "fleet", p, ""), order, p)
    # repeats = "auto": rounds until decided, its [sequential] max at most
    repeats = sequential.max if sequential is not None else top.get("repeats", 1)

    known_hosts = host_parts.hosts(table_of(doc, "hosts", p, ""), p)
    server = _server(table_of(doc, "server", p, ""), ServerSpec(), p, "[server]", base_dir)
    dataset = _dataset(table_of(doc, "dataset", p, ""), DatasetSpec(), p, "[dataset]")
    workload = table_of(doc, "workload", p, "")
    p.unknown_keys("[workload]", workload, WORKLOAD_KEYS)
    phases = _phases(doc, workload, p, base_dir)
    targets = storage_parts.targets(table_of(doc, "targets", p, ""), p)
    storage = storage_parts.storage(
        table_of(doc, "storage", p, ""), StorageSpec(), targets, p, "[storage]"
    )
    base_os = os_table.os_table(doc.get("os", {}), OsSpec(), p, "[os]")

    base_reset = "reset" in table_of(doc, "dataset", Problems(), "")
    variants: list[Variant] = []
    base = Variant("base", server, dataset, phases, storage, base_os)
    for vname, vdoc in table_of(doc, "variants", p, "").items():
        variant = _variant(str(vname), vdoc, base, targets, base_reset, p, base_dir)
        if variant is not None:
            variants.append(variant)
    if not variants:
        dataset = _reset_for(server, dataset, base_reset, p, "[dataset]")
        variants.append(Variant("base", server, dataset, phases, storage, base_os))

    host_parts.check_references(
        [
            (f"[variants.{v.name}]" if doc.get("variants") else "[workload]", ph)
            for v in variants
            for ph in v.phases
        ],
        known_hosts,
        p,
    )
    host_parts.check_server_hosts(
        [
            (f"[variants.{v.name}]" if doc.get("variants") else "[server]", v.server, v.storage)
            for v in variants
        ],
        known_hosts,
        p,
    )
    _phases_in_order(variants, bool(doc.get("variants")), p)
    matrix = _matrix(table_of(doc, "matrix", p, ""), p, base_dir, targets)
    os_where.check(
        [(v.name, v.server, v.os, v.phases) for v in variants],
        [k for k, _ in matrix if k.startswith("os.")],
        known_hosts,
        p,
    )
    kits_checked(variants, dict(matrix), bool(doc.get("variants")), p)
    _taken(dict(matrix), [ph for v in variants for ph in v.phases], p, "[matrix]")
    _progress_logs(dict(matrix), [ph for v in variants for ph in v.phases], p)
    derived = _derived(doc.get("derived", []), {ph.name for ph in phases}, p)
    telemetry = sections.telemetry(table_of(doc, "telemetry", p, ""), p)
    storage_bench = storage_parts.storage_bench(
        table_of(doc, "storage_bench", p, ""), "storage_bench" in doc, p
    )
    effect, equivalence, raw_reference = sections.analysis(table_of(doc, "analysis", p, ""), p)
    reference = _reference(raw_reference, variants if doc.get("variants") else [], dict(matrix), p)
    prof = profiling.profile(table_of(doc, "profile", p, ""), "profile" in doc, p)
    if p.items:
        where = f" in {source_file}" if source_file else ""
        raise CampaignError(
            f"the campaign{where} has {len(p.items)} problem(s):\n  " + "\n  ".join(p.items),
            hint="run `pglab run --help` for the file layout, or start from a file in examples/",
        )
    return Campaign(
        top.get("name", default_name),
        top.get("description", ""),
        repeats,
        order,
        top.get("on_error", "continue"),
        tuple(variants),
        matrix,
        derived,
        source_file,
        doc,
        base_dir,
        telemetry,
        tuple((k, t) for k, t in targets.items() if t is not None),
        storage_bench,
        effect,
        top.get("max_duration"),
        tuple(known_hosts.values()),
        sequential,
        equivalence,
        prof,
        spread,
        reference,
    )


# -- sections ----------------------------------------------------------------------------


def _reference(
    raw: TomlTable, variants: list[Variant], matrix: Mapping[str, Any], p: Problems
) -> tuple[tuple[str, str], ...]:
    """``[analysis] reference`` resolved: ("variant", NAME) and (AXIS, value as its points
    write it); an axis refused where the variants, of one workload, are the question (their
    points are compared at the same coordinates: the axis's value would be ignored)."""
    variant, axes, wrong = questions.resolve(raw, [v.name for v in variants], dict(matrix))
    for w in wrong:
        p.add("[analysis]", w)
    loads = {load_of(v.phases) for v in variants}
    if axes and len(variants) > 1 and len(loads) == 1:
        p.add("[analysis]", questions.axis_beside_variants(axes, [v.name for v in variants]))
    return ((("variant", variant),) if variant else ()) + tuple(axes.items())


def _variant(
    vname: str,
    vdoc: Any,
    base: Variant,
    targets: dict[str, TargetSpec | None],
    base_reset: bool,
    p: Problems,
    base_dir: Path,
) -> Variant | None:
    """``[variants.NAME]``: the base's server, dataset, phases, storage and [os] with the
    variant's overrides; None when it is no table."""
    where = f"[variants.{vname}]"
    if not isinstance(vdoc, dict):
        p.add(where, "must be a table of overrides")
        return None
    own = declared.check(schema.VARIANTS, vdoc, p, where, allowed=VARIANT_KEYS)
    vserver = _server(own.get("server", {}), base.server, p, where, base_dir)
    if "settings" in vdoc:
        vserver = vserver.with_settings(_settings(vdoc["settings"], p, where))
    vdataset = _dataset(own.get("dataset", {}), base.dataset, p, where)
    vwork = own.get("workload", {})
    # every value checked, also those of keys no phase of the base takes (said by _taken)
    declared.check(schema.WORKLOAD, vwork, p, f"{where} workload", allowed=WORKLOAD_KEYS)
    vphases = tuple(
        apply_workload(ph, for_phase(ph, vwork), p, f"{where} workload", base_dir)
        for ph in base.phases
    )
    _taken(vwork, vphases, p, f"{where} workload")
    vstorage = base.storage
    if "storage" in vdoc:
        vtable = vdoc["storage"]
        vtable = {"data": vtable} if isinstance(vtable, str) else vtable
        if not isinstance(vtable, dict):
            p.add(where, 'storage must be a target name or a table {data = "...", wal = "..."}')
        else:
            vstorage = storage_parts.storage(vtable, base.storage, targets, p, f"{where} storage")
    # said for this variant, or in [dataset] of a base that is an existing server already
    explicit = "reset" in own.get("dataset", {}) or (base_reset and base.server.over_network)
    vdataset = _reset_for(vserver, vdataset, explicit, p, where)
    vos = os_table.os_table(own["os"], base.os, p, f"{where} os") if "os" in own else base.os
    return Variant(vname, vserver, vdataset, vphases, vstorage, vos)


def _phases_in_order(variants: list[Variant], named: bool, p: Problems) -> None:
    """Rules between a run's phases: a restore after its dump, measured phases of one kind."""
    for v in variants:  # a restore restores the dump its run made before it
        where = f"[variants.{v.name}]" if named else "[[phases]]"
        for i, ph in enumerate(v.phases):
            restores = operation_of(ph) == "restore"
            if restores and not any(operation_of(b) == "dump" for b in v.phases[:i]):
                p.add(
                    where,
                    f'phase "{ph.name}": restore needs a phase with operation = "dump" '
                    "before it in the run (it restores the run's own dump)",
                )
    for v in variants:  # a run's figure is the mean TPS or MB/s of its measured phases
        kinds = {operation_of(ph) is None for ph in v.phases if ph.measured}
        if len(kinds) > 1:
            where = f"[variants.{v.name}]" if named else "[[phases]]"
            p.add(
                where,
                "measured phases are all pgbench scripts (TPS) or all operations "
                "(MB/s): give the others measured = false",
            )


def _server(
    table: TomlTable, base: ServerSpec, p: Problems, where: str, base_dir: Path
) -> ServerSpec:
    vals = declared.check(schema.SERVER, table, p, where, allowed=SERVER_KEYS)
    src = server_source.parse(table, vals, base, p, where, base_dir)
    dsn = vals.get("dsn", None if "dsn" in table else base.dsn)
    if "dsn" in vals:
        try:
            conninfo_to_dict(vals["dsn"])
        except psycopg.ProgrammingError as exc:
            p.add(where, f"dsn is not a valid connection string: {mask_dsn(str(exc))}")
    manage = vals.get("manage", base.manage)
    database = vals.get("database", base.database)
    host = host_parts.server_host(table, vals, base, dsn, p, where)
    if dsn is None and "dsn" not in table:
        for name in ("manage", "database") if host is None else ("manage",):
            if name in table:
                p.add(where, f'{name} is for an existing server: it needs dsn = "..."')
    spec = ServerSpec(
        source=src.source,
        bindir=src.bindir,
        build=src.build,
        version=src.version,
        pgbench=src.pgbench,
        settings=base.settings,
        dsn=dsn,
        manage=manage,
        database=database,
        host=host,
    )
    if "settings" in table:
        spec = spec.with_settings(_settings(table["settings"], p, where))
    return spec


def _reset_for(
    server: ServerSpec, dataset: DatasetSpec, explicit: bool, p: Problems, where: str
) -> DatasetSpec:
    """A server reached over the network (an existing one, or one made on another host) is not
    reset by copying files by default: its default reset is "never"; "run"/"point" said in the
    file are refused for an existing server and copy the cluster's files on the host for one
    pglab made there; "reinit" is for those servers only."""
    if server.over_network and dataset.reset in COPY_RESETS:
        if explicit and server.host is not None:
            return dataset  # pglab made it: its files are copied on the host
        if explicit:
            p.add(
                where,
                f'reset = "{dataset.reset}" copies the files of a cluster pglab made; '
                'for an existing server (dsn) use "reinit" (pgbench -i before each run) or '
                '"never"',
            )
        return replace(dataset, reset="never")
    if not server.over_network and dataset.reset == "reinit":
        p.add(
            where, 'reset = "reinit" is for a server over the network (dsn or host); here use "run"'
        )
    return dataset


def _settings(value: Any, p: Problems, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        p.add(where, "settings must be a table of name = value")
        return {}
    out = {}
    for key, val in value.items():
        if isinstance(val, dict | list):
            p.add(where, f"setting {key} must be a single value, not {type(val).__name__}")
            continue
        out[str(key)] = _setting_str(val)
    return out


def _setting_str(val: Any) -> str:
    if isinstance(val, bool):
        return "on" if val else "off"
    return str(val)


def _dataset(table: TomlTable, base: DatasetSpec, p: Problems, where: str) -> DatasetSpec:
    return replace(base, **declared.check(schema.DATASET, table, p, where, allowed=DATASET_KEYS))


def _phases(
    doc: TomlTable, workload: TomlTable, p: Problems, base_dir: Path
) -> tuple[PhaseSpec, ...]:
    raw = doc.get("phases")
    default = PhaseSpec("main", PgbenchWork(scripts=(Script(builtin="tpcb-like"),)))
    default = apply_workload(default, workload, p, "[workload]", base_dir)
    if raw is None:
        return (default,)
    if not isinstance(raw, list) or not raw:
        p.add("[[phases]]", "must be a non-empty array of tables")
        return (default,)
    phases = []
    for i, table in enumerate(raw, 1):
        where = f"[[phases]] #{i}"
        if not isinstance(table, dict):
            p.add(where, "must be a table")
            continue
        own = declared.check(schema.PHASES, table, p, where, allowed=PHASE_KEYS)
        ph = replace(
            default,
            name=own.get("name", f"phase {i}"),
            times=own.get("times", 1),
            measured=own.get("measured", True),
        )
        phases.append(apply_workload(ph, table, p, where, base_dir))
    names = [ph.name for ph in phases]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        p.add("[[phases]]", f'phase name "{dup}" is used twice')
    return tuple(phases)


_AXES = {k.name: k for k in schema.WORKLOAD.keys + schema.DATASET.keys if k.axis}


def _matrix(
    table: TomlTable, p: Problems, base_dir: Path, targets: dict[str, TargetSpec | None]
) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    p.unknown_keys("[matrix]", table, MATRIX_KEYS)
    axes: list[tuple[str, tuple[Any, ...]]] = []
    for key, values in table.items():
        if key == "os":
            axes += os_table.matrix_axes(values, p)
            continue
        if key == "settings":
            if not isinstance(values, dict):
                p.add("[matrix.settings]", "must be a table of NAME = [values]")
                continue
            for name, vals in values.items():
                if not isinstance(vals, list) or not vals:
                    p.add("[matrix.settings]", f"{name} must be a non-empty array of values")
                    continue
                if any(isinstance(v, dict | list) for v in vals):
                    p.add(
                        "[matrix.settings]",
                        f"{name}: each value a single one, not a table or an array",
                    )
                    continue
                axes.append((f"settings.{name}", tuple(_setting_str(v) for v in vals)))
            continue
        if key not in MATRIX_KEYS:
            continue
        if not isinstance(values, list) or not values:
            p.add("[matrix]", f"{key} must be a non-empty array of values")
            continue
        where = f"[matrix] {key}"
        for v in values:  # kept as written (the points' labels), each checked
            if key in STORAGE_AXES:
                storage_parts.target_ref(v, targets, p, where)
            elif key == "script":  # a built-in's name or a file: read as [workload] reads it
                apply_workload(PhaseSpec("axis"), {key: v}, p, where, base_dir)
            elif declared.read(_AXES[key], v) is declared.BAD:
                p.add(where, declared.problem(_AXES[key], v))
        axes.append((key, tuple(values)))
    return tuple(axes)


def _taken(table: TomlTable, phases: Any, p: Problems, where: str) -> None:
    """An operation's option applied to every phase must be taken by one of them."""
    for key in (k for k in table if k in OPERATION_KEYS):
        if not any(takes(ph, key) for ph in phases):
            ops = [o for o, keys in OPERATION_OPTIONS.items() if key in keys]
            p.add(where, f"{key}: no phase runs an operation that takes it ({', '.join(ops)})")


def _progress_logs(axes: TomlTable, phases: Any, p: Problems) -> None:
    """progress = false needs the aggregate log in every phase and every combination of the
    [matrix] axes it makes."""
    said = {
        progress_problem(progress, log)
        for ph in phases
        if operation_of(ph) is None
        for progress in axes.get("progress", (ph.pgbench.progress,))
        for log in axes.get("latency_log", (ph.pgbench.latency_log,))
    }
    where = "[matrix]" if {"progress", "latency_log"} & set(axes) else "[workload]"
    for text in sorted(t for t in said if t is not None):
        p.add(where, text)


def _derived(raw: Any, phase_names: set[str], p: Problems) -> tuple[DerivedSpec, ...]:
    if not isinstance(raw, list):
        p.add("[[derived]]", "must be an array of tables")
        return ()
    out = []
    for i, table in enumerate(raw, 1):
        where = f"[[derived]] #{i}"
        if not isinstance(table, dict):
            p.add(where, "must be a table")
            continue
        own = declared.check(schema.DERIVED, table, p, where, allowed=DERIVED_KEYS)
        for ab in ("a", "b"):
            if ab in table and ab not in own:
                continue  # not a string: said
            if table.get(ab) not in phase_names:
                p.add(
                    where,
                    f'{ab} = "{table.get(ab)}" is not a phase name '
                    f"({', '.join(sorted(phase_names))})",
                )
        out.append(
            DerivedSpec(
                own.get("name", f"derived_{i}"),
                own.get("kind", "decrease"),
                str(table.get("a")),
                str(table.get("b")),
            )
        )
    return tuple(out)
