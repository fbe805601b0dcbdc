"""One pass over a text's bytes: how many newlines, and whether any byte is NUL or not ASCII.

The bytes are read eight at a time as 64-bit words (SWAR, "SIMD within a
register"). For a word ``w`` and a byte value ``v``, ``y = w ^ (v * 0x0101..01)``
has a zero byte exactly where ``w`` holds ``v``, and::

    zero_bytes(y) = ~(((y & 0x7F7F..7F) + 0x7F7F..7F) | y) & 0x8080..80

sets the high bit of exactly those bytes: ``(b & 0x7F) + 0x7F`` reaches 0x80
for every byte but 0 and never carries into the next byte (at most 0xFE), and
``| y`` adds a byte's own high bit. The number of set high bits, ``((z >> 7) *
0x0101..01) >> 56``, is the number of matching bytes (at most 8, so the sum of
the shifted bytes cannot carry). A byte that is NUL or at least 0x80 leaves a
high bit in ``zero_bytes(w) | (w & 0x8080..80)``; callers then look for the
exact position with ``bytes.find`` and validate UTF-8 themselves, so the flag
only has to be right when it says "none".
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit, parallel_chunks

_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_ONES = np.uint64(0x0101010101010101)
_NEWLINES = np.uint64(0x0A0A0A0A0A0A0A0A)


@njit(inline="always")
def _zero_bytes(y):
    """High bit set in each byte of ``y`` that is zero, clear in every other byte."""
    return ~(((y & _LOW7) + _LOW7) | y) & _HIGH


@njit(parallel=True, work="words", writes=("newlines", "flags"))
def scan_words(words, n_chunks, newlines, flags):
    """Per chunk ``t`` of ``words`` (uint64): ``newlines[t]`` = bytes equal to ``\\n``, ``flags[t]``
    non-zero when a byte is NUL or at least 0x80."""
    n = words.shape[0]
    for t in nb.prange(n_chunks):
        lo, hi = parallel_chunks(n, n_chunks, t)
        count = np.uint64(0)
        seen = np.uint64(0)
        for i in range(lo, hi):
            w = words[i]
            count += ((_zero_bytes(w ^ _NEWLINES) >> np.uint64(7)) * _ONES) >> np.uint64(56)
            seen |= _zero_bytes(w) | (w & _HIGH)
        newlines[t] = count
        flags[t] = seen
