"""Where a run's cluster files live, as plain frozen data: a storage target (``[targets.NAME]``)
and the storage of a point (data and wal), with what is stored of them
(``stored_spec.TargetJson``/``StorageJson``). Re-exported by ``campaign.spec``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pglab.stored_spec import StorageJson, TargetJson

# an existing directory; a tmpfs; a loop device with a filesystem (both made by the lab)
TargetKind = Literal["path", "tmpfs", "loop"]


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """A storage target (``[targets.NAME]``): where a cluster's files (PGDATA or pg_wal) live.

    ``kind`` is ``"path"`` (an existing directory), ``"tmpfs"`` (mounted by the lab, ``size``
    bytes) or ``"loop"`` (a file of ``size`` bytes under ``dir`` or the lab home, attached to a
    loop device, ``mkfs.<fstype> mkfs_options``, mounted with ``mount_options``). The lab makes
    tmpfs and loop targets itself (as root) and tears them down after the campaign.
    """

    name: str
    kind: TargetKind
    path: str | None = None
    size: int | None = None
    fstype: str | None = None
    mkfs_options: tuple[str, ...] = ()
    mount_options: tuple[str, ...] = ()
    dir: str | None = None
    direct_io: bool = False

    def stored(self) -> TargetJson:
        """The target as part of a point (``RunSpec.point_dict``): with its name."""
        return {
            "name": self.name,
            "kind": self.kind,
            "path": self.path,
            "size": self.size,
            "fstype": self.fstype,
            "mkfs_options": self.mkfs_options,
            "mount_options": self.mount_options,
            "dir": self.dir,
            "direct_io": self.direct_io,
        }

    def identity(self) -> TargetJson:
        """What makes the storage what it is (its name is only a label)."""
        d = self.stored()
        d.pop("name")
        return d


@dataclass(frozen=True, slots=True)
class StorageSpec:
    """Where PGDATA (``data``) and pg_wal (``wal``) live; ``None`` is the lab home (data) and
    inside PGDATA (wal)."""

    data: TargetSpec | None = None
    wal: TargetSpec | None = None

    @property
    def is_default(self) -> bool:
        return self.data is None and self.wal is None

    def identity(self) -> StorageJson:
        return {
            "data": self.data.identity() if self.data else None,
            "wal": self.wal.identity() if self.wal else None,
        }

    def stored(self) -> StorageJson:
        """As part of a point: the targets with their names."""
        return {
            "data": self.data.stored() if self.data else None,
            "wal": self.wal.stored() if self.wal else None,
        }

    @property
    def label(self) -> str:
        data = self.data.name if self.data else "lab home"
        return data if self.wal is None else f"{data}, wal on {self.wal.name}"
