"""How often two builds of the same source are called different, and what carries it.

One PostgreSQL source (Debian's 15.18 tarball, as the build tests use) is built ``--builds``
times under distinct build keys: the tarball itself, then copies of its tree that differ only
by a file no build reads (``PGLAB-BIAS-COPY``: the key is the source's content, so each copy
is a build of its own, compiled through ccache). Then, per factor, ``--campaigns`` small
interleaved campaigns of two variants (select-only, ``--clients``, ``--duration`` s a run,
``--rounds`` rounds), each judged as ``pglab show`` judges it (``analysis.points``, the one
comparison engine):

- ``aa``: one build against itself (the same binaries, path and dataset): the noise alone;
- ``builds``: build 1 against build 2, 3, … (identical source, distinct keys);
- ``paths``: build 1 against the same binaries copied under an install path of another length
  (a ``bindir`` source: its own dataset too);
- ``datasets``: build 1 against the same binaries at the same path reached as a ``bindir``
  source (its own dataset, made by its own ``pgbench -i``);
- ``order``: within the ``aa`` rounds, the run that went second against the one that went first.

Prints, per factor, the rate of "+"/"−" verdicts with its 95% Wilson interval, the median and
largest |Δ%|, and the systematic spread, the half-width within which 95% of such offsets lie:
beyond the A/A's differences (1.96·sqrt(mean Δ² − mean Δ²(aa))) and beyond each comparison's
own noise (a random-effects estimate from the comparisons' intervals: the A/A's should be 0).
The factor (other than the A/A) with the largest spread beyond its own noise is named.
``--together`` makes each iteration one campaign instead of one per factor: the base, an A/A
copy of it and every other build (path, dataset) as variants of one interleaved campaign, each
judged against the base alone (the base's runs and its own, as a two-variant campaign is judged,
a Holm family of one): ``--builds 4`` gives three builds' comparisons and the A/A's for the runs
of five variants. ``--keep`` records the ``builds`` spread as this lab's and machine's
(``build-spread.json`` in the lab home): pglab then holds every "+"/"−" between builds to
it. The last lines are ``false_alarm_rate_before: X`` (the builds' "+"/"−" rate as judged
without the spread) and ``false_alarm_rate_after: Y`` (with it).

    nice -n 10 .venv/bin/python bench/build_bias.py [--builds 2] [--campaigns 3] [--rounds 4]
        [--duration 5] [--clients 2] [--scale 1] [--factors aa,builds,paths,datasets] [--keep]
        [--together]

A build takes minutes (ccache makes the copies cheaper); each campaign ``2 × rounds`` runs.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _common import open_lab, parser, wilson

from pglab.analysis import points, verdicts
from pglab.campaign import parse as campaign_parse
from pglab.campaign.spec import BuildSpec
from pglab.jsonish import JsonObject
from pglab.lab import Lab
from pglab.postgres import build, build_spread
from pglab.rows import RunRow
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store

TARBALL = Path("/var/tmp/pglab-build-cache/src/postgresql-15_15.18.orig.tar.bz2")
FACTORS = ("aa", "builds", "paths", "datasets")


def identical_sources(tarball: Path, n: int, into: Path) -> list[Path]:
    """The tarball, then n − 1 copies of its tree, each with a file no build reads."""
    out = [tarball]
    for i in range(1, n):
        tree = into / f"copy-{i}"
        if not (tree / "done").exists():
            shutil.rmtree(tree, ignore_errors=True)
            tree.mkdir(parents=True)
            with tarfile.open(tarball) as tar:
                tar.extractall(tree, filter="tar")
            (tree / "done").write_text("")
        (top,) = [p for p in tree.iterdir() if p.is_dir()]
        (top / "PGLAB-BIAS-COPY").write_text(f"copy {i}: a file no build reads\n")
        out.append(top)
    return out


def relocated(made: build.Build, into: Path) -> Path:
    """``made``'s install tree copied under a path longer than the cache's: its bindir."""
    target = into / ("longer-install-path-" + "x" * 23) / "install"
    if not (target / "bin" / "postgres").exists():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(made.root / "install", target, symlinks=True)
        for p in (into, *target.parents[: len(target.relative_to(into).parts)], target):
            p.chmod(0o755)
        for p in target.rglob("*"):
            if p.is_dir():
                p.chmod(0o755)
    return target / "bin"


@dataclass
class Factor:
    """One factor's comparisons: Δ% and verdicts of its campaigns."""

    name: str
    deltas: list[float] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # the verdicts
    found: list[verdicts.Comparison] = field(default_factory=list)

    def flagged(self, which: Sequence[str]) -> int:
        return sum(v in ("+", "-") for v in which)


def campaign_doc(name: str, a: JsonObject, b: JsonObject, args: argparse.Namespace) -> JsonObject:
    return {
        "name": name,
        "repeats": args.rounds,
        "order": "interleaved",
        "dataset": {"scale": args.scale},
        "workload": {"script": "select-only", "clients": args.clients, "duration": args.duration},
        "variants": {"a": {"server": a}, "b": {"server": b}},
    }


def together_doc(name: str, servers: dict[str, JsonObject], args: argparse.Namespace) -> JsonObject:
    """One campaign whose variants are the base (``a``) and one server per other variant:
    every variant runs once a round, interleaved, in the order the rounds rotate."""
    doc = campaign_doc(name, servers["a"], servers["a"], args)
    doc["variants"] = {v: {"server": s} for v, s in servers.items()}
    return doc


def run_one(lab: Lab, store_path: Path, doc: JsonObject) -> list[RunRow]:
    name = str(doc["name"])
    camp = campaign_parse.parse(doc, name, base_dir=None)
    with open_store(str(store_path)) as store:
        campaign_run.run_campaign(Executor(lab, store), camp)
        return list(store.list_runs(name))


def judged(store_path: Path, name: str, runs: list[RunRow]) -> verdicts.Comparison | None:
    """The campaign's one comparison, as ``pglab show`` makes it from ``runs`` (given only the
    base's runs and one other variant's, a two-variant judgement: a Holm family of one, as a
    patch A/B is judged)."""
    with open_store(str(store_path)) as store:
        row = store.get_campaign(name)
    rows = points.campaign_rows(runs, row)
    found = [pt.comparison for pt in rows if pt.comparison is not None]
    return found[0] if found else None


def order_effect(runs: list[RunRow]) -> list[float]:
    """Within each round, the second run's log ratio to the first's, in %."""
    by_round: dict[int, list[RunRow]] = {}
    for r in runs:
        if r.ok and r.tps:
            by_round.setdefault(r.repeat, []).append(r)
    out = []
    for pair in by_round.values():
        if len(pair) == 2:
            first, second = sorted(pair, key=lambda r: r.started_at)
            out.append(100 * math.log(float(second.tps or 1) / float(first.tps or 1)))
    return out


def spread_of(deltas: list[float], noise: list[float]) -> float:
    """The systematic half-width beyond the noise: 1.96·sqrt(mean Δ² − mean Δ²(noise))."""
    if not deltas:
        return 0.0
    extra = statistics.fmean(d * d for d in deltas) - (
        statistics.fmean(d * d for d in noise) if noise else 0.0
    )
    return 1.96 * math.sqrt(max(0.0, extra))


def own_spread(found: list[verdicts.Comparison]) -> float:
    """The half-width within which 95% of the offsets lie beyond each comparison's own noise
    (a random-effects estimate: mean log ratio² − mean squared standard error, the standard
    error read off each 95% interval with Student's t at min(n) − 1 degrees of freedom), in %."""
    from scipy import stats  # noqa: PLC0415 - the bench's one use

    sq, se2 = [], []
    for c in found:
        if c.ci_low is None or c.ci_high is None:
            continue
        t = float(stats.t.ppf(0.975, max(1, min(c.n_a, c.n_b) - 1)))
        width = math.log1p(c.ci_high / 100) - math.log1p(c.ci_low / 100)
        se2.append((width / 2 / t) ** 2)
        sq.append(math.log1p(c.delta_pct / 100) ** 2)
    if not sq:
        return 0.0
    tau = math.sqrt(max(0.0, statistics.fmean(sq) - statistics.fmean(se2)))
    return 100 * math.expm1(1.96 * tau)


def report(f: Factor, noise: list[float]) -> float:
    n = len(f.said)
    k = f.flagged(f.said)
    lo, hi = wilson(k, n) if n else (0.0, 1.0)
    med = statistics.median(abs(d) for d in f.deltas) if f.deltas else float("nan")
    top = max((abs(d) for d in f.deltas), default=float("nan"))
    beyond_aa = spread_of(f.deltas, noise) if f.name != "aa" else 0.0
    spread = own_spread(f.found)
    print(
        f"{f.name:9s} {n:3d} comparisons  '+'/'-' {k}/{n} = {k / max(n, 1):5.1%} "
        f"[{lo:.1%}, {hi:.1%}]  |Δ| median {med:5.2f}% max {top:5.2f}%  "
        f"spread beyond the A/A ±{beyond_aa:.2f}%, beyond their own noise ±{spread:.2f}%  Δ: "
        + " ".join(f"{d:+.1f}" for d in f.deltas)
    )
    return spread


def tell(name: str, which: str, c: verdicts.Comparison | None, into: Factor) -> None:
    """Keep and print one comparison of ``which`` (a factor, or a variant of ``--together``)."""
    if c is None:
        print(f"{name} {which}: no comparison (failed runs?)")
        return
    into.deltas.append(c.delta_pct)
    into.said.append(c.verdict)
    into.found.append(c)
    print(
        f"{name} {which}: Δ {c.delta_pct:+.2f}% [{c.ci_low or 0:+.2f}, {c.ci_high or 0:+.2f}] "
        f"'{c.verdict}'",
        flush=True,
    )


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--tarball", type=Path, default=TARBALL)
    ap.add_argument("--builds", type=int, default=2, help="builds of the same source (≥ 2)")
    ap.add_argument("--campaigns", type=int, default=3, help="per factor")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--factors", default=",".join(FACTORS))
    ap.add_argument("--work", type=Path, default=Path("/var/tmp/pglab-build-bias"))
    ap.add_argument("--keep", action="store_true", help="record the builds' spread for the lab")
    ap.add_argument("--only-build", action="store_true", help="make the builds, run nothing")
    ap.add_argument(
        "--together",
        action="store_true",
        help="one campaign per iteration holding the base, an A/A copy of it and every other "
        "build (and path, dataset): each judged against the base alone",
    )
    ap.add_argument(
        "--bindirs",
        default="",
        help="comma-separated bin directories of builds already made of one source (e.g. the "
        "bisection's): the first is the base, the others the builds compared with it; no build",
    )
    args = ap.parse_args()
    factors = [f for f in args.factors.split(",") if f]
    lab = open_lab(args)
    args.work.mkdir(parents=True, exist_ok=True)
    args.work.chmod(0o755)
    if args.bindirs:
        given = [{"bindir": d} for d in args.bindirs.split(",") if d]
        measure(lab, given[0], {"aa": [given[0]], "builds": given[1:]}, factors, args)
        return
    sources = identical_sources(args.tarball, max(2, args.builds), args.work / "src")
    made = []
    for src in sources:
        b = build.ensure(BuildSpec(str(src)), lab, lambda step: print(f"  building: {step}"))
        print(
            f"build {b.key} of {src}: {'built now' if b.built_now else 'from the cache'}",
            flush=True,
        )
        made.append(b)
    if args.only_build:
        return
    first: JsonObject = {"build": {"source": str(sources[0])}}
    servers: dict[str, list[JsonObject]] = {
        "aa": [first],
        "builds": [{"build": {"source": str(s)}} for s in sources[1:]],
        "paths": [{"bindir": str(relocated(made[0], args.work / "paths"))}],
        "datasets": [{"bindir": str(made[0].bindir)}],
    }
    measure(lab, first, servers, factors, args, len(made))


def measure(  # noqa: C901, PLR0912, PLR0915 - one measurement, its steps in order
    lab: Lab,
    first: JsonObject,
    servers: dict[str, list[JsonObject]],
    factors: list[str],
    args: argparse.Namespace,
    builds: int | None = None,
) -> None:
    """The campaigns of every factor against ``first``, then what they say."""
    store_path = args.work / f"store-{os.getpid()}.sqlite"
    results = {f: Factor(f) for f in factors}
    order = Factor("order")
    tag = os.getpid()
    for i in range(args.campaigns):
        if args.together:
            name = f"build-bias-{tag}-all-{i}"
            variants = {"a": first}
            for f in factors:
                for j, server in enumerate(servers[f]):
                    variants[f"{f}-{j + 1}"] = server
            runs = run_one(lab, store_path, together_doc(name, variants, args))
            for v in variants:
                if v == "a":
                    continue
                f = v.rsplit("-", 1)[0]
                pair = [r for r in runs if r.variant in ("a", v)]
                tell(name, v, judged(store_path, name, pair), results[f])
                if f == "aa":
                    order.deltas += order_effect(pair)
            continue
        for f in factors:
            other = servers[f][i % len(servers[f])]
            name = f"build-bias-{tag}-{f}-{i}"
            runs = run_one(lab, store_path, campaign_doc(name, first, other, args))
            tell(name, f, judged(store_path, name, runs), results[f])
            if f == "aa":
                order.deltas += order_effect(runs)
    print("\nfactor    (a machine shared with other work gives its noise to every figure)")
    noise = results["aa"].deltas if "aa" in results else []
    spreads = {f.name: report(f, noise) for f in results.values()}
    if order.deltas:
        m = statistics.fmean(order.deltas)
        sd = statistics.stdev(order.deltas) if len(order.deltas) > 1 else float("nan")
        half = 1.96 * sd / math.sqrt(len(order.deltas)) if len(order.deltas) > 1 else float("nan")
        print(
            f"order     {len(order.deltas):3d} rounds  second vs first in a round: "
            f"{m:+.2f}% [{m - half:+.2f}, {m + half:+.2f}]"
        )
        spreads["order"] = abs(m) if not math.isnan(half) and abs(m) > half else 0.0
    spreads.pop("aa", None)  # the control: its spread says how well the estimate is calibrated
    carrier = max(spreads, key=lambda k: spreads[k]) if spreads else None
    named = carrier if carrier and spreads[carrier] > 0 else "none beyond the noise"
    print(f"factor carrying the difference: {named}")
    if "builds" in results:
        got = results["builds"]
        spread = spreads["builds"]
        n = max(1, len(got.said))
        if args.keep:
            kept = build_spread.record(
                lab,
                spread,
                builds or len(servers["builds"]) + 1,
                len(got.deltas),
                "bench/build_bias.py",
            )
            print(f"kept: {kept}")
        # the same comparisons held to the spread, as pglab holds them once it is kept
        after = [verdicts.beyond_spread(c, spread).verdict for c in got.found]
        print(f"builds_spread_pct: {spread:.2f}")
        print(f"false_alarm_rate_before: {got.flagged(got.said) / n:.3f}")
        print(f"false_alarm_rate_after: {got.flagged(after) / n:.3f} (held to ±{spread:.2f}%)")


if __name__ == "__main__":
    main()
