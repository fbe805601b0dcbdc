"""Errors of the analysis store; each message is one line meant for the person who acted."""

from metrics_core.errors import MetricsError


class StoreError(MetricsError):
    """A malformed or unknown id, a wrong delete token, or a store that cannot be used."""


class StoreFullError(StoreError):
    """The store's size quota (or, for SQLite, its disk) cannot take what was asked."""


class NotOwnerError(StoreError):
    """A working copy changed by another client than the one that created it (it is read-only
    for everyone else; they can make their own copy)."""


class StaleRevisionError(StoreError):
    """A change based on an older revision of a working copy (another tab changed it since)."""
