"""How honest an operation's ETA was, told afterwards from its stored progress rows
(``figures.PROGRESS_COLUMNS``): at the first rows at or past 25%, 50% and 75% of a progress
phase, |ETA - time really left| / time really left. Pure: ``tests/integration/
test_maintenance_eta.py`` and ``bench/maintenance_eta.py`` read stored runs with it.

Two estimators: ``"shown"``, the ETA the row holds (what the progress line said: from an
earlier run when there was one, ``eta_by = "history"``, else ``"rate"``), and ``"rate"``, the
phase's remaining units at the row's rate (what the row would have said with no earlier run),
so that both can be judged on every run after the first.

``replay`` tells a run's rows again with today's estimator from a subset of them (every 4th of
rows read each 0.25 s: what pglab's rows once a second would have said), its ``eta_errors``
then judged against the phase's end known from all of them (``end``).
"""

from __future__ import annotations

from typing import Any

from pglab.workloads.maintenance.figures import Prior, progress_row, stretch_last

SHARES = (25, 50, 75)  # % of the phase's units done


def phase_end(rows: list[list[Any]], phase: str, ended: float) -> float:
    """When ``phase`` (its first stretch of rows) ended: between its last row and the next
    one, the midpoint; at ``ended`` (the operation's end) when no row came after it."""
    idx = [i for i, r in enumerate(rows) if r[1] == phase]
    if not idx:
        raise ValueError(f"no progress row of phase {phase!r}")
    last = stretch_last(rows, idx[0], phase)
    return (rows[last][0] + rows[last + 1][0]) / 2 if last + 1 < len(rows) else ended


def eta_errors(
    rows: list[list[Any]],
    phase: str,
    ended: float,
    estimator: str = "shown",
    end: float | None = None,
) -> list[tuple[float, str]]:
    """(|ETA - time left| / time left, how the ETA was told) at the first rows of ``phase`` at
    or past each of ``SHARES``; a share the phase never reached, or a row with no ETA yet, has
    none (fewer than three). ``estimator``: "shown" or "rate" (see the module); ``end``: when
    the phase ended, if known better than from these rows."""
    if estimator not in ("shown", "rate"):
        raise ValueError(f"estimator {estimator!r}: use 'shown' or 'rate'")
    end = phase_end(rows, phase, ended) if end is None else end
    mine = [r for r in rows if r[1] == phase and r[0] < end]
    out = []
    for share in SHARES:
        row = next((r for r in mine if r[4] is not None and r[4] >= share), None)
        if row is None:
            continue
        left = end - row[0]
        if estimator == "rate":
            eta, by = (max(row[3] - row[2], 0) / row[6] if row[6] else None), "rate"
        else:
            eta, by = row[7], row[8]
        if eta is not None and left > 0:
            out.append((abs(eta - left) / left, str(by)))
    return out


def replay(rows: list[list[Any]], prior: Prior | None = None) -> list[list[Any]]:
    """``rows`` told again by ``figures.progress_row`` (rate, ETA and how), from their progress
    view's figures alone, with ``prior`` as the earlier run."""
    out: list[list[Any]] = []
    for r in rows:
        out.append(progress_row(r[0], (r[1], r[2], r[3], r[5]), out, prior))
    return out
