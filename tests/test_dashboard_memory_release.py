"""The server gives memory back once viewers leave: the cache's sweeper, after releasing expired
entries or closed sessions, collects garbage and asks the allocators to return freed pages, on that
pass and the next one (what other threads free after it). Checked on the mechanism (the calls made),
not on the process's memory, which other programs on the machine move."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("streamlit")

from dashboard import cache, memory  # noqa: E402


def test_the_sweeper_releases_freed_memory_after_entries_expire_and_once_more(monkeypatch):
    clock = {"now": 0.0}
    budget = cache.ByteBudgetCache(1 << 20, ttl_seconds=10, clock=lambda: clock["now"])
    budget.get_or_compute("viewer's file", lambda: b"x" * 1000)
    released = []
    twice = threading.Event()

    def release() -> None:
        released.append(len(budget))
        if len(released) >= 2:
            twice.set()
    monkeypatch.setattr(memory, "release_freed_memory", release)
    closed = iter([0, 3])  # the sessions closed on each pass: none, then three viewers' sessions
    clock["now"] = 11.0  # the entry has expired
    stop = threading.Event()
    sweeper = cache.start_sweeper(budget, interval=0.01, also=lambda: next(closed, 0), stop=stop)
    try:
        assert twice.wait(30), released
    finally:
        stop.set()
        sweeper.join(5)
    assert released[:2] == [0, 0]  # the expired entry was gone when memory was released


def test_the_allocator_settings_take_on_glibc():
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.fail("the dashboard's server runs on glibc; these settings are what it relies on")
    assert memory.return_large_blocks_on_free()
    assert memory.limit_arenas()
    memory.release_freed_memory()  # returns nothing; must not raise
