"""A run's last lines say which lab it used; as root the default lab is the machine's, shared
by everyone who runs pglab as root, and they say so (issue 52)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pglab.lab import said_home


def test_a_lab_of_ones_own_is_named_plainly(tmp_path: Path) -> None:
    assert said_home(tmp_path) == f"the lab: {tmp_path}"


@pytest.mark.skipif(os.geteuid() != 0, reason="the machine's lab is root's")
def test_the_machine_s_lab_says_it_is_shared() -> None:
    said = said_home(Path("/var/lib/pglab"))
    assert said.startswith("the lab: /var/lib/pglab (as root, the machine's lab, shared by")
    assert "PGLAB_HOME or --lab-dir for one of your own" in said
