"""SQL that differs between PostgreSQL versions, as files named for the first version they are
for: ``io_16.sql`` serves 16 and 17, ``io_18.sql`` 18 and later. ``sql_for`` picks the newest
file at or below the server's major version (never by trying a statement and catching its
error); a kind with no file that old is a view the version lacks (pglab supports 15 on:
the files named _15 serve every version before the next file)."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources


@cache
def _files(package: str) -> dict[str, dict[int, str]]:
    """kind -> {first major: file name} of a package's ``sql`` folder (0: unversioned)."""
    found: dict[str, dict[int, str]] = {}
    for entry in resources.files(package).joinpath("sql").iterdir():
        m = re.fullmatch(r"(.+?)(?:_(\d+))?\.sql", entry.name)
        if m:
            found.setdefault(m.group(1), {})[int(m.group(2) or 0)] = entry.name
    return found


def sql_for(package: str, kind: str, version_num: int) -> str | None:
    """The SQL of ``kind`` in ``package``'s ``sql`` folder for a server of ``version_num``
    (``server_version_num``: 180001): the newest ``KIND_N.sql`` with N at or below its major,
    else ``KIND.sql``; None when there is neither (a view that version lacks)."""
    versions = _files(package).get(kind, {})
    usable = [v for v in versions if v <= version_num // 10000]
    if not usable:
        return None
    name = versions[max(usable)]
    return resources.files(package).joinpath("sql", name).read_text()
