"""The ranked layout every metric reads: the :class:`Ranked` type (:mod:`.ranked`), how it is
built from tidy frames (:mod:`.build`, with the per-user sort-and-join kernel in
:mod:`.sort_and_join`) and its small kernels (:mod:`.kernels`)."""

from .build import prepare
from .ranked import InputRows, ItemCodes, Ranked, segment_sums

__all__ = ["InputRows", "ItemCodes", "Ranked", "prepare", "segment_sums"]
