"""PGTune's rules (pgtune.leopard.in.ua, "OLTP" profile) for this machine: what a person who
does not tune would set, and what a tuned configuration must beat besides the defaults."""

from __future__ import annotations

from collections.abc import Mapping

from pglab.postgres.settings import SettingDef

KIB = 1024
MIB = 2**20
GIB = 2**30


def _kb(b: float) -> str:
    kb = int(b // KIB)
    for unit, size in (("GB", 1024**2), ("MB", 1024)):
        if kb >= size and kb % size == 0:
            return f"{kb // size}{unit}"
    return f"{kb}kB"


def rules(
    ram: int, cpus: int, max_connections: int, disk: str, catalog: Mapping[str, SettingDef]
) -> dict[str, str]:
    """PGTune's OLTP settings for ``ram`` bytes, ``cpus`` and ``max_connections`` on an SSD or
    HDD (``disk``); only those this version has."""
    shared = ram // 4
    wal_buffers = min(shared * 3 // 100, 16 * MIB)
    if wal_buffers > 14 * MIB:
        wal_buffers = 16 * MIB
    workers = max(1, min(cpus // 2, 4))
    work_mem = (ram - shared) / (max_connections * 3) / workers
    out = {
        "shared_buffers": _kb(shared),
        "effective_cache_size": _kb(ram * 3 // 4),
        "maintenance_work_mem": _kb(min(ram // 16, 2 * GIB)),
        "checkpoint_completion_target": "0.9",
        "wal_buffers": _kb(max(wal_buffers, 32 * KIB)),
        "default_statistics_target": "100",
        "random_page_cost": "1.1" if disk == "ssd" else "4",
        "effective_io_concurrency": "200" if disk == "ssd" else "2",
        "work_mem": _kb(max(work_mem, 64 * KIB)),
        "huge_pages": "try" if ram >= 32 * GIB else "off",
        "min_wal_size": "2GB",
        "max_wal_size": "8GB",
    }
    if cpus >= 4:
        out |= {
            "max_worker_processes": str(cpus),
            "max_parallel_workers_per_gather": str(workers),
            "max_parallel_workers": str(cpus),
            "max_parallel_maintenance_workers": str(workers),
        }
    return {k: v for k, v in out.items() if k in catalog}
