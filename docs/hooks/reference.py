"""The reference pages' tables and help texts, made from pglab's code at build time (a MkDocs
hook: mkdocs.yml ``hooks:``), so that they cannot drift from it.

A page asks for a generated part with a marker on a line of its own, ``<!-- pglab:NAME -->``;
``GENERATORS`` says what each NAME becomes. An unknown NAME, a generator that fails, or a path
of the repository (``src/pglab/…``, ``bench/…``, ``tests/…``, ``examples/…``) named in a page
that does not exist fails the build (``mkdocs build --strict`` in the tests).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from mkdocs.exceptions import PluginError

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- pglab:([\w-]+) -->$", re.M)
# a repository path in backticks: checked to exist (a NAME, KEY or * in it is a placeholder)
PATH = re.compile(r"`((?:src/pglab|bench|tests|examples)/[\w./-]+)`")
HELP_WIDTH = "100"  # argparse wraps help text at $COLUMNS

# What each warning means (the kinds themselves are pglab.analysis.notice_kinds.KINDS: the build
# fails when a kind has no meaning here, or a meaning no kind).
WARNINGS = {
    "failed": "a run failed; its reason: the most specific line of its error — a `PANIC`, "
    "pgbench killed or timed out, a `FATAL`, an `ERROR`, pgbench's own `pgbench: error:` — rather "
    "than a notice such as `starting vacuum...end.` (`pglab show RUN_ID` has the whole text). The "
    "progress line of `pglab run`, `pglab ls` (a `reason` column) and the report's failed runs "
    "give the same reason",
    "failures": "more than 5% of a measured phase's transactions failed (pgbench 15+: "
    "serialization or deadlock errors left after `max_tries`): its TPS counts only those that "
    "succeeded. `pglab show RUN_ID` prints each phase's failures by kind (`failures_detailed`), "
    "retried transactions and retries, and transactions over `latency_limit`",
    "inconsistent": "after a phase of a workload kit, the kit's consistency conditions do not "
    'hold on its data (`kit = "tpcc"`: TPC-C clause 3.3.2.1-12 — year-to-date totals of '
    "warehouses and districts against each other and the history, order ids against the "
    "district's next id and the new orders, order lines against the orders, carriers and "
    "delivery dates, customers' balances against their deliveries and payments — and pglab's "
    "three on the stock: each stock row's year-to-date quantity, order count and remote count "
    "against the order lines written since the load): the kit corrupted its own data, so its "
    "figures are suspect. pglab checks them after every phase, once the phase's telemetry has "
    "stopped, and stores each condition's count of what breaks it (`pglab show RUN_ID`)",
    "skipped": 'a `kit = "tpcc"` phase\'s Delivery transactions skipped more than 1% of the '
    "districts they visited: a district is skipped only when it has no undelivered order that "
    "another Delivery is not delivering (clause 2.7.4.2, which asks that skips over 1% be "
    "reported); so many skips mean the run ran out of new orders, and its Deliveries did less "
    "work than the specification's",
    "response-time": 'terminals that think (`kit = "tpcc"` with `pacing = "spec"`): the 90th '
    "percentile response time of a transaction type, measured by the server's clock around the "
    "transaction (keying and think times left out), passed TPC-C clause 5.2.5.3's limit (5 s "
    "for every type; Delivery, which the kit runs at once, is held to the terminal's 5 s rather "
    "than its deferred part's 80 s): the server did not keep up with its terminals, so that "
    "NOPM would not be reported",
    "assertions": "the server was built with assertions (`--enable-cassert`: "
    "`debug_assertions = on`); its checks cost much CPU, so its figures say little of a "
    "production build. Flagged in every run it appears in",
    "differs": "a compared point and its baseline differ in something the campaign did not "
    "vary, named in the warning: the kernel, the pgbench version, data checksums, block or WAL "
    "segment size, assertions, the CPU governor, transparent huge pages, or the filesystem "
    "under PGDATA or pg_wal (intended only where the points' storage differs). Their "
    "difference includes it (`src/pglab/analysis/comparable.py`)",
    "hosts": "a point's runs ran on several machines (a fleet: each run's `fleet_worker` in its "
    "fingerprint), so its median and CI pool machines that may differ; or the points compared "
    "at one matrix coordinate ran on different machines, so their difference includes the "
    "machines'",
    "clock": "a load generator host's clock is known only to within half the shortest round "
    "trip pglab measured, and that is more than {offset_s:g} s: its per-second figures may sit "
    "a second off the server's",
    "unstable": "a point's repeats vary by more than 10% (CV of TPS): smaller differences are "
    "noise",
    "drifting": "TPS trends within a phase (≥ 5%, significant, after the warm-up), across a "
    "point's repeats, or over the whole campaign (each run relative to its point's median, in "
    "run order)",
    "client-bound": "pgbench used > 90% of a core (on a generator host: 90% of the CPUs its "
    "threads could use there, or its cgroup's CPU quota held it back in most periods): the load "
    "generator, not the server, was measured",
    "busy-machine": "processes other than the server, the load generator and pglab used more than "
    "20% of a core while a measured phase ran (`os.procs` `others_cpu_pct`): another job shared "
    "the machine, and took CPU from the run",
    "short": "a writing phase lasted less than two `checkpoint_timeout` cycles: its TPS depends "
    "on where checkpoints fell. Whether it writes is judged from what it runs: tpcb-like and "
    "simple-update, the tpcc kit, YCSB but workload C, sysbench's writing tests, a custom "
    "script with a statement other than a read (a SELECT without FOR UPDATE/SHARE, transaction "
    "control, SET...), or one whose WAL says it wrote",
    "in-memory": "the data set fits in shared_buffers: reads never reach storage (a storage "
    "study measures nothing)",
    "unresolved": "comparisons with the baseline whose runs could not have found the effect of "
    "interest (verdict `?`): the first one's reason, and the runs per point that would resolve "
    "them all",
}

# The unit of each figure column of the export (pglab.analysis.tidy.COLUMNS from `tps` on):
# by name, else by the name's ending (none for _mb_s: those are not all the same unit). A new
# figure without one fails the build.
UNIT_BY_SUFFIX = (
    ("_ms", "milliseconds"),
    ("_pct", "%"),
    ("_s", "seconds"),
)
UNIT_BY_NAME = {
    "tps": "transactions per second; for maintenance operations MB/s, 10⁶ bytes per second",
    "tps_steady": "transactions per second",
    "nopm": "transactions per minute (committed New-Orders: the orders written)",
    "nopm_pgbench": "transactions per minute (committed New-Orders as pgbench counted them)",
    "tpm": "transactions per minute",
    "tpse": "transactions per second (trades completed by Trade-Results: tpsE-like)",
    "tpse_pgbench": "transactions per second (Trade-Results as pgbench counted them)",
    "inconsistent": "count (conditions)",
    "qps": "queries per second",
    "power": "queries per hour × scale factor (QphH-like, TPC-H's Power@Size without refreshes)",
    "timeouts": "count (queries)",
    "throughput": "queries per hour × scale factor (QthH-like, without the refresh stream)",
    "transactions": "count",
    "failed": "count",
    "fpi_share": "ratio (full-page images per WAL record)",
    "read_hit_ratio": "ratio, 0–1",
    "top_wait": "text: wait_event_type:wait_event",
    "buffers_checkpointer": "8 kB buffers",
    "buffers_bgwriter": "8 kB buffers",
    "buffers_backends": "8 kB buffers",
    "checkpoints": "count",
    "error": "text",
    "top_wait_pct": "% of the sampled waits",
    "cpu_user_pct": "% of the machine's CPU",
    "cpu_system_pct": "% of the machine's CPU",
    "cpu_iowait_pct": "% of the machine's CPU",
    "pgbench_cpu_pct": "% of one core",
    # pglab.telemetry: bytes / 2**20 per second, although pglab prints them as "MB/s"
    "wal_mb_s": "MiB/s (2²⁰ bytes per second)",
    "disk_read_mb_s": "MiB/s (2²⁰ bytes per second)",
    "disk_write_mb_s": "MiB/s (2²⁰ bytes per second)",
}


def on_page_markdown(markdown: str, page, config, files) -> str:
    for path in PATH.findall(markdown):
        if not re.search(r"[A-Z*]|\.\.\.|…", path) and not (REPO / path.rstrip(".")).exists():
            raise PluginError(f"{page.file.src_uri} names {path}, which does not exist")
    return MARKER.sub(lambda m: _generate(m.group(1), page.file.src_uri), markdown)


def _generate(name: str, where: str) -> str:
    make = GENERATORS.get(name)
    if make is None:
        raise PluginError(f"{where}: no generator {name!r} (known: {', '.join(GENERATORS)})")
    try:
        return make().rstrip("\n") + "\n"
    except Exception as exc:  # a generator's failure is the build's
        raise PluginError(f"{where}: generating {name!r} failed: {exc!r}") from exc


# -- the generators ----------------------------------------------------------------------------


def campaign_keys() -> str:
    from pglab.campaign import schema

    return schema.docs_table()


def campaign_layout() -> str:
    from pglab.campaign import schema

    return f"```toml\n{schema.help_layout()}\n```"


def tune_keys() -> str:
    from pglab.campaign import schema

    return schema.docs_table(schema.TUNE_TABLES)


def tune_layout() -> str:
    from pglab.campaign import schema

    return f"```toml\n{schema.help_layout(schema.TUNE_TABLES, schema.TUNE_INTRO)}\n```"


def export_columns() -> str:
    from pglab.analysis import tidy

    return tidy.docs_table()


def json_schema() -> str:
    from pglab.campaign import json_schema as js

    return f"```json\n{json.dumps(js.build(), indent=2, ensure_ascii=False)}\n```"


def warnings() -> str:
    from pglab.analysis.notice_kinds import KINDS

    if set(KINDS) != set(WARNINGS):
        raise ValueError(
            f"warnings without a meaning here: {sorted(set(KINDS) - set(WARNINGS))}; "
            f"meanings of no warning: {sorted(set(WARNINGS) - set(KINDS))}"
        )
    rows = ["| warning | means |", "|---|---|"]
    from pglab.pgbench.generators import OFFSET_UNCERTAINTY_WARN_S

    rows += [
        f"| `{kind}` | {WARNINGS[kind].format(offset_s=OFFSET_UNCERTAINTY_WARN_S)} |"
        for kind in KINDS
    ]
    return "\n".join(rows)


def figures() -> str:
    from pglab.analysis import tidy

    names = tidy.NAMES[tidy.NAMES.index("tps") :]
    rows = ["| figure | unit | meaning |", "|---|---|---|"]
    for column in (*tidy.COLUMNS, *tidy.KIT_COLUMNS):
        if column.name in names or column in tidy.KIT_COLUMNS:
            rows.append(f"| `{column.name}` | {unit_of(column.name)} | {column.doc} |")
    return "\n".join(rows)


# The per-second series a run keeps of the operating system, the waits and the checkpoints
# (pglab.telemetry): their columns, as `pglab export --series` names them (its metric is
# the column), with the unit their name ends in.
SERIES_UNITS = (
    ("_mb_s", "MiB/s (2²⁰ bytes per second)"),
    ("_mb", "MiB"),
    ("_iops", "I/O requests per second"),
    ("_pct", "%"),
    ("_ms", "milliseconds"),
    ("_kb", "kB"),
    ("_s", "seconds"),
)


def series() -> str:
    from pglab.pgbench import generators
    from pglab.telemetry import checkpoints, os_stats, waits
    from pglab.workloads.tpch import plans, power, throughput

    tables = {
        "os.cpu": os_stats.CPU_COLUMNS,
        "os.disk": os_stats.DISK_COLUMNS,
        "os.mem": os_stats.MEM_COLUMNS,
        "os.procs": os_stats.PROCS_COLUMNS,
        "waits": waits.COLUMNS,
        "checkpoints": checkpoints.COLUMNS,
        generators.CPU_TABLE: generators.CPU_COLUMNS,
        # kit = "tpch": a row per query (not per second), and its plan
        power.TABLE: ["query", "seconds", "rows", "timed_out", "seed"],
        throughput.TABLE: ["stream", "query", "seconds", "rows", "timed_out", "seed"],
        plans.TABLE: ["query", "plan"],
    }
    named = {"seconds": "seconds", "plan": "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)'s plan"}
    rows = ["| series | column | unit |", "|---|---|---|"]
    for table, columns in tables.items():
        for i, column in enumerate(columns):
            unit = (
                "epoch seconds"
                if column in ("t", "t_end")
                else named[column]
                if column in named
                else next((u for suffix, u in SERIES_UNITS if column.endswith(suffix)), "–")
            )
            rows.append(f"| {f'`{table}`' if i == 0 else ''} | `{column}` | {unit} |")
    return "\n".join(rows)


def unit_of(name: str) -> str:
    if name in UNIT_BY_NAME:
        return UNIT_BY_NAME[name]
    for suffix, unit in UNIT_BY_SUFFIX:
        if name.endswith(suffix):
            return unit
    raise ValueError(f"the figure {name} has no unit: add it to UNIT_BY_NAME")


def commands() -> str:
    """``pglab --help`` and every command's, as argparse prints them at 100 columns."""
    out = []
    for title, text in command_helps():
        out += [f"## `{title}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(out)


def command_helps() -> list[tuple[str, str]]:
    """(``pglab`` or ``pglab COMMAND``, its ``--help``) for the command and each of its
    subcommands, in ``pglab --help``'s order."""
    from pglab.cli import build_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        parser = build_parser()
        out = [("pglab", parser.format_help())]
        for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
            if isinstance(action, argparse._SubParsersAction):
                out += [
                    (f"pglab {name}", sub.format_help()) for name, sub in action.choices.items()
                ]
        return out
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


GENERATORS: dict[str, Callable[[], str]] = {
    "campaign-keys": campaign_keys,
    "campaign-layout": campaign_layout,
    "tune-keys": tune_keys,
    "tune-layout": tune_layout,
    "export-columns": export_columns,
    "json-schema": json_schema,
    "warnings": warnings,
    "figures": figures,
    "series": series,
    "commands": commands,
}
