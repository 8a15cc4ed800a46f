"""Passwords kept out of what pglab stores and prints: a connection string's, and every
``dsn`` of a campaign document's."""

from __future__ import annotations

import re
from typing import Any

# user:password@ up to the last "@" before the query: a password with a raw "@" or "/" in it
# is masked whole (at worst a little more than the password is masked, never less)
_URL_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^@/?#:]*):[^?#]*@")
_PARAM_PASSWORD = re.compile(r"(?i)([?&]password=)[^&#]*")
_KEYWORD_PASSWORD = re.compile(r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")


def masked_document(doc: Any) -> Any:
    """A campaign document (parsed TOML) with the password of every ``dsn`` masked: what is
    stored of it."""
    if isinstance(doc, dict):
        return {
            k: mask_dsn(v) if k == "dsn" and isinstance(v, str) else masked_document(v)
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [masked_document(v) for v in doc]
    return doc


def mask_dsn(dsn: str) -> str:
    """A connection string (URL or key=value) with any password replaced by ``***``."""
    if "://" in dsn:
        return _PARAM_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1:***@", dsn))
    return _KEYWORD_PASSWORD.sub(r"\1***", dsn)
