"""Errors of the analysis store; each message is one line meant for the person who acted."""

from metrics_core.errors import MetricsError


class StoreError(MetricsError):
    """A malformed or unknown id, a wrong delete token, or a store that cannot be used."""


class StoreFullError(StoreError):
    """The store's size quota (or, for SQLite, its disk) cannot take what was asked."""
