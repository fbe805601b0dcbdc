"""Analysis ids and snapshot delete tokens: random, validated by pattern, tokens kept hashed.

* An analysis id is ``secrets.token_urlsafe(24)``: 32 characters of ``[A-Za-z0-9_-]``
  carrying 192 random bits. Working copies and snapshots share this form.
* A delete token is ``secrets.token_urlsafe(32)``: 43 characters, 256 random bits. Only its
  SHA-256 is stored; a presented token is hashed and compared in constant time.

An owner secret names the client that saved an analysis: the dashboard gives each browser a
``secrets.token_urlsafe(32)`` kept in a cookie; a library caller may pass any text of up to
:data:`MAX_OWNER_CHARS` characters, or none. Only its SHA-256 is stored.

Every id or token that comes from outside is matched against its pattern before it reaches
any query (queries are parameterised as well), so neither can name a path or inject SQL.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any

from metrics_core.store.errors import StoreError
from metrics_core.store.tokens import TOKEN_PATTERN, new_token

__all__ = ["ID_PATTERN", "TOKEN_PATTERN", "MAX_OWNER_CHARS", "new_analysis_id", "validate_analysis_id",
           "new_delete_token", "validate_delete_token", "hash_delete_token", "token_matches", "new_owner_secret",
           "hash_owner"]

#: A valid analysis id: what ``secrets.token_urlsafe(24)`` produces (32 url-safe characters).
ID_PATTERN = re.compile(r"\A[A-Za-z0-9_-]{32}\Z")
#: The longest owner secret accepted (the dashboard's are 43 characters).
MAX_OWNER_CHARS = 200
_ID_BYTES = 24


def _checked(value: Any, pattern: re.Pattern, what: str, noun: str, length: int, link: str) -> str:
    """``value`` if it matches ``pattern``, else a one-line :class:`StoreError` (the value
    cut to 60 characters)."""
    if isinstance(value, str) and pattern.match(value):
        return value
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise StoreError(f"malformed {what} {shown}: {noun} is {length} letters, digits, '-' or '_'; "
                     f"check that the {link} was copied completely")


def new_analysis_id() -> str:
    """A fresh id with 192 bits from :mod:`secrets` (``token_urlsafe(24)``)."""
    return secrets.token_urlsafe(_ID_BYTES)


def validate_analysis_id(analysis_id: Any) -> str:
    """Return ``analysis_id`` if it is well formed, else raise :class:`StoreError`."""
    return _checked(analysis_id, ID_PATTERN, "analysis id", "an id", 32, "link")


def new_delete_token() -> str:
    """A fresh delete token with 256 bits from :mod:`secrets` (``token_urlsafe(32)``)."""
    return new_token()


def validate_delete_token(token: Any) -> str:
    """Return ``token`` if it is well formed, else raise :class:`StoreError`."""
    return _checked(token, TOKEN_PATTERN, "delete token", "a token", 43, "delete link")


def hash_delete_token(token: str) -> str:
    """The SHA-256 (hex) of a token: what the store keeps instead of the token."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def token_matches(token: str, stored_hash: str | None) -> bool:
    """Whether ``token`` hashes to ``stored_hash``, compared in constant time."""
    if not stored_hash:
        return False
    return hmac.compare_digest(hash_delete_token(token), stored_hash)


def new_owner_secret() -> str:
    """A fresh owner secret with 256 bits from :mod:`secrets` (``token_urlsafe(32)``)."""
    return new_token()


def hash_owner(owner: Any) -> str | None:
    """The SHA-256 (hex) the store keeps for an owner secret (``None`` for no owner); a secret
    that is not a non-empty text of at most :data:`MAX_OWNER_CHARS` characters is a StoreError."""
    if owner is None:
        return None
    if not isinstance(owner, str) or not 0 < len(owner) <= MAX_OWNER_CHARS:
        raise StoreError(f"an owner secret is a text of 1 to {MAX_OWNER_CHARS} characters")
    return hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()
