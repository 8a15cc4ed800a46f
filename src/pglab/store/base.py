"""The results store's logic, shared by the SQLite and PostgreSQL backends.

A backend hands :class:`Store` a DB-API connection in autocommit mode, its :class:`Dialect`, and
says which of its driver's exceptions are the user's to fix (:meth:`Store._store_error`). All
queries, transactions (explicit ``BEGIN``/``COMMIT``, so nothing is committed per statement) and
the encoding of records live here.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar, cast

from pglab import __version__, stored_spec
from pglab.campaign.spec import mask_dsn
from pglab.errors import StoreError
from pglab.fingerprints import Fingerprint
from pglab.records import (
    RunResult,
    StorageResult,
    StorageRow,
)
from pglab.rows import CampaignRow, PhaseRow, RunRow, Series, StoredRun
from pglab.store import encoding, schema
from pglab.store.columns import (
    CampaignFactsRow,
    CountRow,
    FileRow,
    FingerprintJsonRow,
    IdRow,
    PhaseColumns,
    PointLabelRow,
    PointSpecRow,
    RunColumns,
    RunFullRow,
    RunKeyRow,
    RunListRow,
    RunStatusRow,
    SeriesRow,
    SpecJsonRow,
    StorageColumns,
    VersionRow,
)
from pglab.store.schema import Dialect
from pglab.stored_spec import CampaignDocument

_Row = TypeVar("_Row")  # a query's row: one of store.columns' TypedDicts

# Per-phase series: the PhaseResult attribute (and series.kind) -> the record type of one row.

_RUN_COLUMNS = (
    "r.id, c.name AS campaign, r.campaign_id, r.run_key, r.point_key, r.repeat, r.variant, "
    "r.label, r.status, r.error, r.started_at, r.finished_at, r.stored_at, r.tps, "
    "r.pglab_version"
)
_CAMPAIGN_SUMMARY = """
SELECT c.id, c.name, c.created_at, c.updated_at, c.source_file, c.pglab_version,
       COUNT(CASE WHEN r.status = 'ok' THEN 1 END) AS runs_ok,
       COUNT(CASE WHEN r.status = 'failed' THEN 1 END) AS runs_failed,
       MAX(r.finished_at) AS last_run_at
FROM campaigns c LEFT JOIN runs r ON r.campaign_id = c.id
{where}
GROUP BY c.id, c.name, c.created_at, c.updated_at, c.source_file, c.pglab_version
ORDER BY c.id"""


class Store:
    """A results store: campaigns, their runs, each run's phases and per-second series."""

    # Exceptions of the backend's driver; _store_error decides which are StoreErrors.
    _db_errors: tuple[type[Exception], ...] = ()

    def __init__(self, conn: Any, dialect: Dialect, where: str) -> None:
        self._conn = conn
        self.dialect = dialect
        self.where = where  # the path or the URL with its password masked: safe to print
        self.schema_version = 0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.where} schema v{self.schema_version}>"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    # -- campaigns ---------------------------------------------------------------------------

    def ensure_campaign(self, name: str, spec: CampaignDocument, source_file: str | None) -> int:
        """The id of campaign ``name``, created if new; its spec (and source file, if given)
        are replaced by these."""
        now = time.time()
        with self._guard(f"recording campaign {name!r}"), self._transaction():
            row = self._one(
                "INSERT INTO campaigns "
                "(name, created_at, updated_at, source_file, spec_json, pglab_version) "
                "VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json, "
                "source_file = COALESCE(excluded.source_file, campaigns.source_file), "
                "updated_at = excluded.updated_at "
                "RETURNING id",
                (name, now, now, source_file, encoding.dumps(spec), __version__),
                shape=IdRow,
            )
        assert row is not None
        return int(row["id"])

    def list_campaigns(self) -> list[CampaignRow]:
        """Every campaign with id, name, created_at, updated_at, source_file, pglab_version,
        runs_ok, runs_failed and last_run_at (the latest finished_at, None without runs)."""
        with self._guard("listing campaigns"):
            return self._rows(_CAMPAIGN_SUMMARY.format(where=""), shape=CampaignRow)

    def campaign_facts(self) -> dict[str, dict[str, list[str]]]:
        """Each campaign's server versions and hosts (``versions``, ``hosts``, sorted), from the
        tidy rows of its runs (``pglab_runs``); a campaign whose runs have none is left out."""
        with self._guard("reading the campaigns' versions and hosts"):
            rows = self._rows(
                "SELECT DISTINCT campaign, server_version, host FROM pglab_runs "
                "WHERE campaign IS NOT NULL",
                shape=CampaignFactsRow,
            )
        found: dict[str, dict[str, set[str]]] = {}
        for r in rows:
            facts = found.setdefault(r["campaign"], {"versions": set(), "hosts": set()})
            if r["server_version"]:
                facts["versions"].add(str(r["server_version"]))
            if r["host"]:
                facts["hosts"].add(str(r["host"]))
        return {name: {k: sorted(v) for k, v in f.items()} for name, f in found.items()}

    def get_campaign(self, name_or_id: str | int) -> CampaignRow | None:
        """A campaign by name (or by id, given digits): the summary of list_campaigns plus
        its ``spec``; None if there is no such campaign."""
        key = str(name_or_id)
        with self._guard(f"reading campaign {key!r}"), self._transaction(write=False):
            summary = _CAMPAIGN_SUMMARY.format(where="WHERE c.name = ?")
            found = self._rows(summary, (key,), shape=CampaignRow)
            if not found and key.isdigit():
                summary = _CAMPAIGN_SUMMARY.format(where="WHERE c.id = ?")
                found = self._rows(summary, (int(key),), shape=CampaignRow)
            if not found:
                return None
            camp = found[0]
            spec = self._one(
                "SELECT spec_json FROM campaigns WHERE id = ?", (camp["id"],), shape=SpecJsonRow
            )
        assert spec is not None
        camp["spec"] = stored_spec.read_document(json.loads(spec["spec_json"]))
        return camp

    def delete_campaign(self, name: str) -> bool:
        """Delete a campaign with all its runs; False if there was no such campaign."""
        with self._guard(f"deleting campaign {name!r}"), self._transaction():
            row = self._one(
                f"SELECT id FROM campaigns WHERE name = ?{self.dialect.for_update}",
                (name,),
                shape=IdRow,
            )
            if row is None:
                return False
            self._delete_runs("campaign_id = ?", (row["id"],))
            self._run("DELETE FROM campaigns WHERE id = ?", (row["id"],))
        return True

    def delete_points(self, campaign: str, point_keys: Iterable[str]) -> int:
        """Delete every run of ``campaign`` at these points (used when a campaign file changed
        and the user asked to replace the stale points); the number of runs deleted."""
        keys = sorted(set(point_keys))
        if not keys:
            return 0
        marks = ", ".join("?" for _ in keys)
        where = (
            f"campaign_id = (SELECT id FROM campaigns WHERE name = ?) AND point_key IN ({marks})"
        )
        with self._guard(f"deleting stale runs of campaign {campaign!r}"), self._transaction():
            row = self._one(
                f"SELECT COUNT(*) AS n FROM runs WHERE {where}", (campaign, *keys), shape=CountRow
            )
            self._delete_runs(where, (campaign, *keys))
        return int(row["n"]) if row else 0

    # -- runs --------------------------------------------------------------------------------

    def done_run_keys(self, campaign: str) -> set[str]:
        """run_key of every run of ``campaign`` stored with status 'ok'."""
        with self._guard(f"reading the runs of campaign {campaign!r}"):
            rows = self._rows(
                "SELECT r.run_key FROM runs r JOIN campaigns c ON c.id = r.campaign_id "
                "WHERE c.name = ? AND r.status = 'ok'",
                (campaign,),
                shape=RunKeyRow,
            )
        return {r["run_key"] for r in rows}

    def save_run(self, run: RunResult) -> int:
        """Store a run with its phases and series in one transaction; returns its id.

        A run already stored as 'ok' under the same (campaign, run_key) is kept and its id
        returned, nothing written: a resumed campaign never stores a run twice. A 'failed' one
        is replaced. The campaign is created (with an empty spec) if it does not exist yet.
        """
        run_row, phase_rows, series_rows = encoding.encode_run(run)  # before locking anything
        doing = f"saving run {run.run_key} of campaign {run.campaign!r}"
        with self._guard(doing), self._transaction():
            campaign_id = self._lock_campaign(run.campaign)
            old = self._one(
                "SELECT id, status FROM runs WHERE campaign_id = ? AND run_key = ?",
                (campaign_id, run.run_key),
                shape=RunStatusRow,
            )
            if old is not None and old["status"] == "ok":
                return int(old["id"])
            if old is not None:
                self._delete_runs("id = ?", (old["id"],))
            run_id = self._insert_run(campaign_id, run_row)
            self._insert_phases(run_id, phase_rows)
            self._insert_series(run_id, series_rows)
        return run_id

    def runs_without_tidy(self, campaign: str) -> list[int]:
        """Runs of ``campaign`` whose tidy row (``run_tidy``, behind the ``pglab_runs`` view) is
        missing or was made by another pglab version."""
        with self._guard("listing runs without their tidy row"):
            rows = self._rows(
                "SELECT r.id FROM runs r JOIN campaigns c ON c.id = r.campaign_id "
                "LEFT JOIN run_tidy t ON t.run_id = r.id "
                "WHERE c.name = ? AND (t.run_id IS NULL OR t.pglab_version <> ?) ORDER BY r.id",
                (campaign, __version__),
                shape=IdRow,
            )
        return [int(r["id"]) for r in rows]

    def save_tidy(self, rows: Mapping[int, Mapping[str, object]]) -> None:
        """Store runs' tidy rows (run id -> column -> value), replacing older ones; a run
        deleted meanwhile is skipped."""
        if not rows:
            return
        with self._guard("saving tidy rows"), self._transaction():
            for run_id, row in rows.items():
                self._run("DELETE FROM run_tidy WHERE run_id = ?", (run_id,))
                if self._one("SELECT id FROM runs WHERE id = ?", (run_id,), shape=IdRow) is None:
                    continue
                self._run(
                    "INSERT INTO run_tidy (run_id, row_json, pglab_version) VALUES (?, ?, ?)",
                    (run_id, encoding.dumps(row), __version__),
                )

    def list_runs(self, campaign: str | None = None) -> list[RunRow]:
        """Runs (of one campaign, or all) in the order stored, as ``rows.RunRow``s (their
        metrics, and the point's matrix coordinates in the campaign's axis order). One query."""
        where, params = ("WHERE c.name = ? ", (campaign,)) if campaign is not None else ("", ())
        with self._guard("listing runs"):
            runs = self._rows(
                "SELECT r.id, c.name AS campaign, r.run_key, r.point_key, r.variant, r.label, "
                "r.repeat, r.status, r.tps, r.started_at, r.finished_at, r.error, "
                "r.metrics_json AS metrics, r.axes_json AS axes "
                f"FROM runs r JOIN campaigns c ON c.id = r.campaign_id {where}ORDER BY r.id",
                params,
                shape=RunListRow,
            )
        return [encoding.run_row(r) for r in runs]

    def point_specs(self) -> dict[tuple[str, str], stored_spec.RunSpecJson]:
        """Each stored point's spec (of its first run), by (campaign, point_key): what the
        planner asks of stored runs to tell comparable ones (``analysis.noise``). One query."""
        with self._guard("reading the points' specs"):
            rows = self._rows(
                "SELECT c.name AS campaign, r.point_key, r.spec_json FROM runs r JOIN campaigns "
                "c ON c.id = r.campaign_id WHERE r.id IN (SELECT MIN(id) FROM runs GROUP BY "
                "campaign_id, point_key)",
                shape=PointSpecRow,
            )
        return {
            (r["campaign"], r["point_key"]): stored_spec.read(json.loads(r["spec_json"]))
            for r in rows
        }

    def point_labels(self, limit: int) -> list[tuple[str, str]]:
        """The first ``limit`` points (campaign, label) in the order first stored, without
        reading every run's row (``pglab serve``'s compare picker over 10,000 runs)."""
        with self._guard("listing points"):
            rows = self._rows(
                "SELECT c.name AS campaign, r.label FROM runs r JOIN campaigns c ON "
                "c.id = r.campaign_id GROUP BY c.name, r.label ORDER BY MIN(r.id) LIMIT ?",
                (limit,),
                shape=PointLabelRow,
            )
        return [(r["campaign"], r["label"]) for r in rows]

    def get_run(
        self, run_id: int, skip_kinds: Collection[str] = (), series: bool = True
    ) -> StoredRun | None:
        """Everything stored about a run, or None; ``skip_kinds`` leaves those series out
        (decoding them is most of the cost of reading a run), ``series=False`` all of them.

        A :class:`StoredRun`: the RunRow of list_runs plus spec, fingerprint, timings,
        server_log, ``phases`` (PhaseRows) and ``series``: ``{str(phase idx): {kind:
        {"columns": [...], "rows": [[...], ...]}}}``.
        """
        with self._guard(f"reading run {run_id}"), self._transaction(write=False):
            run = self._one(
                f"SELECT {_RUN_COLUMNS}, r.spec_json, r.fingerprint_json, r.metrics_json, "
                "r.timings_json, r.server_log "
                "FROM runs r JOIN campaigns c ON c.id = r.campaign_id WHERE r.id = ?",
                (run_id,),
                shape=RunFullRow,
            )
            if run is None:
                return None
            phases = self._rows(
                "SELECT * FROM phases WHERE run_id = ? ORDER BY idx", (run_id,), shape=PhaseColumns
            )
            skipped = sorted(set(skip_kinds))  # left out by the query: never read from disk
            unless = f"AND kind NOT IN ({', '.join('?' * len(skipped))}) " if skipped else ""
            stored = (
                self._rows(
                    f"SELECT phase_idx, kind, data_json FROM series WHERE run_id = ? {unless}"
                    "ORDER BY phase_idx, kind",
                    (run_id, *skipped),
                    shape=SeriesRow,
                )
                if series
                else []
            )
        decoded: Series = {}
        for s in stored:
            decoded.setdefault(str(s["phase_idx"]), {})[s["kind"]] = encoding.loads(s["data_json"])
        return encoding.stored_run(run, tuple(encoding.decode_phase(p) for p in phases), decoded)

    def runs_phases(self, run_ids: Sequence[int]) -> dict[int, tuple[PhaseRow, ...]]:
        """Only the phases of the runs (pgbench's reports, no series), by run id, in a query
        per 500 runs: what a comparison of the scripts of many runs reads."""
        out: dict[int, tuple[PhaseRow, ...]] = {i: () for i in run_ids}
        ids = list(out)
        with self._guard("reading phases"), self._transaction(write=False):
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                rows = self._rows(
                    f"SELECT * FROM phases WHERE run_id IN ({', '.join('?' * len(chunk))}) "
                    "ORDER BY run_id, idx",
                    chunk,
                    shape=PhaseColumns,
                )
                for row in rows:
                    run_id = row["run_id"]
                    out[run_id] = (*out[run_id], encoding.decode_phase(row))
        return out

    def run_fingerprint(self, run_id: int) -> Fingerprint | None:
        """Only the environment fingerprint of a run (None if there is no such run)."""
        with self._guard(f"reading run {run_id}"):
            row = self._one(
                "SELECT fingerprint_json FROM runs WHERE id = ?",
                (run_id,),
                shape=FingerprintJsonRow,
            )
        return None if row is None else json.loads(row["fingerprint_json"])

    def load_run(self, run_id: int) -> RunResult | None:
        """A stored run as the RunResult it was saved from (None if there is no such run)."""
        run = self.get_run(run_id)
        return None if run is None else encoding.run_result(run)

    # -- files by content (what a fleet job carries: fleet/files.py) ------------------------------

    def put_file(self, data: bytes) -> str:
        """Keep ``data`` (once per content); returns its SHA-256, by which it is read back."""
        digest = hashlib.sha256(data).hexdigest()
        with self._guard("storing a file"), self._transaction():
            self._run(
                "INSERT INTO files (sha256, size, data, added_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (sha256) DO NOTHING",
                (digest, len(data), data, time.time()),
            )
        return digest

    def get_file(self, digest: str) -> bytes | None:
        """The content ``put_file`` kept under ``digest`` (None if none)."""
        with self._guard("reading a file"), self._transaction(write=False):
            row = self._one("SELECT data FROM files WHERE sha256 = ?", (digest,), shape=FileRow)
        return None if row is None else bytes(row["data"])

    # -- storage micro-benchmarks ------------------------------------------------------------

    def save_storage_result(self, result: StorageResult) -> int:
        """Store one pg_test_fsync or fio result; returns its id."""
        row = encoding.storage_columns(result)
        with self._guard(f"saving a {result.tool} result"), self._transaction():
            inserted = self._one(
                f"INSERT INTO storage_results ({', '.join(row)}) "
                f"VALUES ({', '.join('?' * len(row))}) RETURNING id",
                tuple(row.values()),
                shape=IdRow,
            )
        assert inserted is not None
        return int(inserted["id"])

    def list_storage_results(self, tool: str | None = None) -> list[StorageRow]:
        """Storage results (of one tool, or all), oldest first: id, measured_at, elapsed_s,
        target_path, mountpoint, fstype, mount_options, device, tool, tool_version,
        ``results`` (the parsed output) and ``facts`` ({"mount": ..., "host": ...})."""
        where, params = ("WHERE tool = ? ", (tool,)) if tool else ("", ())
        return self._storage_rows(where, params, "")

    def get_storage_result(self, result_id: int) -> StorageRow | None:
        """One storage result as list_storage_results gives it, plus the tool's ``output``."""
        rows = self._storage_rows("WHERE id = ? ", (result_id,), ", output")
        return rows[0] if rows else None

    def _storage_rows(self, where: str, params: tuple[Any, ...], extra: str) -> list[StorageRow]:
        with self._guard("reading storage results"):
            rows = self._rows(
                "SELECT id, measured_at, elapsed_s, target_path, mountpoint, fstype, "
                f"mount_options, device, tool, tool_version, results_json, facts_json{extra} "
                f"FROM storage_results {where}ORDER BY id",
                params,
                shape=StorageColumns,
            )
        return [encoding.storage_row(r) for r in rows]

    # -- schema ------------------------------------------------------------------------------

    def _migrate(self, read_only: bool = False) -> None:
        """Bring the schema up to date, or refuse a store made by a newer pglab (``read_only``:
        refuse an older one too, it cannot be brought up to date)."""
        known = schema.latest_version()
        current = self._current_version()
        if current < known and read_only:
            raise StoreError(
                f"the results store {self.where} is read-only here and has schema version "
                f"{current}; pglab {__version__} reads version {known}",
                hint="open it once where it can be written (any pglab command upgrades it), "
                "or use the pglab that made it",
            )
        if current < known:
            with self._transaction():
                if self.dialect.migration_lock:
                    self._run(self.dialect.migration_lock)
                self._run(schema.render(schema.VERSION_TABLE, self.dialect))
                current = self._current_version()  # again, now that we hold the lock
                for m in schema.pending(current):
                    for statement in m.statements:
                        self._run(schema.render(statement, self.dialect))
                    if m.step is not None:
                        m.step(self._execute)
                    self._run(
                        "INSERT INTO schema_version (version, applied_at, pglab_version) "
                        "VALUES (?, ?, ?)",
                        (m.version, time.time(), __version__),
                    )
                    current = m.version
        if current > known:
            raise StoreError(
                f"the results store {self.where} was made by a newer pglab (schema version "
                f"{current}; pglab {__version__} knows versions up to {known})",
                hint="upgrade pglab, or choose another store with --store or PGLAB_STORE",
            )
        self.schema_version = current

    def _current_version(self) -> int:
        if self._run(self.dialect.table_exists, ("schema_version",)).fetchone() is None:
            return 0
        row = self._one("SELECT MAX(version) AS v FROM schema_version", shape=VersionRow)
        return int(row["v"]) if row and row["v"] is not None else 0

    # -- writing helpers (called inside a transaction) ---------------------------------------

    def _lock_campaign(self, name: str) -> int:
        """The campaign's id, creating it if needed, its row locked until commit."""
        now = time.time()
        self._run(
            "INSERT INTO campaigns "
            "(name, created_at, updated_at, source_file, spec_json, pglab_version) "
            "VALUES (?, ?, ?, NULL, '{}', ?) ON CONFLICT (name) DO NOTHING",
            (name, now, now, __version__),
        )
        row = self._one(
            f"SELECT id FROM campaigns WHERE name = ?{self.dialect.for_update}",
            (name,),
            shape=IdRow,
        )
        assert row is not None
        return int(row["id"])

    def _insert_run(self, campaign_id: int, row: RunColumns) -> int:
        cols = ["campaign_id", *row]
        inserted = self._one(
            f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
            "RETURNING id",
            (campaign_id, *row.values()),
            shape=IdRow,
        )
        assert inserted is not None
        return int(inserted["id"])

    def _insert_phases(self, run_id: int, rows: list[tuple[Any, ...]]) -> None:
        self._run_many(
            "INSERT INTO phases (run_id, idx, name, iteration, measured, started_at, elapsed_s, "
            "argv_json, tps, transactions, failed, latency_avg_ms, latency_stddev_ms, "
            "initial_connection_ms, report_json, output) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, *r) for r in rows],
        )

    def _insert_series(self, run_id: int, rows: list[tuple[Any, ...]]) -> None:
        self._run_many(
            "INSERT INTO series (run_id, phase_idx, kind, data_json) VALUES (?, ?, ?, ?)",
            [(run_id, *r) for r in rows],
        )

    def _delete_runs(self, where: str, params: tuple[Any, ...]) -> None:
        """Delete the runs matching ``where`` (a constant SQL condition) and their children."""
        for child in ("series", "phases", "run_tidy"):
            self._run(
                f"DELETE FROM {child} WHERE run_id IN (SELECT id FROM runs WHERE {where})", params
            )
        self._run(f"DELETE FROM runs WHERE {where}", params)

    # -- database access ---------------------------------------------------------------------

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[None]:
        """One explicit transaction: committed at the end, rolled back on any exception."""
        self._run(self.dialect.begin_write if write else self.dialect.begin_read)
        try:
            yield
            self._run("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        # If the connection is gone or the transaction already ended, there is nothing to undo.
        with suppress(*self._db_errors):
            self._run("ROLLBACK")

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """Turn the driver's errors that the user can fix into StoreError."""
        try:
            yield
        except self._db_errors as exc:
            err = self._store_error(exc, doing)
            if err is None:
                raise
            raise err from exc

    def _store_error(self, exc: Exception, doing: str) -> StoreError | None:
        """A StoreError for a driver error the user can act on; None for pglab's own bugs."""
        return None

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if params:
            return self._conn.execute(self.dialect.sql(sql), tuple(params))
        return self._conn.execute(self.dialect.sql(sql))

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A statement's rows as tuples (none for one that selects nothing): a migration's
        step (``schema.Execute``)."""
        cur = self._run(sql, params)
        return [tuple(row) for row in cur.fetchall()] if cur.description else []

    def _run_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        cur = self._conn.cursor()
        try:
            cur.executemany(self.dialect.sql(sql), rows)
        finally:
            cur.close()

    def _rows(self, sql: str, params: Sequence[Any] = (), *, shape: type[_Row]) -> list[_Row]:
        """The query's rows as ``shape`` (``store.columns``: the TypedDict of the columns it
        selects): the driver's tuples named by the cursor's columns, typed here, the edge."""
        cur = self._run(sql, params)
        names = [d[0] for d in cur.description]
        return [cast(_Row, dict(zip(names, row, strict=True))) for row in cur.fetchall()]

    def _one(self, sql: str, params: Sequence[Any] = (), *, shape: type[_Row]) -> _Row | None:
        rows = self._rows(sql, params, shape=shape)
        return rows[0] if rows else None


# a store's URL with any password (``user:pw@`` or ``?password=pw``) replaced by ``***``
mask_url = mask_dsn
