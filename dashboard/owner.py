"""The browser's owner secret: what lets a browser change the working copies it created.

The secret is 256 random bits (``secrets.token_urlsafe(32)``), kept in the browser as the
cookie :data:`COOKIE` (``SameSite=Strict``, ``Secure`` over HTTPS, 400 days: the longest
a browser keeps a cookie) and never put in a URL. The store keeps only its SHA-256 with
each analysis the browser saves, so anyone opening a working copy's address from another
browser sees it read-only.

Streamlit reads cookies (``st.context.cookies``) from the request that opened the session,
and cannot set one from the server: a session whose browser sent no valid secret makes a
new one and writes it with a small script (``st.html`` with JavaScript), so the next load of
the page (a reload, another tab) sends it. When another tab of the same browser wrote its
own secret first, the script reloads the page instead, so both tabs end up with one
secret. A browser that refuses cookies gets a new secret on every load: its working copies
open read-only after a reload, with "make my own copy".
"""

from __future__ import annotations

import streamlit as st

from metrics_core.store import TOKEN_PATTERN, new_owner_secret

__all__ = ["COOKIE", "MAX_AGE_SECONDS", "secret", "from_cookies", "keep_in_browser"]

COOKIE = "metrics_core_owner"
#: How long the browser keeps the cookie: 400 days, the most Chromium accepts.
MAX_AGE_SECONDS = 400 * 86400
_KEY = "mcd_owner_secret"


def from_cookies(cookies) -> str | None:
    """The owner secret among a request's ``cookies``, when it is well formed."""
    value = cookies.get(COOKIE) if cookies is not None else None
    return value if isinstance(value, str) and TOKEN_PATTERN.match(value) else None


def _sent_by_browser() -> str | None:
    return from_cookies(st.context.cookies)  # empty without a browser (a bare script run)


def secret() -> str:
    """This session's owner secret: the browser's, else a new one (see :func:`keep_in_browser`)."""
    value = st.session_state.get(_KEY)
    if not value:
        value = st.session_state[_KEY] = _sent_by_browser() or new_owner_secret()
    return value


def _script(value: str) -> str:
    # ``value`` matches TOKEN_PATTERN ([A-Za-z0-9_-]): nothing in it can end the string or the tag.
    return f"""<script>
(function () {{
  var name = "{COOKIE}", wanted = "{value}";
  var have = document.cookie.split("; ").filter(function (c) {{ return c.indexOf(name + "=") === 0; }})
                 .map(function (c) {{ return c.slice(name.length + 1); }})[0];
  if (!have) {{
    document.cookie = name + "=" + wanted + "; Path=/; Max-Age={MAX_AGE_SECONDS}; SameSite=Strict"
                      + (location.protocol === "https:" ? "; Secure" : "");
  }} else if (have !== wanted) {{
    window.location.reload();  /* another tab of this browser wrote its secret first: adopt it */
  }}
}})();
</script>"""


def keep_in_browser() -> None:
    """Write this session's secret into the browser's cookie when the browser did not send it."""
    value = secret()
    if _sent_by_browser() == value or not TOKEN_PATTERN.match(value):
        return
    st.sidebar.html(_script(value), unsafe_allow_javascript=True)
