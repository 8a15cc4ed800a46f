"""The README as a newcomer's first page: short, its test command the one CI runs, and its links
into the documentation (docs/, built by tests/integration/test_docs_site.py) leading to pages
that exist — among them the two a new user looks for first; and every command's --help naming
the page of the documentation that says more."""

from __future__ import annotations

import re
from pathlib import Path

from pglab.cli import DOCS, build_parser

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 250


def test_the_readme_s_test_command_is_the_one_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    assert ci in (line.strip() for block in blocks for line in block.splitlines())
    assert "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/pglab quick" in (
        README
    )


def test_the_readme_s_links_lead_to_pages_that_exist() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not re.match(r"\w+:", link)]
    assert local, "the README links into docs/"
    missing = [link for link in local if not (REPO / link).exists()]
    assert missing == []
    # the pages a new user looks for first: a server already there, and what a verdict means
    for page in ("docs/guides/existing-server.md", "docs/guides/reading-results.md",
                 "docs/concepts/statistics.md", "LICENSE"):  # fmt: skip
        assert page in local, page


def test_every_command_s_help_names_its_page_of_the_docs() -> None:
    parser = build_parser()
    assert "docs/index.md" in parser.format_help()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(commands) == set(DOCS)
    for name, command in commands.items():
        assert (REPO / "docs" / DOCS[name]).is_file(), DOCS[name]
        assert f"docs/{DOCS[name]}" in re.sub(r"\s+", "", command.format_help()), name
