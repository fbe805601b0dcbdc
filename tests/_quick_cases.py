"""The generated-case tests' smaller sample in the quick tier.

``python3 scripts/test.py --quick`` sets the environment variable ``METRICS_CORE_QUICK_CASES=1``; the
full suite (CI) leaves it unset. With it set, a matrix test parametrised over
``covering(CASES, key, ...)`` runs a subset of its cases in which every value of every key still
appears at least once (every preset, every awkward case, every tie rule...), and the property tests
draw fewer fixed examples (the ``quick`` hypothesis profile of ``tests/conftest.py``). Without it,
every case runs. The quick tier still runs every test function; only how many cases a generated one
draws changes (``docs/contributing.md`` gives the counts).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

ENV = "METRICS_CORE_QUICK_CASES"
#: whether this run is the quick tier's (fewer generated cases)
QUICK = os.environ.get(ENV) == "1"
#: the property tests' fixed examples per test in the quick tier (the full suite draws 50)
QUICK_EXAMPLES = 12

T = TypeVar("T")


def cover(cases: Sequence[T], *keys: Callable[[T], object]) -> list[T]:
    """The fewest cases, picked greedily in order, in which every value each of ``keys`` takes over
    ``cases`` appears at least once: at each step the first case bringing the most values not yet seen.

    Over a full grid of P x C cases with the two coordinates as keys this is a diagonal of
    ``max(P, C)`` cases. With no key, the first case alone. The order of ``cases`` is kept."""
    if not cases:
        return []
    wanted = {(i, key(case)) for case in cases for i, key in enumerate(keys)}
    picked: list[int] = []
    seen: set = set()
    while wanted - seen or not picked:
        gains = [len({(i, key(case)) for i, key in enumerate(keys)} - seen) if n not in picked else -1
                 for n, case in enumerate(cases)]
        best = max(range(len(cases)), key=lambda n: (gains[n], -n))
        picked.append(best)
        seen |= {(i, key(cases[best])) for i, key in enumerate(keys)}
        if not keys:
            break
    return [cases[n] for n in sorted(picked)]


def covering(cases: Sequence[T], *keys: Callable[[T], object]) -> list[T]:
    """``cases`` whole, or in the quick tier (:data:`QUICK`) :func:`cover` of them over ``keys``."""
    return cover(cases, *keys) if QUICK else list(cases)


def chosen(cases: Sequence[T], quick: Sequence[T]) -> list[T]:
    """``cases`` whole, or in the quick tier (:data:`QUICK`) the cases ``quick`` names (each one of ``cases``,
    in the order of ``cases``): for a test whose every case already covers every other dimension."""
    unknown = [case for case in quick if case not in cases]
    if unknown:
        raise ValueError(f"quick cases {unknown!r} are not among the cases {list(cases)!r}")
    return [case for case in cases if case in quick] if QUICK else list(cases)
