"""The server-wide byte-bounded, expiring cache of parsed files and prepared models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.cache import ByteBudgetCache, entry_overhead, nbytes
from metrics_core.errors import MetricsError


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def array_of(n_floats: int):
    return np.zeros(n_floats, dtype=np.float64)


def test_least_recently_used_entries_leave_when_the_byte_budget_is_passed():
    entry = 8000 + entry_overhead("a")  # 8,000 bytes of floats and the entry itself
    c = ByteBudgetCache(max_bytes=3 * entry, ttl_seconds=100)
    for key in "abc":
        c.get_or_compute(key, lambda: array_of(1000))
    assert len(c) == 3 and c.total_bytes == 3 * entry
    c.get_or_compute("a", lambda: pytest.fail("a is cached"))  # a becomes the most recent
    c.get_or_compute("d", lambda: array_of(1000))
    assert "b" not in c and {"a", "c", "d"} <= {k for k in "abcd" if k in c}
    assert c.total_bytes <= 3 * entry


def test_an_entry_larger_than_the_budget_is_returned_but_not_kept():
    c = ByteBudgetCache(max_bytes=1000, ttl_seconds=100)
    value = c.get_or_compute("big", lambda: array_of(1000))
    assert value.size == 1000 and "big" not in c and c.total_bytes == 0


def test_entries_expire_after_their_last_use():
    clock = Clock()
    c = ByteBudgetCache(max_bytes=10**6, ttl_seconds=60, clock=clock)
    c.get_or_compute("a", lambda: 1)
    clock.now = 50
    c.get_or_compute("a", lambda: pytest.fail("still fresh"))
    clock.now = 100  # 50 s after the last use
    assert "a" in c
    clock.now = 111
    assert "a" not in c and len(c) == 0


def test_expiry_matches_a_plain_model_of_last_uses():
    """Random lookups and stores of a few keys on a clock that moves forward by random steps: after
    every operation the cache holds exactly the keys a plain dictionary of last-use times says are
    fresh (used within the last 60 s), whatever the order of their uses."""
    import random

    rng = random.Random(3)
    clock = Clock()
    c = ByteBudgetCache(max_bytes=10**9, ttl_seconds=60, clock=clock)
    last_use: dict[str, float] = {}
    for _ in range(2000):
        clock.now += rng.choice([0, 0, 1, 5, 20, 59, 61])
        key = rng.choice("abcdefgh")
        c.get_or_compute(key, lambda: 1)
        last_use[key] = clock.now
        fresh = {k for k, used in last_use.items() if clock.now - used <= 60}
        assert set(c.keys()) == fresh
        if rng.random() < 0.2:  # a look without a use
            clock.now += rng.choice([1, 30, 61])
            fresh = {k for k, used in last_use.items() if clock.now - used <= 60}
            assert {k for k in "abcdefgh" if k in c} == fresh


def test_a_failure_is_remembered_and_raised_again_without_recomputing():
    c = ByteBudgetCache(max_bytes=10**6, ttl_seconds=60)
    calls = []

    def failing():
        calls.append(1)
        raise MetricsError("bad.csv: line 2: not a number")

    for _ in range(3):
        with pytest.raises(MetricsError, match="line 2"):
            c.get_or_compute("bad", failing)
    assert len(calls) == 1


def test_other_exceptions_are_not_cached():
    c = ByteBudgetCache(max_bytes=10**6, ttl_seconds=60)
    with pytest.raises(ZeroDivisionError):
        c.get_or_compute("x", lambda: 1 / 0)
    assert "x" not in c


def test_nbytes_counts_arrays_frames_and_object_attributes():
    class Holder:
        def __init__(self):
            self.a = np.ones(100, dtype=np.int64)
            self.b = self.a  # the same buffer counted once
            self.c = pd.DataFrame({"x": np.arange(10, dtype=np.float64)})

    frame_bytes = 10 * 8 + pd.RangeIndex(10).memory_usage()
    assert nbytes(Holder()) == 800 + frame_bytes
    assert nbytes(b"12345") == 5


def test_a_chart_is_built_once_per_content_and_counted_from_its_data():
    import pandas as pd

    from dashboard import cache, compute

    cache.SHARED.clear()
    built = []

    def build(data, title):
        built.append(title)
        return {"title": title, "points": len(data)}

    data = pd.DataFrame({"x": range(1000), "y": [0.5] * 1000})
    first = compute.cached_figure("test_chart", data, build, "a")
    assert compute.cached_figure("test_chart", data.copy(), build, "a") is first and built == ["a"]
    compute.cached_figure("test_chart", data.assign(y=0.25), build, "a")  # other content: built again
    compute.cached_figure("test_chart", data, build, "b")  # other arguments: built again
    assert built == ["a", "a", "b"]
    # the same rows in another order (a line drawn the other way), or under other column names: built again
    compute.cached_figure("test_chart", data.iloc[::-1], build, "a")
    compute.cached_figure("test_chart", data.rename(columns={"y": "z"}), build, "a")
    assert built == ["a", "a", "b", "a", "a"]
    # each chart is counted as twice its data plus a figure's overhead (other tests' server threads
    # may store entries of their own meanwhile: only the charts' entries are looked at)
    charts = [k for k in cache.SHARED.keys() if k.startswith("figure|test_chart|")]
    assert len(charts) == 5
    expected = 2 * cache.nbytes(data) + compute.FIGURE_OVERHEAD_BYTES
    assert all(cache.SHARED.size_of(k) == expected + entry_overhead(k) for k in charts)


class ReadFailure(MetricsError):
    """A subclass, to check that the type is kept."""


def test_a_remembered_failure_keeps_no_frame_alive_and_counts_its_message():
    import gc
    import weakref

    c = ByteBudgetCache(max_bytes=10**9, ttl_seconds=60)
    held = []

    def failing():
        parsed = np.ones(1_000_000)  # 8 MB that the failed read had parsed
        held.append(weakref.ref(parsed))
        try:
            raise KeyError("inner")
        except KeyError:
            raise ReadFailure("bad.parquet: over the read limit") from None  # __context__ keeps the frames

    with pytest.raises(ReadFailure) as first:
        c.get_or_compute("bad", failing)
    del first
    gc.collect()
    assert held[0]() is None, "the cached failure keeps the parsed array alive"
    assert c.total_bytes == len("bad.parquet: over the read limit") + 49 + entry_overhead("bad")  # str header 49
    with pytest.raises(ReadFailure, match="^bad.parquet: over the read limit$") as again:
        c.get_or_compute("bad", lambda: pytest.fail("recomputed"))
    assert again.value.__context__ is None and again.value.__cause__ is None


def test_nbytes_counts_arrow_data():
    import pyarrow as pa

    table = pa.table({"x": pa.array(range(1000), pa.int64()), "s": pa.array(["abc"] * 1000)})
    expected = 1000 * 8 + (1001 * 4 + 3000)  # int64 values; string offsets and characters
    assert nbytes(table) == expected
    assert nbytes(table.slice(0, 10)) == expected  # a slice holds its parent's buffers


def test_a_derived_fact_is_computed_once_per_object_and_forgotten_with_it():
    """``cache.derived`` (a model's score range, read on every run of the Overview): one computation per
    object and name, never another object's value, and nothing kept once the object is gone."""
    import gc

    from dashboard import cache

    class Model:  # stands for a prepared model: compared by identity, as mc.Ranked is
        def __init__(self, scores):
            self.scores = np.asarray(scores, dtype=float)

    calls: list[tuple[int, str]] = []

    def highest(model):
        return lambda: calls.append((id(model), "max")) or float(model.scores.max())

    a, b = Model([0.2, 0.9]), Model([3.0, 7.0])
    assert cache.derived(a, "max", highest(a)) == 0.9
    assert cache.derived(a, "max", lambda: pytest.fail("computed once")) == 0.9
    assert cache.derived(b, "max", highest(b)) == 7.0  # another object: its own value
    assert cache.derived(a, "min", lambda: float(a.scores.min())) == 0.2  # another name: its own value
    assert calls == [(id(a), "max"), (id(b), "max")]
    held = len(cache._DERIVED)
    del a
    gc.collect()
    assert len(cache._DERIVED) == held - 1
