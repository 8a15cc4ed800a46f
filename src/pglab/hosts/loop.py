"""One asyncio event loop in a thread of its own, for every SSH connection of a campaign: the
executor stays synchronous and calls into it (``call``), and callbacks from remote processes
(pgbench's progress lines) come from that thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_loop.run_forever, name="pglab-ssh", daemon=True)
            thread.start()
        return _loop


def call(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the SSH loop and wait for its result (its exception is raised here). A
    KeyboardInterrupt while waiting cancels it there."""
    future = asyncio.run_coroutine_threadsafe(coro, loop())
    try:
        return future.result(timeout)
    except BaseException:
        future.cancel()
        raise
