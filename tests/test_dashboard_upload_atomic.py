"""No upload is silently dropped: a script run stopped anywhere while files are taken in leaves
them either taken in (in the sources and in the saved working copy) or untaken, and the next run
takes them in.

Streamlit stops a run at any access to ``st.session_state`` when the browser asks for a new one
(the next upload arriving, a second file of a selection finishing). Here AppTest runs the real
app; a hook stops the run at the n-th such access made while ``dashboard/sources.py`` takes the
files in or takes the outcome of their save (and in what those call), for every n, then lets the
next run go through. After it, every file
the uploaders hold must be in the session's sources, in the stored working copy the URL names,
and in a new session opened on that URL (a reload). The expected files are the test's own
(names and SHA-256 of the bytes it uploaded), never read from the code under test.
Many browsers at once, on SQLite and PostgreSQL: ``tests/browser/test_concurrent_uploads_browser.py``; a session ended
right after an intake, and a file that never reached the session: ``tests/test_dashboard_upload_session_end.py``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import _deadlines as deadlines
import pytest

pytest.importorskip("streamlit")
from streamlit.runtime.scriptrunner_utils.exceptions import StopException  # noqa: E402
from streamlit.runtime.state.safe_session_state import SafeSessionState  # noqa: E402
from _apptest import AppTest  # noqa: E402

from dashboard import demo  # noqa: E402
from metrics_core.store import AnalysisStore  # noqa: E402

#: every stop point of every upload, one AppTest run each: left out of the quick tier (python3 scripts/test.py --quick)
pytestmark = pytest.mark.long

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
SOURCES_FILE = str(Path(__file__).resolve().parents[1] / "dashboard" / "sources.py")
DATA = demo.make_demo(n_users=60, n_items=50, list_length=8, seed=5)
RUNS = {f"{name}.csv": demo.to_csv_bytes(run) for name, run in DATA.runs.items()}
TRUTH = ("qrels.csv", demo.to_csv_bytes(DATA.qrels))


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


class Stopper:
    """Counts the session-state accesses made while ``dashboard/sources.py`` takes files in or takes
    a save's outcome (:data:`TAKING_IN`, and what they call), while armed, and stops
    the run (as Streamlit does for a new rerun request) at the ``at``-th one."""

    def __init__(self):
        self.armed, self.at, self.count = False, 0, 0

    def arm(self, at: int) -> None:
        self.armed, self.at, self.count = True, at, 0

    def tick(self) -> None:
        if not self.armed or not _called_from_sources():
            return
        self.count += 1
        if self.count == self.at:
            self.armed = False
            raise StopException()


#: the functions of dashboard/sources.py that take files in and take a save's outcome
TAKING_IN = {"ingest_uploads", "finish_saving"}


def _called_from_sources() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == SOURCES_FILE and frame.f_code.co_name in TAKING_IN:
            return True
        frame = frame.f_back
    return False


def install(mp: pytest.MonkeyPatch, hook: Stopper) -> Stopper:
    """Make every get, set, delete and membership test of session state tick ``hook`` first."""
    for name in ("__getitem__", "__setitem__", "__delitem__", "__contains__"):
        original = getattr(SafeSessionState, name)

        def wrapped(self, *args, _original=original):
            hook.tick()
            return _original(self, *args)
        mp.setattr(SafeSessionState, name, wrapped)
    return hook


@pytest.fixture
def stopper(monkeypatch):
    return install(monkeypatch, Stopper())


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fresh_data_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.switch_page("views/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def assert_everything_kept(at: AppTest, expected: dict[str, bytes]) -> None:
    """Every file in ``expected`` (name -> bytes) is in the session, in the working copy the URL names,
    and in a new session opened on that URL."""
    assert not at.exception, [e.value for e in at.exception]
    box = at.session_state["mcd_session"]
    held = {b.name: b.sha256 for b in [*box.sources.runs.values(), box.sources.qrels] if b is not None}
    want = {name: sha(data) for name, data in expected.items()}
    assert held == want
    analysis = at.query_params["analysis"]
    analysis = analysis[0] if isinstance(analysis, list) else analysis
    saved = AnalysisStore().load(analysis)
    assert {f.name: hashlib.sha256(f.data).hexdigest() for f in saved.files} == want
    reloaded = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    reloaded.query_params["analysis"] = analysis
    reloaded.switch_page("views/data.py").run()
    assert not reloaded.exception, [e.value for e in reloaded.exception]
    again = reloaded.session_state["mcd_session"].sources
    assert {b.name for b in [*again.runs.values(), again.qrels] if b is not None} == set(want)
    listed = " ".join(" ".join(map(str, df.value.get("file", []))) for df in reloaded.dataframe)
    assert all(name in listed for name in want), listed


def count_accesses(upload) -> int:
    """How many session-state accesses ``dashboard/sources.py`` makes in the run that takes ``upload``
    in (the run is not stopped: the count is set out of reach)."""
    counter = Stopper()
    counter.arm(10**9)
    at = fresh_data_page()
    with pytest.MonkeyPatch.context() as mp:
        install(mp, counter)
        upload(at)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return counter.count


def upload_together(at: AppTest) -> None:
    at.file_uploader(key="upload_runs_0").set_value([(n, b, "text/csv") for n, b in RUNS.items()])
    at.file_uploader(key="upload_truth_0").set_value((*TRUTH, "text/csv"))


def test_a_run_stopped_anywhere_while_files_selected_together_arrive_loses_none(stopper):
    total = count_accesses(upload_together)
    assert total >= 5  # the hook sees the taking-in (else this test would check nothing)
    for n in range(1, total + 1):
        at = fresh_data_page()
        upload_together(at)
        stopper.arm(n)
        at.run()  # stopped at the n-th access (a run may make fewer than the count: it then ends)
        finished = stopper.armed
        stopper.armed = False
        at.run()  # the next run (the browser's next request)
        assert_everything_kept(at, {**RUNS, TRUTH[0]: TRUTH[1]})
        if finished:
            break


def test_a_run_stopped_anywhere_while_the_next_file_arrives_loses_none(stopper):
    """A ground truth, a first run, then a second run right after: the run taking the first run in
    is stopped at every point, and the next one brings the second run along."""
    names = list(RUNS)

    def first_run(at):
        at.file_uploader(key="upload_runs_0").set_value([(names[0], RUNS[names[0]], "text/csv")])

    def prepare(at):
        at.file_uploader(key="upload_truth_0").set_value((*TRUTH, "text/csv"))
        at.run()
        assert not at.exception, [e.value for e in at.exception]

    total = count_accesses(lambda at: (prepare(at), first_run(at)))
    for n in range(1, total + 1):
        at = fresh_data_page()
        prepare(at)
        first_run(at)
        stopper.arm(n)
        at.run()
        finished = stopper.armed
        stopper.armed = False
        if not [w for w in at.get("file_uploader") if w.key == "upload_runs_0"]:
            at.run()  # stopped before the uploaders were drawn: the browser's widgets stay, the next run has them
        at.file_uploader(key="upload_runs_0").set_value(
            [(name, RUNS[name], "text/csv") for name in names[:2]])  # the second file arrives
        at.run()
        assert_everything_kept(at, {names[0]: RUNS[names[0]], names[1]: RUNS[names[1]], TRUTH[0]: TRUTH[1]})
        if finished:
            break


def test_a_request_with_an_address_the_session_left_keeps_the_upload():
    """A snapshot is opened, a file uploaded (a new working copy), and the browser's next request
    still carries the snapshot's address (sent before the new one reached it): the session stays on
    its working copy with the file, and the address names that copy again."""
    store = AnalysisStore()
    receipt = store.save_snapshot([("qrels.csv", TRUTH[1], "qrels")], {"kind": "snapshot", "runs": [], "files": {}},
                                  title="shared")
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params["analysis"] = receipt.id
    at.switch_page("views/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    name = next(iter(RUNS))
    at.file_uploader(key="upload_runs_1").set_value([(name, RUNS[name], "text/csv")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    working = at.session_state["mcd_session"].opened.id
    assert working != receipt.id
    at.query_params["analysis"] = receipt.id  # the stale address of the next request
    at.run()
    assert at.session_state["mcd_session"].opened.id == working
    assert_everything_kept(at, {name: RUNS[name], TRUTH[0]: TRUTH[1]})
