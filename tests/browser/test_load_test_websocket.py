"""The websocket client of the load test (benchmarks/streamlit_ws.py) against a real
dashboard server, without a browser: two sessions at once open the demo's Overview and
change K twice each; every change must end in a finished script run, with no exception
element, whose tables are recomputed at the new K. Nothing here asserts a time.

The forward-message cache is also checked offline: a message the server marks
cacheable is kept and a later reference to it is resolved, a reference to a message
never received is refused.
"""

from __future__ import annotations

import _deadlines as deadlines
import asyncio
import sys

import pyarrow as pa
import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from dashboard_server import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
from benchmarks import load_test  # noqa: E402
from _event_loop import run_on_own_loop  # noqa: E402
from benchmarks.streamlit_ws import ProtocolError, Session  # noqa: E402

pytestmark = pytest.mark.browser  # end to end against a real server (no Chromium needed)

CHANGES = {0: (20, 5), 1: (50, 10)}  # session -> the K values it sets, in order




def _table(result, column_prefix: str) -> pa.Table:
    """The first table of the run with a column starting with ``column_prefix``."""
    for kind, el in result.elements:
        if kind == "dataframe" and el.arrow_data.data:
            table = pa.ipc.open_stream(el.arrow_data.data).read_all()
            if any(str(name).startswith(column_prefix) for name in table.column_names):
                return table
    raise AssertionError(f"no table with a {column_prefix}* column")


async def _one_session(url: str, ks: tuple[int, ...]) -> list:
    session, first = await Session.open(url)
    try:
        runs = [(session.widgets[session.widget_id("k")].int_value, first)]
        for k in ks:
            runs.append((k, await session.set_widget("k", k)))
        return runs
    finally:
        await session.close()


async def _sessions(url: str) -> dict:
    results = await asyncio.gather(*(_one_session(url, ks) for ks in CHANGES.values()))
    return dict(zip(CHANGES, results))


def test_each_k_change_finishes_and_shows_the_new_k(streamlit_server):
    by_session = run_on_own_loop(asyncio.wait_for(_sessions(streamlit_server), 300))
    for session, runs in by_session.items():
        assert runs[0][0] == 10, "the demo opens at the default K = 10"
        for k, result in runs:
            where = f"session {session}, K = {k}"
            assert result.status == "finished" and result.runs >= 1, where
            assert result.exceptions == [], f"{where}: {result.exceptions}"
            assert [kind for kind, _ in result.elements if kind == "exception"] == [], where
            assert any(f"K = {k} " in text for text in result.texts()), f"{where}: caption without the K"
            table = _table(result, "ndcg@")
            assert f"ndcg@{k}" in table.column_names, f"{where}: {table.column_names}"
            others = [c for c in (5, 10, 20, 50) if c != k]
            assert not any(f"ndcg@{c}" in table.column_names for c in others), where
            assert not any(f"K = {c} " in text for c in others for text in result.texts()), \
                f"{where}: a caption names another K"
            assert load_test.shows_cutoff(result, k), where
        # the numbers are recomputed: ndcg at the two K of the session differ for some model
        first, last = _table(runs[1][1], "ndcg@"), _table(runs[2][1], "ndcg@")
        ndcg_a = first.column(f"ndcg@{runs[1][0]}").to_pylist()
        ndcg_b = last.column(f"ndcg@{runs[2][0]}").to_pylist()
        assert ndcg_a != ndcg_b, f"session {session}: ndcg unchanged between K = {runs[1][0]} and {runs[2][0]}"


def test_load_test_websocket_client_runs_and_leaves_the_server_healthy(streamlit_server):
    result = load_test.run(sessions=2, steps=2, url=streamlit_server, timeout=deadlines.SCRIPT_RUN, client="websocket")
    assert result["errors"] == [] and result["server_alive"]
    assert result["actions"]["change K"]["n"] == 4 and result["actions"]["open Overview"]["n"] == 2
    assert result["script_runs"] >= 6  # two opens and four changes, each at least one run
    for row in result["actions"].values():
        assert 0 < row["p50"] <= row["p95"] <= row["max"]


def _cacheable(text: str) -> ForwardMsg:
    msg = ForwardMsg()
    msg.delta.new_element.markdown.body = text
    msg.hash = f"hash-of-{text}"
    msg.metadata.cacheable = True
    msg.metadata.delta_path.extend([0, 3])
    return msg


def test_reference_messages_resolve_from_the_cache():
    session = Session(ws=None, query_string="", page_name="", timeout=1)
    original = _cacheable("a large table")
    assert session._resolve(original.SerializeToString()).delta.new_element.markdown.body == "a large table"
    assert session._rerun_message().rerun_script.cached_message_hashes == ["hash-of-a large table"]
    ref = ForwardMsg(ref_hash="hash-of-a large table")
    ref.metadata.delta_path.extend([0, 7])
    resolved = session._resolve(ref.SerializeToString())
    assert resolved.delta.new_element.markdown.body == "a large table"
    assert list(resolved.metadata.delta_path) == [0, 7]  # placed where the reference says
    with pytest.raises(ProtocolError, match="never received"):
        session._resolve(ForwardMsg(ref_hash="unknown").SerializeToString())
