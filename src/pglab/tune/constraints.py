"""The memory a configuration asks of the machine, against a share of its RAM:
``shared_buffers + wal_buffers + maintenance_work_mem + work_mem × clients`` (each at the
configuration's value, else the server's own), below ``memory_share`` of RAM. A sampled
configuration over it is never run; a range whose smallest configuration is already over it is
refused before anything starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pglab.postgres import settings
from pglab.postgres.settings import SettingDef
from pglab.tune.space import Knob, current_value

MEMORY = ("shared_buffers", "wal_buffers", "maintenance_work_mem", "work_mem")
WAL_BUFFERS_MAX = 16 * 2**20  # wal_buffers = -1: 1/32 of shared_buffers, 64kB to 16MB


@dataclass(frozen=True)
class Memory:
    parts: tuple[tuple[str, float], ...]  # name -> bytes it counts for
    clients: int

    @property
    def total(self) -> float:
        return sum(b for _, b in self.parts)

    def text(self) -> str:
        words = []
        for name, b in self.parts:
            each = f" × {self.clients} clients" if name == "work_mem" and self.clients > 1 else ""
            words.append(f"{name} {_mib(b / (self.clients if each else 1))}{each}")
        return " + ".join(words) + f" = {_mib(self.total)}"


def _mib(b: float) -> str:
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


def memory(values: Mapping[str, str], catalog: Mapping[str, SettingDef], clients: int) -> Memory:
    """What ``values`` (settings by name; the others at the server's own value) ask of RAM."""

    def size(name: str) -> float:
        defn = catalog.get(name)
        if defn is None:
            return 0.0
        text = values.get(name, current_value(defn))
        return (settings.in_bytes(defn, text) or 0.0) if text is not None else 0.0

    shared = size("shared_buffers")
    # left to the server: automatic (the catalog's value is that of its 128MB shared_buffers)
    wal = size("wal_buffers") if "wal_buffers" in values else 0.0
    if wal <= 0:  # -1: automatic
        wal = min(max(shared / 32, 64 * 1024), WAL_BUFFERS_MAX)
    parts = (
        ("shared_buffers", shared),
        ("wal_buffers", wal),
        ("maintenance_work_mem", size("maintenance_work_mem")),
        ("work_mem", size("work_mem") * clients),
    )
    return Memory(tuple((n, b) for n, b in parts if n in catalog), clients)


def excess(mem: Memory, ram: int, share: float) -> float:
    """How far over the limit, as a share of the limit (≤ 0: within it)."""
    limit = ram * share
    return (mem.total - limit) / limit


def smallest(knobs: Sequence[Knob], fixed: Mapping[str, str]) -> dict[str, str]:
    """The configuration asking least memory: every memory knob at its minimum."""
    out = dict(fixed)
    for knob in knobs:
        if knob.name in MEMORY and not knob.choices:
            out[knob.name] = knob.setting(knob.low)
    return out


def excludes_everything(
    knobs: Sequence[Knob],
    fixed: Mapping[str, str],
    catalog: Mapping[str, SettingDef],
    clients: int,
    ram: int,
    share: float,
) -> str | None:
    """Why no configuration of the knobs fits the memory constraint, or None."""
    mem = memory(smallest(knobs, fixed), catalog, clients)
    if excess(mem, ram, share) <= 0:
        return None
    return (
        f"the memory constraint excludes every configuration: even the smallest asks "
        f"{mem.text()}, over memory_share = {share:g} of {_mib(ram)} RAM ({_mib(ram * share)})"
    )
