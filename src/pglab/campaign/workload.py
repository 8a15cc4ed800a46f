"""The ``[workload]`` keys of a campaign file (in ``[workload]``, ``[[phases]]``, a variant's
``workload`` and a ``[matrix]`` axis): each checked and applied to a ``PhaseSpec``, every problem
added to the file's ``Problems``."""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pglab.campaign import declared, schema
from pglab.campaign.checks import Problems
from pglab.campaign.identity import Flat, flat
from pglab.campaign.kit_checks import kit_problems, kit_scale
from pglab.campaign.phase_work import kit_of, operation_of, phase_of
from pglab.campaign.shapes import whole
from pglab.campaign.spec import LOCAL, DatasetSpec, PhaseSpec
from pglab.jsonish import TomlTable
from pglab.script import BUILTIN_SCRIPTS, Script
from pglab.workloads.kits.work.kits import KITS
from pglab.workloads.work import (
    GENERATOR,
    GENERATORS,
    OPERATION_KEYS,
    OPERATION_OPTIONS,
    OPERATIONS,
    REFUSED_ELSEWHERE,
    KitWork,
    OperationWork,
    PgbenchWork,
    ReplayWork,
    SysbenchWork,
    TpchWork,
)


def apply_workload(
    ph: PhaseSpec, table: TomlTable, p: Problems, where: str, base_dir: Path
) -> PhaseSpec:
    """``ph`` with the workload keys of ``table`` applied; problems are added to ``p``. Each
    value is checked by its declaration (``declared``); the rules between keys are here. They
    are applied to the phase's flat fields (``identity.flat``), and the phase's kind decided
    from them once (``phase_work.phase_of``)."""
    f = flat(ph)
    # its names: the caller's check; a kit's mode: the kit's (its modes, not every kit's)
    kit = table.get("kit", f["kit"])
    own = {k: v for k, v in table.items() if k != "mode" or kit not in KITS}
    vals = declared.check(schema.WORKLOAD, own, p, where)
    upd: TomlTable = {}
    if "script" in table and "scripts" in table:
        p.add(where, "give script or scripts, not both")
    upd.update(_which_operation(f, table, vals, p, where))
    upd.update(_kit(f, table, vals, p, where))
    upd.update(_pacing(f, upd.get("kit", f["kit"]), table, vals, p, where))
    upd.update(_generator(f, table, vals, p, where))
    upd.update(_tpch(vals.get("kit", upd.get("kit", f["kit"])), vals))
    _not_tpch(upd.get("kit", f["kit"]), table, p, where)
    upd.update(_script_keys(table, p, where, base_dir))
    upd.update(_replay(table, vals, p, where, base_dir))
    upd.update(_load_keys(table, vals, p, where))
    upd.update((k, v) for k, v in vals.items() if k in PLAIN)
    if "generators" in vals:
        found = vals["generators"]
        upd["generators"] = () if found == (LOCAL,) else found
    new = phase_of({**f, **upd})
    _check_together(new, table, vals, p, where)
    return new


# keys whose checked value is the phase's field of that name: its clients, pgbench's options
# (as pgbench's work declares them) and an operation's
PLAIN = ("clients", *PgbenchWork.OPTIONS, *OPERATION_KEYS)


def _script_keys(table: TomlTable, p: Problems, where: str, base_dir: Path) -> TomlTable:
    """``script`` or ``scripts``: the phase's pgbench scripts, read and checked."""
    upd: TomlTable = {}
    if "script" in table:
        upd["scripts"] = tuple(_scripts([table["script"]], p, where, base_dir))
    if "scripts" in table:
        val = table["scripts"]
        if not isinstance(val, list) or not val:
            p.add(where, "scripts must be a non-empty array")
        else:
            upd["scripts"] = tuple(_scripts(val, p, where, base_dir))
    return upd


def _replay(
    table: TomlTable, vals: TomlTable, p: Problems, where: str, base_dir: Path
) -> TomlTable:
    """``replay``: a workload file of pglab capture, replayed by pgreplay (its format and its
    dump are checked when the plan is made, ``planning/plan``); ``speed``: pgreplay -s."""
    upd: TomlTable = {}
    if "speed" in vals:
        upd["speed"] = float(vals["speed"])
    if "replay" not in vals:
        return upd
    path = (base_dir / str(vals["replay"])).resolve()
    if not path.is_file():
        p.add(where, f"replay = {vals['replay']!r}: no such workload file ({path})")
        return upd
    others = [k for k in ("script", "scripts", "kit", "operation", "generator") if k in table]
    if others:
        p.add(
            where,
            f"replay with {', '.join(others)}: a phase replays a captured workload or "
            "runs a load, not both",
        )
    return {**upd, "replay": str(path), "vacuum": False}


def hosts_share_clients(phase: PhaseSpec) -> bool:
    """Whether a phase's generator hosts share its clients (pgbench's, split between them: one
    each at least); a replay's share its captured sessions instead (``planning/plan``)."""
    return not isinstance(phase.work, ReplayWork)


def _load_keys(table: TomlTable, vals: TomlTable, p: Problems, where: str) -> TomlTable:
    """How long and how many threads: duration or transactions, threads ("auto": None)."""
    upd: TomlTable = {}
    if "threads" in vals:
        upd["threads"] = None if vals["threads"] == "auto" else vals["threads"]
    if "duration" in table and "transactions" in table:
        p.add(where, "give duration (seconds) or transactions (per client), not both")
    if "duration" in vals:
        upd.update(duration=vals["duration"], transactions=None)
    if "transactions" in vals:
        upd.update(transactions=vals["transactions"], duration=None)
    return upd


def _check_together(
    new: PhaseSpec, table: TomlTable, vals: TomlTable, p: Problems, where: str
) -> None:
    """The rules between keys, on the phase they made: another kind's keys, an operation's
    options, threads and clients, log sampling and the latency log."""
    _elsewhere(new, table, vals, p, where)
    given = [k for k in OPERATION_KEYS if k in table]
    if isinstance(new.work, OperationWork):
        operation = new.work.operation
        takes = OPERATION_OPTIONS[operation]
        for k in (k for k in given if k not in takes):
            p.add(
                where,
                f'{k} is not an option of operation = "{operation}" '
                f"(its options: {', '.join(takes) or 'none'})",
            )
    if new.threads is not None and new.threads > new.clients:
        p.add(where, f"threads = {new.threads} is more than clients = {new.clients}")
    pgbench = new.pgbench
    if pgbench.sampling_rate is not None and pgbench.latency_log != "full":
        said = (
            "is allowed only when logging transactions (-l)"
            if pgbench.latency_log == "off"
            else "and aggregation (--aggregate-interval) cannot be used at the same time"
        )
        p.add(
            where,
            f"sampling_rate with latency_log = {pgbench.latency_log!r}: pgbench says "
            f"log sampling (--sampling-rate) {said}",
        )


def _elsewhere(new: PhaseSpec, table: TomlTable, vals: TomlTable, p: Problems, where: str) -> None:
    """Once the phase's kind is decided: the keys another kind owns, refused by one rule from
    the kinds' declarations (``workloads/work.REFUSED_ELSEWHERE``: an operation's options, a
    kit's mode, YCSB's distribution, TPC-C's pacing, TPC-H's queries, sysbench's test). One
    said of its value waits for the kind the table asks for (``_told``: its refusal is said)."""
    told = _told(new, table, vals)
    for refusal in REFUSED_ELSEWHERE:
        said = refusal.refused(new.work, table, vals) if told or not refusal.of_value else None
        if said is not None:
            p.add(where, said)


def _told(new: PhaseSpec, table: TomlTable, vals: TomlTable) -> bool:
    """Whether ``new`` is of the kind its table asks for (a kind refused, by its value or
    beside another, is said on its own)."""
    if any(k in table and k not in vals for k in ("operation", "kit", "generator", "replay")):
        return False
    if "operation" in vals and operation_of(new) != vals["operation"]:
        return False
    if "kit" in vals and kit_of(new) != vals["kit"]:
        return False
    return vals.get("generator") != GENERATOR or isinstance(new.work, SysbenchWork)


def progress_problem(progress: bool, latency_log: str) -> str | None:
    """Why ``progress`` cannot go with ``latency_log`` (None: it can). The campaign checks every
    combination its phases and [matrix] axes make (``parse._progress_logs``)."""
    if progress or latency_log == "aggregate":
        return None
    return (
        f"progress = false with latency_log = {latency_log!r}: without -P 1 each second's "
        'TPS comes from pgbench\'s aggregate log; set latency_log = "aggregate" (or leave '
        "progress out)"
    )


def _scripts(items: list[Any], p: Problems, where: str, base_dir: Path) -> list[Script]:
    out = []
    for item in items:
        if isinstance(item, str):
            item = (
                {"builtin": item} if item in BUILTIN_SCRIPTS or "." not in item else {"file": item}
            )
        if not isinstance(item, dict):
            p.add(
                where, f"script {item!r}: a built-in name, a file path, or {{file=..., weight=...}}"
            )
            continue
        given = item.get("weight", 1)
        weight = whole(given)
        if weight is None or weight < 0:
            p.add(where, f"script weight {given!r}: expected a whole number ≥ 0")
            weight = 1
        if "builtin" in item:
            name = item["builtin"]
            if name not in BUILTIN_SCRIPTS:
                close = difflib.get_close_matches(str(name), BUILTIN_SCRIPTS, n=1)
                hint = f' — did you mean "{close[0]}"?' if close else ""
                p.add(
                    where,
                    f'unknown built-in script "{name}"{hint} '
                    f"(built-ins: {', '.join(BUILTIN_SCRIPTS)}; a custom script is a .sql file)",
                )
                continue
            out.append(Script(builtin=name, weight=weight))
        elif "file" in item:
            path = (base_dir / str(item["file"])).absolute()
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            except OSError as exc:
                p.add(where, f"script file {path}: {exc.strerror}")
                continue
            out.append(Script(path=str(path), weight=weight, sha256=digest))
        else:
            p.add(where, f'script {item!r}: needs builtin = "..." or file = "..."')
    return out


def _kit(f: Flat, table: TomlTable, vals: TomlTable, p: Problems, where: str) -> TomlTable:
    """``kit``, ``mode`` and ``distribution`` as updates of the phase ``f``: a kit's scripts at
    their weights (without pgbench's vacuum of its own tables); a script or an operation given
    alone ends the kit."""
    upd: TomlTable = {}
    kit, mode = f["kit"], f["mode"]
    if "kit" in table:
        if "script" in table or "scripts" in table or "operation" in table:
            p.add(
                where,
                "give kit, script(s) or operation, not two: a phase runs a workload "
                "kit, pgbench scripts or a maintenance operation",
            )
            return {}
        if "kit" not in vals:
            return {}  # said
        kit = vals["kit"]
        if kit != f["kit"]:
            mode = KITS[kit].modes[0]
    elif ("script" in table or "scripts" in table or "operation" in table) and kit:
        return {"kit": None, "mode": None}
    if "mode" in table:
        if kit is None:  # refused with another kind's keys (_elsewhere)
            return {}
        if table["mode"] not in KITS[kit].modes:  # checked here, not by its declaration
            p.add(
                where,
                f"mode = {table['mode']!r}: kit {kit!r} runs in "
                f"{' or '.join(KITS[kit].modes)} mode",
            )
            return {}
        mode = table["mode"]
    if "distribution" in vals and kit == "ycsb":  # else refused (_elsewhere)
        upd["distribution"] = vals["distribution"]
    if kit is None or (kit, mode) == (f["kit"], f["mode"]):
        return upd
    return {
        **upd,
        "kit": kit,
        "mode": mode,
        "scripts": KITS[kit].scripts(str(mode)),
        "vacuum": False,
    }


def _pacing(
    f: Flat,
    kit: str | None,
    table: TomlTable,
    vals: TomlTable,
    p: Problems,
    where: str,
) -> TomlTable:
    """kit = "tpcc"'s ``pacing`` and ``think_time`` (``kits/pacing.py``): its terminals are 10
    per warehouse, so clients and a rate are theirs, not the file's; another kit ends them."""
    given = [k for k in ("pacing", "think_time") if k in table]
    if kit != "tpcc":  # given: refused with another kind's keys (_elsewhere)
        return {"pacing": None, "think_time": None} if f["pacing"] else {}
    upd: TomlTable = {k: vals[k] for k in given if k in vals}
    pacing = upd.get("pacing", f["pacing"])
    if "think_time" in upd and pacing is None:
        p.add(
            where,
            'think_time: scales pacing = "spec"\'s keying and think times, but this '
            'phase has no pacing (add pacing = "spec")',
        )
    theirs = [k for k in ("clients", "rate") if k in table]
    if pacing is not None and theirs:
        p.add(
            where,
            f'{", ".join(theirs)} with pacing = "spec": its terminals are 10 per '
            "warehouse ([dataset] scale), each as fast as its keying and think times let it "
            "— leave them out",
        )
    return upd


# Each kind of phase's keys, declared once: the keys of [workload] that a kind refuses beside
# it (another kind's, or what it has no use for). The parser refuses them wherever a phase has
# that kind (the rules below: a phase inherits its kind from [workload]); the JSON Schema,
# which sees one table, where the table itself says the kind (json_schema._kind_rules).

# workload keys only pgbench reads (its declared options but its scripts and those sysbench
# reads too, and threads): refused beside generator = "sysbench" rather than ignored
PGBENCH_ONLY = (
    *(k for k in PgbenchWork.OPTIONS if k not in SysbenchWork.PGBENCH_OPTIONS),
    "threads",
)
# kit = "tpch"'s own: its queries in order, each one's statement_timeout
TPCH_KEYS = TpchWork.KEYS
# workload keys that mean nothing to a TPC-H-like phase (its length is the queries', its
# sessions its own): refused beside kit = "tpch" rather than ignored
NOT_TPCH = (
    "duration",
    "transactions",
    "rate",
    "generators",
    *PGBENCH_ONLY,
)
# what sysbench runs instead of (its own OLTP tests)
NOT_SYSBENCH = ("script", "scripts", "kit", "operation", *PGBENCH_ONLY)

# (the kind's key, its value, the keys it refuses beside it)
REFUSED_BESIDE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("kit", "tpch", NOT_TPCH),
    *(("kit", kit, TPCH_KEYS) for kit in KITS if kit != "tpch"),
    *(("kit", kit, ("distribution",)) for kit in KITS if kit != "ycsb"),
    *(("kit", kit, ("pacing", "think_time")) for kit in KITS if kit != "tpcc"),
    ("generator", "sysbench", NOT_SYSBENCH),
    *(("generator", gen, ("test",)) for gen in GENERATORS if gen != "sysbench"),
)


def _not_tpch(kit: str | None, table: TomlTable, p: Problems, where: str) -> None:
    """The keys of pgbench's runs that a TPC-H-like phase has no use for (``NOT_TPCH``),
    named before anything runs rather than ignored."""
    meaningless = [k for k in NOT_TPCH if k in table]
    if kit == "tpch" and meaningless:
        p.add(
            where,
            f'{", ".join(meaningless)} with kit = "tpch": pgbench\'s options, which '
            "a TPC-H-like phase has no use for (it runs each query once: its length is "
            'theirs); it takes mode, clients (mode = "throughput"\'s streams), queries, '
            "query_timeout and random_seed — leave them out",
        )


def _power_clients(variants: Any, axes: TomlTable, named: bool, p: Problems) -> None:
    """``clients`` of a TPC-H-like power run: one session runs its queries, so more than one
    client means nothing unless a ``[matrix] mode`` makes some points throughput runs."""
    if "mode" in axes:
        return
    for v in variants:
        for ph in v.phases:
            if not isinstance(ph.work, TpchWork) or ph.work.mode != "power":
                continue
            many = [c for c in axes.get("clients", (ph.clients,)) if c != 1]
            if many:
                where = f"[variants.{v.name}]" if named else "[workload]"
                p.add(
                    where,
                    f'clients = {many[0]} with kit = "tpch"\'s power run: one session '
                    'runs its queries; mode = "throughput" runs clients query streams '
                    "(or leave clients out)",
                )
                return


def _tpch(kit: str | None, vals: TomlTable) -> TomlTable:
    """kit = "tpch"'s ``queries`` (which of the 22, in order) and ``query_timeout`` (seconds);
    beside another kind, refused with its keys (``_elsewhere``)."""
    if kit != "tpch":
        return {}
    return {k: vals[k] for k in TPCH_KEYS if k in vals}


def _generator(f: Flat, table: TomlTable, vals: TomlTable, p: Problems, where: str) -> TomlTable:
    """``generator`` and sysbench's ``test``: sysbench runs its test (oltp_read_write unless
    said) instead of pgbench's scripts."""
    if "generator" in table and "generator" not in vals:
        return {}  # said
    generator = vals.get("generator", f["generator"])
    if (
        "generator" not in table
        and f["generator"] == "sysbench"
        and any(k in table for k in ("script", "scripts", "kit", "operation"))
    ):
        return {"generator": "pgbench", "test": None}
    if generator == "sysbench":
        clash = [k for k in ("script", "scripts", "kit", "operation") if k in table]
        if clash:
            p.add(
                where,
                f'{", ".join(clash)} with generator = "sysbench": sysbench runs '
                "its own OLTP tests (test = ...), not pgbench scripts, kits or "
                "operations",
            )
            return {}
        theirs = [k for k in PGBENCH_ONLY if k in table]
        if theirs:
            p.add(
                where,
                f'{", ".join(theirs)} with generator = "sysbench": pgbench\'s '
                "options; sysbench takes clients, duration, transactions, rate and "
                "random_seed",
            )
            return {}
    if "test" in table and ("test" not in vals or generator != "sysbench"):
        return {}  # said, or refused with another kind's keys (_elsewhere)
    if generator != "sysbench":
        return {"generator": generator, "test": None} if "generator" in table else {}
    return {
        "generator": "sysbench",
        "test": vals.get("test", f["test"]) or "oltp_read_write",
        "vacuum": False,
    }


def _which_operation(
    f: Flat, table: TomlTable, vals: TomlTable, p: Problems, where: str
) -> TomlTable:
    """``operation``, or a script instead of the operation the phase ``f`` had, as its updates:
    a new operation starts from the default options."""
    upd: TomlTable = {}
    scripted = "script" in table or "scripts" in table
    if "operation" in table:
        if scripted:
            p.add(
                where,
                "give script(s) or operation, not both: a phase runs a pgbench script "
                "or a maintenance operation",
            )
        elif "operation" in vals and vals["operation"] != f["operation"]:
            upd.update(_DEFAULT_OPTIONS, operation=vals["operation"])
    elif scripted and f["operation"] is not None:
        upd.update(_DEFAULT_OPTIONS, operation=None)
    return upd


_DEFAULT_OPTIONS = {k: getattr(OperationWork(""), k) for k in OPERATION_KEYS}


def takes(ph: PhaseSpec, key: str) -> bool:
    """Whether ``ph`` takes the workload key ``key``: an operation's option only a phase
    running that operation (a [matrix] axis or a variant's workload leaves the others alone)."""
    return _takes(flat(ph), key)


def _takes(f: Flat, key: str) -> bool:
    """``takes``, of a phase's flat fields."""
    kit: str | None = f["kit"]
    if key == "mode":
        return kit is not None
    if key == "distribution":
        return kit == "ycsb"
    if key == "pacing":
        return kit == "tpcc"
    if key == "think_time":
        return f["pacing"] is not None
    if key in TPCH_KEYS:
        return kit == "tpch"
    if key == "test":
        return bool(f["generator"] == "sysbench")
    if key not in OPERATION_KEYS:
        return True
    return f["operation"] is not None and key in OPERATION_OPTIONS[f["operation"]]


def for_phase(ph: PhaseSpec, table: TomlTable) -> TomlTable:
    """``table`` (applied to every phase) without the options the phase, with the table's
    operation or script, does not take."""
    f = flat(ph)
    if "operation" in table and table["operation"] in OPERATIONS:
        op: str | None = table["operation"]
    elif "script" in table or "scripts" in table:
        op = None
    else:
        op = f["operation"]
    kit = table.get("kit", f["kit"]) if op is None and "script" not in table else None
    told = {**f, "operation": op, "kit": kit, "pacing": table.get("pacing", f["pacing"])}
    return {k: v for k, v in table.items() if _takes(told, k)}


def kits_checked(variants: Any, axes: TomlTable, named: bool, p: Problems) -> None:
    """What the kits of a campaign's variants need of it: one kind of dataset per run, a scale
    the kit takes (in [matrix] too), and a kit for a [matrix] mode."""
    for v in variants:
        where = f"[variants.{v.name}]" if named else "[[phases]]"
        kit_problems(v.phases, where, p)
        scales = axes.get("scale", (v.dataset.scale,))
        kit_scale([k for ph in v.phases if (k := kit_of(ph))], scales, where, p)
        shaped = [
            k
            for k in ("fields", "field_length")
            if k in axes or getattr(v.dataset, k) != getattr(DatasetSpec(), k)
        ]
        if shaped and not any(kit_of(ph) == "ycsb" for ph in v.phases):
            p.add(
                where,
                f'[dataset] {" and ".join(shaped)}: the shape of kit = "ycsb"\'s '
                "records, but no phase runs YCSB",
            )
    if any(isinstance(ph.work, TpchWork) for v in variants for ph in v.phases):
        _not_tpch("tpch", axes, p, "[matrix]")
        _power_clients(variants, axes, named, p)
    paced = any(
        isinstance(ph.work, KitWork) and ph.work.pacing for v in variants for ph in v.phases
    )
    if "think_time" in axes and not paced:
        p.add("[matrix]", 'think_time: no phase has pacing = "spec" (terminals that think)')
    if paced and (theirs := [k for k in ("clients", "rate") if k in axes]):
        p.add(
            "[matrix]",
            f'{", ".join(theirs)} with pacing = "spec": its terminals are 10 '
            "per warehouse (scale is the axis that adds terminals)",
        )
    if "mode" in axes and not any(kit_of(ph) for v in variants for ph in v.phases):
        p.add("[matrix]", "mode: no phase runs a workload kit (kit = ...) that has modes")


def load_of(phases: Sequence[PhaseSpec]) -> tuple[tuple[object, ...], ...]:
    """What load a variant's phases run (each one's kit, operation, replay and generator):
    variants alike in it are one workload's, compared with each other rather than along an
    axis (``parse``'s check of ``[analysis] reference``)."""
    return tuple((f["kit"], f["operation"], f["replay"], f["generator"]) for f in map(flat, phases))
