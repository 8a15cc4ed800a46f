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
from pglab.workloads import work as kinds
from pglab.workloads.kits.work.kits import KITS
from pglab.workloads.work import (
    DEFAULT_TEST,
    GENERATOR,
    GENERATOR_INSTEAD_OF,
    KIND_KEYS,
    OPERATION_KEYS,
    OPERATION_OPTIONS,
    OPERATIONS,
    KitWork,
    OperationWork,
    PgbenchWork,
    ReplayWork,
    SysbenchWork,
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
    upd.update(_plain_own(f, vals.get("kit", upd.get("kit", f["kit"])), vals))
    for kind_key in KIND_KEYS:
        if kind_key != "generator":  # said by _generator
            _beside(kind_key, upd.get(kind_key, f[kind_key]), table, p, where)
    upd.update(_script_keys(table, p, where, base_dir))
    for read in kinds.KEYS_READ:  # a replay's workload file
        more, said = read(table, vals, base_dir)
        for problem in said:
            p.add(where, problem)
        upd.update(more)
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
    for refusal in kinds.REFUSED_ELSEWHERE:
        said = refusal.refused(new.work, table, vals) if told or not refusal.of_value else None
        if said is not None:
            p.add(where, said)


def _told(new: PhaseSpec, table: TomlTable, vals: TomlTable) -> bool:
    """Whether ``new`` is of the kind its table asks for (a kind refused, by its value or
    beside another, is said on its own)."""
    if any(k in table and k not in vals for k in KIND_KEYS):
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
    if "distribution" in vals and _takes({**f, "kit": kit}, "distribution"):  # else _elsewhere
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
    if not _takes({**f, "kit": kit}, "pacing"):  # given: refused by another kind's (_elsewhere)
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


def refused_beside() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The keys refused beside each kind, as (the key that says the kind, its value, the keys),
    from the kinds' declarations: what a kind has no use for (``workloads/work.BESIDE``) and
    the keys that other values of that key own (``REFUSED_ELSEWHERE``: a TPC-H-like phase's
    queries beside another kit). The parser refuses them wherever a phase has that kind (a phase
    inherits its kind from [workload]); the JSON Schema, which sees one table, where the table
    itself says the kind (``json_schema._kind_rules``)."""
    merged: dict[tuple[str, str], tuple[str, ...]] = {}
    for beside in kinds.BESIDE:
        said = (beside.key, beside.value)
        merged[said] = merged.get(said, ()) + beside.refused
    found = [(key, value, refused) for (key, value), refused in merged.items()]
    for r in kinds.REFUSED_ELSEWHERE:
        if r.owners:
            choices = schema.key(schema.WORKLOAD, r.said_by).choices
            found += [(r.said_by, v, r.keys) for v in choices if v not in r.owners]
    return tuple(sorted(found, key=lambda row: KIND_KEYS.index(row[0])))


def _beside(key: str, value: object, table: TomlTable, p: Problems, where: str) -> bool:
    """The keys of ``table`` that the kind a phase's ``key = value`` says has no use for
    (``workloads/work.BESIDE``), named before anything runs rather than ignored: the first
    of its declarations that finds some is said. Whether one was."""
    for beside in kinds.BESIDE:
        if (beside.key, beside.value) == (key, value) and (said := beside.refusing(table)):
            p.add(where, said)
            return True
    return False


def _clients_said(variants: Any, axes: TomlTable, named: bool, p: Problems) -> None:
    """``clients`` (or a [matrix] axis of them) that a phase's kind says means nothing
    (``workloads/work.CLIENTS_SAID``: a TPC-H-like power run's one session), unless a
    ``[matrix] mode`` makes some points of another mode; the first said."""
    if "mode" in axes:
        return
    for v in variants:
        for ph in v.phases:
            for told in kinds.CLIENTS_SAID:
                clients = axes.get("clients", (ph.clients,))
                said = next((s for c in clients if (s := told(ph.work, c)) is not None), None)
                if said is not None:
                    p.add(f"[variants.{v.name}]" if named else "[workload]", said)
                    return


def _plain_own(f: Flat, kit: str | None, vals: TomlTable) -> TomlTable:
    """The keys a kit owns whose checked values are the phase's fields (``Refusal.plain``: a
    TPC-H-like phase's queries and query_timeout), when the phase runs that kit; beside another
    kind, refused with its keys (``_elsewhere``)."""
    plain = [k for r in kinds.REFUSED_ELSEWHERE if r.plain for k in r.keys]
    return {k: vals[k] for k in plain if k in vals and _takes({**f, "kit": kit}, k)}


def _generator(f: Flat, table: TomlTable, vals: TomlTable, p: Problems, where: str) -> TomlTable:
    """``generator`` and its ``test``: the other load generator (``GENERATOR``) runs its test
    (``DEFAULT_TEST`` unless said) instead of pgbench's scripts; what it has no use for is
    refused beside it (``_beside``), and a later table that gives what it runs instead of
    (``GENERATOR_INSTEAD_OF``: a script, a kit...) ends it."""
    if "generator" in table and "generator" not in vals:
        return {}  # said
    generator = vals.get("generator", f["generator"])
    if (
        "generator" not in table
        and f["generator"] == GENERATOR
        and any(k in table for k in GENERATOR_INSTEAD_OF)
    ):
        return {"generator": "pgbench", "test": None}
    if generator == GENERATOR and _beside("generator", generator, table, p, where):
        return {}
    if "test" in table and ("test" not in vals or generator != GENERATOR):
        return {}  # said, or refused with another kind's keys (_elsewhere)
    if generator != GENERATOR:
        return {"generator": generator, "test": None} if "generator" in table else {}
    return {
        "generator": GENERATOR,
        "test": vals.get("test", f["test"]) or DEFAULT_TEST,
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
    """``takes``, of a phase's flat fields: a key a kind owns (``workloads/work``'s
    ``REFUSED_ELSEWHERE``) where the field its owner is said by has one of the owner's values
    (any: a kit's mode), think_time with pacing, an operation's option with that operation."""
    if key == "think_time":
        return f["pacing"] is not None
    if key in OPERATION_KEYS:
        return f["operation"] is not None and key in OPERATION_OPTIONS[f["operation"]]
    owner = next((r for r in kinds.REFUSED_ELSEWHERE if key in r.keys), None)
    if owner is None:
        return True
    value = f[owner.said_by]
    return value in owner.owners if owner.owners else value is not None


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
        for owned in kinds.DATASET_REFUSALS:
            shaped = [
                k
                for k in owned.keys
                if k in axes or getattr(v.dataset, k) != getattr(DatasetSpec(), k)
            ]
            if shaped and not any(owned.claims(ph.work) for ph in v.phases):
                p.add(where, owned.said.format(keys=" and ".join(shaped)))
    for beside in kinds.BESIDE:  # what a kind has no use for, as axes of its campaign
        ran = any(flat(ph)[beside.key] == beside.value for v in variants for ph in v.phases)
        if beside.axes and ran and (said := beside.refusing(axes)):
            p.add("[matrix]", said)
    _clients_said(variants, axes, named, p)
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
    return tuple(tuple(f[k] for k in KIND_KEYS) for f in map(flat, phases))
