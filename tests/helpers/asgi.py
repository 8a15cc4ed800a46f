"""One GET through an ASGI application (``pglab serve``'s), without a server or a client
library: what the serve tests ask of its pages."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import unquote


def call(app: Any, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict, str]:
    """One GET through the ASGI application: status, headers, body as text."""
    target, _, query = path.partition("?")
    headers = {"Host": "127.0.0.1:8765", **(headers or {})}  # as a browser sends it
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(target),
        "raw_path": target.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "server": ("127.0.0.1", 8765),
        "client": ("127.0.0.1", 5000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    heads = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], heads, body.decode(errors="replace")
