"""The cyclic garbage collector paused while a large acyclic structure is built (a report's
runs decoded from JSON: millions of lists and dicts). CPython runs a collection every few
hundred allocations and, as the heap grows, full ones that walk every live object: the
report of 1,000 runs (``bench/report.py --runs 1000``) spent about 2 of its main process's
8.5 CPU seconds in them, freeing nothing. Reference counting still frees everything at once;
only reference cycles wait for the next collection after the pause."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0  # pauses in progress (threads of ``pglab serve`` gather reports at once)
_resume = False  # whether the collector was enabled when the first pause began


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic collection inside; the collector is enabled again when the last pause in
    progress ends, unless it was disabled before the first began."""
    global _holders, _resume
    with _lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()
