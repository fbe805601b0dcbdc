"""The kernels' sort (:mod:`metrics_core.kernels.sorting`: packed quicksort up to ``PACKED_MAX`` keys,
merge sort beyond) against NumPy's stable sort: same order of keys and of the payload carried with
them, ties kept in input order, on orders that are a quicksort's worst cases too."""

from __future__ import annotations

import numpy as np
import pytest

from metrics_core.kernels.sorting import BLOCK, PACKED_MAX, sort_desc, sorted_desc

SIZES = [0, 1, 2, 15, 16, 17, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5, 1000, PACKED_MAX, PACKED_MAX + 1, 5000]


def _keys(rng, m: int, kind: str) -> np.ndarray:
    if kind == "ties":
        return rng.integers(0, 5, size=m) / 4.0
    if kind == "last_bit":  # neighbours differ in the last mantissa bit only
        return 1.0 + rng.integers(0, 8, size=m) * 2.0**-52
    if kind == "signs":
        return rng.choice([-1.5, -0.0, 0.0, 2.0, np.inf, -np.inf], size=m)
    if kind == "ascending":
        return np.sort(rng.random(m))
    if kind == "descending":
        return np.sort(rng.random(m))[::-1].copy()
    if kind == "equal":
        return np.full(m, 0.25)
    if kind == "organ_pipe":  # up then down: median-of-three's bad case
        return np.minimum(np.arange(m), m - np.arange(m)).astype(np.float64)
    if kind == "huge":  # magnitudes across the whole float range, both signs, subnormals
        return rng.choice([-1, 1], size=m) * 2.0 ** rng.integers(-1074, 1023, size=m) * rng.random(m)
    return rng.random(m)


@pytest.mark.parametrize("kind", ["distinct", "ties", "last_bit", "signs", "ascending", "descending", "equal",
                                  "organ_pipe", "huge"])
@pytest.mark.parametrize("m", SIZES)
def test_sort_desc_is_numpys_stable_descending_order(m, kind):
    rng = np.random.default_rng(m)
    keys = _keys(rng, m + 7, kind)  # sorts the first m entries only
    k, p = keys.copy(), np.arange(m + 7, dtype=np.int64)
    sort_desc(k, p, np.empty(m + 7), np.empty(m + 7, dtype=np.int64), m)
    expected = np.argsort(-keys[:m], kind="stable")
    np.testing.assert_array_equal(p[:m], expected)
    assert k[:m].tobytes() == keys[:m][expected].tobytes()  # bit for bit, signed zeros included
    np.testing.assert_array_equal(k[m:], keys[m:])  # entries past m untouched


@pytest.mark.parametrize("kind", ["distinct", "ties", "signs"])
@pytest.mark.parametrize("m", SIZES)
def test_sorted_desc_matches_numpy_sort(m, kind):
    values = _keys(np.random.default_rng(m + 1), m + 3, kind)
    got = sorted_desc(values, m)
    np.testing.assert_array_equal(got, np.sort(values[:m])[::-1])
    np.testing.assert_array_equal(values, _keys(np.random.default_rng(m + 1), m + 3, kind))  # input untouched
