"""What the stored CPU profiles say (``pglab.profile``): per run, the folded stacks of its
measured phases by process kind (merged, or of one phase: a run may profile a scan before and
after a VACUUM); per point, each function's share of the samples of its kind
(self: the function itself running; inclusive: it or what it called) as a mean over the
repeats with a 95% interval (Student t); per comparison, the differential: the functions
whose share changed, by how much, with a 95% interval of the difference (Welch).

Shares are in percent of a kind's samples of the run, so that runs of different lengths and
frequencies weigh the same; a function a run's profile does not name has a share of 0 there.
Their intervals are kept within what a share can be (0–100%, a change within ±100 points).

Sample floors: a process kind with fewer than ``MIN_KIND_SAMPLES`` samples (a side's runs
together) has shares that one sample moves by whole percents (a background writer's 2 samples:
50% each), and a function on fewer than ``MIN_FUNCTION_SAMPLES`` (a point's: the stacks it is
in; a differential's: its own, on either side) is as thin; both are marked ``below_floor`` (the
views hide them and say which kinds). The backend, whose CPU is
the queries', leads; the other kinds follow by samples.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pglab.analysis.tidy import TidyTable
from pglab.profile import folded
from pglab.rows import RunRow, StoredRun
from pglab.stats import significance as dist
from pglab.stats.summary import summarize_point

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.analysis.compare import Target
    from pglab.analysis.comparisons import PointPair
    from pglab.store.base import Store

Stacks = dict[str, Counter[str]]  # process kind -> folded stack -> samples

MIN_KIND_SAMPLES = 100  # a process kind's samples (a point's runs together) to compare shares
MIN_FUNCTION_SAMPLES = 10  # a function's samples (a differential: its own, on a side) to show it
LEAD = "backend"  # the kind whose functions come first: the queries' own CPU


def run_stacks(run: StoredRun, phase: str | None = None) -> Stacks:
    """The folded stacks of a run's measured phases, merged, by process kind; ``phase``: of
    the measured phase of that name only (its iterations merged, ``times = N``)."""
    return folded.merged(
        folded.stacks_of(run.series.get(str(ph.idx), {}))
        for ph in run.phases
        if ph.measured and (phase is None or ph.name == phase)
    )


def profiled(runs: Iterable[StoredRun]) -> list[StoredRun]:
    return [r for r in runs if run_stacks(r)]


def profiled_phases(runs: Iterable[StoredRun]) -> list[str]:
    """The names of the measured phases with a stored profile in any of ``runs``, in the
    order they ran."""
    names: dict[str, None] = {}
    for run in runs:
        for ph in run.phases:
            data = run.series.get(str(ph.idx), {}).get(folded.TABLE)
            if ph.measured and data and data.get("rows"):
                names[ph.name] = None
    return list(names)


def shares(stacks: Mapping[str, int]) -> dict[str, tuple[float, float]]:
    """function -> (self %, inclusive %) of the samples of ``stacks`` (a recursive function
    counts once per stack in its inclusive share)."""
    total = sum(stacks.values())
    own, incl = _counts(stacks)
    if not total:
        return {}
    return {f: (100 * own[f] / total, 100 * incl[f] / total) for f in incl}


@dataclass(frozen=True)
class Function:
    """A function's share of its process kind's samples at one point, over its repeats."""

    process: str
    function: str
    self_pct: float
    self_low: float | None
    self_high: float | None
    incl_pct: float
    incl_low: float | None
    incl_high: float | None
    samples: int  # its own samples, summed over the repeats
    runs: int
    kind_samples: int = 0  # its process kind's samples, summed over the repeats
    incl_samples: int = 0  # the samples of the stacks it is in, summed over the repeats

    @property
    def below_floor(self) -> bool:
        """Too few samples for its shares to mean anything (see the module's sample floors)."""
        return self.kind_samples < MIN_KIND_SAMPLES or self.incl_samples < MIN_FUNCTION_SAMPLES


def hot_functions(
    runs: Sequence[StoredRun], top: int | None = None, phase: str | None = None
) -> list[Function]:
    """The functions of a point's profiled runs by process kind (the backend first, then the
    most sampled kinds), each kind's by self share, highest first; ``top``: that many per kind;
    ``phase``: of that measured phase only (default: all of them, merged)."""
    per_run = [run_stacks(r, phase) for r in runs]
    per_run = [s for s in per_run if s]
    kinds = kind_samples(per_run)
    out: list[Function] = []
    for kind in ranked(kinds):
        tables = [shares(s.get(kind, Counter())) for s in per_run]
        own, incl = _counts(sum((s.get(kind, Counter()) for s in per_run), Counter[str]()))
        names = {f for t in tables for f in t}
        rows = [_function(kind, f, tables, own[f], incl[f], kinds[kind]) for f in names]
        rows.sort(key=lambda r: (-r.self_pct, -r.incl_pct, r.function))
        out += rows[:top] if top else rows
    return out


def kind_samples(per_run: Iterable[Stacks]) -> Counter[str]:
    """Each process kind's samples over ``per_run`` (runs' stacks) together."""
    kinds = Counter[str]()
    for stacks in per_run:
        for kind, c in stacks.items():
            kinds[kind] += sum(c.values())
    return kinds


def ranked(kinds: Mapping[str, int]) -> list[str]:
    """The kinds in the order they are shown: ``LEAD`` (the backend) first, then by samples,
    most first."""
    return sorted(kinds, key=lambda k: (k != LEAD, -kinds[k], k))


def thin_kinds(runs: Sequence[StoredRun], phase: str | None = None) -> list[tuple[str, int]]:
    """The process kinds of ``runs`` below the sample floor, with their samples, fewest last."""
    kinds = kind_samples(s for r in runs if (s := run_stacks(r, phase)))
    return [(k, n) for k, n in kinds.most_common() if n < MIN_KIND_SAMPLES]


def _bounded(
    low: float | None, high: float | None, lo: float, hi: float
) -> tuple[float | None, float | None]:
    """An interval cut to what the quantity can be (a share 0–100, a change ±100 points)."""
    if low is None or high is None:
        return low, high
    return min(max(low, lo), hi), max(min(high, hi), lo)


def _function(
    kind: str,
    name: str,
    tables: list[dict[str, tuple[float, float]]],
    samples: int,
    incl_samples: int,
    kind_total: int,
) -> Function:
    own = summarize_point([t.get(name, (0.0, 0.0))[0] for t in tables])
    incl = summarize_point([t.get(name, (0.0, 0.0))[1] for t in tables])
    own_low, own_high = _bounded(own.ci_low, own.ci_high, 0.0, 100.0)
    incl_low, incl_high = _bounded(incl.ci_low, incl.ci_high, 0.0, 100.0)
    return Function(
        kind,
        name,
        own.mean,
        own_low,
        own_high,
        incl.mean,
        incl_low,
        incl_high,
        samples,
        len(tables),
        kind_total,
        incl_samples,
    )


@dataclass(frozen=True)
class Change:
    """How a function's self share moved from a baseline point to another (points of %)."""

    process: str
    function: str
    base_pct: float
    other_pct: float
    delta: float
    low: float | None
    high: float | None
    samples_a: int = 0  # the function's own samples, the baseline's runs together
    samples_b: int = 0  # and the other point's
    kind_a: int = 0  # its process kind's samples, the baseline's runs together
    kind_b: int = 0  # and the other point's
    below_floor: bool = False  # a kind or function with too few samples to compare

    @property
    def clear(self) -> bool:
        """Its 95% interval leaves out 0."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def differential(
    baseline: Sequence[StoredRun], other: Sequence[StoredRun], share: str = "self"
) -> list[Change]:
    """The functions whose ``share`` ("self" or "incl") changed between two points, kind by
    kind (the backend first, then by samples: ``ranked``), each kind's largest rise first and
    largest fall last; those of a kind or with samples below the floors ``below_floor``."""
    which = 0 if share == "self" else 1
    a = [run_stacks(r) for r in baseline]
    b = [run_stacks(r) for r in other]
    a, b = [s for s in a if s], [s for s in b if s]
    if not a or not b:
        return []
    kinds_a, kinds_b = kind_samples(a), kind_samples(b)
    both = kinds_a + kinds_b
    out = []
    for kind in ranked(both):
        ta = [shares(s.get(kind, Counter())) for s in a]
        tb = [shares(s.get(kind, Counter())) for s in b]
        own_a, own_b = _own(a, kind), _own(b, kind)
        thin = min(kinds_a[kind], kinds_b[kind]) < MIN_KIND_SAMPLES
        rows = []
        for f in {f for t in ta + tb for f in t}:
            xa = [t.get(f, (0.0, 0.0))[which] for t in ta]
            xb = [t.get(f, (0.0, 0.0))[which] for t in tb]
            low, high = _bounded(*_interval(xa, xb), -100.0, 100.0)
            ma, mb = statistics.fmean(xa), statistics.fmean(xb)
            few = max(own_a[f], own_b[f]) < MIN_FUNCTION_SAMPLES
            rows.append(
                Change(
                    kind,
                    f,
                    ma,
                    mb,
                    mb - ma,
                    low,
                    high,
                    own_a[f],
                    own_b[f],
                    kinds_a[kind],
                    kinds_b[kind],
                    thin or few,
                )
            )
        out += sorted(rows, key=lambda c: (-c.delta, c.function))
    return out


def _own(side: Sequence[Stacks], kind: str) -> Counter[str]:
    """Each function's own samples in ``kind`` over a side's runs."""
    own = Counter[str]()
    for s in side:
        for stack, n in s.get(kind, Counter()).items():
            own[stack.rsplit(";", 1)[-1]] += n
    return own


def _interval(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, float | None]:
    """The 95% interval of mean(b) - mean(a) (Welch); None with fewer than 2 runs a side."""
    if len(a) < 2 or len(b) < 2:
        return None, None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(b) - statistics.fmean(a)
    se = math.sqrt(va + vb)
    if se == 0:
        return diff, diff
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(dist.t.ppf(0.975, df)) * se
    return diff - half, diff + half


def folded_lines(run: StoredRun) -> list[str]:
    """A run's folded stacks as flamegraph.pl reads them, the process kind and then the
    measured phase as the root frames (``backend;phase read;PostgresMain;... 12``)."""
    lines = []
    for phase in profiled_phases([run]):
        frame = phase_frame(phase)
        for kind, stacks in sorted(run_stacks(run, phase).items()):
            lines += [
                f"{kind};{frame};{s} {n}" for s, n in sorted(stacks.items(), key=lambda kv: -kv[1])
            ]
    return lines


def phase_frame(phase: str) -> str:
    """A phase as a frame of a folded stack: ``phase NAME``, a ';' in the name made a ':'
    (it would split the frame)."""
    return "phase " + phase.replace(";", ":")


def notes(run: StoredRun) -> list[str]:
    """What the profiler said of a run's phases (a binary without symbols, a server not
    profiled), once each."""
    said: dict[str, None] = {}
    for ph in run.phases:
        data = run.series.get(str(ph.idx), {}).get(folded.NOTES)
        for row in data["rows"] if data else []:
            said[row[-1]] = None
    return list(said)


FUNCTION_COLUMNS = [
    "run_id",
    "campaign",
    "point",
    "repeat",
    "phase",
    "process",
    "function",
    "self_samples",
    "incl_samples",
    "process_samples",
    "self_pct",
    "incl_pct",
]


def functions_table(runs: Sequence[StoredRun]) -> TidyTable:
    """A row per (run, measured phase, process kind, function) of the profiled runs: its own
    and inclusive samples and shares of the kind's samples in that phase (``pglab export
    --profile``)."""
    rows: list[list[Any]] = []
    for run in runs:
        for phase in profiled_phases([run]):
            for kind, stacks in sorted(run_stacks(run, phase).items()):
                total = sum(stacks.values())
                own, incl = _counts(stacks)
                for f in sorted(incl, key=lambda f: (-own[f], -incl[f], f)):
                    shares_of = [100 * own[f] / total, 100 * incl[f] / total]
                    rows.append(
                        [
                            run.id,
                            run.campaign,
                            run.label,
                            run.repeat,
                            phase,
                            kind,
                            f,
                            own[f],
                            incl[f],
                            total,
                            *shares_of,
                        ]
                    )
    return TidyTable(FUNCTION_COLUMNS, rows)


def _counts(stacks: Mapping[str, int]) -> tuple[Counter[str], Counter[str]]:
    own: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    for stack, n in stacks.items():
        frames = stack.split(";")
        own[frames[-1]] += n
        for f in set(frames):
            incl[f] += n
    return own, incl


def folded_text(runs: Sequence[StoredRun]) -> str:
    """The runs' folded stacks, each line's root frames the run (``run 12``), the process kind
    and the phase (``phase read``): one file flamegraph.pl, speedscope and inferno read."""
    lines = [f"run {run.id};{line}" for run in runs for line in folded_lines(run)]
    return "".join(f"{line}\n" for line in lines)


SKIP = ("latency", "progress")  # what a profile does not read of a stored run


def compare_targets(
    store: Store, a: Target, b: Target, pairs: Sequence[PointPair]
) -> list[tuple[str, list[Change]]]:
    """The differential of each compared pair that has profiles on both sides: ``a`` and ``b``
    are ``compare.Target``s (two runs, two points, two campaigns whose ``pairs`` matched
    points by label); a list of (title, changes)."""
    sides: list[tuple[str, list[StoredRun], list[StoredRun]]] = []
    if a.kind == "run":
        assert a.run is not None and b.run is not None  # resolve() gives a run its StoredRun
        sides.append((f"run {a.run.id} → run {b.run.id}", [a.run], [b.run]))
    else:
        for pair in pairs:
            la, lb = pair["a"]["point"], pair["b"]["point"]
            ra = [r for r in a.runs if r.ok and r.label == la]
            rb = [r for r in b.runs if r.ok and r.label == lb]
            sides.append((f"{la} → {lb}", _load(store, ra), _load(store, rb)))
    out = []
    for title, runs_a, runs_b in sides:
        changes = differential(runs_a, runs_b)
        if changes:
            out.append((title, changes))
    return out


def _load(store: Store, rows: Sequence[RunRow]) -> list[StoredRun]:
    return [run for r in rows if (run := store.get_run(r.id, skip_kinds=SKIP)) is not None]
