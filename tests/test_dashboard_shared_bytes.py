"""One copy of a stored file's bytes per server, whatever the number of sessions showing it.

Sessions keep a stored file's name and SHA-256 only; its bytes are the server-wide cache's entry
``bytes|<sha256>`` (counted against the cache's budget), shared by every session, and read from
the analysis store again when the cache let them go. Memory of the server under 50 viewers:
``benchmarks/load_test.py --snapshot-mb`` (figures in benchmarks/README.md).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import _deadlines as deadlines
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard import cache, demo, file_bytes  # noqa: E402
from metrics_core.store import AnalysisStore, StoreError  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
DATA = demo.make_demo(n_users=80, n_items=60, list_length=10, seed=9)
RUN = demo.to_csv_bytes(DATA.runs["two_tower"])
TRUTH = demo.to_csv_bytes(DATA.qrels)
SETTINGS = {"kind": "snapshot", "runs": [{"model": "two_tower", "mapping": {}}], "files": {"qrels": {"mapping": {}}},
            "notes": "", "view": {}, "demo": False}


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    cache.SHARED.clear()
    yield
    cache.SHARED.clear()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def byte_entries() -> list[str]:
    return [k for k in cache.SHARED.keys() if k.startswith(file_bytes.PREFIX)]


def viewer(analysis: str, page: str = "views/overview.py") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params["analysis"] = analysis
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown_blobs(at: AppTest) -> dict:
    src = at.session_state["mcd_session"].sources
    return {"run": src.runs["two_tower"], "qrels": src.qrels}


def test_viewers_of_a_snapshot_share_one_copy_of_each_file():
    receipt = AnalysisStore().save_snapshot([("two_tower.csv", RUN, "run"), ("qrels.csv", TRUTH, "qrels")], SETTINGS,
                                            title="shared")
    first, second = viewer(receipt.id), viewer(receipt.id)
    a, b = shown_blobs(first), shown_blobs(second)
    for role, data in (("run", RUN), ("qrels", TRUTH)):
        assert a[role].own is None and b[role].own is None  # no session holds bytes of its own
        assert a[role].sha256 == digest(data) and a[role].size == len(data)
        assert a[role].data is b[role].data  # the same object: one copy on the server
        assert a[role].data == data
    assert sorted(byte_entries()) == sorted(file_bytes.key(digest(d)) for d in (RUN, TRUTH))
    # each entry counts its bytes against the cache's budget
    assert cache.SHARED.size_of(file_bytes.key(digest(RUN))) >= len(RUN)
    # the Overview's numbers come from these bytes
    table = next(df.value for df in second.dataframe if "ndcg@10" in df.value.columns)
    assert list(table.index) == ["two_tower"]


def test_bytes_the_cache_let_go_are_read_from_the_store_again():
    receipt = AnalysisStore().save_snapshot([("two_tower.csv", RUN, "run"), ("qrels.csv", TRUTH, "qrels")], SETTINGS)
    at = viewer(receipt.id, "views/data.py")
    blob = shown_blobs(at)["run"]
    cache.SHARED.clear()
    assert not file_bytes.held(blob.sha256)
    assert blob.data == RUN  # read back from the store, checked against its digest
    assert file_bytes.held(blob.sha256)


def test_an_upload_is_handed_to_the_server_copy_once_saved():
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_runs_0").set_value([("two_tower.csv", RUN, "text/csv")])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", TRUTH, "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    mine = shown_blobs(at)
    assert all(b.own is None for b in mine.values())  # saved: the session dropped its own copies
    analysis = at.session_state["mcd_session"].opened.id
    other = viewer(analysis, "views/data.py")  # another browser opening the working copy
    theirs = shown_blobs(other)
    assert mine["run"].data is theirs["run"].data and mine["qrels"].data is theirs["qrels"].data


def test_a_session_keeps_its_own_copy_while_the_store_cannot_take_it(monkeypatch):
    """Nothing is lost when the save fails: the session keeps the bytes (and says why they are not kept)."""
    from dashboard import sources

    def broken():
        raise StoreError("the analysis store is not available (test)")
    monkeypatch.setattr(sources, "_store", broken)
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_runs_0").set_value([("two_tower.csv", RUN, "text/csv")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    blob = shown_blobs(at)["run"]
    assert blob.own is not None and blob.data == RUN
    assert at.session_state["mcd_session"].store_error


def test_store_hands_each_content_to_the_caller():
    store = AnalysisStore()
    receipt = store.save_snapshot([("a.csv", RUN, "run"), ("b.csv", RUN, "run"), ("q.csv", TRUTH, "qrels")], SETTINGS)
    asked, mine = [], {digest(RUN): b"held already"}

    def contents(sha, read):
        asked.append(sha)
        return mine[sha] if sha in mine else read()
    saved = store.load(receipt.id, contents=contents)
    assert sorted(asked) == sorted({digest(RUN), digest(TRUTH)})  # once per distinct content
    assert [f.data for f in saved.files] == [b"held already", b"held already", TRUTH]
    assert store.read_content(digest(TRUTH)) == TRUTH
    for bad in ("", "0" * 63, "G" * 64, digest(RUN).upper()):
        with pytest.raises(StoreError):
            store.read_content(bad)
    with pytest.raises(StoreError):
        store.read_content("0" * 64)  # no such content
