"""The websocket client of the load test (benchmarks/streamlit_ws.py) against a real
dashboard server, without a browser: two sessions at once open the demo's Overview and
change K twice each; every change must end in a finished script run, with no exception
element, whose tables are recomputed at the new K. Nothing here asserts a time.

The reviewer's path (``--path reviewer``) runs end to end on a small analysis of three models
put in the shared server's store (3 x 2,000 rows, two sessions, one round), and its checks are
shown to fail: a path whose answers are checked for values they never show reports each of
those actions as an error, and the check functions refuse answers built here without the value.

The forward-message cache is also checked offline: a message the server marks
cacheable is kept and a later reference to it is resolved, a reference to a message
never received is refused.
"""

from __future__ import annotations

import _deadlines as deadlines
import asyncio
import dataclasses
import sys

import pyarrow as pa
import pytest
from streamlit.proto.ArrowData_pb2 import ArrowData
from streamlit.proto.Dataframe_pb2 import Dataframe
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Heading_pb2 import Heading
from streamlit.proto.Markdown_pb2 import Markdown

from dashboard_server import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
from benchmarks import load_test  # noqa: E402
from _event_loop import run_on_own_loop  # noqa: E402
from benchmarks.streamlit_ws import ProtocolError, RunResult, Session  # noqa: E402

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


# ---------------------------------------------------------------- the reviewer's path

REVIEWER_USERS, REVIEWER_ITEMS = 100, 20  # 2,000 rows per model
PATH_ACTIONS = ["open Overview", "Overview: K", "open Compare", "Compare: metric", "Compare: per-user metric",
                "Compare: K"]


def _reviewer(server: str, store_dir, data_dir, sessions: int) -> dict:
    return load_test.run(sessions=sessions, steps=1, url=server, timeout=deadlines.SCRIPT_RUN, walk="reviewer",
                         users=REVIEWER_USERS, items=REVIEWER_ITEMS, data_dir=data_dir, store_dir=store_dir)


def test_reviewer_path_on_a_stored_analysis_of_three_models(streamlit_server, streamlit_store_dir, tmp_path):
    result = _reviewer(streamlit_server, streamlit_store_dir, tmp_path, sessions=2)
    assert result["errors"] == [] and result["server_alive"]
    assert result["models_rows"] == REVIEWER_USERS * REVIEWER_ITEMS
    actions = result["actions"]
    # a new K may drop Compare's metrics and the page asks for one again: that step is extra
    assert set(PATH_ACTIONS) <= set(actions) <= {*PATH_ACTIONS, "Compare: metric picked again after K"}
    assert all(actions[name]["n"] == 2 for name in PATH_ACTIONS)
    timed = sum(row["n"] for row in actions.values())
    assert result["overall"]["n"] == timed - 2  # every action but the two openings
    assert result["script_runs"] >= timed
    for row in [*actions.values(), result["overall"]]:
        assert 0 < row["p50"] <= row["p95"] <= row["max"]
    # the files were written once, as the browser benchmark writes them, and are found again
    written = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    assert sorted(p for p in written if p.startswith("model_")) == ["model_0.trec", "model_1.csv", "model_2.parquet"]
    again = load_test.bench_files(tmp_path, REVIEWER_USERS, REVIEWER_ITEMS)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == written
    assert [p.name for p in again.runs.values()] == ["model_0.trec", "model_1.csv", "model_2.parquet"]


def _checked_for_what_never_shows(original):
    """reviewer_round, with the Overview's K checked for K = 99 and the added metric's answer checked
    for a metric never chosen: the actions are the same, only what their answers must show differs."""
    def plan(round_, seed):
        inner = original(round_, seed)
        sent = yield next(inner)
        while True:
            try:
                action = inner.send(sent)
            except StopIteration:
                return
            if action.name == "Overview: K":
                action = dataclasses.replace(action, check=load_test.k_shown(99))
            elif action.name == "Compare: per-user metric":
                action = dataclasses.replace(action, check=load_test.compare_shows(["mrr@99"]))
            sent = yield action
    return plan


def test_reviewer_path_reports_an_answer_without_the_value_set(streamlit_server, streamlit_store_dir, tmp_path,
                                                               monkeypatch):
    monkeypatch.setattr(load_test, "reviewer_round", _checked_for_what_never_shows(load_test.reviewer_round))
    result = _reviewer(streamlit_server, streamlit_store_dir, tmp_path, sessions=1)
    assert result["server_alive"]
    errors = result["errors"]
    assert len(errors) == 2, errors
    assert "Overview: K" in errors[0] and "does not show K = 99" in errors[0]
    assert "Compare: per-user metric" in errors[1] and "not mrr@99" in errors[1]
    assert set(PATH_ACTIONS) <= set(result["actions"])  # the session went on after each failure


def _answer(*elements) -> RunResult:
    return RunResult(0.1, "finished", 1, list(elements), [], 0)


def _verdict(*metrics: str):
    sink = pa.BufferOutputStream()
    table = pa.table({"metric": list(metrics), "challenger": ["b"] * len(metrics)})
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return "dataframe", Dataframe(arrow_data=ArrowData(data=sink.getvalue().to_pybytes()))


def test_reviewer_checks_refuse_answers_without_the_value():
    title = ("heading", Heading(body=load_test.COMPARE_TITLE))
    notice = ("markdown", Markdown(body=load_test.COMPARE_EMPTY))
    check = load_test.compare_shows(["map@20", "recall@20"])
    assert check(_answer(title, _verdict("map@20", "recall@20", "map@20"))) is None
    assert "not map@20, recall@20" in check(_answer(title, _verdict("map@20")))
    assert check(_answer(title)) == "no verdict table"
    assert "heading" in check(_answer(_verdict("map@20", "recall@20")))
    at_k = load_test.compare_shows(k=5)
    assert at_k(_answer(title, _verdict("ndcg@5", "r_precision"))) is None
    assert "not at K = 5" in at_k(_answer(title, _verdict("ndcg@5", "ndcg@10")))
    assert at_k(_answer(title, notice)) is None  # no metric chosen: picked again by the path
    assert check(_answer(title, notice)) == "no verdict table"  # but not when metrics were asked for
    k_check = load_test.k_shown(20)
    assert k_check(_answer(("markdown", Markdown(body="Users counted: all · K = 20 · linear gain")))) is None
    assert k_check(_answer(("markdown", Markdown(body="K = 200 ")))) == "the page does not show K = 20"
    page = load_test.page_shown("Overview", 20)
    assert "no 'Overview' heading" in page(_answer(("markdown", Markdown(body="K = 20 "))))
