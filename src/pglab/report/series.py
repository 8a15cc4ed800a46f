"""A run's per-second series on one time axis (seconds since its first measured phase began),
as the report's charts draw them: matplotlib's PNGs (``charts``) and the page's own charts
(``browser``) read the same numbers from here."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from pglab.analysis.tidy import measured_phases, sampling_rate, table
from pglab.rows import StoredRun


class RunSeries:
    """The series of a run's measured phases on one time axis (seconds since the first)."""

    def __init__(self, run: StoredRun):
        self.run = run
        self.idxs = measured_phases(run)
        starts = {p.idx: p.started_at for p in run.phases}
        self.t0 = min((starts[i] for i in self.idxs if starts[i]), default=0.0)
        self.starts = starts
        self.phases = [p for p in run.phases if p.idx in self.idxs]
        self.missing: list[str] = []  # panels without data, and why
        self._rows: dict[str, tuple[dict[str, int], list[tuple[float, list[Any]]]]] = {}

    def rows(self, kind: str) -> tuple[dict[str, int], list[tuple[float, list[Any]]]]:
        """Column indexes and (x, row) pairs of a series over all measured phases (made once
        per kind: several panels read the same series)."""
        if kind not in self._rows:
            self._rows[kind] = self._rows_of(kind)
        return self._rows[kind]

    def _rows_of(self, kind: str) -> tuple[dict[str, int], list[tuple[float, list[Any]]]]:
        cols: dict[str, int] = {}
        out = []
        for idx in self.idxs:
            tab = table(self.run, idx, kind)
            cols = cols or {c: i for i, c in enumerate(tab["columns"])}
            for row in tab["rows"]:
                t = row[0]
                if kind in ("latency", "script_latency"):  # epoch of the second
                    x = t + 1 - self.t0
                elif kind == "progress":  # seconds since the phase started
                    x = (self.starts[idx] or self.t0) + t - self.t0
                else:
                    x = t - self.t0
                out.append((x, row))
        return cols, out

    def column(self, kind: str, name: str) -> tuple[list[float], list[float]] | None:
        cols, rows = self.rows(kind)
        if name not in cols or not rows:
            return None
        i = cols[name]
        pairs = [(x, r[i]) for x, r in rows if r[i] is not None]
        return ([x for x, _ in pairs], [v for _, v in pairs]) if pairs else None

    def script_tps(self) -> dict[str, tuple[list[float], list[float]]]:
        """Per script of the phases that ran several: its transactions completed each second
        (the per-transaction log's, ``script_latency``, over its sampling rate when it kept a
        sample), by "N name" as pgbench's report numbers and names it (a file by its name
        only); empty when no phase has the series."""
        out: dict[str, tuple[list[float], list[float]]] = {}
        for idx in self.idxs:
            tab = table(self.run, idx, "script_latency")
            if not tab["rows"]:
                continue
            cols = {c: i for i, c in enumerate(tab["columns"])}
            phase = next(p for p in self.phases if p.idx == idx)
            rate = sampling_rate(phase) or 1.0
            names = {str(sc.number): sc.name or "" for sc in phase.report.scripts}
            for row in tab["rows"]:
                number = str(row[cols["script"]])
                name = names.get(number, "").rsplit("/", 1)[-1]
                xs, ys = out.setdefault(f"{number} {name}".strip(), ([], []))
                xs.append(row[cols["epoch"]] + 1 - self.t0)
                ys.append(row[cols["count"]] / rate)
        return out

    def summed(
        self,
        kind: str,
        name: str,
        where: Callable[[dict[str, int], list[Any]], bool] | None = None,
    ) -> tuple[list[float], list[float]] | None:
        """A column summed over the rows of each instant (devices, backend types)."""
        cols, rows = self.rows(kind)
        if name not in cols or not rows:
            return None
        acc: dict[float, float] = defaultdict(float)
        for x, r in rows:
            if where is None or where(cols, r):
                acc[x] += r[cols[name]] or 0
        xs = sorted(acc)
        return (xs, [acc[x] for x in xs]) if xs else None

    def checkpoint_spans(self) -> list[tuple[float, float]]:
        """(start, end) of each checkpoint on the time axis, half a second at least (one
        still running when the log ended is that long too)."""
        cols, cps = self.rows("checkpoints")
        spans = []
        for x, row in cps:
            end = (row[cols["t_end"]] - self.t0) if row[cols["t_end"]] else x
            spans.append((x, max(end, x + 0.5)))
        return spans

    def waits_stacked(self, top_n: int) -> tuple[list[float], list[str], list[list[float]]] | None:
        """Sessions per second in each of the ``top_n`` most sampled wait events (the rest as
        "other"), for a stacked chart: (seconds, names, a layer per name); None without waits."""
        cols, rows = self.rows("waits")
        if not rows:
            return None
        per_t: dict[float, Counter[str]] = defaultdict(Counter)
        totals: Counter[str] = Counter()
        for x, r in rows:
            name = f"{r[cols['wait_event_type']]}:{r[cols['wait_event']]}"
            sessions = r[cols["count"]] / max(r[cols["samples"]], 1)
            per_t[x][name] += sessions
            totals[name] += sessions
        top = [n for n, _ in totals.most_common(top_n)]
        xs = sorted(per_t)
        layers: list[list[float]] = [[per_t[x][n] for x in xs] for n in top]
        if len(totals) > len(top):
            layers.append([sum(v for n, v in per_t[x].items() if n not in top) for x in xs])
            top.append("other")
        return xs, top, layers
