"""Two builds compared: the spread of identical builds their runs carry.

Two builds of one source can run a few percent apart (``postgres.build_spread``). When the two
sides of a comparison ran on builds pglab made, with different build keys, the spread measured
on their machine (kept in each run's fingerprint, ``build.spread_pct``) is what a "+"/"-" must
exceed (``engine.Pair.spread_pct``, ``verdicts.beyond_spread``), and the comparability guard
names it (``guard``), or says it was never measured there. Runs without their fingerprint (a
listing's rows) tell nothing: ``fingerprinted`` reads the first run's of each point.
"""

from __future__ import annotations

from collections.abc import Sequence

from pglab.rows import RunRow, StoredRun
from pglab.store.base import Store

MEASURE = "bench/build_bias.py --keep"


def _builds(runs: Sequence[RunRow]) -> tuple[set[str], list[float]]:
    """The build keys of ``runs`` (those with a fingerprint) and the spreads they carry."""
    keys: set[str] = set()
    spreads: list[float] = []
    for r in runs:
        fp = r.fingerprint if isinstance(r, StoredRun) else None
        built = (fp or {}).get("build") or {}
        if built.get("key"):
            keys.add(str(built["key"]))
            if (s := built.get("spread_pct")) is not None:
                spreads.append(float(s))
    return keys, spreads


def builds_compared(a: Sequence[RunRow], b: Sequence[RunRow]) -> bool:
    """Whether ``a`` and ``b`` ran on two different builds pglab made."""
    ka, kb = _builds(a)[0], _builds(b)[0]
    return bool(ka and kb and ka != kb)


def spread_between(a: Sequence[RunRow], b: Sequence[RunRow]) -> float | None:
    """The spread of identical builds a comparison of ``a`` with ``b`` is held to (the larger
    either side's runs carry), or None: not two builds, or never measured."""
    if not builds_compared(a, b):
        return None
    found = _builds(a)[1] + _builds(b)[1]
    return max(found) if found else None


def guard(a: Sequence[RunRow], b: Sequence[RunRow]) -> str | None:
    """What the comparability guard says of two builds compared (None: not two builds)."""
    if not builds_compared(a, b):
        return None
    spread = spread_between(a, b)
    if spread is None:
        return (
            "two builds compared, and the spread of identical builds on this machine was "
            f"never measured ({MEASURE}): a difference of a few % may be the builds', "
            "not the source's"
        )
    return (
        f"two builds compared: identical builds run within ±{spread:.1f}% of each other "
        "on this machine; a '+'/'-' must lie beyond it"
    )


def fingerprinted(store: Store, runs: Sequence[RunRow]) -> list[RunRow]:
    """``runs`` with the first run of each point carrying its fingerprint (what tells which
    build it ran), the others as they are."""
    seen: set[str] = set()
    out: list[RunRow] = []
    for r in runs:
        if r.label not in seen and not isinstance(r, StoredRun):
            seen.add(r.label)
            out.append(StoredRun.of(r, fingerprint=store.run_fingerprint(r.id) or {}))
            continue
        seen.add(r.label)
        out.append(r)
    return out
