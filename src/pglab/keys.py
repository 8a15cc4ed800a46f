"""A key of a campaign file's table, declared: its type, allowed values or range, default and
meaning. The vocabulary of the campaign's tables (``campaign/schema``) and of the keys each kind
of workload owns (``workloads/KIND/work.py``, which the tables assemble): a core module, so
that both may import it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Key:
    """One key of a table. ``type`` is a TOML type (string, integer, number, boolean), a shape
    of ``SHAPES`` or the name of a table whose keys the value takes (a variant's ``dataset``)."""

    name: str
    type: str
    doc: str  # one line: what it means
    example: str | None = None  # TOML text of its value in the layout of `pglab run --help`
    default: Any = None  # the value when the key is left out (None: none, or see default_doc)
    default_doc: str = ""  # the default in words, when it is not one value
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None  # exclusive minimum
    pattern: str | None = None
    commented: bool = False  # in the layout as a comment: an alternative to the key before it
    axis: bool = True  # a [workload] or [dataset] key that can be a [matrix] axis
    kinds: tuple[str, ...] = ()  # [targets.NAME]: the kinds of target that take it
    required: bool = False
    subtable: bool = False  # written as its own table: [server.settings]
    # what a value is, in the problem of a wrong one ("expected a percentage from 0.1 to 500");
    # left empty: said by its type ("a whole number", "true or false")
    what: str = ""
