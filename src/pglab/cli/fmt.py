"""How numbers, sizes, times and comparisons read in the terminal: one place, so that every
command writes 11,257.3 tps and 1m05s the same way."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pglab.analysis.verdicts import Comparison
from pglab.campaign.spec import PhaseSpec


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def num(v: Any) -> str:
    return "–" if v is None else f"{v:,.3f}"


def short(v: Any) -> str:
    """A number as a person reads it: 11,257.3 / 0.0882 / 3."""
    if v is None:
        return "–"
    if isinstance(v, int) or float(v).is_integer():
        return f"{v:,.0f}"
    return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"


def when(ts: Any) -> str:
    if ts is None:
        return "–"
    try:
        return datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(ts)


def delta(c: Comparison | None, is_baseline: bool) -> str:
    """ "-4.8% [-6.1, -3.5] −" style: Δ%, its 95% CI and the verdict (~ not significant and
    could have been, ? the runs could not tell)."""
    if is_baseline:
        return "baseline"
    if c is None:
        return "–"
    ci = f" [{c.ci_low:+.1f}, {c.ci_high:+.1f}]" if c.ci_low is not None else ""
    return f"{c.delta_pct:+.1f}%{ci} {c.verdict}"


def phase(ph: PhaseSpec) -> str:
    amount = f"{ph.duration}s" if ph.duration else f"{ph.transactions} tx"
    times = f" ×{ph.times}" if ph.times > 1 else ""
    return (
        f"{ph.name}: {ph.script_label} c={ph.clients} {amount}{times}"
        f"{'' if ph.measured else ' (unmeasured)'}"
    )


def existing_server(fp: dict[str, Any]) -> str:
    """An existing server's line in ``show``: which server, as which role, and where pgbench ran
    relative to it (``client``: "local: round trip 0.052 ms")."""
    return (
        f"existing server {fp.get('server', '?')}: PostgreSQL {fp.get('server_version', '?')}, "
        f"role {fp.get('role', '?')}, database {fp.get('database', '?')}; pgbench ran "
        f"{fp.get('client', '?')}"
    )
