"""The ``[tune]`` table of a campaign file: what to optimise, the trial budget, the knobs and the
constraints. Its keys are declared in ``campaign/schema/tune.py`` and their values checked by
those declarations (``campaign/declared.py``); the rules between keys and a knob's form are
checked here, without a server; the knobs' names and values are checked against the version's
own catalog in ``space``.

```toml
[tune]
objective = "tps"              # "tps" (default), "p99" (latency, lower is better),
                               # "nopm" (a kit's New-Orders per minute: kit = "tpcc") or
                               # "geomean" (the 22 queries' geometric mean: kit = "tpch")
p99_limit_ms = 20              # with "tps": the best TPS whose p99 latency stays under 20 ms
trials = 30
sampler = "tpe"                # tpe (multivariate), gp, cmaes or random
memory_share = 0.75            # shared_buffers + wal_buffers + maintenance_work_mem
                               # + work_mem × clients below 75% of RAM
[tune.knobs]
shared_buffers = {min = "128MB", max = "2GB", log = true}
wal_compression = ["off", "lz4"]
```
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pglab import workloads
from pglab.campaign import declared, schema
from pglab.campaign import parse as campaigns
from pglab.campaign.checks import Problems
from pglab.campaign.parse import Campaign
from pglab.campaign.schema import (
    DEFAULT_CONFIRM_REPEATS,
    DEFAULT_MEMORY_SHARE,
    DEFAULT_TRIALS,
    KNOB_KEYS,
    TUNE_KEYS,
)
from pglab.errors import CampaignError
from pglab.jsonish import TomlTable

LOWER_BETTER = ("p99", "geomean")  # seconds: the others are rates
# the variants tune stores its runs under: "trial 12", "confirm default" (the study's points)
TRIAL = "trial "
CONFIRM = "confirm "
# the run metric each objective is (tps: the run's own)
OBJECTIVE_METRICS = {
    "p99": "latency_p99_ms",
    "nopm": "nopm",
    "geomean": "geomean_s",
    "tpse": "tpse",
}


def objective_value(
    objective: str, tps: float | None, metrics: Mapping[str, float]
) -> float | None:
    """A run's figure for ``objective``: its TPS, or the metric the objective is."""
    return metrics.get(OBJECTIVE_METRICS[objective]) if objective in OBJECTIVE_METRICS else tps


@dataclass(frozen=True)
class KnobSpec:
    """A knob as the file gives it: a range (``low``/``high`` as written, ``log``) or choices."""

    name: str
    low: Any = None
    high: Any = None
    log: bool = False
    choices: tuple[str, ...] = ()

    @property
    def is_range(self) -> bool:
        return not self.choices


@dataclass(frozen=True)
class TuneSpec:
    objective: str = "tps"
    p99_limit_ms: float | None = None
    trials: int = DEFAULT_TRIALS
    sampler: str = "tpe"
    seed: int = 0
    unsafe: bool = False
    knobs: tuple[KnobSpec, ...] = ()  # empty: the default knob set of the version (space)
    memory_share: float = DEFAULT_MEMORY_SHARE
    confirm_repeats: int = DEFAULT_CONFIRM_REPEATS
    confirm_max: int | None = None  # above confirm_repeats: more rounds until decided
    confirm_top: int = 3
    enqueue: tuple[tuple[tuple[str, str], ...], ...] = ()  # configurations to try first
    pgtune: bool = True  # PGTune's rules tried first and confirmed against
    disk: str = "ssd"  # for PGTune's random_page_cost and effective_io_concurrency

    @property
    def direction(self) -> str:
        return "minimize" if self.objective in LOWER_BETTER else "maximize"

    @property
    def adaptive(self) -> bool:
        """Confirmation goes on past ``confirm_repeats`` rounds while it is undecided."""
        return self.confirm_max is not None and self.confirm_max > self.confirm_repeats

    @property
    def confirm_rounds(self) -> int:
        """The confirmation's rounds at most."""
        return self.confirm_max if self.adaptive and self.confirm_max else self.confirm_repeats

    @property
    def confirm_runs(self) -> tuple[int, int]:
        """The confirmation's runs, (least, most): the same unless it is adaptive."""
        each = self.confirm_top + 1 + int(self.pgtune)
        return each * self.confirm_repeats, each * self.confirm_rounds

    @property
    def needs_p99(self) -> bool:
        return self.objective == "p99" or self.p99_limit_ms is not None


def setting_text(value: Any) -> str:
    """A TOML value as postgresql.conf takes it (booleans as on/off)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _confirm_max(found: TomlTable, p: Problems, where: str) -> int | None:
    """confirm_max: more rounds than confirm_repeats, of a confirmation there is."""
    if "confirm_max" not in found:
        return None
    top, least = found["confirm_max"], found.get("confirm_repeats", DEFAULT_CONFIRM_REPEATS)
    if top < least:
        p.add(
            where,
            f"confirm_max = {top} is below confirm_repeats = {least}: confirmation "
            "runs confirm_repeats rounds, then more up to confirm_max while "
            "undecided",
        )
    if least == 0:
        p.add(where, "confirm_max needs a confirmation: confirm_repeats is 0")
    return int(top)


def parse_tune(table: TomlTable, where: str = "[tune]") -> tuple[TuneSpec, list[str]]:
    """The ``[tune]`` table checked: the spec and every problem found (one string each)."""
    p = Problems()
    found = declared.check(schema.TUNE, table, p, where, allowed=TUNE_KEYS)
    if "p99_limit_ms" in found and found.get("objective") == "p99":
        p.add(where, 'p99_limit_ms goes with objective = "tps" (the best TPS under that p99)')
    knobs = []
    for name, val in found.get("knobs", {}).items():
        knob = _knob(str(name), val, p, f"{where} knobs")
        if knob is not None:
            knobs.append(knob)
    if "knobs" in found and not found["knobs"]:
        p.add(f"{where} knobs", "is empty: leave it out for the default knob set, or name some")
    enqueue = [
        tuple(sorted((str(k), setting_text(v)) for k, v in run.items()))
        for run in found.get("enqueue", [])
    ]
    spec = TuneSpec(
        **{k: v for k, v in found.items() if k not in ("knobs", "enqueue", "confirm_max")},
        knobs=tuple(knobs),
        confirm_max=_confirm_max(found, p, where),
        enqueue=tuple(enqueue),
    )
    return spec, p.items


def _knob(name: str, val: Any, p: Problems, where: str) -> KnobSpec | None:
    if isinstance(val, list):
        if not val:
            p.add(where, f"{name} = []: give at least one choice")
            return None
        if any(isinstance(v, dict | list) for v in val):
            p.add(where, f"{name}: choices are plain values (strings, numbers, booleans)")
            return None
        return KnobSpec(name, choices=tuple(dict.fromkeys(setting_text(v) for v in val)))
    if not isinstance(val, dict):
        p.add(
            where,
            f'{name} = {val!r}: expected a range {{min = "…", max = "…", log = true}} '
            "or a list of choices",
        )
        return None
    p.unknown_keys(f"{where} {name}", val, KNOB_KEYS)
    missing = [k for k in ("min", "max") if k not in val]
    if missing:
        p.add(where, f"{name}: a range needs {' and '.join(missing)}")
        return None
    log = val.get("log", False)
    if not isinstance(log, bool):
        p.add(where, f"{name}: log = {log!r}: expected true or false")
        log = False
    for k in ("min", "max"):
        if isinstance(val[k], bool) or not isinstance(val[k], str | int | float):
            p.add(where, f'{name}: {k} = {val[k]!r}: expected a number or a value such as "128MB"')
            return None
    return KnobSpec(name, setting_text(val["min"]), setting_text(val["max"]), log)


def load(path: str | Path) -> tuple[Campaign, TuneSpec]:
    """A tune file: its campaign (the point whose settings are tuned) and its ``[tune]`` table,
    every problem of both in one message."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as exc:
        raise CampaignError(f"cannot read tune file {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(
            f"{path}: not valid TOML: {exc}",
            hint="see examples/tune.toml for a tune file that works",
        ) from exc
    return parse(doc, path.stem, path.parent.absolute(), str(path.absolute()))


def parse(
    doc: TomlTable,
    default_name: str,
    base_dir: Path | None = None,
    source_file: str | None = None,
) -> tuple[Campaign, TuneSpec]:
    rest = {k: v for k, v in doc.items() if k != "tune"}
    table = doc.get("tune")
    problems: list[str] = []
    if not isinstance(table, dict):
        problems.append(
            "[tune]: missing: a tune file has a [tune] table (objective, trials, "
            "knobs); `pglab run` runs campaign files without one"
        )
        table = {}
    spec, found = parse_tune(table)
    problems += found
    for key in ("variants", "matrix"):
        if key in rest:
            problems.append(f"[{key}]: a tune file tunes one point: leave out [{key}]")
    if "storage_bench" in rest:
        problems.append("[storage_bench]: not run by pglab tune: use `pglab storage DIR`")
    if "repeats" in rest:
        problems.append(
            "repeats: a trial is one run; confirmation repeats are [tune] confirm_repeats"
        )
    camp: Campaign | None = None
    try:
        camp = campaigns.parse(rest, default_name, base_dir, source_file)
    except CampaignError as exc:
        problems += exc.message.split("\n  ")[1:] or [exc.message]
    if problems or camp is None:
        where = f" in {source_file}" if source_file else ""
        raise CampaignError(
            f"the tune file{where} has {len(problems)} problem(s):\n  " + "\n  ".join(problems),
            hint="see examples/tune.toml, and `pglab tune --help` for the [tune] table",
        )
    camp = replace(camp, document=doc)  # stored with its [tune] table
    objective = workloads.objectives().get(spec.objective)  # a kind's own figure
    if objective is not None and not any(
        workloads.kind_of(ph) in objective.kinds for ph in camp.variants[0].phases
    ):
        raise CampaignError(
            f'objective = "{objective.name}" is {objective.said}, but the file\'s phases run no '
            f"{objective.needs}",
            hint=f'add {objective.hint} to [workload], or use objective = "tps"',
        )
    if spec.needs_p99 and any(
        ph.pgbench.latency_log != "full" for ph in camp.variants[0].phases if ph.measured
    ):
        raise CampaignError(
            "a p99 objective or limit needs each transaction's latency: the measured phases "
            'have latency_log = "aggregate" or "off"',
            hint='leave latency_log out (its default is "full") or set it to "full"',
        )
    return camp, spec


def is_tune(camp: Mapping[str, Any] | None) -> bool:
    """Whether a stored campaign document is a tune study's."""
    return bool(camp) and isinstance((camp or {}).get("spec", {}).get("tune"), dict)
