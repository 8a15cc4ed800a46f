"""Options common to every command work before the command as well as after it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pglab.cli import main


@pytest.mark.parametrize("before", [True, False], ids=["before", "after"])
def test_store_and_lab_dir_before_or_after_the_command(
    tmp_path: Path, before: bool, capsys
) -> None:
    store = tmp_path / "given.sqlite"
    common = ["--store", str(store), "--lab-dir", str(tmp_path / "lab")]
    argv = [*common, "storage", "--list"] if before else ["storage", "--list", *common]
    assert main(argv) == 0
    assert store.exists(), "the store given was not the one opened"
    assert "storage results" in capsys.readouterr().out


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """`pglab ls --json | head`: when the pipe's reader has gone, no traceback, status 141."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    done = subprocess.run(
        [sys.executable, "-m", "pglab", "ls", "--json", "--store", str(tmp_path / "r.sqlite"),
         "--lab-dir", str(tmp_path)],
        stdout=write, stderr=subprocess.PIPE, text=True, timeout=60,
    )  # fmt: skip
    os.close(write)
    assert done.returncode == 141 and "Traceback" not in done.stderr, done.stderr


def test_suggested_commands_run_against_the_same_lab_and_store_when_pasted() -> None:
    import shlex

    from pglab.cli.common import Where

    name = "hostile ' \" <b> [x]"
    plain = Where().command("show", name)
    assert shlex.split(plain) == ["pglab", "show", name]  # quoted as a shell needs it
    given = Where("/srv/my results.sqlite", Path("/var/lab")).command("report", "sweep")
    assert shlex.split(given) == [
        "pglab", "--lab-dir", "/var/lab", "--store", "/srv/my results.sqlite", "report", "sweep"
    ]  # fmt: skip
    secret = Where("postgresql://bench:s3cret@db/results", None)
    text = secret.command("show", "sweep")
    assert "s3cret" not in text and '--store "$PGLAB_STORE"' in text and secret.secret_store
    assert not Where("postgresql://bench@db/results").secret_store


def test_every_help_reads_as_printed(capsys) -> None:
    """Each command's --help, as a person reads it: no argparse escape ('%%') left in it."""
    from pglab.cli import build_parser

    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert "tune" in sub.choices
    for name, command in sub.choices.items():
        text = command.format_help()
        assert "%%" not in text, name
