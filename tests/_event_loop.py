"""Run a coroutine to its end from a test, whatever the test's thread already runs."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_on_own_loop(coroutine):
    """``asyncio.run`` on a thread of its own: a worker that ran a browser test before keeps
    Playwright's sync API event loop on its main thread, where ``asyncio.run`` is refused."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
