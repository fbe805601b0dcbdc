"""The profile's bookkeeping (benchmarks/profile_rerun.py) on hand-written py-spy stacks:
each sample goes to the kind of work its frames show, counted by hand here."""

from __future__ import annotations

from benchmarks import profile_rerun

THREAD = "Thread._bootstrap (threading.py:1002);Thread.run (threading.py:982)"
SCRIPT = THREAD + ";ScriptRunner._run_script (streamlit/runtime/scriptrunner/script_runner.py:961)"
PAGE = SCRIPT + ";<module> (dashboard/app.py:66);<module> (overview.py:76)"
RAW = "\n".join([
    # Streamlit's gc.collect after the run (a C call: the leaf is the Python caller)
    SCRIPT + ";ScriptRunner._on_script_finished (streamlit/runtime/scriptrunner/script_runner.py:1055) 7",
    # the bootstrap, with numpy below it: still the bootstrap
    PAGE + ";ci_table (dashboard/compute.py:10);bootstrap_ci_columns (metrics_core/analysis/stats.py:40);"
           "_wrapfunc (numpy/_core/fromnumeric.py:57) 5",
    # a table drawn by the page: Arrow conversion, not "dashboard code"
    PAGE + ";DeltaGenerator.dataframe (streamlit/elements/arrow.py:700);"
           "convert_anything_to_arrow_bytes (streamlit/dataframe_util.py:900) 3",
    # our own Python in the page file
    PAGE + ";needs_probabilities_view (dashboard/tables.py:265) 2",
    # the event loop: threading's _bootstrap is not the bootstrap CIs
    THREAD + ";Server.main_loop (uvicorn/server.py:240);BaseEventLoop._run_once (asyncio/base_events.py:1900) 4",
    "a malformed line without a count",
])


def test_samples_are_counted_for_the_kind_their_frames_show():
    stacks = profile_rerun.parse_raw(RAW)
    assert [count for _, count in stacks] == [7, 5, 3, 2, 4]
    kinds = profile_rerun.by_kind(stacks)
    expected = {"Streamlit post-run clean-up": 7, "bootstrap CIs": 5, "st.dataframe": 3,
                "dashboard code": 2, "server event loop": 4}
    assert sum(kinds.values()) == 21 and len(kinds) == len(expected)
    for prefix, count in expected.items():
        assert [n for kind, n in kinds.items() if kind.startswith(prefix)] == [count], prefix


def test_our_functions_count_every_sample_that_passes_through_them():
    ours = dict(profile_rerun.top_ours(profile_rerun.parse_raw(RAW), 10))
    assert ours["<module> (overview.py)"] == 5 + 3 + 2
    assert ours["bootstrap_ci_columns (metrics_core/analysis/stats.py)"] == 5
    assert ours["needs_probabilities_view (dashboard/tables.py)"] == 2
    assert not any("streamlit" in name or "uvicorn" in name for name in ours)
    assert profile_rerun.top_self(profile_rerun.parse_raw(RAW), 1) == [
        ("ScriptRunner._on_script_finished (streamlit/runtime/scriptrunner/script_runner.py)", 7)]
