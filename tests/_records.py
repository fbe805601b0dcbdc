"""Compare nested records (dicts, lists, tuples of numbers and text): numbers within a
tolerance, everything else exactly.

``pytest.approx`` compares only flat mappings and sequences of numbers (pytest 9 refuses a
dict holding a list); diagnostics and JSON outputs hold lists and text beside numbers.
"""

from __future__ import annotations

import math
import numbers


def assert_same_record(got, expected, *, rel: float = 1e-9, abs_tol: float = 1e-12, path: str = "") -> None:
    """Fail with the path of the first difference: a key, an index, a type or a value."""
    where = path or "<root>"
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: expected a dict, got {type(got).__name__}"
        assert set(got) == set(expected), f"{where}: keys differ: {sorted(map(str, set(got) ^ set(expected)))}"
        for key in expected:
            assert_same_record(got[key], expected[key], rel=rel, abs_tol=abs_tol, path=f"{path}[{key!r}]")
        return
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{where}: expected a sequence, got {type(got).__name__}"
        assert len(got) == len(expected), f"{where}: lengths differ: {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_record(g, e, rel=rel, abs_tol=abs_tol, path=f"{path}[{i}]")
        return
    if isinstance(expected, numbers.Real) and not isinstance(expected, bool):
        assert isinstance(got, numbers.Real) and not isinstance(got, bool), \
            f"{where}: expected a number, got {got!r}"
        e, g = float(expected), float(got)
        if math.isnan(e):
            assert math.isnan(g), f"{where}: expected NaN, got {g!r}"
            return
        assert math.isclose(g, e, rel_tol=rel, abs_tol=abs_tol), f"{where}: {g!r} != {e!r}"
        return
    assert got == expected, f"{where}: {got!r} != {expected!r}"
