"""``pglab`` imports only the module of the command it runs: ``pglab --help`` lists every
command with the same lines as when every module is loaded, and each command's own parser says
the same line of help as the list."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pglab.cli import ALL, build_parser, command_in
from pglab.cli.commands import COMMANDS


def subparsers(parser):
    (action,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return action


def test_help_lists_every_command_as_the_full_parser_does() -> None:
    lazy, full = build_parser(None), build_parser(ALL)
    assert lazy.format_help() == full.format_help()
    listed = {a.dest: a.help for a in subparsers(full)._choices_actions}
    assert listed == {name: line for name, (_, line) in COMMANDS.items()}


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["ls"], "ls"),
        (["--store", "x.sqlite", "show", "1"], "show"),
        (["--lab-dir", "/tmp/l", "--store", "s", "status", "--wait"], "status"),
        (["--version"], None),
        ([], None),
        (["bogus", "ls"], None),
    ],
)
def test_the_command_is_the_first_word_not_an_option(argv: list[str], command: str | None) -> None:
    assert command_in(argv) == command


def test_a_command_loads_its_module_only() -> None:
    code = (
        "import sys\nfrom pglab.cli import main\n"
        "try:\n    main(['schema'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('pglab.cli.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip().splitlines()[-1]
    assert "'pglab.cli.schema'" in loaded
    for other in ("bisect", "fleet", "run", "tune", "show", "report"):
        assert f"'pglab.cli.{other}'" not in loaded, loaded
