"""AppTest: a snapshot keeps its brief in the analysis store and opens on it without its files.

The kept brief is checked against a fresh ``metrics_core.brief.build.build_brief`` of the same files and
decision (mc.evaluate on the frames themselves); a server that has not seen the snapshot draws it
from the store with no file read or prepared; a brief of another format version or a damaged row
is computed from the files again and kept anew, never a traceback.
"""

from __future__ import annotations

import sqlite3
import time

import pandas as pd
import pytest

pytest.importorskip("streamlit")

import _deadlines as deadlines  # noqa: E402
import metrics_core as mc  # noqa: E402
from dashboard import cache, loading, snapshot_brief  # noqa: E402
from metrics_core.brief.build import build_brief  # noqa: E402
from metrics_core.brief.record import FORMAT_VERSION, from_record  # noqa: E402
from metrics_core.store import AnalysisStore, SavedFile  # noqa: E402
from test_brief import make_data  # noqa: E402
from test_dashboard_pages import app  # noqa: E402

TITLE, NOTES = "Cold users <b>check</b>", "Look at *cold* users."


def save_snapshot(runs, qrels, attributes, owner=None):
    """A snapshot of the runs, ground truth and user attributes, saved by ``owner``."""
    files = [SavedFile(f"{name}.csv", run.to_csv(index=False).encode(), "run") for name, run in runs.items()]
    files += [SavedFile("qrels.csv", qrels.to_csv(index=False).encode(), "qrels"),
              SavedFile("users.csv", attributes.to_csv(index=False).encode(), "user_attributes")]
    settings = {"kind": "snapshot", "runs": [{"model": n, "mapping": {}} for n in runs],
                "files": {"qrels": {"mapping": {}}, "user_attributes": {"mapping": {}}}, "notes": NOTES,
                "view": {}, "demo": False}
    return AnalysisStore().save_snapshot(files, settings, title=TITLE, notes=NOTES, owner=owner)


@pytest.fixture()
def shared(monkeypatch, tmp_path):
    """A snapshot of three models, a ground truth and user attributes in a private store; its id,
    the frames and the store's SQLite file."""
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    runs, qrels, attributes, _ = make_data()
    receipt = save_snapshot(runs, qrels, attributes)
    new_server()
    yield receipt.id, runs, qrels, attributes, tmp_path / "store" / "analyses.sqlite3"
    new_server()


def new_server() -> None:
    """What a restarted server has: nothing cached, nothing kept by this process."""
    cache.SHARED.clear()
    snapshot_brief._KEPT.clear()


def kept_row(db, analysis_id: str, wanted_format: str = FORMAT_VERSION):
    """The store's row of the snapshot's kept brief once it is written (the save runs on a thread)."""
    deadline = time.monotonic() + deadlines.BACKGROUND
    while time.monotonic() < deadline:
        with sqlite3.connect(db) as conn:
            row = conn.execute("SELECT settings_key, format, content FROM store_briefs WHERE analysis_id = ?",
                               (analysis_id,)).fetchone()
        if row is not None and row[1] == wanted_format:
            return row
        time.sleep(0.05)
    raise AssertionError(f"no brief of format {wanted_format} was kept")


def verdict_lines(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("- ")]


def opened_from_store(at) -> bool:
    return any("As computed when this snapshot was made" in c.value for c in at.caption)


def test_kept_brief_equals_a_fresh_build_and_opens_without_the_files(shared, monkeypatch):
    analysis_id, runs, qrels, attributes, db = shared
    first = app(analysis=analysis_id)
    assert not opened_from_store(first)  # nothing kept yet: computed from the files
    _, fmt, content = kept_row(db, analysis_id)
    kept = from_record(content)
    d = kept.decision
    assert d.baseline == "base" and set(d.challengers) == {"good", "gappy"}
    # every number as a fresh build on the same data and decision gives
    evals = {n: mc.evaluate(r, qrels, list(d.metrics)) for n, r in runs.items()}
    fresh = build_brief(evals, d, attributes=attributes, title=TITLE, notes=NOTES)
    for table in ("verdicts", "segments", "segment_losses", "failures"):
        pd.testing.assert_frame_equal(getattr(kept, table), getattr(fresh, table), check_exact=True)
    for name in ("title", "notes", "population", "n_users", "coverage", "attributes", "served", "n_evaluated"):
        assert getattr(kept, name) == getattr(fresh, name), name
    assert len(kept.segment_losses) and len(kept.failures)  # the data has both: the test compares something

    # a restarted server: the link draws the kept brief; no file is read or prepared before it shows
    new_server()
    warmed = []
    monkeypatch.setattr(loading, "warm", lambda src: warmed.append(src) or 0)
    again = app(analysis=analysis_id)
    assert opened_from_store(again)
    assert verdict_lines(again) == verdict_lines(first)
    assert [t.value for t in again.title] == [t.value for t in first.title]
    assert not [k for k in cache.SHARED.keys() if k.startswith(("read|", "prepare|"))]
    assert again.get("dataframe")  # the segment and failure tables are drawn


@pytest.mark.parametrize("damage", ["format", "content", "decision"])
def test_a_stale_or_damaged_brief_is_computed_again(shared, damage):
    analysis_id, *_, db = shared
    app(analysis=analysis_id)
    key, _, content = kept_row(db, analysis_id)
    update = {"format": ("UPDATE store_briefs SET format = 'brief-0'", ()),
              "content": ("UPDATE store_briefs SET content = ?", ('{"format": "%s", "tables": 5}' % FORMAT_VERSION,)),
              "decision": ("UPDATE store_briefs SET content = ?", (content.replace('"baseline":"base"',
                                                                                  '"baseline":"good"', 1),))}[damage]
    with sqlite3.connect(db) as conn:
        conn.execute(*update)
    new_server()
    at = app(analysis=analysis_id)
    assert not opened_from_store(at) and verdict_lines(at)  # from the files, no traceback
    if damage == "format":
        assert kept_row(db, analysis_id)[2] == content  # kept anew under the current version
    new_server()
    if damage == "format":
        assert opened_from_store(app(analysis=analysis_id))


OWNER = "o" * 43  # the owner secret of the browser that saved the snapshot (a well-formed one)


def _session(owner_secret: str | None = None, **query):
    """An AppTest session on the Brief; with ``owner_secret``, as the browser whose cookie holds it
    (without one, a visitor: each AppTest session has a secret of its own). Waits for every brief
    save it started on the store thread."""
    from _apptest import AppTest

    from dashboard import sources
    from test_dashboard_pages import APP, TIMEOUT

    saves, keep = [], sources.keep_brief

    def recorded(*args, **kwargs):
        saves.append(keep(*args, **kwargs))
        return saves[-1]
    sources.keep_brief = recorded
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        if owner_secret is not None:
            at.session_state["mcd_owner_secret"] = owner_secret
        for key, value in query.items():
            at.query_params[key] = str(value)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        for future in saves:
            future.result(timeout=deadlines.BACKGROUND)
    finally:
        sources.keep_brief = keep
    return at, len(saves)


def test_a_visitor_with_other_settings_does_not_replace_the_kept_brief(shared):
    """A visitor opening the link with ``&gain=binary&k=3`` sees the brief of those settings,
    computed from the files, and the kept one stays; the snapshot's owner may replace it."""
    _, runs, qrels, attributes, db = shared
    analysis_id = save_snapshot(runs, qrels, attributes, owner=OWNER).id
    new_server()
    first, _ = _session(analysis=analysis_id)  # a visitor, none kept yet: kept under the link's settings
    kept = kept_row(db, analysis_id)

    new_server()
    other, attempts = _session(analysis=analysis_id, gain="binary", k=3)
    assert not opened_from_store(other) and verdict_lines(other)  # their own view, from the files
    assert verdict_lines(other) != verdict_lines(first)  # the settings changed what it says
    assert attempts == 1  # it tried to keep its brief (it opened the link with those settings) ...
    assert kept_row(db, analysis_id) == kept  # ... and the store refused: the kept brief is as it was

    new_server()
    assert opened_from_store(_session(analysis=analysis_id)[0])  # the next reader: the fast first screen

    new_server()
    _session(OWNER, analysis=analysis_id, gain="binary", k=3)  # its owner may change what the link keeps
    assert kept_row(db, analysis_id)[0] != kept[0]
