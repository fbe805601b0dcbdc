"""An upload is kept even when the session that took it in ends at once, and a file whose bytes never
reached the session is said, not dropped.

* The run that takes the first files in (a new working copy) is stopped right after the intake, as
  Streamlit stops it when the tab is reloaded or closed; no later run comes. The address that run
  left must already name the working copy that the save left running fills with every file: a new
  session on it (the reload) shows them. Before, the id reached the address only when the run ended.
* The browser keeps what its uploaders list across a cut connection or a restarted server, but the
  bytes belong to the server session they were sent to: the new session gets a placeholder. The
  page must say so in one line naming the uploader, once, and keep every other file.

The expected files are the test's own (names and SHA-256 of the bytes uploaded).
"""

from __future__ import annotations

import _deadlines as deadlines
import pytest

pytest.importorskip("streamlit")
from streamlit.runtime.scriptrunner_utils.exceptions import StopException  # noqa: E402
from streamlit.testing.v1.local_script_runner import LocalScriptRunner  # noqa: E402

from dashboard import sources  # noqa: E402
from test_dashboard_upload_atomic import RUNS, TRUTH, assert_everything_kept, fresh_data_page  # noqa: E402


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def test_a_session_ended_right_after_taking_the_first_files_in_keeps_them_at_its_address(monkeypatch):
    at = fresh_data_page()
    original = sources.ingest_uploads
    calls = []

    def then_stop(*args, **kwargs):
        added = original(*args, **kwargs)
        calls.append(added)
        raise StopException()  # the session ends here: no later run finishes the save
    monkeypatch.setattr(sources, "ingest_uploads", then_stop)
    at.file_uploader(key="upload_runs_0").set_value([(n, b, "text/csv") for n, b in RUNS.items()])
    at.file_uploader(key="upload_truth_0").set_value((*TRUTH, "text/csv"))
    at.run()
    assert calls and sorted(calls[0]) == sorted(name.removesuffix(".csv") for name in RUNS)
    monkeypatch.setattr(sources, "ingest_uploads", original)
    assert "analysis" in at.query_params, "the address the stopped run left names no working copy"
    pending = at.session_state["mcd_session"].saving
    if pending is not None:  # the save the ended session left running on the store thread completes
        pending.future.result(timeout=deadlines.BACKGROUND)
    assert_everything_kept(at, {**RUNS, TRUTH[0]: TRUTH[1]})


def test_a_listed_file_whose_bytes_never_reached_the_session_is_said_once(monkeypatch):
    names = list(RUNS)
    lost = names[1]
    register = LocalScriptRunner.register_file

    def drop_one(self, file_rec):  # the bytes of ``lost`` were sent to a session that is gone
        if file_rec.name != lost:
            register(self, file_rec)
    monkeypatch.setattr(LocalScriptRunner, "register_file", drop_one)
    at = fresh_data_page()
    at.file_uploader(key="upload_runs_0").set_value([(n, RUNS[n], "text/csv") for n in names])
    at.file_uploader(key="upload_truth_0").set_value((*TRUTH, "text/csv"))
    at.run()
    errors = [e.value.replace("\\", "") for e in at.error]  # the page escapes markdown
    said = [line for line in errors if "never reached the server" in line]
    assert len(said) == 1 and '"Ranked results"' in said[0] and said[0].startswith("1 file listed"), errors
    assert "\n" not in said[0]
    assert_everything_kept(at, {**{n: RUNS[n] for n in names if n != lost}, TRUTH[0]: TRUTH[1]})
    at.run()  # said once: the next run of the same uploaders says nothing more
    assert not [e.value for e in at.error if "never reached the server" in e.value]
