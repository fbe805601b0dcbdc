"""The dashboard's server answers every uploader request for upload URLs, also when a script run
starts at once (a rerun asked for, then at once the request, as a page does when files are dropped
while the previous change's run starts): Streamlit 1.67 cleared the answer from the session's
outgoing queue then, and the uploader never listed the files. Over the websocket, without a browser
(``benchmarks/upload_reply_race.py`` counts the same on a server with Streamlit's queue as shipped:
20 of 30 requests unanswered at load 18). Nothing here asserts a time."""

from __future__ import annotations

import _deadlines as deadlines
import sys

import pytest

from dashboard_server import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
from _event_loop import run_on_own_loop  # noqa: E402
from benchmarks.streamlit_ws import Session  # noqa: E402
from benchmarks.upload_reply_race import one_try  # noqa: E402

pytestmark = pytest.mark.browser  # end to end against a real server (no Chromium needed)

TRIES = 6


async def _unanswered(url: str) -> int:
    session, _ = await Session.open(url, page="data", timeout=deadlines.SCRIPT_RUN)
    try:
        return sum([not await one_try(session, wait=2.0) for _ in range(TRIES)])
    finally:
        await session.close()


def test_every_request_for_upload_urls_is_answered_while_runs_start(streamlit_server):
    assert run_on_own_loop(_unanswered(streamlit_server)) == 0
