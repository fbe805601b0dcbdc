"""Look up the evaluation policy's probability of each logged action in its context."""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit
def probability_at_logged(context, action, first, count, listed_action, listed_probability, out):
    """``out[i]`` = the probability the policy gives action ``action[i]`` in context ``context[i]``, 0 when it
    does not list it there.

    The policy's rows are grouped by context: context ``c`` lists the ``count[c]`` actions from
    ``listed_action[first[c]]`` on, with ``listed_probability`` alongside (a few items per context,
    scanned in order; the first row of an action counts). A context code of -1 or beyond ``first``'s
    range lists nothing.
    """
    n_contexts = first.shape[0]
    for i in range(context.shape[0]):
        c = context[i]
        value = 0.0
        if 0 <= c < n_contexts:
            a = action[i]
            for j in range(first[c], first[c] + count[c]):
                if listed_action[j] == a:
                    value = listed_probability[j]
                    break
        out[i] = value
    return out


__all__ = ["probability_at_logged"]
