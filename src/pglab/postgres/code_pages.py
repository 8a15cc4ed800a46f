"""A server's code read afresh before it starts: where a build's code lands in memory is drawn
again at every start, so that it is noise of each run rather than a bias of each build.

Two builds of one source are the same code byte for byte (their binaries differ only in the
install paths they hold, of one length, and the build id: ``postgres/build.py``), yet they can
run a few percent apart, in the same direction campaign after campaign (issue 58: of the
bisection's builds of identical source, c7 ran +5.4% and c10 +7.9% against c0). A file's pages
stay in the page cache from one start to the next, in the physical pages they were first read
into, and where those pages fall in the CPU's physically indexed caches decides how often the
hot code evicts itself: a build whose pages happened to land well runs faster at every start,
for as long as its files stay cached. Dropping the cached pages of the server's executable and
libraries before each start (``posix_fadvise(POSIX_FADV_DONTNEED)``: pages mapped by a running
process are kept) makes the next start read them into pages drawn again, as STABILIZER
re-randomises a program's layout (Curtsinger and Berger, ASPLOS 2013): what was each build's
offset becomes each run's noise, which the repeats average and the intervals include.

``PGLAB_KEEP_CODE_PAGES=1`` keeps them (``bench/build_bias.py --keep-code-pages``: what the
eviction removes, measured).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

KEEP = "PGLAB_KEEP_CODE_PAGES"


@functools.cache
def code_files(bindir: Path) -> tuple[Path, ...]:
    """The files whose code a server of ``bindir`` runs: its ``postgres`` executable and the
    shared libraries installed beside it (``../lib``: the procedural languages, extensions and
    libpq a build installs). Found once per bindir, not at every start."""
    found = [bindir / "postgres"]
    lib = bindir.parent / "lib"
    if lib.is_dir():
        found += sorted(p for p in lib.rglob("*.so*") if p.is_file() and not p.is_symlink())
    return tuple(p for p in found if p.is_file())


def read_afresh(bindir: Path) -> int:
    """Drop the page cache's copy of a server's code files (see the module), unless
    ``PGLAB_KEEP_CODE_PAGES`` is set: the number of files dropped. Never fails a start: a file
    that cannot be opened is left as it is."""
    if os.environ.get(KEEP) or not hasattr(os, "posix_fadvise"):
        return 0
    dropped = 0
    for path in code_files(bindir):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            dropped += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return dropped
