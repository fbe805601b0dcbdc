"""An uploaded file is released from Streamlit's upload storage once the dashboard has taken it in.

Streamlit hands every script run a deep copy of what each uploader holds; the dashboard keeps the
bytes in its own sources, so it drops Streamlit's copy (``sources.release_upload``). On the next
runs the uploader returns placeholders (``DeletedFile``) with the same ids. Here AppTest checks that
every file taken in is released and that the pages keep the data; the runs that follow, where the
uploaders return placeholders, are checked in a real server (``tests/browser/test_upload_release_browser.py``):
AppTest refills its upload storage before every run.
"""

from __future__ import annotations

import _deadlines as deadlines
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager  # noqa: E402
from streamlit.runtime.uploaded_file_manager import DeletedFile  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import demo  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


@pytest.fixture
def server_storage(monkeypatch):
    """The file ids released from the upload storage, and what the uploaders returned to each run."""
    released: set[str] = set()
    returned: list[list] = []
    remove = MemoryUploadedFileManager.remove_file

    def remove_file(self, session_id, file_id):
        released.add(file_id)
        remove(self, session_id, file_id)

    from dashboard import sources

    ingest = sources.ingest_uploads

    def ingest_uploads(runs, *others):
        returned.append([*(runs or []), *others])
        return ingest(runs, *others)

    monkeypatch.setattr(MemoryUploadedFileManager, "remove_file", remove_file)
    monkeypatch.setattr(sources, "ingest_uploads", ingest_uploads)
    return released, returned


def test_uploads_are_released_and_the_pages_keep_them(server_storage):
    released, returned = server_storage
    d = demo.make_demo(n_users=150, n_items=120, list_length=15, seed=11)
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.run()
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_runs_0").set_value(
        [(f"{name}.csv", demo.to_csv_bytes(run), "text/csv") for name, run in d.runs.items()])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    uploaded = [f for f in returned[-1] if f is not None and not isinstance(f, DeletedFile)]
    assert len(uploaded) == len(d.runs) + 1
    assert released == {f.file_id for f in uploaded}

    # the pages keep the data: the Overview's numbers are those of the uploaded files
    at.switch_page("views/overview.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert sorted(at.session_state["mcd_session"].sources.runs) == sorted(d.runs)
    table = next(df.value for df in at.dataframe if "ndcg@10" in df.value.columns)
    assert sorted(table.index) == sorted(d.runs)
    for name, run in d.runs.items():
        expected = mc.evaluate(run, d.qrels, metrics=["ndcg@10"]).summary["ndcg@10"]
        assert table.loc[name, "ndcg@10"] == pytest.approx(expected, abs=1e-12)


def test_a_placeholder_is_never_taken_in():
    """A released file's placeholder has no bytes: not taken in (nor an error) even when the session
    no longer remembers its id, while a real upload beside it is."""
    def script():
        import streamlit as st
        from streamlit.runtime.uploaded_file_manager import DeletedFile

        from dashboard import sources

        class Upload:
            file_id, name, size, type = "new-1", "fresh.csv", 0, "text/csv"

            def getvalue(self):
                return b"user_id,item_id,score\nu1,i1,0.5\nu1,i2,0.4\n"

        added = sources.ingest_uploads([DeletedFile("forgotten"), Upload()], DeletedFile("truth-gone"))
        st.text(repr(added))
        st.text(repr(sorted(st.session_state["mcd_session"].seen)))

    at = AppTest.from_function(script, default_timeout=deadlines.SCRIPT_RUN)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.text] == ["['fresh']", "['new-1']"]
