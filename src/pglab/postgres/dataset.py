"""Datasets: clusters initialized once (pgbench's tables, or a kind's), kept stopped, copied
to reset a run.

A template is made once per (server source, dataset) under ``datasets/<key>/pgdata`` and never
started again after its initialization; ``reset`` copies it to a working cluster directory, which
is much faster than running ``pgbench -i`` again. The time of both is recorded.

pgbench's tables are made here (``pgbench -i``); a kind's own dataset (``DatasetSpec.kit``: a
workload kit's tables, sysbench's, a captured workload's dump) by its ``DatasetKind``, which the
caller gives: the workloads' registry (``workloads.dataset_kind``) holds them, after this stage,
so nothing here imports a kind's loader.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pglab import procs
from pglab.campaign.spec import DatasetSpec, ServerSpec, StorageSpec, dataset_key
from pglab.errors import CommandError
from pglab.jsonish import JsonObject
from pglab.lab import Lab, locked
from pglab.postgres import init_output, settings
from pglab.postgres.server import Cluster, initdb
from pglab.postgres.sources import Binaries

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import RowFactory

INIT_TIMEOUT = 6 * 3600
MIB = 2**20
# What a template takes on disk, from templates made on PostgreSQL 18 (scale 1: 69 MiB of which
# 32 of pg_wal; scale 10: 316 and 144; scale 40: 1,132 and 512): an empty cluster with the
# pgbench tables and indexes, 15 MiB per unit of scale (pgbench_accounts at fillfactor 100, and
# its primary key), and the WAL pgbench -i wrote, up to max_wal_size (its default, 1 GB, at init)
DATA_BYTES = 22.5 * MIB
DATA_BYTES_PER_SCALE = 15 * MIB
INIT_WAL_BYTES = 20 * MIB
INIT_WAL_BYTES_PER_SCALE = 12.5 * MIB
INIT_WAL_MAX_BYTES = 1088 * MIB


@dataclass(frozen=True, slots=True)
class Size:
    """What a dataset's template takes on disk, and so each working copy of it."""

    total: int  # bytes
    wal: int  # of which pg_wal
    measured: bool  # measured on the template made earlier, else estimated from the spec


@dataclass(frozen=True)
class Loading:
    """Where a kind loads its dataset, and with what: a session on the dataset's database
    (``connect``), one on another database of the server and a connection string for a client
    program (``connect_to``, ``conninfo``: a server pglab made, here or on a host; None in
    pglab's database on an existing server), the server's binaries, where to tell its progress;
    what a client program needs in its environment (``env``: the password of a server on a
    host) and the password of the roles a kind makes (``password``: none where they log in by
    the cluster's socket; a server on a host lets them in over TCP with it)."""

    connect: Callable[[], psycopg.Connection]
    binaries: Binaries
    on_status: Callable[[str], None] = lambda msg: None
    connect_to: Callable[[str], psycopg.Connection] | None = None
    conninfo: Callable[[str], str] | None = None
    env: Mapping[str, str] | None = None
    password: str | None = None


class DatasetKind(Protocol):
    """A kind's own dataset (``DatasetSpec.kit``), as its workload declares it
    (``workloads.interface.Workload.dataset``): how it is told, how large it will be, how it is
    loaded (with its progress), and what it needs of this machine."""

    @property
    def name(self) -> str:
        """Its ``DatasetSpec.kit``."""
        ...

    def described(self, spec: DatasetSpec) -> str:
        """The dataset as told while it is made: ``tpcc, 2 warehouses``."""
        ...

    def estimated_size(self, spec: DatasetSpec) -> Size:
        """Its template's size before it is made (``kit_size``)."""
        ...

    def init_seconds(self, spec: DatasetSpec) -> float:
        """About how long it takes to make, on 2 CPUs (the plan's ETA)."""
        ...

    def load(self, into: Loading, spec: DatasetSpec) -> dict[str, float]:
        """Its tables made and loaded, its progress told; the seconds of each step."""
        ...

    def check(self) -> None:
        """What it needs of this machine (its generator), or a LabError saying how to get it:
        asked before anything is made (``planning/preflight``)."""
        ...


def kind_checked(spec: DatasetSpec, kind: DatasetKind | None) -> DatasetKind | None:
    """``kind``, checked to be ``spec``'s (None: pgbench's tables): a caller that passes
    another is a defect (it passes ``workloads.dataset_kind(spec)``)."""
    if (kind.name if kind is not None else None) != spec.kit:
        raise ValueError(
            f"the dataset of kit {spec.kit!r} was asked of "
            f"{kind.name if kind is not None else 'pgbench'!r}'s loader"
        )
    return kind


def described(spec: DatasetSpec, kind: DatasetKind | None = None) -> str:
    """``scale 10``, or a kind's ``tpcc, 2 warehouses``: the dataset as told while it is made."""
    if (found := kind_checked(spec, kind)) is not None:
        return found.described(spec)
    return f"scale {spec.scale}"


def kit_size(units: float, per_unit: float, per_unit_wal: float, data: float = 0.0) -> Size:
    """A kind's template size estimated from its own figures per unit of scale (its data and
    WAL, measured on templates it made), over an empty cluster's and ``data`` more."""
    kit_wal = min(INIT_WAL_BYTES + per_unit_wal * units, INIT_WAL_MAX_BYTES)
    total = DATA_BYTES + data + per_unit * units + kit_wal
    return Size(int(total), int(kit_wal), measured=False)


INIT_S_PER_SCALE = 0.25  # pgbench -i seconds per scale unit on these machines


def init_seconds(spec: DatasetSpec, kind: DatasetKind | None = None) -> float:
    """About how long the dataset takes to make (pgbench -i's, or the kind's)."""
    if (found := kind_checked(spec, kind)) is not None:
        return found.init_seconds(spec)
    return spec.scale * INIT_S_PER_SCALE


def estimated_size(spec: DatasetSpec, kind: DatasetKind | None = None) -> Size:
    """A template's size before it is made: the measured figures above, the tables larger by
    100/fillfactor, WAL only for logged tables, no data without a generate step (-I); a kind's
    from its own (``DatasetKind.estimated_size``)."""
    if (found := kind_checked(spec, kind)) is not None:
        return found.estimated_size(spec)
    steps = spec.init_steps or "dtgvp"
    generated = bool(set(steps) & set("gG"))
    spread = 100 / spec.fillfactor if generated else 0.0  # a lower fillfactor: larger tables
    data = DATA_BYTES + DATA_BYTES_PER_SCALE * spread * spec.scale
    wal: float = INIT_WAL_BYTES
    if not spec.unlogged_tables:
        wal = min(wal + INIT_WAL_BYTES_PER_SCALE * spread * spec.scale, INIT_WAL_MAX_BYTES)
    return Size(int(data + wal), int(wal), measured=False)


def size_of(
    lab: Lab,
    server: ServerSpec,
    spec: DatasetSpec,
    storage: StorageSpec | None = None,
    kind: DatasetKind | None = None,
) -> Size:
    """The template's size as measured when it was made (``dataset.json``, and its pg_wal now),
    or, when no run made it yet, ``estimated_size``. Reads only: nothing is made or locked."""
    home = lab.datasets / dataset_key(server, spec, storage or StorageSpec())
    try:
        meta = json.loads((home / "dataset.json").read_text())
        total = int(meta["size_bytes"])
    except (OSError, ValueError, KeyError, TypeError):
        return estimated_size(spec, kind)
    try:
        wal = du(home / "pgdata" / "pg_wal")
    except OSError:
        wal = min(estimated_size(spec, kind).wal, total)
    return Size(total, wal, measured=True)


@dataclass(frozen=True, slots=True)
class Dataset:
    key: str
    template: Path
    init_seconds: float
    size_bytes: int
    made_now: bool = False  # initialized by this call, not found from an earlier run
    # pgbench -i's own time per step ("client-side generate", "vacuum", "primary keys"...)
    init_steps: Mapping[str, float] = field(default_factory=dict)


def init_argv(binaries: Binaries, spec: DatasetSpec) -> list[str]:
    # not -q: a progress line per 100,000 rows (run_init tells every tenth of them)
    argv = [binaries.exe("pgbench"), "-i", "-s", str(spec.scale)]
    if spec.init_steps:
        argv += ["-I", spec.init_steps]
    if spec.partitions:
        argv += ["--partitions", str(spec.partitions)]
        if spec.partition_method:
            argv += ["--partition-method", spec.partition_method]
    if spec.fillfactor != 100:
        argv += ["-F", str(spec.fillfactor)]
    if spec.unlogged_tables:
        argv.append("--unlogged-tables")
    return argv


SAID_AFTER_S = 5.0  # an init's progress is told once it has run this long (short ones: not)


def run_init(
    argv: list[str],
    on_status: Callable[[str], None] = lambda msg: None,
    timeout: float = INIT_TIMEOUT,
) -> str:
    """Run ``pgbench -i`` to its end, reading what it says as it goes: once it has run for
    ``SAID_AFTER_S``, each step it starts and every tenth of the rows it generates (with
    pgbench's own ETA) go to ``on_status``. Its output, or a CommandError with its last
    lines (as ``procs.run``)."""
    proc = procs.spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines: list[str] = []
    late = threading.Event()

    def stop() -> None:  # from the timer's thread: the whole group, as procs.run does
        late.set()
        procs.terminate(proc)

    timer = threading.Timer(timeout, stop)
    t0, told = time.monotonic(), -1
    with procs.owned(proc):
        timer.start()
        try:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append(line)
                if time.monotonic() - t0 < SAID_AFTER_S:
                    continue
                found = init_output.progress(line)
                if found is not None and found.pct // 10 > told:
                    told = found.pct // 10
                    on_status(f"initializing dataset: {init_output.said(found)}")
                elif (step := init_output.step(line)) is not None:
                    on_status(f"initializing dataset: {step}")
            proc.wait()
        finally:
            timer.cancel()
            if proc.stderr is not None:
                proc.stderr.close()
    text = "".join(lines)
    if late.is_set():
        raise CommandError(f"pgbench -i did not finish within {timeout:.0f} s")
    if proc.returncode != 0:
        raise CommandError(f"pgbench -i failed (exit {proc.returncode}): {procs.tail(text)}")
    return text


def ensure(
    lab: Lab,
    binaries: Binaries,
    server: ServerSpec,
    spec: DatasetSpec,
    on_status: Callable[[str], None] = lambda msg: None,
    storage: StorageSpec | None = None,
    kind: DatasetKind | None = None,
) -> Dataset:
    """The dataset's template, initializing it first if no earlier run made it. A dataset for
    a storage target is its own (never shared with another target); its template stays in the
    lab home, since the lab's own filesystems do not outlive a campaign. A kind's dataset is
    loaded by ``kind`` (``workloads.dataset_kind(spec)``), pgbench's by ``pgbench -i``."""
    kind = kind_checked(spec, kind)
    storage = storage or StorageSpec()
    key = dataset_key(server, spec, storage)
    home = lab.datasets / key
    meta_path = home / "dataset.json"
    with locked(lab.datasets / f"{key}.lock"):
        if meta_path.exists():
            return _made(key, home, json.loads(meta_path.read_text()))
        shutil.rmtree(home, ignore_errors=True)  # a half-made template from an interrupted init
        home.mkdir(parents=True)
        datadir = home / "pgdata"
        on_status(f"initializing dataset {described(spec, kind)} on PostgreSQL {binaries.version}")
        t0 = time.monotonic()
        initdb(binaries, lab, datadir)
        cluster = Cluster(binaries, lab, datadir, f"init-{key}")
        with cluster:
            cluster.start()
            if kind is not None:
                into = Loading(
                    cluster.connect, binaries, on_status, cluster.connect, cluster.client_conninfo
                )
                steps = kind.load(into, spec)
            else:
                argv = [*init_argv(binaries, spec), *cluster.pgbench_conn_args()]
                steps = init_output.step_times(run_init(argv, on_status))
            cluster.stop("fast")
        init_seconds = time.monotonic() - t0
        size = du(datadir)
        meta = {
            "init_seconds": init_seconds,
            "init_steps": steps,
            "size_bytes": size,
            "dataset": spec.identity(),
            "source": binaries.label,
            "version": binaries.version,
        }
        if not storage.is_default:
            meta["storage"] = storage.identity()
        partial = meta_path.with_suffix(".partial")  # written whole, then renamed: a crash
        partial.write_text(json.dumps(meta, indent=2))  # never leaves a half dataset.json
        partial.replace(meta_path)
        on_status(
            f"dataset ready in {init_seconds:.1f} s ({size / 2**20:,.0f} MiB), "
            "kept for the next runs"
        )
        return Dataset(key, datadir, init_seconds, size, made_now=True, init_steps=steps)


def found(
    lab: Lab, server: ServerSpec, spec: DatasetSpec, storage: StorageSpec | None = None
) -> Dataset | None:
    """The dataset's template when an earlier run made it, else None: nothing is made or
    locked (its ``dataset.json`` is written whole, then renamed)."""
    key = dataset_key(server, spec, storage or StorageSpec())
    home = lab.datasets / key
    try:
        return _made(key, home, json.loads((home / "dataset.json").read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _made(key: str, home: Path, meta: JsonObject) -> Dataset:
    steps = meta.get("init_steps") or {}
    return Dataset(
        key,
        home / "pgdata",
        float(meta["init_seconds"]),
        int(meta["size_bytes"]),
        init_steps={str(k): float(v) for k, v in steps.items()},
    )


COPY_TICK_S = 1.0  # how often a long copy's bytes are counted and told


def said_copy(copied: int, total: int, seconds: float) -> str:
    """A copy's progress as told: ``1,234 of 3,210 MiB (38%), 410 MB/s, ETA 0:05``."""
    mib = 2**20
    pct = 100 * copied / total if total else 100.0
    out = f"{copied / mib:,.0f} of {total / mib:,.0f} MiB ({pct:.0f}%)"
    if seconds > 0 and copied > 0:
        rate = copied / seconds
        left = max(0, total - copied) / rate
        out += f", {rate / 1e6:,.0f} MB/s, ETA {int(left) // 60}:{int(left) % 60:02d}"
    return out


def reset(
    lab: Lab,
    dataset: Dataset,
    target: Path,
    waldir: Path | None = None,
    on_status: Callable[[str], None] = lambda msg: None,
) -> float:
    """Replace ``target`` with a copy of the dataset's template (and, with ``waldir``, its
    pg_wal with a copy there, ``target/pg_wal`` a symlink to it); return the seconds it took.
    A copy still running after ``SAID_AFTER_S`` tells ``on_status`` its bytes copied, rate and
    ETA every ``COPY_TICK_S``, and its total when done."""
    t0 = time.monotonic()
    if target.exists():
        shutil.rmtree(target)  # a pg_wal symlink is removed, not followed
    if waldir is not None and waldir.exists():
        shutil.rmtree(waldir)
    done = threading.Event()
    told = threading.Event()

    def tell() -> None:
        if done.wait(SAID_AFTER_S):
            return
        while True:
            with contextlib.suppress(OSError):  # a file copied away under the walk
                said = said_copy(du(target), dataset.size_bytes, time.monotonic() - t0)
                on_status(f"resetting dataset: {said}")
                told.set()
            if done.wait(COPY_TICK_S):
                return

    watcher = threading.Thread(target=tell, name="pglab-reset", daemon=True)
    watcher.start()
    try:
        _copy_template(lab, dataset, target)
    finally:
        done.set()
        watcher.join()
    if told.is_set():
        took, size = time.monotonic() - t0, dataset.size_bytes  # the template, whole
        on_status(
            f"dataset copied: {size / 2**20:,.0f} MiB in {took:.1f} s "
            f"({size / max(took, 1e-9) / 1e6:,.0f} MB/s)"
        )
    for leftover in ("postmaster.pid", "postmaster.opts"):
        (target / leftover).unlink(missing_ok=True)
    if waldir is not None:
        _copy(lab, dataset.template / "pg_wal", waldir)
        shutil.rmtree(target / "pg_wal")
        (target / "pg_wal").symlink_to(waldir)
        if lab.run_as is not None:
            os.lchown(target / "pg_wal", lab.run_as.uid, lab.run_as.gid)
    return time.monotonic() - t0


def _copy_template(lab: Lab, dataset: Dataset, target: Path) -> None:
    cp = shutil.which("cp")
    if cp:  # GNU cp: keeps owners and modes, uses reflinks where the filesystem has them
        procs.run(
            [cp, "-a", "--reflink=auto", str(dataset.template), str(target)],
            timeout=INIT_TIMEOUT,
            what="copy of the dataset",
        )
    else:
        shutil.copytree(dataset.template, target, symlinks=True)
        lab.give(target, recursive=True)


def _copy(lab: Lab, source: Path, target: Path) -> None:
    cp = shutil.which("cp")
    if cp:
        procs.run(
            [cp, "-a", "--reflink=auto", str(source), str(target)],
            timeout=INIT_TIMEOUT,
            what="copy of pg_wal",
        )
    else:
        shutil.copytree(source, target, symlinks=True)
        lab.give(target, recursive=True)


def du(path: Path) -> int:
    """The bytes of the files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def load_catalog(lab: Lab, binaries: Binaries) -> Mapping[str, settings.SettingDef]:
    """pg_settings of this server version, cached as JSON under ``catalog/``.

    The first call for a version makes a scratch cluster, reads pg_settings and removes it.
    """
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", binaries.key)
    path = lab.home / "catalog" / f"{safe}-{binaries.version}.json"
    if path.exists():
        rows = json.loads(path.read_text())
    else:
        with locked(path.with_suffix(".lock")):
            if path.exists():
                rows = json.loads(path.read_text())
            else:
                scratch = lab.clusters / f"catalog-{safe}"
                shutil.rmtree(scratch, ignore_errors=True)
                try:
                    initdb(binaries, lab, scratch)
                    with Cluster(binaries, lab, scratch, f"catalog-{safe}") as cluster:
                        cluster.start()
                        with cluster.connect() as conn:
                            cur = conn.cursor(row_factory=_dict_row())
                            rows = cur.execute(settings.CATALOG_SQL).fetchall()
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
                path.write_text(json.dumps(rows, default=str))
    return {r["name"]: settings.SettingDef.from_row(r) for r in rows}


def _dict_row() -> RowFactory[JsonObject]:  # pg_settings rows, kept as JSON text
    from psycopg.rows import dict_row

    return dict_row
