"""The input checks written as NumPy expressions (non-finite numbers, ids to trim) against plain-Python
references, on adversarial values and across the pieces the checks read their input in."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from metrics_core.kernels import input_checks
from metrics_core.kernels.input_checks import first_non_finite, first_untrimmed
from metrics_core.kernels.strings import arrow_buffers


def reference_non_finite(values: list) -> int:
    return next((i for i, v in enumerate(values) if math.isnan(v) or math.isinf(v)), -1)


def reference_untrimmed(strings: list[str]) -> int:
    """The first string that is empty or whose first or last UTF-8 byte is not in '!'..'~'."""
    for i, s in enumerate(strings):
        raw = s.encode()
        if not raw or not (0x21 <= raw[0] <= 0x7E and 0x21 <= raw[-1] <= 0x7E):
            return i
    return -1


NUMBERS = [
    [], [0.0], [-0.0], [1.5, -0.0, 2.0], [float("nan")], [1.0, float("inf")], [1.0, 2.0, float("-inf"), float("nan")],
    [2.0 ** 53, -1e308, 5e-324, 1.7976931348623157e308], [0.0] * 9 + [float("nan")], [float("nan")] * 3,
]


@pytest.mark.parametrize("values", NUMBERS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_first_non_finite_equals_the_plain_reference(values, dtype):
    with np.errstate(over="ignore"):  # float32 turns the largest doubles into inf: one more case to find
        array = np.array(values, dtype=dtype)
    assert first_non_finite(array) == reference_non_finite(array.tolist())


def test_first_non_finite_across_pieces_and_views(monkeypatch):
    monkeypatch.setattr(input_checks, "CHECK_PIECE", 4)
    rng = np.random.default_rng(7)
    for _ in range(200):
        values = rng.normal(size=int(rng.integers(0, 23)))
        for position in rng.choice(max(len(values), 1), size=int(rng.integers(0, 3))):
            if len(values):
                values[position] = rng.choice([np.nan, np.inf, -np.inf])
        readonly = values.view()
        readonly.flags.writeable = False
        assert first_non_finite(readonly) == reference_non_finite(values.tolist())
        assert first_non_finite(values[::2]) == reference_non_finite(values[::2].tolist())


def test_first_non_finite_of_whole_numbers_is_none():
    assert first_non_finite(np.array([0, -3, 2 ** 62], dtype=np.int64)) == -1
    assert first_non_finite(np.array([True, False])) == -1


STRINGS = [
    [], ["a"], [""], ["a", ""], ["u1", " u2"], ["u1", "u2 "], ["x\t"], ["\u00a0nbsp"], ["nbsp\u00a0"],
    ["é"], ["aé"], ["日本"], ["a b", "c"], ["12", "12.0", "007"], ["a\x1f", "b"], ["~!", "!~"], ["\x7f"],
    ["ok", "fine", "z" * 300, "\u3000ideo"], ["", ""],
]


@pytest.mark.parametrize("strings", STRINGS)
@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_first_untrimmed_equals_the_plain_reference(strings, kind):
    off, data = arrow_buffers(pa.array(strings, kind))
    assert first_untrimmed(off, data) == reference_untrimmed(strings)


def test_first_untrimmed_across_pieces_and_slices(monkeypatch):
    monkeypatch.setattr(input_checks, "CHECK_PIECE", 3)
    rng = np.random.default_rng(11)
    alphabet = ["a", "Z", "7", " ", "\t", "é", "", "x y", "\u00a0", "\n"]
    for _ in range(300):
        strings = ["".join(rng.choice(alphabet, size=int(rng.integers(0, 4)))) for _ in range(int(rng.integers(0, 14)))]
        array = pa.array(strings, pa.large_string())
        assert first_untrimmed(*arrow_buffers(array)) == reference_untrimmed(strings)
        if len(strings) > 2:  # a slice: offsets that start inside the data
            assert first_untrimmed(*arrow_buffers(array.slice(1, len(strings) - 2))) == \
                reference_untrimmed(strings[1:-1])
