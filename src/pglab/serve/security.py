"""What keeps ``pglab serve`` safe: it listens on 127.0.0.1 unless it is given a token, which
every request must then carry (a bearer header, the cookie set when the token came in the URL,
or ``?token=``); answers tell browsers to fetch nothing from elsewhere and to send no referrer
(the URL may hold the token)."""

from __future__ import annotations

import hmac
import ipaddress
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pglab.errors import LabError

COOKIE = "pglab_token"
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    # what a page may load: this server's answers only (plotly.js included), nothing else
    (
        b"content-security-policy",
        b"default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
]


# the names a request to pglab serve without a token may be addressed to (the Host header):
# another name that resolves to 127.0.0.1 is a web page's DNS rebinding, not the user
LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(token: str | None, token_file: Path | None) -> str | None:
    """The token given (``--token``), or read from ``token_file`` (its first line); None
    without either."""
    if token_file is not None:
        try:
            token = token_file.read_text().strip().splitlines()[0] if token_file.exists() else ""
        except (OSError, IndexError, UnicodeDecodeError) as exc:
            raise LabError(f"cannot read the token file {token_file}: {exc}") from exc
        if not token:
            raise LabError(
                f"the token file {token_file} is missing or empty",
                hint="write a long random token in it, e.g. `openssl rand -hex 24 > FILE`",
            )
    if token is not None and len(token.strip()) < 16:
        raise LabError(
            "the token is shorter than 16 characters: it would be guessed",
            hint="use a long random one, e.g. `openssl rand -hex 24`",
        )
    return token.strip() if token is not None else None


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen on anything but loopback without a token: the store would be open to
    whoever reaches the address."""
    if token is None and not is_loopback(host):
        raise LabError(
            f"refusing to listen on {host} without a token: anyone who reaches it could read "
            "the store",
            hint="give --token TOKEN or --token-file FILE (e.g. `openssl rand -hex 24`), or "
            "listen on 127.0.0.1 (the default) and reach it through an SSH tunnel",
        )


class Guard:
    """ASGI middleware: the security headers on every answer, and, with a token, a 401 to any
    request without it. A token in the URL is taken once: the answer sets it as an HttpOnly
    cookie and sends the browser to the same URL without it."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        if self.token is not None:
            answer = self._refused(scope)
            if answer is not None:
                await answer(scope, receive, with_headers)
                return
        await self.app(scope, receive, with_headers)

    def _refused(self, scope: Scope) -> HTMLResponse | RedirectResponse | None:
        assert self.token is not None
        headers = Headers(scope=scope)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        given = dict(query).get("token")
        if given is not None and self._same(given):
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            back = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
            answer = RedirectResponse(back, status_code=303)
            answer.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
            return answer
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and self._same(auth[7:].strip()):
            return None
        cookie = SimpleCookie(headers.get("cookie", ""))
        if COOKIE in cookie and self._same(cookie[COOKIE].value):
            return None
        return HTMLResponse(
            "<!DOCTYPE html><title>401 token required</title><h1>401: token required</h1>"
            "<p>This pglab serve asks for its token: open the address with "
            "<code>?token=…</code> once (your browser then keeps it), or send "
            "<code>Authorization: Bearer …</code>.</p>",
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )

    def _same(self, given: str) -> bool:
        assert self.token is not None
        return hmac.compare_digest(given.encode(), self.token.encode())
