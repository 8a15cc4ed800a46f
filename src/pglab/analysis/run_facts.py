"""What a run's stored facts say about it: its scaling along a clients axis and its cache regime
(the data against shared_buffers and the machine's memory)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pglab.analysis.cores import tps_by_count
from pglab.fingerprints import lease_of
from pglab.rows import RunRow, StoredRun
from pglab.stats.summary import summarize_point
from pglab.units import TIME_UNITS, guc_bytes, guc_number, size_text, unit_table

MB_PER_SCALE = 15 * 2**20  # pgbench_accounts + its index per unit of scale, roughly


DEFAULT_SHARED_BUFFERS = 128 * 2**20  # PostgreSQL's default


DEFAULT_CHECKPOINT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ScalingPoint:
    """One client count of a series: median TPS over the repeats and what it means per client."""

    series: str  # the point label without its clients=N coordinate (the variant if nothing else)
    clients: int
    n: int  # ok repeats
    tps: float  # median
    ci_low: float | None  # 95% CI of the mean TPS (None with one repeat)
    ci_high: float | None
    tps_per_client: float
    efficiency: float  # tps(c) / (c · tps(c_min) / c_min); 1.0 at the smallest client count


def scaling_key(axes: Mapping[str, object], variant: str, label: str) -> tuple[str, int] | None:
    """(series, clients) of a run or point with a ``clients`` matrix coordinate, else None: the
    series is its label without the clients (the variant when nothing else is left)."""
    clients = axes.get("clients")
    if not isinstance(clients, int) or isinstance(clients, bool):
        return None
    named = [variant] if label == variant or label.startswith(f"{variant} ") else []
    others = [f"{k}={v}" for k, v in axes.items() if k != "clients"]
    return " ".join(named + others) or variant, clients


def scaling(rows: Sequence[RunRow]) -> dict[str, list[ScalingPoint]]:
    """Series (by name, in the order first seen) of ScalingPoints sorted by clients, from
    ``list_runs`` rows; runs without a ``clients`` matrix coordinate are left out,
    and so are failed ones. Efficiency below 1 means TPS grows less than the client count."""
    tps = tps_by_count(rows, scaling_key)
    out: dict[str, list[ScalingPoint]] = {}
    for series, by_clients in tps.items():
        c_min = min(by_clients)
        base = statistics.median(by_clients[c_min]) / c_min  # TPS per client at c_min
        items = []
        for c in sorted(by_clients):
            s = summarize_point(by_clients[c])
            items.append(
                ScalingPoint(
                    series=series,
                    clients=c,
                    n=s.n,
                    tps=s.median,
                    ci_low=s.ci_low,
                    ci_high=s.ci_high,
                    tps_per_client=s.median / c,
                    efficiency=s.median / (c * base) if base else float("nan"),
                )
            )
        out[series] = items
    return out


@dataclass(frozen=True)
class CacheRegime:
    regime: str  # "in shared_buffers", "in OS cache", "larger than RAM" (or than the limit)
    data_bytes: int
    data_measured: bool  # False: estimated from the pgbench scale
    shared_buffers_bytes: int
    ram_bytes: int | None
    limit_bytes: int | None = None  # [os] memory: the server's cgroup limit

    def describe(self) -> str:
        how = "" if self.data_measured else "~"
        ram = f", RAM {size_text(self.ram_bytes)}" if self.ram_bytes else ""
        if self.limit_bytes is not None:
            ram += f", memory limit {size_text(self.limit_bytes)}"
        return (
            f"data set {how}{size_text(self.data_bytes)}, shared_buffers "
            f"{size_text(self.shared_buffers_bytes)}{ram}: {self.regime}"
        )


def setting_of(run: RunRow, name: str) -> tuple[str, str | None] | None:
    """A setting of a run as (value, unit of a bare number): what the server reported in the
    fingerprint, else what the spec asked for; None when neither says (the default, or a
    listing's row, which has neither)."""
    if not isinstance(run, StoredRun):
        return None
    fp = (run.fingerprint.get("settings") or {}).get(name)
    if fp and fp.get("setting") is not None:
        return str(fp["setting"]), fp.get("unit")
    spec = {k: v for k, v in (run.spec.get("server") or {}).get("settings") or []}
    if name in spec:
        return str(spec[name]), None
    return None


def shared_buffers_bytes(run: RunRow) -> int:
    found = setting_of(run, "shared_buffers")
    if found is None:
        return DEFAULT_SHARED_BUFFERS
    value = guc_bytes(found[0], found[1] or "8kB")  # a bare number counts in 8kB blocks
    return int(value) if value is not None else DEFAULT_SHARED_BUFFERS


def checkpoint_timeout_s(run: RunRow) -> float:
    found = setting_of(run, "checkpoint_timeout")
    if found is None:
        return DEFAULT_CHECKPOINT_TIMEOUT_S
    unit = found[1] or "s"  # a bare number counts in seconds
    value, table = guc_number(found[0], unit), unit_table(unit)
    if value is None or table is None or table[0] is not TIME_UNITS:
        return DEFAULT_CHECKPOINT_TIMEOUT_S
    return value * table[1] / TIME_UNITS["s"] or DEFAULT_CHECKPOINT_TIMEOUT_S


def data_bytes(run: RunRow) -> tuple[int, bool] | None:
    """The data set's size and whether it was measured (the fingerprint's ``database_bytes``:
    ``pg_database_size`` as the run started) rather than estimated from the pgbench scale (runs
    stored before pglab measured it)."""
    if not isinstance(run, StoredRun):
        return None
    measured = run.fingerprint.get("database_bytes")
    if measured:
        return int(measured), True
    scale = (run.spec.get("dataset") or {}).get("scale")
    if scale is None:
        return None
    return int(scale * MB_PER_SCALE), False


def cache_regime(run: RunRow) -> CacheRegime | None:
    """Where a run's data set lived (a StoredRun); None without a scale or a size.
    "in OS cache" means it fits in RAM (or the server's ``[os] memory`` limit, which counts
    the page cache and shared_buffers alike) less shared_buffers."""
    size = data_bytes(run)
    if size is None:
        return None
    sb = shared_buffers_bytes(run)
    fp = run.fingerprint if isinstance(run, StoredRun) else {}
    # a server whose RAM is not known (an existing one): the fingerprint's is pgbench's machine's
    ram = fp.get("ram_bytes") if lease_of(fp).get("ram_known", True) else None
    limit = (fp.get("memory_limit") or {}).get("bytes")  # [os] memory: page cache included
    memory = min(m for m in (ram, limit) if m) if ram or limit else None
    if size[0] <= (min(sb, memory) if memory else sb):  # shared_buffers are in the limit too
        regime = "in shared_buffers"
    elif memory is None or size[0] <= memory - sb:
        regime = "in OS cache"
    else:
        regime = "larger than its memory limit" if memory == limit else "larger than RAM"
    return CacheRegime(regime, size[0], size[1], sb, int(ram) if ram else None, limit)
