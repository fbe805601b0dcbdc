"""``whole_number_twins`` (ids of one side that miss the other only because a whole number is written
``12`` on one side and ``12.0`` on the other) against a plain-Python reference, on generated sides drawn
from adversarial writings: leading zeros, spaces, exponents, signs, ``-0.0``, numbers past 2^64, text."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from metrics_core import encode
from metrics_core.encode import whole_number_twins

WRITINGS = ["12", "12.0", "12.00", "012", "012.0", " 12", "12 ", " 12.0", "1e1", "1.0e1", "10", "10.0", "-3",
            "-3.0", "-3.00", "-0.0", "-0", "0", "0.0", "00.0", "99999999999999999999999",
            "99999999999999999999999.0", "-99999999999999999999999.000", "abc", "abc.0", "12.5", "+12.0", "12.",
            ".0", "7.0x", "u12"]
NUMBERS = [12, 10, -3, 0, 99, 2**62]
_WHOLE = re.compile(r"-?(0|[1-9][0-9]*)\.0+")


def _whole(text: str) -> str:
    """The writing of ``text`` as a whole number: ``"12.00"`` -> ``"12"``, ``"-0.0"`` -> ``"0"``."""
    if not _WHOLE.fullmatch(text):
        return text
    integer = text.split(".")[0]
    return "0" if integer == "-0" else integer


def reference(ids, others):
    """(count, first such id, its first twin) over the distinct ids in order of first appearance, or None."""
    mine = list(dict.fromkeys(str(v) for v in ids))
    theirs = list(dict.fromkeys(str(v) for v in others))
    absent = [x for x in mine if x not in set(theirs)]
    only_theirs = [y for y in theirs if y not in set(mine)]
    wholes = {_whole(y) for y in only_theirs}
    twins = [x for x in absent if _whole(x) in wholes]
    if not twins:
        return None
    return len(twins), twins[0], next(y for y in only_theirs if _whole(y) == _whole(twins[0]))


def _sides(seed: int):
    rng = np.random.default_rng(seed)
    ids = list(rng.choice(WRITINGS, size=int(rng.integers(0, 12))))
    if seed % 4 == 3:  # the other side an integer column
        return ids, list(rng.choice(NUMBERS, size=int(rng.integers(1, 6))))
    return ids, list(rng.choice(WRITINGS, size=int(rng.integers(0, 12))))


def _forms(values, every: bool = True):
    """The same ids as an Arrow text column and (``every``) an ``object`` column and a categorical;
    integers as int64."""
    if values and not isinstance(values[0], str):
        return [pd.Series(np.array(values, dtype=np.int64))]
    text = pd.Series(values, dtype="str")
    return [text, pd.Series(values, dtype=object), text.astype("category")] if every else [text]


@pytest.mark.parametrize("compiled", [False, True], ids=["regex", "compiled pass"])
def test_generated_sides_match_the_reference(compiled, monkeypatch):
    if compiled:  # every column takes the compiled look through the bytes, as 20M-row columns do
        monkeypatch.setattr(encode, "_SMALL_IDS", 0)
    found = 0
    for seed in range(100):
        ids, others = _sides(seed)
        expected = reference(ids, others)
        found += expected is not None
        every = seed % 10 == 0  # the other column kinds on a tenth of the cases
        for a in _forms(ids, every):
            for b in _forms(others, every):
                assert whole_number_twins(a, b) == expected, (seed, ids, others, a.dtype, b.dtype)
    assert found > 20  # the generated sides hold twins often, not only their absence


@pytest.mark.parametrize("ids, others, expected", [
    (["12.0"], ["12"], (1, "12.0", "12")),
    (["12"], ["12.00"], (1, "12", "12.00")),
    (["12", "12.0"], ["12"], None),  # a side writing both means two ids
    (["012.0", " 12", "1e1", "12."], ["12", "10"], None),  # not whole-number writings
    (["-0.0"], ["0"], (1, "-0.0", "0")),
    (["99999999999999999999999.0", "5.0"], ["99999999999999999999999", "5"], (2, "99999999999999999999999.0",
                                                                              "99999999999999999999999")),
    (["-3.0"], [-3], (1, "-3.0", "-3")),
])
def test_named_writings(ids, others, expected):
    assert reference(ids, others) == expected
    assert whole_number_twins(pd.Series(ids, dtype="str"), _forms(others)[0]) == expected


def test_no_zero_fraction_on_either_side_reads_no_distinct_ids(monkeypatch):
    """Ids no side writes as ``N.0`` cannot be twins: answered from one look at the bytes, no id hashed."""
    def refused(values):
        raise AssertionError("distinct ids computed")

    monkeypatch.setattr(encode, "_unique_text", refused)
    run = pd.Series([f"i{n:07d}" for n in range(300)] + ["12", "012", "1e1"], dtype="str")
    assert whole_number_twins(run, pd.Series(["12", "i0000001", "7"], dtype="str")) is None
    assert whole_number_twins(run, pd.Series(np.arange(50))) is None
    monkeypatch.setattr(encode, "_SMALL_IDS", 0)
    assert whole_number_twins(run, pd.Series(["12", "7"], dtype="str")) is None
