"""``prepare`` and ``Ranked`` under their former module name; both live in :mod:`metrics_core.layout`."""

from .layout import InputRows, ItemCodes, Ranked, prepare, segment_sums

__all__ = ["InputRows", "ItemCodes", "Ranked", "prepare", "segment_sums"]
