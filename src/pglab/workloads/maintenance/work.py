"""A maintenance operation's work, declared (``operation = "vacuum"``...): the operation and
its options (``OPERATION_OPTIONS``). It runs no pgbench: ``pgbench`` holds the options the file
gave the phase (a later layer that runs a script again takes them back), for its identity.

A declaration: the standard library and pglab's core modules only (``campaign/`` imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from pglab.keys import Key
from pglab.workloads.pgbench.work import PgbenchWork, Refusal, own_fields

# maintenance operations a phase can run instead of a pgbench script, and the options each takes
OPERATION_OPTIONS: dict[str, tuple[str, ...]] = {
    "vacuum": ("dirty", "parallel", "freeze"),
    "analyze": (),
    "create_index": ("parallel", "columns", "method"),
    "vacuum_full": (),
    "cluster": (),
    "reindex": ("parallel",),
    # client programs of the server source: pg_dump -F d, pg_restore from the run's own dump,
    # pg_basebackup (workloads/maintenance/clients.py)
    "dump": ("jobs", "compress"),
    "restore": ("jobs",),
    "basebackup": ("target",),
}
OPERATIONS = tuple(OPERATION_OPTIONS)
# every option
OPERATION_KEYS = ("dirty", "parallel", "freeze", "columns", "method", "jobs", "compress", "target")
KEYS = ("operation", *OPERATION_KEYS)  # its [workload] keys
MAX_JOBS = 64  # pg_dump/pg_restore -j: each job is a connection
ACCOUNT_COLUMNS = ("aid", "bid", "abalance", "filler")  # of pgbench_accounts
INDEX_METHODS = ("btree", "brin", "hash")  # hash: one column; parallel: planning/preflight
# the most parallel workers a phase may ask for: PostgreSQL's own limit of
# max_parallel_maintenance_workers (the run's settings may allow fewer: planning/preflight)
MAX_PARALLEL = 1024


@dataclass(frozen=True, slots=True)
class OperationWork:
    """A maintenance operation on ``pgbench_accounts`` and its options: the fraction of
    pgbench_accounts updated before a vacuum (dirty), parallel workers asked for, VACUUM
    FREEZE, the indexed columns and the index method; pg_dump/pg_restore -j, pg_dump's
    compression (off: -Z 0), pg_basebackup's directory (an absolute path it makes a directory
    in; None: the lab's work directory). Each part of the point only when set."""

    KEYS: ClassVar[tuple[str, ...]] = KEYS
    GENERATED: ClassVar[bool] = False  # on the server's session, never on generator hosts

    operation: str
    dirty: float = 0.0
    parallel: int = 0
    freeze: bool = False
    columns: tuple[str, ...] = ("abalance",)
    method: str = "btree"
    jobs: int = 1
    compress: bool = True
    target: str | None = None
    pgbench: PgbenchWork = field(default_factory=PgbenchWork)

    @classmethod
    def of_flat(cls, f: Mapping[str, Any], pgbench: PgbenchWork) -> OperationWork | None:
        """This kind's work from a phase's flat fields (``campaign/identity.flat``'s), or
        None: the fields are not of this kind's phase."""
        if f["operation"] is None:
            return None
        options = {k: f[k] for k in OPERATION_KEYS}
        return OperationWork(f["operation"], **options, pgbench=pgbench)

    @property
    def kind(self) -> str:
        return "maintenance"

    def with_pgbench(self, options: PgbenchWork) -> OperationWork:
        return replace(self, pgbench=options)

    @property
    def label(self) -> str:
        return self.operation

    @property
    def live(self) -> bool:
        """An operation says its progress its own way, as it runs."""
        return True

    @property
    def dataset_kind(self) -> str | None:
        return None  # pgbench's tables

    def stored(self) -> dict[str, object]:
        return {**self.pgbench.stored(), **own_fields(self)}


# its options given to a phase of another kind: refused (campaign/workload's one rule)
REFUSED_ELSEWHERE = (
    Refusal(
        OPERATION_KEYS,
        lambda work: isinstance(work, OperationWork),
        "{keys}: an option of a maintenance operation (operation = ...), but this phase runs "
        "a pgbench script",
        said_by="operation",
    ),
)


def writes(phase: Mapping[str, Any]) -> None:
    """Whether an operation's phase writes: not told (its figures are its own, no TPS a
    checkpoint sways)."""
    return None


class Phased(Protocol):
    """A phase (``campaign.spec.PhaseSpec``), as far as this declaration knows one."""

    @property
    def work(self) -> object: ...


def operation_work(phase: Phased) -> OperationWork:
    """The operation a maintenance phase runs, with its options."""
    if not isinstance(phase.work, OperationWork):
        raise ValueError(f"not an operation's phase: {phase.work!r}")
    return phase.work


_operation = OperationWork("")
# its [workload] keys as the campaign file's reference declares them (campaign/schema/tables)
ROWS = (
    Key(
        "operation",
        "string",
        "a maintenance operation instead of a script, in MB/s",
        '"vacuum"',
        default_doc="none: pgbench",
        choices=OPERATIONS,
        commented=True,
        axis=False,
    ),
    Key(
        "dirty",
        "number",
        "vacuum: share of pgbench_accounts updated and checkpointed first",
        "0.1",
        _operation.dirty,
        minimum=0,
        maximum=1,
        commented=True,
        what="the fraction of pgbench_accounts to update before the vacuum",
    ),
    Key(
        "parallel",
        "integer",
        "vacuum, create_index, reindex: parallel workers asked for",
        "1",
        _operation.parallel,
        minimum=0,
        maximum=MAX_PARALLEL,
        commented=True,
        what="parallel workers",
    ),
    Key("freeze", "boolean", "vacuum: VACUUM (FREEZE)", "true", _operation.freeze, commented=True),
    Key(
        "columns",
        "columns",
        "create_index: the columns of pgbench_accounts indexed",
        '["bid", "abalance"]',
        default_doc='"abalance"',
        commented=True,
    ),
    Key(
        "method",
        "string",
        "create_index: the index method",
        '"btree"',
        _operation.method,
        choices=INDEX_METHODS,
        commented=True,
    ),
    Key(
        "jobs",
        "integer",
        "dump, restore: pg_dump/pg_restore -j",
        "2",
        _operation.jobs,
        minimum=1,
        maximum=MAX_JOBS,
        commented=True,
        what="pg_dump/pg_restore -j",
    ),
    Key("compress", "boolean", "dump: false: -Z 0", "false", _operation.compress, commented=True),
    Key(
        "target",
        "path",
        "basebackup: the directory it copies into (a new one, removed after)",
        '"/mnt/backup"',
        default_doc="the run's work directory",
        commented=True,
        what="the absolute path of a directory pg_basebackup makes its copy in",
    ),
)
