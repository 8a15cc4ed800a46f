"""pgbench's output, parsed exactly: the final report, ``-P`` progress lines, ``-l`` logs.

The formats are those of pgbench 15 to 18 (``tests/data/pgbench`` holds real recordings of
each). The top-level lines of the report are the phase's figures; the per-script sections that
several scripts (``-b a@3 -f b.sql@1``) add, their lines indented with `` - ``, become
``ScriptReport``s, and the per-statement latencies of ``-r`` (top-level with one script, in
each script's section with several) ``StatementReport``s.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from pglab.errors import PgbenchError
from pglab.pgbench import latency as latency_hist
from pglab.records import (
    LatencySecond,
    PgbenchReport,
    ProgressSample,
    ScriptReport,
    ScriptSecond,
    StatementReport,
)

_NUM = r"(-?nan|-?inf|\d+(?:\.\d+)?)"  # %f and %.3f print nan when they divide by zero

_VERSION = re.compile(r"^pgbench \((.+?)(?:, server .+)?\)$", re.M)
_TPS = re.compile(rf"^tps = {_NUM} \(", re.M)
_TRANSACTIONS = re.compile(r"^number of transactions actually processed: (\d+)(?:/\d+)?$", re.M)

_PROGRESS = re.compile(
    rf"^progress: {_NUM} s, {_NUM} tps, lat {_NUM} ms stddev {_NUM}"
    r"(?:, (\d+) failed)?"
    r"(?:, lag " + _NUM + r" ms)?"
    r"(?:, (\d+) skipped)?"
    r"(?:, (\d+) retried, (\d+) retries)?$"
)
_SCRIPT = re.compile(r"^SQL script (\d+): (.*)$", re.M)
# "statement latencies in milliseconds" then ":", " and failures:" or ", failures and retries:"
_STATEMENTS = re.compile(r"^(?: - )?statement latencies in milliseconds(.*):$")
_PERCENT = r"(-?nan|\d+(?:\.\d+)?)%"

# what the latency field of a per-transaction log line says instead of a number
_FAILED = frozenset({"failed", "serialization", "deadlock", "other"})
_SKIPPED = "skipped"


def parse_report(text: str) -> PgbenchReport:
    """The final report pgbench printed on stdout; PgbenchError if it printed no ``tps =``."""
    tps = _TPS.search(text)
    transactions = _TRANSACTIONS.search(text)
    if tps is None or transactions is None:
        missing = "'tps ='" if tps is None else "'number of transactions actually processed'"
        shown = text.strip() or "(nothing)"
        raise PgbenchError(f"pgbench printed no {missing} line; its output was:\n{shown}")
    version = _VERSION.search(text)
    return PgbenchReport(
        tps=float(tps.group(1)),
        transactions=int(transactions.group(1)),
        failed=_int(text, r"number of failed transactions: (\d+) \("),
        latency_avg_ms=_float(text, rf"latency average = {_NUM} ms"),
        latency_stddev_ms=_float(text, rf"latency stddev = {_NUM} ms$"),
        initial_connection_ms=_float(text, rf"initial connection time = {_NUM} ms$"),
        transaction_type=_str(text, r"transaction type: (.+)$"),
        scaling_factor=_int(text, r"scaling factor: (\d+)$"),
        query_mode=_str(text, r"query mode: (\S+)$"),
        clients=_int(text, r"number of clients: (\d+)$"),
        threads=_int(text, r"number of threads: (\d+)$"),
        duration_s=_float(text, r"duration: (\d+) s$"),
        max_tries=_int(text, r"maximum number of tries: (\d+)$"),
        retried=_int(text, r"number of transactions retried: (\d+) \("),
        skipped=_int(text, r"number of transactions skipped: (\d+) \("),
        rate_lag_avg_ms=_float(text, rf"rate limit schedule lag: avg {_NUM} \(max"),
        pgbench_version=version.group(1) if version else None,
        serialization_failures=_int(text, r"number of serialization failures: (\d+) \("),
        deadlock_failures=_int(text, r"number of deadlock failures: (\d+) \("),
        retries=_int(text, r"total number of retries: (\d+)$"),
        latency_limit_ms=_float(
            text,
            rf"number of transactions above the {_NUM} ms latency "
            r"limit: \d+/",
        ),
        over_latency_limit=_int(
            text,
            r"number of transactions above the \S+ ms latency limit: "
            r"(\d+)/",
        ),
        scripts=tuple(_scripts(text)),
        statements=_statement_rows(text.split("\nSQL script ", 1)[0].splitlines()),
    )


def _scripts(text: str) -> Iterator[ScriptReport]:
    """The ``SQL script N: NAME`` sections, each up to the next one or the end."""
    heads = list(_SCRIPT.finditer(text))
    for head, after in zip(heads, [*heads[1:], None][: len(heads)], strict=True):
        body = text[head.end() : after.start() if after else len(text)]
        lines = [line[3:] for line in body.splitlines() if line.startswith(" - ")]
        section = "\n".join(lines)
        weight = re.search(rf"^weight: (\d+)(?: \(targets {_PERCENT} of total\))?", section, re.M)
        # 15-17: "N transactions (P% of total, tps = T)"; 18: "N transactions (P% of total)"
        # then "number of transactions actually processed: M (tps = T)"
        counted = re.search(
            rf"^(\d+) transactions \({_PERCENT} of total(?:, tps = {_NUM})?\)", section, re.M
        )
        processed = re.search(
            rf"^number of transactions actually processed: (\d+) \(tps = {_NUM}\)", section, re.M
        )
        if weight is None or counted is None:
            raise PgbenchError(
                f"pgbench's section of script {head.group(1)} is not one pglab "
                f"knows:\n{head.group(0)}\n{body.rstrip()}"
            )
        count = int(counted.group(1))
        tps = processed.group(2) if processed else counted.group(3)
        yield ScriptReport(
            number=int(head.group(1)),
            name=head.group(2).strip(),
            weight=int(weight.group(1)),
            target_pct=_real(weight.group(2)),
            transactions=int(processed.group(1)) if processed else count,
            counted=count,
            share_pct=_real(counted.group(2)),
            tps=_real(tps),
            failed=_int(section, r"number of failed transactions: (\d+) \("),
            serialization_failures=_int(section, r"number of serialization failures: (\d+) \("),
            deadlock_failures=_int(section, r"number of deadlock failures: (\d+) \("),
            retried=_int(section, r"number of transactions retried: (\d+) \("),
            retries=_int(section, r"total number of retries: (\d+)$"),
            skipped=_int(section, r"number of transactions skipped: (\d+) \("),
            latency_avg_ms=_float(section, rf"latency average = {_NUM} ms"),
            latency_stddev_ms=_float(section, rf"latency stddev = {_NUM} ms$"),
            statements=_statement_rows(body.splitlines()),
        )


def _statement_rows(lines: list[str]) -> tuple[StatementReport, ...]:
    """The rows under a ``statement latencies in milliseconds...:`` heading among ``lines``:
    the latency, then a failures column (15+) and a retries column (``--max-tries`` not 1) as
    the heading names them, then the command; the rows end at the first line not one."""
    rows: list[StatementReport] = []
    columns: int | None = None
    for line in lines:
        heading = _STATEMENTS.match(line)
        if heading is not None:
            said = heading.group(1)
            columns = 2 if "retries" in said else 1 if "failures" in said else 0
            continue
        if columns is None:
            continue
        fields = line.split(None, 1 + columns)
        if len(fields) < 2 + columns or not line[:1].isspace():
            break
        try:
            latency, counts = float(fields[0]), [int(f) for f in fields[1 : 1 + columns]]
        except ValueError:
            break
        rows.append(
            StatementReport(
                number=len(rows) + 1,
                latency_ms=latency,
                command=fields[1 + columns].strip(),
                failures=counts[0] if columns >= 1 else None,
                retries=counts[1] if columns == 2 else None,
            )
        )
    return tuple(rows)


def _real(found: str | None) -> float | None:
    """A printed number; nan (pgbench's 0/0) is None."""
    if found is None or found.endswith("nan"):
        return None
    return float(found)


def _str(text: str, pattern: str) -> str | None:
    """Group 1 of ``pattern`` matched at the start of a line of ``text`` (so not in the
    indented per-script sections), or None."""
    match = re.search("^" + pattern, text, re.M)
    return None if match is None else match.group(1)


def _int(text: str, pattern: str) -> int | None:
    found = _str(text, pattern)
    return None if found is None else int(found)


def _float(text: str, pattern: str) -> float | None:
    found = _str(text, pattern)
    return None if found is None else float(found)


def parse_progress_line(line: str) -> ProgressSample | None:
    """One ``-P`` line of pgbench's stderr, or None if the line is something else."""
    match = _PROGRESS.match(line.strip())
    if match is None:
        return None
    t, tps, lat, stddev, failed, lag, skipped, retried, retries = match.groups()
    return ProgressSample(
        t=float(t),
        tps=float(tps),
        latency_avg_ms=float(lat),
        latency_stddev_ms=float(stddev),
        failed=None if failed is None else int(failed),
        lag_ms=None if lag is None else float(lag),
        skipped=None if skipped is None else int(skipped),
        retried=None if retried is None else int(retried),
        retries=None if retries is None else int(retries),
    )


def parse_progress(text: str) -> tuple[ProgressSample, ...]:
    """Every progress line of pgbench's stderr, in order."""
    samples = (parse_progress_line(line) for line in text.splitlines())
    return tuple(s for s in samples if s is not None)


def progress_from_aggregate(
    seconds: Iterable[LatencySecond], started_at: float
) -> tuple[ProgressSample, ...]:
    """The ``-P 1`` series of a phase run without it (``progress = false``), from its aggregate
    log's seconds: ``t`` each second's end from the phase's start (as pgbench's own report), its
    TPS the transactions completed in it. The first second is left out: pgbench ran only part
    of it (its log's seconds are the clock's, its ``-P`` seconds count from its start; the
    part-second at the end is in neither)."""
    whole = sorted(seconds, key=lambda s: s.epoch)[1:]
    return tuple(
        ProgressSample(
            t=round(s.epoch + 1 - started_at, 3),
            tps=float(s.count),
            latency_avg_ms=s.mean_ms if s.count else None,
            failed=s.failed,
            retried=s.retried,
            retries=s.retries,
        )
        for s in whole
    )


class _Seconds:
    """Per-transaction log lines gathered by wall-clock second (``time_epoch``); with
    ``retries``, the last field of each line is its retries (``--max-tries`` not 1)."""

    def __init__(self, retries: bool = False) -> None:
        self.latencies: defaultdict[int, list[int]] = defaultdict(list)
        self.failed: Counter[int] = Counter()
        self.kinds: Counter[tuple[int, str]] = Counter()  # (epoch, kind) -> failed of the kind
        self.undetailed = False  # a failure marked "failed" only: its kind is unknown
        self.retries: Counter[int] | None = Counter() if retries else None
        self.retried: Counter[int] = Counter()

    def add(self, lines: Iterable[str], source: str) -> None:
        latencies, failed, kinds, retries = self.latencies, self.failed, self.kinds, self.retries
        for number, line in enumerate(lines, 1):
            # client_id transaction_no time script_no time_epoch time_us [lag] [retries]
            fields = line.split()
            if not fields:
                continue
            try:
                latency, epoch = fields[2], int(fields[4])
                if latency.isdigit():
                    latencies[epoch].append(int(latency))
                elif latency in _FAILED:
                    failed[epoch] += 1
                    kinds[epoch, latency] += 1
                    self.undetailed |= latency == "failed"
                elif latency != _SKIPPED:
                    raise ValueError(latency)
                if retries is not None and latency != _SKIPPED:
                    if len(fields) < 7:
                        raise ValueError(line)
                    n = int(fields[-1])
                    retries[epoch] += n
                    self.retried[epoch] += n > 0
            except (IndexError, ValueError):
                raise PgbenchError(
                    f"not a pgbench per-transaction log line ({source}, line {number}): {line!r}"
                ) from None

    def summary(self) -> tuple[LatencySecond, ...]:
        epochs = sorted(self.latencies.keys() | self.failed.keys() | self.retried.keys())
        out = []
        for e in epochs:
            second = _second(e, self.latencies.get(e, []), self.failed[e])
            detailed = not self.undetailed
            out.append(
                replace(
                    second,
                    serialization=self.kinds[e, "serialization"] if detailed else None,
                    deadlock=self.kinds[e, "deadlock"] if detailed else None,
                    retried=self.retried[e] if self.retries is not None else None,
                    retries=self.retries[e] if self.retries is not None else None,
                )
            )
        return tuple(out)


def _second(epoch: int, latencies_us: list[int], failed: int) -> LatencySecond:
    if not latencies_us:
        return LatencySecond(epoch, 0, failed, 0.0, 0.0, 0.0, 0.0, 0.0, (), 0.0, 0.0)
    ordered = sorted(latencies_us)
    n = len(ordered)

    def exact(q: float) -> float:
        return ordered[latency_hist.nearest_rank(q, n) - 1] / 1000

    return LatencySecond(
        epoch=epoch,
        count=n,
        failed=failed,
        mean_ms=sum(ordered) / n / 1000,
        max_ms=ordered[-1] / 1000,
        p50_ms=exact(50),
        p95_ms=exact(95),
        p99_ms=exact(99),
        histogram=latency_hist.histogram(ordered),
        p90_ms=exact(90),
        p999_ms=exact(99.9),
    )


def parse_transaction_log(lines: Iterable[str], retries: bool = False) -> tuple[LatencySecond, ...]:
    """Per-second latency figures from the lines of pgbench's per-transaction log (``-l``).

    ``count`` is the transactions that completed in that second (as pgbench's tps counts
    them), ``failed`` those that failed, by kind where the log names it (``serialization``,
    ``deadlock``: ``--failures-detailed``); skipped ones (``--rate`` with ``-L``) are neither.
    ``retries``: the lines end with the transaction's retries (``--max-tries`` not 1), summed
    per second with the transactions retried. Percentiles are exact (nearest rank); a second
    with only failures has zero latencies.
    """
    seconds = _Seconds(retries)
    seconds.add(lines, "log")
    return seconds.summary()


def parse_aggregate_log(lines: Iterable[str], source: str = "log") -> tuple[LatencySecond, ...]:
    """Per-second figures from pgbench's aggregated log (``-l --aggregate-interval=1``).

    Line (15 to 18): ``interval_start num_transactions sum_latency sum_latency_2 min_latency
    max_latency sum_lag sum_lag_2 min_lag max_lag skipped retried retries
    serialization_failures deadlock_failures``. pgbench does not write the last, partial
    interval of a ``-T`` run, so the counts add up to a little less than the report's.
    """
    return _merge_aggregates([_aggregate_rows(lines, source)])


def read_aggregate_logs(
    paths: Iterable[Path], shifts: dict[Path, int] | None = None
) -> tuple[LatencySecond, ...]:
    """Like ``parse_aggregate_log``, over the log files of all threads of one run together (and
    of several pgbench on several hosts: ``shifts`` moves a file's seconds onto pglab's clock, by
    the whole seconds its host's clock is ahead, as ``read_transaction_logs`` does)."""
    rows = []
    for path in paths:
        shift = (shifts or {}).get(path, 0)
        with open(path) as lines:
            found = _aggregate_rows(lines, str(path))
        rows.append([(r[0] - shift, r[1], r[2], r[3], r[4]) for r in found] if shift else found)
    return _merge_aggregates(rows)


# epoch, count, sum_us, max_us, then (serialization, deadlock, retried, retries): None on a
# line without them (pgbench before 15 wrote 6 to 11 fields)
_Aggregate = tuple[int, int, int, int, tuple[int, ...] | None]


def _aggregate_rows(lines: Iterable[str], source: str) -> list[_Aggregate]:
    rows: list[_Aggregate] = []
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        try:
            epoch, count, sum_us, _sum2, _min_us, max_us = (int(f) for f in fields[:6])
            # ... skipped retried retries serialization_failures deadlock_failures
            tail = tuple(int(f) for f in fields[11:15])
        except ValueError:
            raise PgbenchError(
                f"not a pgbench aggregated log line ({source}, line {number}): {line!r}"
            ) from None
        kinds = (tail[2], tail[3], tail[0], tail[1]) if len(tail) == 4 else None
        rows.append((epoch, count, sum_us, max_us, kinds))
    return rows


def _merge_aggregates(files: list[list[_Aggregate]]) -> tuple[LatencySecond, ...]:
    by_epoch: dict[int, tuple[int, int, int, list[int] | None]] = {}
    for rows in files:
        for epoch, count, sum_us, max_us, kinds in rows:
            n, total, top, acc = by_epoch.get(epoch, (0, 0, 0, [0, 0, 0, 0]))
            if acc is not None and kinds is not None:
                acc = [a + k for a, k in zip(acc, kinds, strict=True)]
            else:
                acc = None
            by_epoch[epoch] = (n + count, total + sum_us, max(top, max_us), acc)
    out = []
    for epoch, (count, sum_us, max_us, acc) in sorted(by_epoch.items()):
        ser, dead, retried, retries = acc if acc is not None else (None, None, None, None)
        out.append(
            LatencySecond(
                epoch=epoch,
                count=count,
                failed=(ser or 0) + (dead or 0),
                mean_ms=sum_us / count / 1000 if count else 0.0,
                max_ms=max_us / 1000,
                p50_ms=None,
                p95_ms=None,
                p99_ms=None,
                serialization=ser,
                deadlock=dead,
                retried=retried,
                retries=retries,
            )
        )
    return tuple(out)


def read_transaction_logs(
    paths: Iterable[Path], shifts: dict[Path, int] | None = None, retries: bool = False
) -> tuple[LatencySecond, ...]:
    """Like ``parse_transaction_log``, over the log files of all threads of one run together
    (and of several pgbench on several hosts: ``shifts`` moves a file's seconds onto pglab's
    clock, by the whole seconds its host's clock is ahead)."""
    seconds = _Seconds(retries)
    for path in paths:
        shift = (shifts or {}).get(path, 0)
        with open(path) as lines:
            seconds.add(_shifted(lines, shift) if shift else lines, str(path))
    return seconds.summary()


def _shifted(lines: Iterable[str], shift: int) -> Iterator[str]:
    """Log lines with their time_epoch (5th field) moved back by ``shift`` seconds."""
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and fields[4].lstrip("-").isdigit():
            fields[4] = str(int(fields[4]) - shift)
            yield " ".join(fields)
        else:
            yield line


def read_script_logs(paths: Iterable[Path]) -> tuple[ScriptSecond, ...]:
    """Per-second figures of each script from the per-transaction log files of a run with
    several scripts (its 4th field, script_no, counts from 0; ``script`` from 1 as pgbench's
    report does). Exact where pgbench's own per-script counts, added up across threads
    without a lock, can miss a few."""
    latencies: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
    failed: Counter[tuple[int, int]] = Counter()
    for path in paths:
        with open(path) as lines:
            for number, line in enumerate(lines, 1):
                fields = line.split()
                if not fields:
                    continue
                try:
                    latency, key = fields[2], (int(fields[4]), int(fields[3]) + 1)
                    if latency.isdigit():
                        latencies[key].append(int(latency))
                    elif latency in _FAILED:
                        failed[key] += 1
                    elif latency != _SKIPPED:
                        raise ValueError(latency)
                except (IndexError, ValueError):
                    raise PgbenchError(
                        f"not a pgbench per-transaction log line ({path}, line {number}): {line!r}"
                    ) from None
    out = []
    for epoch, script in sorted(latencies.keys() | failed.keys()):
        ordered = sorted(latencies.get((epoch, script), []))
        n = len(ordered)

        def exact(q: float, ordered: list[int] = ordered, n: int = n) -> float:
            return ordered[latency_hist.nearest_rank(q, n) - 1] / 1000 if n else 0.0

        out.append(
            ScriptSecond(
                epoch=epoch,
                script=str(script),
                count=n,
                failed=failed[(epoch, script)],
                mean_ms=sum(ordered) / n / 1000 if n else 0.0,
                p50_ms=exact(50),
                p95_ms=exact(95),
                p99_ms=exact(99),
                max_ms=ordered[-1] / 1000 if n else 0.0,
                histogram=latency_hist.histogram(ordered),
            )
        )
    return tuple(out)
