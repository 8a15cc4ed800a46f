"""What the lab made for storage targets under a lab home: mounts, loop devices, records."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pglab.storage_targets import tool


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
    records = sorted(p.name for p in states.iterdir()) if states.is_dir() else []
    return {"mounts": mounts, "loops": loops, "records": records}


NOTHING = {"mounts": [], "loops": [], "records": []}
