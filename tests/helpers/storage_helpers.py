"""What the lab made for storage targets under a lab home: mounts, loop devices, records."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pglab.lab import Lab
from pglab.targets.targets import tool, undo


def need_root_and_tools(*names: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("storage targets the lab makes (loop devices, mounts) need root")
    for name in ("losetup", "mount", "umount", *names):
        if tool(name) is None:
            pytest.skip(f"{name} is not installed")


def made_under(home: Path) -> dict[str, list[str]]:
    """Mounts below ``home``, loop devices backed by files below it, records of targets."""
    mounts = [
        line.split()[1]
        for line in Path("/proc/self/mounts").read_text().splitlines()
        if line.split()[1].startswith(str(home) + "/")
    ]
    losetup = shutil.which("losetup") or "losetup"
    out = subprocess.run([losetup, "-a"], capture_output=True, text=True, check=False).stdout
    loops = [line for line in out.splitlines() if f"({home}/" in line]
    states = home / "storage"
    records = sorted(
        p.name for p in states.iterdir() if p.suffix in (".json", ".img", ".partial")
    ) if states.is_dir() else []  # fmt: skip
    return {"mounts": mounts, "loops": loops, "records": records}


NOTHING = {"mounts": [], "loops": [], "records": []}


@pytest.fixture
def undo_storage(lab: Lab) -> Iterator[None]:
    """Whatever a failed test leaves recorded under the lab home is undone after it (before the
    session's lab home is removed: removing a tree with mounts in it would empty them)."""
    yield
    states = lab.home / "storage"
    for path in sorted(states.glob("*.json")) if states.is_dir() else []:
        undo(json.loads(path.read_text()), lab.home)
