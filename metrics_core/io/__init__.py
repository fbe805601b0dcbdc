"""Readers for run and ground-truth files: format detection, column mapping, validation.

``read_table(path_or_buffer, name=None, kind="run"|"qrels"|"auto", columns=None)``
returns ``(DataFrame, ColumnMapping)``; every bad input raises
:class:`metrics_core.errors.MetricsError` with a one-line message naming the
file and the line, column or value. See :mod:`.reader` for the conventions
and :mod:`.limits` for the read limits (:class:`ReadLimits`, :func:`set_limits`).
"""

from .columns import ALIASES, ROLES, ColumnMapping
from .features import read_interactions, read_item_features, read_user_attributes
from .formats import SUPPORTED_TEXT as SUPPORTED_FORMATS
from .limits import ReadLimits, set_limits
from .reader import read_qrels, read_run, read_table

__all__ = ["read_table", "read_run", "read_qrels", "read_item_features", "read_user_attributes", "read_interactions", "ColumnMapping", "ALIASES", "ROLES", "SUPPORTED_FORMATS",
           "ReadLimits", "set_limits"]
