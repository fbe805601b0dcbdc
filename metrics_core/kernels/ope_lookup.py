"""Per-round work of off-policy estimation on large logs: the evaluation policy's probability of each
logged action, and each context's top-1 rows.

On a log of millions of rounds over a million contexts the lookup is bound by reads at random places
of memory, not by arithmetic: its layout keeps what one round needs side by side (two cache misses a
round instead of four); top-1 is one pass over each context's rows (see ``benchmarks/ope_bench.py``).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit
def probability_at_logged(context, action, span, listed, out):
    """``out[i]`` = the probability the policy gives action ``action[i]`` in context ``context[i]``, 0 when it
    does not list it there.

    Context ``c`` lists the ``span[c, 1]`` pairs of ``listed`` from row ``span[c, 0]`` on; a pair is
    ``(action code, probability)`` (action codes are whole numbers below 2**53, exact as floats). A few
    pairs per context, scanned in order; the first pair of an action counts. A context code of -1 or
    beyond ``span``'s range lists nothing.
    """
    n_contexts = span.shape[0]
    for i in range(context.shape[0]):
        c = context[i]
        value = 0.0
        if 0 <= c < n_contexts:
            a = float(action[i])
            for j in range(span[c, 0], span[c, 0] + span[c, 1]):
                if listed[j, 0] == a:
                    value = listed[j, 1]
                    break
        out[i] = value
    return out


@njit
def top1_by_runs(score, starts, out):
    """The top-1 policy over runs of rows: rows ``starts[r]`` to ``starts[r + 1]`` (the last run to the end)
    are one context's. ``out[i] = 1 / g`` for the ``g`` rows holding their run's largest score, else 0; a
    run holding a NaN score gets 0 everywhere (NumPy's maximum is NaN there, which no score equals)."""
    n = score.shape[0]
    n_runs = starts.shape[0]
    for r in range(n_runs):
        lo = starts[r]
        hi = starts[r + 1] if r + 1 < n_runs else n
        best = -np.inf
        g = 0
        nan = False
        for i in range(lo, hi):
            s = score[i]
            if s != s:
                nan = True
            elif s > best:
                best = s
                g = 1
            elif s == best:
                g += 1
        for i in range(lo, hi):
            out[i] = 1.0 / g if not nan and score[i] == best else 0.0
    return out


__all__ = ["probability_at_logged", "top1_by_runs"]
