"""The browser's owner secret: what lets a browser change the working copies it created.

The secret is 256 random bits (``secrets.token_urlsafe(32)``), kept in the browser as the
cookie :data:`COOKIE` and never put in a URL. The store keeps only its SHA-256 with each
analysis the browser saves, so anyone opening a working copy's address from another browser
sees it read-only.

The server sets the cookie, never a page script: :class:`OwnerCookieMiddleware` (installed by
``dashboard/serve.py``) adds ``Set-Cookie`` to every HTML page it serves to a browser that did
not send a well-formed secret, with ``HttpOnly`` (no script reads it, not even one served by
another port of the same host), ``SameSite=Strict``, ``Path=/``, ``Max-Age`` of 400 days (the
longest a browser keeps a cookie) and ``Secure`` when the page was asked for over HTTPS (the
request's scheme, or ``X-Forwarded-Proto: https`` from a proxy in front). Streamlit's session
then reads it from the request that opened its websocket (``st.context.cookies``), which the
browser makes after it received the page, so the first session of a browser already has it.

A cookie that is not a well-formed secret (another page of the host may set one) is ignored:
the next page load replaces it, nothing reloads. A session without a secret (a browser that
refuses cookies, the entry script run without ``serve.py``, a bare script run) uses a secret of
its own for as long as it lasts: its working copies open read-only after a reload, with "make
my own copy".

Limits: the cookie is not readable by scripts, but over plain HTTP a page of the same host can
still *set* a cookie of this name before the browser's first visit (cookie fixation) or with a
longer path; browsers refuse to let a script overwrite an ``HttpOnly`` cookie that is already
there. Serve the dashboard on a host of its own, over HTTPS, where that matters.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from types import ModuleType
from typing import Any

import streamlit as st

__all__ = ["COOKIE", "MAX_AGE_SECONDS", "secret", "from_cookies", "cookie_values", "set_cookie_header",
           "OwnerCookieMiddleware"]

COOKIE = "metrics_core_owner"
#: How long the browser keeps the cookie: 400 days, the most Chromium accepts.
MAX_AGE_SECONDS = 400 * 86400
_KEY = "mcd_owner_secret"
#: the module that defines the secret's form (stdlib only), shared with the analysis store
TOKENS = "metrics_core.store.tokens"


def _load_tokens() -> ModuleType:
    """:data:`TOKENS`, without importing the package around it: ``dashboard/serve.py`` imports this
    module before its server answers, and the package's import (pandas, SQLAlchemy: about a CPU
    second) is left to the startup thread (:mod:`dashboard.startup`). The module is registered
    under its own name, so the store imports this same module later."""
    if TOKENS in sys.modules:
        return sys.modules[TOKENS]
    package = importlib.util.find_spec(TOKENS.split(".")[0])  # a top-level name: nothing is imported
    path = Path(package.submodule_search_locations[0], *TOKENS.split(".")[1:]).with_suffix(".py")
    spec = importlib.util.spec_from_file_location(TOKENS, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[TOKENS] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[TOKENS]
        raise
    return module


_tokens = _load_tokens()
_well_formed = _tokens.is_token
new_owner_secret = _tokens.new_token


def from_cookies(cookies) -> str | None:
    """The owner secret among a request's ``cookies`` (a mapping), when it is well formed."""
    value = cookies.get(COOKIE) if cookies is not None else None
    return value if _well_formed(value) else None


def _sent_by_browser() -> str | None:
    return from_cookies(st.context.cookies)  # empty without a browser (a bare script run)


def secret() -> str:
    """This session's owner secret: the browser's cookie, else one of the session's own."""
    value = st.session_state.get(_KEY)
    if not value:
        value = st.session_state[_KEY] = _sent_by_browser() or new_owner_secret()
    return value


def cookie_values(cookie_headers: Iterable[str]) -> list[str]:
    """Every value of :data:`COOKIE` in the ``Cookie`` request headers given (a browser sends
    one per path it was set for), in their order; malformed pairs are skipped."""
    found = []
    for header in cookie_headers:
        for pair in header.split(";"):
            name, sep, value = pair.strip().partition("=")
            if sep and name.strip() == COOKIE:
                found.append(value.strip().strip('"'))
    return found


def set_cookie_header(value: str, *, secure: bool) -> str:
    """The ``Set-Cookie`` header value that keeps the owner secret ``value`` in the browser."""
    if not _well_formed(value):
        raise ValueError("an owner secret is 43 URL-safe characters")
    return (f"{COOKIE}={value}; Path=/; Max-Age={MAX_AGE_SECONDS}; HttpOnly; SameSite=Strict"
            + ("; Secure" if secure else ""))


def _headers(scope: MutableMapping[str, Any], name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == name]


def _is_https(scope: MutableMapping[str, Any]) -> bool:
    forwarded = ",".join(_headers(scope, b"x-forwarded-proto")).split(",")[0].strip().lower()
    return scope.get("scheme") == "https" or forwarded == "https"


def _is_html(start: MutableMapping[str, Any]) -> bool:
    return any(k.lower() == b"content-type" and v.lower().startswith(b"text/html")
               for k, v in start.get("headers", ()))


class OwnerCookieMiddleware:
    """ASGI middleware: give a browser without a well-formed owner secret a new one, in an
    ``HttpOnly`` cookie on the next HTML page it is served (see :func:`set_cookie_header`).

    Requests that send a well-formed secret, websockets and non-HTML responses (scripts,
    styles, health checks, uploads) pass untouched.
    """

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope.get("type") != "http" or any(
                _well_formed(v) for v in cookie_values(_headers(scope, b"cookie"))):
            await self.app(scope, receive, send)
            return
        secure = _is_https(scope)

        async def send_with_cookie(message) -> None:
            if message.get("type") == "http.response.start" and _is_html(message):
                header = set_cookie_header(new_owner_secret(), secure=secure).encode("latin-1")
                message = {**message, "headers": [*message.get("headers", ()), (b"set-cookie", header)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)
