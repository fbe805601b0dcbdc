"""Long computations of the dashboard show how far they are: a progress bar with the step, the stage
metrics_core reports and ``n of total`` (not only a spinner).

The bar is removed once the computation ends, so the pages are watched while they run: every call of
``st.progress`` is recorded (value and text) by a spy on Streamlit's progress element. The computations
are made long by their size (300 users, three models, two metrics, every test step uncached), never by
a sleep; the fractions are checked against the steps counted by hand.
"""

from __future__ import annotations

import io
import re

import _deadlines as deadlines
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.elements.progress import ProgressMixin  # noqa: E402

from dashboard.progress_bar import progress_label  # noqa: E402
from test_compare_dashboard import ok, uploaded_app  # noqa: E402

COUNT = re.compile(r"(\d[\d,]*) of (\d[\d,]*) (\w+)$")


def test_progress_label_counts_steps_and_the_stage_within_the_step():
    assert progress_label("Running the paired t-test", 0, 4) == (0.0, "Running the paired t-test: step 1 of 4")
    fraction, label = progress_label("Running the paired t-test", 1, 4, "ndcg@10: the test",
                                     "testing 2 comparison(s) (t)", 1, 2, "comparison")
    assert fraction == (1 + 1 / 2) / 4
    assert label == ("Running the paired t-test: step 2 of 4 (ndcg@10: the test): testing 2 comparison(s) (t), "
                     "1 of 2 comparisons")
    assert progress_label("Explain", 0, 1, "", "ndcg@10 as each library computes it", 1, 1, "preset") == \
        (1.0, "Explain: step 1 of 1: ndcg@10 as each library computes it, 1 of 1 preset")
    assert progress_label("Building the report", 3, 3) == (1.0, "Building the report: 3 of 3 steps done")
    assert progress_label("x", 0, 2, stage="resampling")[0] == 0.0  # a stage without a count adds nothing


@pytest.fixture
def drawn(monkeypatch):
    """Every progress bar drawn: ``(value, text)``."""
    calls: list[tuple[float, str]] = []
    original = ProgressMixin.progress

    def progress(self, value, text=None, *args, **kwargs):
        calls.append((float(value), str(text)))
        return original(self, value, text, *args, **kwargs)
    monkeypatch.setattr(ProgressMixin, "progress", progress)
    return calls


def plain(label: str) -> str:
    return label.replace("\\", "")  # the text is markdown-escaped (text.md)


def test_compare_and_explain_show_the_step_the_stage_and_a_count(monkeypatch, tmp_path, drawn):
    from dashboard import cache

    at = uploaded_app(monkeypatch, tmp_path)
    cache.SHARED.clear()  # computed in this run: an earlier test of this process may have compared the same files
    drawn.clear()
    ok(at.switch_page("views/compare.py").run())
    ok(at.multiselect(key="compare_metrics").set_value(["ndcg@10", "recall@10"]).run())
    compare = [(v, plain(t)) for v, t in drawn if plain(t).startswith("Running the paired t-test:")]
    assert compare, drawn
    steps = {int(m.group(1)) for _, t in compare if (m := re.search(r"step \d+ of (\d+)", t))}
    assert {2, 4} <= steps <= {1, 2, 4}  # one metric (test, interval), then two; 1: a section without interval
    counted = [(v, t) for v, t in compare if COUNT.search(t)]
    assert any(re.search(r"testing 2 comparison\(s\) \(t\), [012] of 2 comparisons$", t) for _, t in counted), compare
    for value, label in compare:  # each fraction is the steps done plus the stage's share, over the steps
        if label.endswith("steps done"):
            assert value == 1.0
            continue
        done, total = map(int, re.search(r"step (\d+) of (\d+)", label).groups())
        count = COUNT.search(label)
        share = int(count.group(1).replace(",", "")) / int(count.group(2).replace(",", "")) if count else 0.0
        assert value == pytest.approx((done - 1 + share) / total), label
    assert any(0 < v < 1 for v, _ in compare)
    assert not at.get("progress")  # removed once the comparison is shown

    drawn.clear()
    ok(at.switch_page("views/explain.py").run())
    explain = [(v, plain(t)) for v, t in drawn if plain(t).startswith("Computing the metric as every library would")]
    counts = [COUNT.search(t) for _, t in explain if COUNT.search(t)]
    assert counts and counts[-1].group(1) == counts[-1].group(2) and counts[-1].group(3) == "presets", explain
    values = [v for v, _ in explain]
    assert values[0] == 0.0 and values[-1] == 1.0 and values == sorted(values), explain


SEGMENT_COUNT = re.compile(r"(\d[\d,]*) of (\d[\d,]*) segment tests$")


def _segment_tests(tenures: int = 30) -> int:
    """The segment tests of the Compare page's default decision, counted from the files: every
    segment of each attribute (``tier``, ``tenure`` of ``tenures`` values) among the evaluated users,
    at most 30 per attribute, x one metric x two challengers against the baseline."""
    from test_compare_dashboard import _attributes_csv, reference

    users = reference(["ndcg@10"])["popularity"].per_user.index.astype(str)
    attrs = pd.read_csv(io.BytesIO(_attributes_csv(tenures)), dtype={"user_id": str}).set_index("user_id")
    segments = sum(min(30, attrs[a].astype(str).reindex(users).fillna("(missing)").nunique())
                   for a in ("tier", "tenure"))
    return segments * 1 * 2


def test_compare_segments_show_how_many_segment_tests_are_done(monkeypatch, tmp_path, drawn):
    """On few users the segment block is computed with the page: its bar counts the segment tests
    (segments x metric x challenger) as they are done, up to all of them."""
    from dashboard import cache
    from test_compare_dashboard import _attributes_csv

    at = uploaded_app(monkeypatch, tmp_path)
    at.file_uploader(key="upload_attributes_0").set_value(("attrs.csv", _attributes_csv(), "text/csv"))
    ok(at.run())
    cache.SHARED.clear()  # the segment rows are computed in this run
    drawn.clear()
    ok(at.switch_page("views/compare.py").run())
    bars = [(v, plain(t)) for v, t in drawn if plain(t).startswith("Running the paired t-test per segment:")]
    counts = [(v, SEGMENT_COUNT.search(t)) for v, t in bars if SEGMENT_COUNT.search(t)]
    assert counts, bars
    total = _segment_tests()
    assert {int(m.group(2).replace(",", "")) for _, m in counts} == {total}
    done = [int(m.group(1).replace(",", "")) for _, m in counts]
    assert done == sorted(done) and done[0] < total and done[-1] == total, done
    for value, m in counts:
        assert value == pytest.approx(int(m.group(1).replace(",", "")) / total)
    assert not [p for p in at.get("progress") if "per segment" in str(p.proto.text)]  # removed once shown


def test_compare_segments_on_the_server_thread_show_how_far_the_job_is(monkeypatch, tmp_path, drawn):
    """Above the foreground size the segments run on the server thread; while they run, the page's
    watch redraws a bar from the job's own count. The job is held after its first block of tests
    (an event, no timing) so that the page is seen mid-way. The tenure has 4 values, not 30 (see
    ``test_compare_dashboard.compare_on_many_users_once_idle``): the bar is what is checked."""
    import threading

    from dashboard import background, cache
    from metrics_core.analysis import segment_compare
    from test_compare_dashboard import _attributes_csv, _wait_idle

    reached, release = threading.Event(), threading.Event()
    real = segment_compare.paired_rows

    def held(*args, **kwargs):
        rows = real(*args, **kwargs)
        if not reached.is_set():
            reached.set()
            release.wait(deadlines.BACKGROUND)
        return rows
    monkeypatch.setattr(segment_compare, "paired_rows", held)
    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    at = uploaded_app(monkeypatch, tmp_path)
    at.file_uploader(key="upload_attributes_0").set_value(("attrs.csv", _attributes_csv(tenures=4), "text/csv"))
    ok(at.run())
    cache.SHARED.clear()
    try:
        ok(at.switch_page("views/compare.py").run())
        assert reached.wait(deadlines.BACKGROUND), "the segment job did not start"
        ok(at.run())
        # the bar the page shows while the job is held (a full run draws the watch's bar too)
        bars = [(p.proto.value, plain(p.proto.text)) for p in at.get("progress")
                if plain(p.proto.text).startswith("Running the paired t-test per segment:")]
        counts = [(v, SEGMENT_COUNT.search(t)) for v, t in bars if SEGMENT_COUNT.search(t)]
        assert len(counts) == 1, bars
        total = _segment_tests(tenures=4)
        value, m = counts[0]
        n = int(m.group(1).replace(",", ""))
        assert int(m.group(2).replace(",", "")) == total and 0 < n < total  # the first attribute's first block
        assert value == int(100 * n / total)  # Streamlit sends the fraction as a whole percentage
    finally:
        release.set()
    _wait_idle(background)
    ok(at.run())
    assert any("segment" in df.value.columns for df in at.dataframe)
    assert background.progress_of(next(k for k in cache.SHARED.keys() if k.startswith("brief_segments|"))) is None


def test_the_overview_shows_the_files_loading_then_the_evaluation_step_by_step(monkeypatch, tmp_path, drawn):
    """With nothing computed yet (the server's cache emptied), opening the Overview draws the loading
    of the uploaded files (each file's step, the rows checked, the sorting) and then its evaluation
    (the step and metrics_core's stage "evaluating ..."), each bar's fraction only growing, and
    leaves no bar once the tables are shown."""
    from dashboard import cache

    at = uploaded_app(monkeypatch, tmp_path)
    cache.SHARED.clear()
    drawn.clear()
    ok(at.switch_page("views/overview.py").run())
    shown = [(v, plain(t)) for v, t in drawn]
    loading = [(v, t) for v, t in shown if t.startswith("Step ")]
    assert any(re.search(r"^Step 1 of 7: reading qrels\.csv: checking qrels\.csv: the ids and numbers of [\d,]+ rows$", t)
               for _, t in loading), loading
    assert any(t.startswith("Step 7 of 7: sorting each user's list of ") and ": preparing " in t for _, t in loading)
    evaluating = [(v, t) for v, t in shown if t.startswith("Evaluating 3 models: ")]
    # the steps computed here (others may be ready from the server's thread) name the step and the stage
    assert any(re.search(r"^Evaluating 3 models: step \d of 4 \((ranking|scored-row|beyond-accuracy) metrics\): "
                         r"evaluating \w", t) for _, t in evaluating), [t for _, t in shown if not t.startswith("Step")]
    assert evaluating[-1] == (1.0, "Evaluating 3 models: 4 of 4 steps done")
    for bar in (loading, evaluating):
        values = [v for v, _ in bar]
        assert values == sorted(values) and all(0 <= v <= 1 for v in values)
    assert not at.get("progress")
