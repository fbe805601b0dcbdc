"""How far a long computation of a page is: one ``st.progress`` bar with the step, the stage
metrics_core reports and ``n of total``, in place of a spinner.

A page names the steps it will take (``Running the paired t-test``: one step per metric and
part); :class:`PageProgress` is made the active :mod:`metrics_core.progress` reporter for the
block, so the stages metrics_core reports inside a step (``testing 3 comparison(s)``, with a
count, ``resampling``, ``building the report``, ``evaluating ...``) are drawn on the page with
their count. The bar's fraction is ``(steps done + the current stage's share done) / steps``.
The bar appears only once a step or a stage runs that is not answered at once (a cached step
draws nothing) and is removed when the block ends.

:func:`progress_label` builds the fraction and the text (pure, tested without Streamlit).
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Iterator

import streamlit as st

from metrics_core import progress as reporting

from . import text

#: seconds between two redraws of the bar by the same stage (each redraw is a message to the browser)
REDRAW_SECONDS = 0.1


def progress_label(title: str, done: int, steps: int, step: str = "", stage: str = "", n: int = 0,
                   total: int | None = None, unit: str = "") -> tuple[float, str]:
    """``(fraction, text)`` of the bar: ``done`` steps of ``steps`` finished, the current ``step``
    named, and within it the ``stage`` metrics_core reports with ``n`` of ``total`` ``unit``\\ s.

    >>> progress_label("Running the paired t-test", 1, 4, "ndcg@10", "testing 2 comparison(s)", 1, 2,
    ...                "comparison")
    (0.375, 'Running the paired t-test: step 2 of 4 (ndcg@10): testing 2 comparison(s), 1 of 2 comparisons')
    """
    steps = max(int(steps), 1)
    fraction = min(max((done + stage_share(n, total)) / steps, 0.0), 1.0)
    if done >= steps:
        return 1.0, f"{title}: {steps} of {steps} steps done"
    label = f"{title}: step {done + 1} of {steps}"
    if step:
        label += f" ({step})"
    if stage:
        label += f": {stage_text(stage, n, total, unit)}"
    return fraction, label


def stage_share(n: int, total: int | None) -> float:
    """How much of a stage is done, 0 to 1 (0 for a stage without a count)."""
    return min(max(n / total, 0.0), 1.0) if total else 0.0


def stage_text(stage: str, n: int = 0, total: int | None = None, unit: str = "") -> str:
    """A stage metrics_core reports with its count: ``parsing run.csv, 12.0 of 48.0 MiB`` (a count of
    bytes, ``unit="B"``, in KiB, MiB or GiB), ``testing 2 comparison(s), 1 of 2 comparisons``.

    >>> stage_text("parsing run.csv", 12 << 20, 48 << 20, "B")
    'parsing run.csv, 12.0 of 48.0 MiB'
    >>> stage_text("preparing run")
    'preparing run'
    """
    if not total:
        return stage
    if unit == "B":
        power = next((p for p in (3, 2, 1) if total >= 1024 ** p), 0)
        size = 1024 ** power
        name = ("bytes", "KiB", "MiB", "GiB")[power]
        return f"{stage}, {n / size:,.1f} of {total / size:,.1f} {name}" if power else f"{stage}, {n:,} of {total:,} bytes"
    return f"{stage}, {n:,} of {total:,} {unit}{'' if total == 1 or not unit else 's'}"


class PageProgress:
    """A :mod:`metrics_core.progress` reporter that draws one progress bar on the page (see the
    module docstring). Use :func:`page_progress`; ``step(name)`` around each step."""

    def __init__(self, title: str, steps: int):
        self.title, self.steps, self.done = title, max(int(steps), 1), 0
        self.step_name = ""
        self.slot = None
        self._lock = threading.Lock()
        self._drawn = 0.0

    def draw(self, stage: str = "", n: int = 0, total: int | None = None, unit: str = "",
             force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn < REDRAW_SECONDS:
            return
        self._drawn = now
        fraction, label = progress_label(self.title, self.done, self.steps, self.step_name, stage, n, total, unit)
        if self.slot is None:
            self.slot = st.empty()
        self.slot.progress(fraction, text=text.md(label, limit=300))

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        """One of the page's steps; the bar counts it done when the block ends."""
        self.step_name = name
        try:
            yield
        finally:
            self.done += 1
            self.step_name = ""  # the next step is named when it starts
            if self.slot is not None:
                self.draw(force=True)

    @contextlib.contextmanager
    def stage(self, stage: str, total: int | None = None, unit: str = "it") -> Iterator["StageCount"]:
        """What metrics_core calls for each stage it reports (:func:`metrics_core.progress.stage`)."""
        count = StageCount(self, stage, total, unit)
        self.draw(stage, 0, total, unit, force=True)
        yield count

    def say(self, note: str) -> None:
        """A note metrics_core gives between stages (the first compile of the kernels), as the stage."""
        self.draw(note, force=True)

    def close(self) -> None:
        if self.slot is not None:
            self.slot.empty()


class StageCount:
    """The ``update(n)`` a stage yields: counts and redraws (at most every REDRAW_SECONDS) on ``bar``,
    any object with ``draw(stage, n, total, unit, force)``."""

    def __init__(self, bar, stage: str, total: int | None, unit: str):
        self.bar, self.stage, self.total, self.unit, self.n = bar, stage, total, unit, 0

    def update(self, n: int = 1) -> None:
        self.n += n
        self.bar.draw(self.stage, self.n, self.total, self.unit, force=self.total is not None and self.n >= self.total)


@contextlib.contextmanager
def page_progress(title: str, steps: int) -> Iterator[PageProgress]:
    """A progress bar for ``steps`` steps of a long computation, and metrics_core's stages reported
    to it, for the block (removed at its end)."""
    bar = PageProgress(title, steps)
    try:
        with reporting.active(bar):
            yield bar
    finally:
        bar.close()
