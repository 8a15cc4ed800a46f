"""Statement classes: a statement's text with its constants taken out, as
``pg_stat_statements`` groups statements (a pure approximation on the text: string, number
and parameter constants become ``?``, lists of them one ``?``, spaces one), and its kind (the
first keyword: SELECT, UPDATE, BEGIN ...); its key among a run's metrics (``key_of``)."""

from __future__ import annotations

import hashlib
import re

_STRING = re.compile(r"(?:[EeBbXxNn])?'(?:[^']|'')*'")
_NUMBER = re.compile(r"(?<![\w$.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_PARAM = re.compile(r"\$\d+")
_LIST = re.compile(r"\(\s*\?(?:\s*,\s*\?)+\s*\)")
_SPACE = re.compile(r"\s+")
_KIND = re.compile(r"\s*\(*\s*([A-Za-z]+)")
MAX_CLASS_CHARS = 400


def class_of(statement: str) -> str:
    """``UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?``: what statements
    that differ only in their constants share."""
    text = _STRING.sub("?", statement)
    text = _PARAM.sub("?", text)
    text = _NUMBER.sub("?", text)
    text = _LIST.sub("(?)", text)
    text = _SPACE.sub(" ", text).strip().rstrip(";").strip()
    return text[:MAX_CLASS_CHARS]


def kind_of(statement: str) -> str:
    """The statement's first keyword, upper case (``WITH`` as written; ``?`` when none)."""
    found = _KIND.match(statement)
    return found.group(1).upper() if found else "?"


def key_of(statement: str) -> str:
    """A class's key among a run's metrics: 12 hex digits of the SHA-1 of its text
    (``class_of``), the same for ``pg_stat_statements``' ``$1`` and the log's constants."""
    return hashlib.sha1(class_of(statement).encode()).hexdigest()[:12]
