"""The ``[workload]`` keys of a campaign file (in ``[workload]``, ``[[phases]]``, a variant's
``workload`` and a ``[matrix]`` axis): each checked and applied to a ``PhaseSpec``, every problem
added to the file's ``Problems``."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from pglab.campaign import hosts as host_parts
from pglab.campaign.checks import Problems, get, number_in
from pglab.campaign.generators import GENERATORS, SYSBENCH_TESTS
from pglab.campaign.kit_checks import kit_problems, kit_scale
from pglab.campaign.kits import DISTRIBUTIONS, KITS, MODES
from pglab.campaign.kits.tpch_queries import unknown as unknown_queries
from pglab.campaign.shapes import RANDOM_SEEDS
from pglab.campaign.spec import (
    ACCOUNT_COLUMNS,
    BUILTIN_SCRIPTS,
    INDEX_METHODS,
    LATENCY_LOGS,
    LOCAL,
    MAX_JOBS,
    MAX_PARALLEL,
    OPERATION_KEYS,
    OPERATION_OPTIONS,
    OPERATIONS,
    PROTOCOLS,
    DatasetSpec,
    PhaseSpec,
    Script,
)


def apply_workload(
    ph: PhaseSpec, table: dict[str, Any], p: Problems, where: str, base_dir: Path
) -> PhaseSpec:
    """``ph`` with the workload keys of ``table`` applied; problems are added to ``p``."""
    upd: dict[str, Any] = {}
    if "script" in table and "scripts" in table:
        p.add(where, "give script or scripts, not both")
    upd.update(_operation(ph, table, p, where))
    upd.update(_kit(ph, table, p, where))
    upd.update(_generator(ph, table, p, where))
    upd.update(_tpch(ph, {**upd, **table}, p, where))
    _not_tpch(upd.get("kit", ph.kit), table, p, where)
    upd.update(_script_keys(table, p, where, base_dir))
    upd.update(_load_keys(table, p, where))
    upd.update(_pgbench_options(table, p, where))
    upd.update(_seed_and_sampling(table, p, where))
    if "generators" in table:
        found = host_parts.generators(table["generators"], p, where)
        if found is not None:
            upd["generators"] = () if found == (LOCAL,) else found
    new = replace(ph, **upd)
    _check_together(new, table, p, where)
    return new


def _script_keys(table: dict[str, Any], p: Problems, where: str, base_dir: Path) -> dict[str, Any]:
    """``script`` or ``scripts``: the phase's pgbench scripts, read and checked."""
    upd: dict[str, Any] = {}
    if "script" in table:
        upd["scripts"] = tuple(_scripts([table["script"]], p, where, base_dir))
    if "scripts" in table:
        val = table["scripts"]
        if not isinstance(val, list) or not val:
            p.add(where, "scripts must be a non-empty array")
        else:
            upd["scripts"] = tuple(_scripts(val, p, where, base_dir))
    return upd


def _load_keys(table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """How much load: clients, threads, duration or transactions, rate."""
    upd: dict[str, Any] = {}
    for key, lo in (("clients", 1), ("threads", 1)):
        if key in table:
            val = table[key]
            if key == "threads" and val == "auto":
                upd[key] = None
            elif not isinstance(val, int) or isinstance(val, bool) or val < lo:
                p.add(where, f"{key} = {val!r}: expected a whole number ≥ {lo}")
            else:
                upd[key] = val
    if "duration" in table and "transactions" in table:
        p.add(where, "give duration (seconds) or transactions (per client), not both")
    if "duration" in table:
        val = table["duration"]
        if not isinstance(val, int) or isinstance(val, bool) or val < 1:
            p.add(where, f"duration = {val!r}: expected whole seconds ≥ 1")
        else:
            upd.update(duration=val, transactions=None)
    if "transactions" in table:
        val = table["transactions"]
        if not isinstance(val, int) or isinstance(val, bool) or val < 1:
            p.add(where, f"transactions = {val!r}: expected a whole number ≥ 1 (per client)")
        else:
            upd.update(transactions=val, duration=None)
    if "rate" in table:
        val = table["rate"]
        if not number_in(val, 0, low_open=True):
            p.add(where, f"rate = {val!r}: expected transactions per second > 0")
        else:
            upd["rate"] = float(val)
    return upd


def _pgbench_options(table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """pgbench's options: protocol, connections, logs, vacuum, progress, retries, limits."""
    upd: dict[str, Any] = {}
    if "protocol" in table:
        if table["protocol"] not in PROTOCOLS:
            p.add(where, f'protocol = "{table["protocol"]}": use one of {", ".join(PROTOCOLS)}')
        else:
            upd["protocol"] = table["protocol"]
    if "connect" in table:
        upd["connect"] = get(table, "connect", bool, False, p, where)
    if "latency_log" in table:
        if table["latency_log"] not in LATENCY_LOGS:
            p.add(
                where,
                f'latency_log = "{table["latency_log"]}": use one of {", ".join(LATENCY_LOGS)}',
            )
        else:
            upd["latency_log"] = table["latency_log"]
    if "vacuum" in table:
        upd["vacuum"] = get(table, "vacuum", bool, True, p, where)
    if "progress" in table:
        upd["progress"] = get(table, "progress", bool, True, p, where)
    if "max_tries" in table:
        val = table["max_tries"]
        if not isinstance(val, int) or isinstance(val, bool) or val < 1:
            p.add(where, f"max_tries = {val!r}: expected a whole number ≥ 1 (1: no retries)")
        else:
            upd["max_tries"] = val
    if "latency_limit" in table:
        val = table["latency_limit"]
        if not number_in(val, 0, low_open=True):
            p.add(where, f"latency_limit = {val!r}: expected milliseconds > 0")
        else:
            upd["latency_limit"] = float(val)
    for flag in ("failures_detailed", "report_per_command"):
        if flag in table:
            upd[flag] = get(table, flag, bool, False, p, where)
    return upd


def _check_together(new: PhaseSpec, table: dict[str, Any], p: Problems, where: str) -> None:
    """The rules between keys, on the phase they made: an operation's options, threads and
    clients, log sampling and the latency log."""
    given = [k for k in OPERATION_KEYS if k in table]
    if new.operation is None and given:
        p.add(
            where,
            f"{', '.join(given)}: an option of a maintenance operation (operation = ...), "
            "but this phase runs a pgbench script",
        )
    elif new.operation is not None:
        takes = OPERATION_OPTIONS[new.operation]
        for k in (k for k in given if k not in takes):
            p.add(
                where,
                f'{k} is not an option of operation = "{new.operation}" '
                f"(its options: {', '.join(takes) or 'none'})",
            )
    if new.threads is not None and new.threads > new.clients:
        p.add(where, f"threads = {new.threads} is more than clients = {new.clients}")
    if new.sampling_rate is not None and new.latency_log != "full":
        said = (
            "is allowed only when logging transactions (-l)"
            if new.latency_log == "off"
            else "and aggregation (--aggregate-interval) cannot be used at the same time"
        )
        p.add(where, f"sampling_rate with latency_log = {new.latency_log!r}: pgbench says "
              f"log sampling (--sampling-rate) {said}")  # fmt: skip


def progress_problem(progress: bool, latency_log: str) -> str | None:
    """Why ``progress`` cannot go with ``latency_log`` (None: it can). The campaign checks every
    combination its phases and [matrix] axes make (``parse._progress_logs``)."""
    if progress or latency_log == "aggregate":
        return None
    return (f"progress = false with latency_log = {latency_log!r}: without -P 1 each second's "
            'TPS comes from pgbench\'s aggregate log; set latency_log = "aggregate" (or leave '
            "progress out)")  # fmt: skip


def _seed_and_sampling(table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """random_seed and sampling_rate, refused as pgbench refuses them."""
    upd: dict[str, Any] = {}
    if "random_seed" in table:
        val = table["random_seed"]
        whole = isinstance(val, int) and not isinstance(val, bool)
        if (whole and 0 <= val < 2**64) or val in RANDOM_SEEDS:
            upd["random_seed"] = val
        else:
            p.add(where, f"random_seed = {val!r}: pgbench says unrecognized random seed option "
                  f'"{val}": expecting an unsigned integer, "time" or "rand"')  # fmt: skip
    if "sampling_rate" in table:
        val = table["sampling_rate"]
        if not number_in(val, 0, 1, low_open=True):
            p.add(where, f'sampling_rate = {val!r}: pgbench says invalid sampling rate: "{val}" '
                  "(the share of transactions logged: above 0, at most 1)")  # fmt: skip
        else:
            upd["sampling_rate"] = float(val)
    return upd


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
        weight = item.get("weight", 1)
        if not isinstance(weight, int) or isinstance(weight, bool) or weight < 0:
            p.add(where, f"script weight {weight!r}: expected a whole number ≥ 0")
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


def _kit(ph: PhaseSpec, table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """``kit`` and ``mode`` as updates of ``ph``: a kit's scripts at their weights (without
    pgbench's vacuum of its own tables); a script or an operation given alone ends the kit."""
    upd: dict[str, Any] = {}
    kit, mode = ph.kit, ph.mode
    if "kit" in table:
        kit = table["kit"]
        if "script" in table or "scripts" in table or "operation" in table:
            p.add(where, "give kit, script(s) or operation, not two: a phase runs a workload "
                  "kit, pgbench scripts or a maintenance operation")  # fmt: skip
            return {}
        if not isinstance(kit, str) or kit not in KITS:
            close = difflib.get_close_matches(str(kit), KITS, n=1)
            hint = f' — did you mean "{close[0]}"?' if close else ""
            p.add(where, f"unknown kit {kit!r}{hint} (kits: {', '.join(KITS)})")
            return {}
        if kit != ph.kit:
            mode = KITS[kit].modes[0]
    elif ("script" in table or "scripts" in table or "operation" in table) and kit:
        return {"kit": None, "mode": None}
    if "mode" in table:
        if kit is None:
            if ph.name != "check":  # a [matrix] value is checked on a phase of no kit
                p.add(where, f"mode = {table['mode']!r}: the mode of a workload kit, but this "
                      "phase runs no kit (kit = ...)")  # fmt: skip
            elif table["mode"] not in MODES:
                p.add(where, f"mode = {table['mode']!r}: use one of {', '.join(MODES)}")
            return {}
        if table["mode"] not in KITS[kit].modes:
            p.add(where, f"mode = {table['mode']!r}: kit {kit!r} runs in "
                  f"{' or '.join(KITS[kit].modes)} mode")  # fmt: skip
            return {}
        mode = table["mode"]
    if "distribution" in table:
        val = table["distribution"]
        if kit != "ycsb" and ph.name != "check":
            p.add(where, f"distribution = {val!r}: how kit = \"ycsb\" picks its keys, but this "
                  "phase runs no YCSB")  # fmt: skip
        elif val not in DISTRIBUTIONS:
            p.add(where, f"distribution = {val!r}: use one of {', '.join(DISTRIBUTIONS)}")
        else:
            upd["distribution"] = val
    if kit is None or (kit, mode) == (ph.kit, ph.mode):
        return upd
    return {**upd, "kit": kit, "mode": mode, "scripts": KITS[kit].scripts(str(mode)),
            "vacuum": False}  # fmt: skip


# workload keys only pgbench reads: refused beside generator = "sysbench" rather than ignored
PGBENCH_ONLY = (
    "protocol", "connect", "vacuum", "latency_log", "progress", "max_tries", "failures_detailed",
    "latency_limit", "report_per_command", "sampling_rate", "threads",
)  # fmt: skip


TPCH_KEYS = ("queries", "query_timeout")


# workload keys that mean nothing to a TPC-H-like phase (its length is the queries', its
# sessions its own): refused beside kit = "tpch" rather than ignored
NOT_TPCH = (
    "duration", "transactions", "rate", "generators", *PGBENCH_ONLY,
)  # fmt: skip


def _not_tpch(kit: str | None, table: dict[str, Any], p: Problems, where: str) -> None:
    """The keys of pgbench's runs that a TPC-H-like phase has no use for (``NOT_TPCH``),
    named before anything runs rather than ignored."""
    meaningless = [k for k in NOT_TPCH if k in table]
    if kit == "tpch" and meaningless:
        p.add(where, f"{', '.join(meaningless)} with kit = \"tpch\": pgbench's options, which "
              "a TPC-H-like phase has no use for (it runs each query once: its length is "
              "theirs); it takes mode, clients (mode = \"throughput\"'s streams), queries, "
              "query_timeout and random_seed — leave them out")  # fmt: skip


def _power_clients(variants: Any, axes: dict[str, Any], named: bool, p: Problems) -> None:
    """``clients`` of a TPC-H-like power run: one session runs its queries, so more than one
    client means nothing unless a ``[matrix] mode`` makes some points throughput runs."""
    if "mode" in axes:
        return
    for v in variants:
        for ph in v.phases:
            if ph.kit != "tpch" or ph.mode != "power":
                continue
            many = [c for c in axes.get("clients", (ph.clients,)) if c != 1]
            if many:
                where = f"[variants.{v.name}]" if named else "[workload]"
                p.add(where, f"clients = {many[0]} with kit = \"tpch\"'s power run: one session "
                      "runs its queries; mode = \"throughput\" runs clients query streams "
                      "(or leave clients out)")  # fmt: skip
                return


def _tpch(ph: PhaseSpec, table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """kit = "tpch"'s ``queries`` (which of the 22, in order) and ``query_timeout`` (seconds)."""
    given = [k for k in TPCH_KEYS if k in table]
    if not given:
        return {}
    # a [matrix] value is checked on a phase ("check") of no kit
    if table.get("kit", ph.kit) != "tpch" and ph.name != "check":
        p.add(where, f"{', '.join(given)}: options of kit = \"tpch\", but this phase runs "
              "no TPC-H")  # fmt: skip
        return {}
    upd: dict[str, Any] = {}
    if "queries" in table:
        val = table["queries"]
        bad = unknown_queries(val) if isinstance(val, list) and val else None
        if bad is None or bad or len(set(val)) < len(val):
            said = f"no such query: {', '.join(map(repr, bad))}; " if bad else ""
            p.add(where, f"queries = {val!r}: {said}expected distinct TPC-H query numbers, "
                  "1 to 22 (leave it out for all 22)")  # fmt: skip
        else:
            upd["queries"] = tuple(val)
    if "query_timeout" in table:
        val = table["query_timeout"]
        if not number_in(val, 0, low_open=True):
            p.add(where, f"query_timeout = {val!r}: expected seconds > 0 (each query's "
                  "statement_timeout)")  # fmt: skip
        else:
            upd["query_timeout"] = float(val)
    return upd


def _generator(ph: PhaseSpec, table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """``generator`` and sysbench's ``test``: sysbench runs its test (oltp_read_write unless
    said) instead of pgbench's scripts."""
    generator = ph.generator
    if "generator" in table:
        if table["generator"] not in GENERATORS:
            p.add(where, f"generator = {table['generator']!r}: use one of {', '.join(GENERATORS)}")
            return {}
        generator = table["generator"]
    if (
        "generator" not in table
        and ph.generator == "sysbench"
        and any(k in table for k in ("script", "scripts", "kit", "operation"))
    ):
        return {"generator": "pgbench", "test": None}
    if generator == "sysbench":
        clash = [k for k in ("script", "scripts", "kit", "operation") if k in table]
        if clash:
            p.add(where, f"{', '.join(clash)} with generator = \"sysbench\": sysbench runs "
                  "its own OLTP tests (test = ...), not pgbench scripts, kits or "
                  "operations")  # fmt: skip
            return {}
        theirs = [k for k in PGBENCH_ONLY if k in table]
        if theirs:
            p.add(where, f"{', '.join(theirs)} with generator = \"sysbench\": pgbench's "
                  "options; sysbench takes clients, duration, transactions, rate and "
                  "random_seed")  # fmt: skip
            return {}
    test = table.get("test", ph.test)
    if "test" in table:
        if generator != "sysbench" and ph.name != "check":
            p.add(where, f"test = {test!r}: a sysbench test, but this phase runs pgbench "
                  '(generator = "sysbench" runs sysbench)')  # fmt: skip
            return {}
        if test not in SYSBENCH_TESTS:
            close = difflib.get_close_matches(str(test), SYSBENCH_TESTS, n=1)
            hint = f' — did you mean "{close[0]}"?' if close else ""
            p.add(where, f"unknown sysbench test {test!r}{hint} (tests: "
                  f"{', '.join(SYSBENCH_TESTS)})")  # fmt: skip
            return {}
    if generator != "sysbench":
        return {"generator": generator, "test": None} if "generator" in table else {}
    return {"generator": "sysbench", "test": test or "oltp_read_write", "vacuum": False}


def _operation(ph: PhaseSpec, table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """The operation keys of ``table`` as updates of ``ph``: a new operation starts from the
    default options; a script given alone makes the phase a pgbench one again."""
    return {**_which_operation(ph, table, p, where), **_operation_options(table, p, where)}


def _which_operation(
    ph: PhaseSpec, table: dict[str, Any], p: Problems, where: str
) -> dict[str, Any]:
    """``operation``, or a script instead of the operation ``ph`` had, as updates of ``ph``."""
    upd: dict[str, Any] = {}
    scripted = "script" in table or "scripts" in table
    if "operation" in table:
        op = table["operation"]
        if scripted:
            p.add(where, "give script(s) or operation, not both: a phase runs a pgbench script "
                  "or a maintenance operation")  # fmt: skip
        elif op not in OPERATIONS:
            close = difflib.get_close_matches(str(op), OPERATIONS, n=1)
            hint = f' — did you mean "{close[0]}"?' if close else ""
            p.add(where, f"unknown operation {op!r}{hint} (operations: {', '.join(OPERATIONS)})")
        elif op != ph.operation:
            upd.update(_DEFAULT_OPTIONS, operation=op)
    elif scripted and ph.operation is not None:
        upd.update(_DEFAULT_OPTIONS, operation=None)
    return upd


def _operation_options(table: dict[str, Any], p: Problems, where: str) -> dict[str, Any]:
    """An operation's options (dirty, parallel, freeze, columns, method, jobs, compress,
    target), each checked."""
    upd: dict[str, Any] = {}
    if "dirty" in table:
        val = table["dirty"]
        if not number_in(val, 0, 1):
            p.add(where, f"dirty = {val!r}: expected the fraction of pgbench_accounts to "
                  "update before the vacuum, 0 to 1")  # fmt: skip
        else:
            upd["dirty"] = float(val)
    if "parallel" in table:
        _whole(table, "parallel", (0, MAX_PARALLEL), "parallel workers", upd, p, where)
    if "freeze" in table:
        upd["freeze"] = get(table, "freeze", bool, False, p, where)
    if "columns" in table:
        val = table["columns"]
        cols = [val] if isinstance(val, str) else val
        if (
            not isinstance(cols, list) or not cols
            or any(c not in ACCOUNT_COLUMNS for c in cols) or len(set(cols)) < len(cols)
        ):  # fmt: skip
            p.add(where, f"columns = {val!r}: expected distinct columns of pgbench_accounts "
                  f"({', '.join(ACCOUNT_COLUMNS)})")  # fmt: skip
        else:
            upd["columns"] = tuple(cols)
    if "method" in table:
        if table["method"] not in INDEX_METHODS:
            p.add(where, f"method = {table['method']!r}: use one of {', '.join(INDEX_METHODS)}")
        else:
            upd["method"] = table["method"]
    if "jobs" in table:
        _whole(table, "jobs", (1, MAX_JOBS), "pg_dump/pg_restore -j", upd, p, where)
    if "compress" in table:
        upd["compress"] = get(table, "compress", bool, True, p, where)
    if "target" in table:
        val = table["target"]
        if not isinstance(val, str) or not Path(val).is_absolute():
            p.add(where, f"target = {val!r}: expected the absolute path of a directory "
                  "pg_basebackup makes its copy in")  # fmt: skip
        else:
            upd["target"] = val
    return upd


def _whole(
    table: dict[str, Any], key: str, bounds: tuple[int, int], what: str,
    upd: dict[str, Any], p: Problems, where: str,
) -> None:  # fmt: skip
    """``table[key]`` into ``upd`` if it is an integer within ``bounds``, else a problem."""
    val, (low, high) = table[key], bounds
    if not isinstance(val, int) or isinstance(val, bool) or not low <= val <= high:
        p.add(where, f"{key} = {val!r}: expected {what}, {low} to {high}")
    else:
        upd[key] = val


_DEFAULT_OPTIONS = {k: getattr(PhaseSpec("", ()), k) for k in OPERATION_KEYS}


def takes(ph: PhaseSpec, key: str) -> bool:
    """Whether ``ph`` takes the workload key ``key``: an operation's option only a phase
    running that operation (a [matrix] axis or a variant's workload leaves the others alone)."""
    if key == "mode":
        return ph.kit is not None
    if key == "distribution":
        return ph.kit == "ycsb"
    if key in TPCH_KEYS:
        return ph.kit == "tpch"
    if key == "test":
        return ph.generator == "sysbench"
    if key not in OPERATION_KEYS:
        return True
    return ph.operation is not None and key in OPERATION_OPTIONS[ph.operation]


def for_phase(ph: PhaseSpec, table: dict[str, Any]) -> dict[str, Any]:
    """``table`` (applied to every phase) without the options the phase, with the table's
    operation or script, does not take."""
    if "operation" in table and table["operation"] in OPERATIONS:
        op: str | None = table["operation"]
    elif "script" in table or "scripts" in table:
        op = None
    else:
        op = ph.operation
    kit = table.get("kit", ph.kit) if op is None and "script" not in table else None
    return {k: v for k, v in table.items() if takes(replace(ph, operation=op, kit=kit), k)}


def kits_checked(variants: Any, axes: dict[str, Any], named: bool, p: Problems) -> None:
    """What the kits of a campaign's variants need of it: one kind of dataset per run, a scale
    the kit takes (in [matrix] too), and a kit for a [matrix] mode."""
    for v in variants:
        where = f"[variants.{v.name}]" if named else "[[phases]]"
        kit_problems(v.phases, where, p)
        scales = axes.get("scale", (v.dataset.scale,))
        kit_scale([ph.kit for ph in v.phases if ph.kit], scales, where, p)
        shaped = [k for k in ("fields", "field_length") if k in axes
                  or getattr(v.dataset, k) != getattr(DatasetSpec(), k)]  # fmt: skip
        if shaped and not any(ph.kit == "ycsb" for ph in v.phases):
            p.add(where, f"[dataset] {' and '.join(shaped)}: the shape of kit = \"ycsb\"'s "
                  "records, but no phase runs YCSB")  # fmt: skip
    if any(ph.kit == "tpch" for v in variants for ph in v.phases):
        _not_tpch("tpch", axes, p, "[matrix]")
        _power_clients(variants, axes, named, p)
    if "mode" in axes and not any(ph.kit for v in variants for ph in v.phases):
        p.add("[matrix]", "mode: no phase runs a workload kit (kit = ...) that has modes")
