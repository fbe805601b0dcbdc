"""``metrics_core.encode.ids_in``: membership by canonical id text, whatever the dtype,
against a plain Python set of the texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core.encode import ids_in
from metrics_core.errors import MetricsError


def text(v) -> str | None:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


CASES = [
    (pd.Index(["u1", "u2", "u3", "007"], dtype="str"), ["u3", "u1", "7"]),
    (pd.Index(["2", "x", None, "3"], dtype=object), [2, 3.0]),
    (pd.Series([1, 2, 3, 2**63 - 1]), pd.Index(["1", "3", str(2**63 - 1)], dtype="str")),
    (pd.Series(pd.array([5, None, 6], dtype="Int64")), ["6", "5"]),
    (pd.Series(["a", "b", "a"], dtype="category"), ["a"]),
    (pd.Series(["é", " x", "x"]), ["x", "é"]),
    (np.array([10, 20, 30]), np.array([30, 40])),
    (["only"], []),
    ([], ["a"]),
]


@pytest.mark.parametrize("values, allowed", CASES)
def test_membership_by_canonical_text(values, allowed):
    got = ids_in(values, allowed)
    allowed_text = {text(v) for v in list(allowed) if text(v) is not None}
    expected = [text(v) is not None and text(v) in allowed_text for v in list(values)]
    assert got.dtype == bool and got.tolist() == expected


def test_float_ids_beyond_exact_integers_are_refused():
    with pytest.raises(MetricsError, match="2\\^53"):
        ids_in(pd.Series([2.0**60]), ["1"])
