"""Maintenance operations as workloads (``operation = "vacuum"``...): VACUUM, ANALYZE, CREATE
INDEX, pg_dump/pg_restore, a base backup, in MB/s. The operation timed on its own session and
watched from another (``operations``), the client programs it runs (``clients``), its figures
and progress (``figures``; version-keyed SQL in ``sql/``), how honest a stored run's ETA was
(``eta``); its runner (``runner.MaintenanceOperation``) and its run figures (``metrics``: MB/s,
the run's ``tps``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def likeness(ph: Mapping[str, Any]) -> tuple[str, str] | None:
    """A stored phase's kind of load and figure when it is an operation: its name, MB/s."""
    operation = ph.get("operation")
    return (str(operation), "MB/s") if operation else None
