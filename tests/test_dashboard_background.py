"""The server thread's queued jobs wait while a page is being drawn (dashboard.background)."""

from __future__ import annotations

import _deadlines as deadlines
import os
import threading
import time

import pytest

from dashboard import background, cache


@pytest.fixture
def drawing(monkeypatch):
    """A page being drawn on this thread for the whole test (finished at its end)."""
    monkeypatch.setattr(background, "_DRAWING", {})
    background.page_started()
    yield
    background.page_finished()


def test_a_queued_job_starts_only_once_the_page_is_drawn(monkeypatch, drawing):
    monkeypatch.setattr(background, "YIELD_SECONDS", deadlines.BACKGROUND)  # the cap is not what releases it
    order: list[str] = []
    computed = threading.Event()
    key = f"test-background-order|{time.monotonic_ns()}"

    def job() -> int:
        order.append("computed")
        computed.set()
        return 7

    background.start(key, job)
    # the worker has time to (wrongly) run the job while the page is still being drawn
    assert not computed.wait(0.3)
    order.append("page drawn")
    background.page_finished()
    assert background.wait([key], timeout=deadlines.BACKGROUND)
    assert order == ["page drawn", "computed"]
    assert cache.SHARED.get_or_compute(key, lambda: -1) == 7


def test_a_page_that_never_says_it_is_drawn_holds_a_job_back_at_most_the_cap(monkeypatch, drawing):
    monkeypatch.setattr(background, "YIELD_SECONDS", 0.05)
    key = f"test-background-cap|{time.monotonic_ns()}"
    background.start(key, lambda: "done")
    assert background.wait([key], timeout=deadlines.BACKGROUND)  # the page is still "drawing"
    assert cache.SHARED.get_or_compute(key, lambda: "recomputed") == "done"


def test_a_page_computing_a_queued_key_itself_is_not_computed_twice(monkeypatch, drawing):
    monkeypatch.setattr(background, "YIELD_SECONDS", deadlines.BACKGROUND)
    calls: list[str] = []
    key = f"test-background-twice|{time.monotonic_ns()}"
    background.start(key, lambda: calls.append("worker") or "worker")
    # the page needs the value now: it computes it while the queued job waits for the page
    assert cache.SHARED.get_or_compute(key, lambda: calls.append("page") or "page") == "page"
    background.page_finished()
    deadline = time.monotonic() + deadlines.BACKGROUND  # until the worker has run the job
    while time.monotonic() < deadline and key in background._QUEUED:
        time.sleep(0.01)
    assert key not in background._QUEUED
    assert calls == ["page"]


def test_a_running_job_pauses_between_its_parts_while_a_page_is_drawn(monkeypatch):
    """pause_for_pages: the second part of a job waits for the page drawn meanwhile; on a page's own
    thread it never waits (the test thread draws the page and calls it)."""
    monkeypatch.setattr(background, "_DRAWING", {})
    monkeypatch.setattr(background, "YIELD_SECONDS", deadlines.BACKGROUND)  # the cap is not what releases it
    order: list[str] = []
    first_done, go_on = threading.Event(), threading.Event()
    key = f"test-background-pause|{time.monotonic_ns()}"

    def job() -> bool:
        order.append("part 1")
        first_done.set()
        go_on.wait(deadlines.BACKGROUND)  # the click arrives while the job runs
        background.pause_for_pages()
        order.append("part 2")
        return True

    background.start(key, job)
    assert first_done.wait(deadlines.BACKGROUND)
    background.page_started()
    background.pause_for_pages()  # the page's own thread: returns at once
    go_on.set()
    assert not background.wait([key], timeout=0.3)  # time for the worker to (wrongly) go on
    order.append("page drawn")
    background.page_finished()
    assert background.wait([key], timeout=deadlines.BACKGROUND)
    assert order == ["part 1", "page drawn", "part 2"]


def test_pauses_of_one_job_last_at_most_the_cap_in_all(monkeypatch):
    """Sessions drawing pages one after another never starve a job: once its pauses add up to the
    cap, its later parts go on without waiting (here some page is always being drawn)."""
    monkeypatch.setattr(background, "YIELD_SECONDS", 0.05)
    monkeypatch.setattr(background, "_drawing", lambda now: True)
    waits: list[float] = []
    original = background._yield_to_pages

    def counted(at_most=None):
        if at_most is not None:  # a pause between parts (the job's start passes none)
            waits.append(at_most)
        original(at_most)
    monkeypatch.setattr(background, "_yield_to_pages", counted)
    key = f"test-background-pause-cap|{time.monotonic_ns()}"

    def job() -> int:
        for _ in range(200):
            background.pause_for_pages()
        return 200
    background.start(key, job)
    assert background.wait([key], timeout=deadlines.BACKGROUND)
    assert 1 <= len(waits) <= 3, waits  # not 200 waits of the cap
    assert waits[0] == 0.05 and all(w < 0.05 for w in waits[1:])  # each later one what is left


def test_the_worker_runs_at_a_lower_priority_than_the_pages():
    """Linux keeps a nice value per thread: the worker's is WORKER_NICENESS above the process's,
    the calling (page) thread keeps its own."""
    key = f"test-background-priority|{time.monotonic_ns()}"
    page_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    background.start(key, lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
    assert background.wait([key], timeout=deadlines.BACKGROUND)
    worker_nice = cache.SHARED.get_or_compute(key, lambda: None)
    assert worker_nice == min(19, page_nice + background.WORKER_NICENESS)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == page_nice


def worker_idle() -> None:
    """Wait until the worker has no job queued or running: a job an earlier test of this process
    queued would otherwise wait for the page a test draws (one worker runs the jobs in order)."""
    deadline = time.monotonic() + deadlines.BACKGROUND
    while background._QUEUED and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not background._QUEUED, f"jobs still queued: {sorted(background._QUEUED)}"


def test_a_job_that_does_not_wait_for_pages_runs_while_a_page_is_drawn(monkeypatch):
    worker_idle()
    monkeypatch.setattr(background, "_DRAWING", {})
    monkeypatch.setattr(background, "YIELD_SECONDS", deadlines.BACKGROUND)  # a waiting job would wait the test out
    background.page_started()
    try:
        key = f"test-background-no-wait|{time.monotonic_ns()}"
        page_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        background.start(key, lambda: ("computed beside the page",
                                       os.getpriority(os.PRIO_PROCESS, threading.get_native_id())),
                         wait_for_pages=False)
        assert background.wait([key], timeout=deadlines.BACKGROUND / 2)  # the page is still being drawn
        assert background._drawing(time.monotonic())
        # at the page's priority: a page waiting for it is not held back when the machine is busy
        assert cache.SHARED.get_or_compute(key, lambda: None) == ("computed beside the page", page_nice)
    finally:
        background.page_finished()
