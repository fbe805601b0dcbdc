"""The nested-record comparison the tests use where pytest.approx cannot go (dicts holding lists)."""

from __future__ import annotations

import math

import pytest
from _records import assert_same_record


def test_equal_records_pass_with_float_noise():
    expected = {"notes": [], "users": {"a": 3, "b": [1.0, 2.0]}, "name": "x", "nan": math.nan}
    got = {"notes": [], "users": {"a": 3, "b": [1.0 + 1e-13, 2.0]}, "name": "x", "nan": float("nan")}
    assert_same_record(got, expected)


@pytest.mark.parametrize("got, message", [
    ({"notes": ["x"], "n": 1.0}, "lengths differ"),
    ({"notes": [], "n": 1.001}, "['n']: 1.001 != 1.0"),
    ({"notes": [], "m": 1.0}, "keys differ"),
    ({"notes": (), "n": "1.0"}, "expected a number"),
    ({"notes": [], "n": math.nan}, "['n']: nan != 1.0"),
])
def test_differences_are_named(got, message):
    with pytest.raises(AssertionError, match=None) as info:
        assert_same_record(got, {"notes": [], "n": 1.0})
    assert message in str(info.value)


def test_text_and_flags_compare_exactly():
    with pytest.raises(AssertionError):
        assert_same_record({"ok": True}, {"ok": 1})
    with pytest.raises(AssertionError):
        assert_same_record(["a"], ["b"])
