"""The Optuna study of a tune file, kept in pglab's results store: Optuna's RDB storage on the
same SQLite file or the same PostgreSQL database (its own tables: ``studies``, ``trials``, …),
named after the campaign. Opening it again resumes it: trials a dead pglab left running are
marked failed ("interrupted": not the configuration's fault, so not counted against the
budget) and their configurations queued again.

How pglab's outcomes are told to Optuna:

- ``ok``: COMPLETE with the objective's value (TPS, or p99 latency in ms);
- ``failed`` (the server refused the configuration or the run failed): PRUNED with no value
  and a violated constraint, which TPE ranks below every measured trial (penalised);
- ``infeasible`` (over the memory constraint, never run): PRUNED likewise;
- ``interrupted`` (pglab died or was stopped mid-trial): FAIL, ignored by every sampler.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import optuna
from optuna.exceptions import ExperimentalWarning
from optuna.samplers import BaseSampler
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState
from sqlalchemy.pool import NullPool

from pglab.errors import CampaignError, StoreError
from pglab.store import mask_url
from pglab.tune.space import Param
from pglab.tune.spec import TuneSpec

OUTCOME = "outcome"  # user attr: ok, failed, infeasible, interrupted
SOURCE = "source"  # user attr: default, pgtune, enqueued, sampler, retry
CONSTRAINT = "violation"  # the trial's constraint (set_constraint): > 0 when infeasible
COUNTED = ("ok", "failed")  # outcomes that use the trial budget


def storage_url(store_url: str) -> str:
    """The SQLAlchemy URL of pglab's results store: ``sqlite:///abs/path`` or
    ``postgresql+psycopg://…`` (psycopg 3, which pglab has already)."""
    text = store_url.strip()
    for scheme in ("postgresql://", "postgres://"):
        if text.startswith(scheme):
            return "postgresql+psycopg://" + text[len(scheme) :]
    path = text.removeprefix("sqlite://") if text.startswith("sqlite://") else text
    return f"sqlite:///{Path(path).expanduser().absolute()}"


def storage(store_url: str) -> optuna.storages.RDBStorage:
    url = storage_url(store_url)
    # no pool: each of Optuna's sessions closes its connection (nothing is left open when a
    # command ends, and a PostgreSQL store's database can be dropped)
    # SQLite: wait as long as pglab's own store waits ({}: SQLAlchemy's own default)
    connect_args = {"timeout": 30} if url.startswith("sqlite:") else {}
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        return optuna.storages.RDBStorage(
            url, engine_kwargs={"poolclass": NullPool, "connect_args": connect_args}
        )
    except Exception as exc:  # SQLAlchemy's errors: the store cannot hold Optuna's tables
        raise StoreError(
            f"cannot keep the tuning study in the results store {mask_url(store_url)}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            hint="the store must be writable (a SQLite file or a PostgreSQL database where "
            "pglab may create tables)",
        ) from exc


def make_sampler(spec: TuneSpec) -> BaseSampler:
    """TPE (multivariate, with the constraints) by default; gp, cmaes or random on request."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        if spec.sampler == "random":
            return optuna.samplers.RandomSampler(seed=spec.seed)
        if spec.sampler == "cmaes":
            if importlib.util.find_spec("cmaes") is None:  # CmaEsSampler imports it late
                raise CampaignError(
                    'sampler = "cmaes" needs the cmaes package',
                    hint="pip install cmaes (pglab's dependencies include it)",
                )
            return optuna.samplers.CmaEsSampler(seed=spec.seed)
        if spec.sampler == "gp":
            if importlib.util.find_spec("torch") is None:
                raise CampaignError(
                    'sampler = "gp" (Optuna\'s GPSampler) needs PyTorch, which pglab does not '
                    "install (it is large)",
                    hint="pip install torch, or use the default sampler (tpe)",
                )
            return optuna.samplers.GPSampler(seed=spec.seed)
        return optuna.samplers.TPESampler(multivariate=True, seed=spec.seed)


def violation(trial: FrozenTrial) -> float:
    """How far the trial is outside the constraints (> 0: infeasible; Trial.set_constraint)."""
    return float(trial.constraints.get(CONSTRAINT, 0.0)) if trial.constraints else 0.0


def open_study(store_url: str, name: str, spec: TuneSpec) -> tuple[optuna.Study, bool]:
    """The study (created, or loaded to resume) and whether it is new."""
    st = storage(store_url)
    direction = spec.direction
    try:
        existing = optuna.load_study(study_name=name, storage=st, sampler=make_sampler(spec))
    except KeyError:
        existing = None
    if existing is not None:
        if existing.direction.name.lower() != direction:
            raise CampaignError(
                f"the stored study {name!r} was made to {existing.direction.name.lower()} "
                f"its objective; this file asks to {direction} it",
                hint="give the file another name = ..., or put the objective back",
            )
        return existing, False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        study = optuna.create_study(
            study_name=name,
            storage=st,
            sampler=make_sampler(spec),
            direction=StudyDirection.MINIMIZE
            if spec.direction == "minimize"
            else StudyDirection.MAXIMIZE,
        )
    return study, True


def recover(study: optuna.Study) -> list[int]:
    """Trials a dead pglab left RUNNING (or WAITING ones a stopped one took): marked FAIL
    ("interrupted") and their configurations queued again; their numbers."""
    found = []
    st = study._storage
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        st.set_trial_user_attr(t._trial_id, OUTCOME, "interrupted")
        st.set_trial_state_values(t._trial_id, TrialState.FAIL)
        enqueue(study, t.params, t.user_attrs.get(SOURCE, "sampler"), retry_of=t.number)
        found.append(t.number)
    return found


def enqueue(
    study: optuna.Study,
    params: Mapping[str, Param],
    source: str,
    retry_of: int | None = None,
    settings: dict[str, str] | None = None,
) -> None:
    attrs: dict[str, str | int | dict[str, str]] = {SOURCE: source}
    if retry_of is not None:
        attrs["retry_of"] = retry_of
    if settings is not None:
        attrs["asked"] = settings  # what was asked, before clamping to the knobs' ranges
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a value at a range's end is said out of range
        study.enqueue_trial(dict(params), user_attrs=attrs, skip_if_exists=False)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Optuna's warnings about what a sampler does not use (constraints in CMA-ES, categorical
    knobs sampled independently, experimental options): pglab chose those, a person can do
    nothing about them."""
    with warnings.catch_warnings():
        for kind in (UserWarning, FutureWarning, ExperimentalWarning):
            warnings.simplefilter("ignore", kind)
        yield


def counted(study: optuna.Study) -> int:
    """Trials that used the budget: run, ok or failed."""
    return sum(1 for t in study.get_trials(deepcopy=False) if t.user_attrs.get(OUTCOME) in COUNTED)
