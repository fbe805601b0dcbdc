"""The form of a delete token and of the dashboard's owner secret: ``secrets.token_urlsafe(32)``,
43 URL-safe characters carrying 256 random bits.

Standard library only, and importing nothing of the package: the dashboard's server checks and
mints owner secrets with it before the package (pandas, SQLAlchemy) is loaded, by loading this file
on its own (``dashboard/owner.py``); :mod:`metrics_core.store.ids` imports it as usual.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

__all__ = ["TOKEN_BYTES", "TOKEN_PATTERN", "new_token", "is_token"]

#: the random bytes of a token (``secrets.token_urlsafe(TOKEN_BYTES)``)
TOKEN_BYTES = 32
#: A well-formed token: what ``secrets.token_urlsafe(32)`` produces (43 url-safe characters).
TOKEN_PATTERN = re.compile(r"\A[A-Za-z0-9_-]{43}\Z")


def new_token() -> str:
    """A fresh token with 256 bits from :mod:`secrets`."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def is_token(value: Any) -> bool:
    """Whether ``value`` is a text of the token's form."""
    return isinstance(value, str) and TOKEN_PATTERN.fullmatch(value) is not None
