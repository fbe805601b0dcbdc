"""AppTest of the Data page as a guide: uploads in any order, plain sentences
while something is missing, a bad file removable on its own, mapping forms
only where a mapping helps (prefilled), failed reads remembered."""

from __future__ import annotations

from functools import lru_cache

import pytest

pytest.importorskip("streamlit")

import metrics_core as mc  # noqa: E402
from dashboard import background, cache, demo, files, text  # noqa: E402
from test_dashboard_pages import data_page, frame_with, page, small_demo  # noqa: E402


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def upload(at, key, items):
    at.file_uploader(key=key).set_value(items)
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def as_files(d) -> tuple[tuple[tuple[str, bytes, str], ...], tuple[str, bytes, str]]:
    """``d``'s results (one file per model) and its ground truth (``qrels.csv``) as uploaded files."""
    runs = tuple((f"{name}.csv", demo.to_csv_bytes(run), "text/csv") for name, run in d.runs.items())
    return runs, ("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv")


@lru_cache(maxsize=1)
def _small_files() -> tuple[tuple[tuple[str, bytes, str], ...], tuple[str, bytes, str]]:
    """:func:`as_files` of small_demo(), written once per process (its tables are never changed)."""
    return as_files(small_demo())


def _files_of(d):
    return _small_files() if d is small_demo() else as_files(d)


def runs_as_files(d) -> list[tuple[str, bytes, str]]:
    return list(_files_of(d)[0])


def truth_file(d) -> tuple[str, bytes, str]:
    return _files_of(d)[1]


def test_runs_before_truth_wait_with_a_sentence_then_evaluate():
    d = small_demo()
    at = data_page()
    upload(at, "upload_runs_0", runs_as_files(d))
    assert not at.error, [e.value for e in at.error]
    assert any("Waiting for a ground truth" in i.value for i in at.info)
    listing = frame_with(at, "status")
    assert set(listing["status"]) == {"waiting for a ground truth"}
    assert not any("Demo data" in i.value for i in at.info)
    upload(at, "upload_truth_0", truth_file(d))
    assert not at.error and not any("Waiting" in i.value for i in at.info)
    listing = frame_with(at, "status")
    assert list(listing["status"]) == ["ready"] * 4
    models = frame_with(at, "rows")
    ref = mc.evaluate(d.runs["two_tower"], d.qrels, metrics=["ndcg@10"])
    assert models.loc["two_tower", "rows"] == len(d.runs["two_tower"])
    page(at, "overview")
    assert frame_with(at, "ndcg@10").loc["two_tower", "ndcg@10"] == pytest.approx(ref.summary["ndcg@10"], abs=1e-12)


def test_truth_alone_is_listed_and_the_page_says_what_is_missing():
    d = small_demo()
    at = data_page()
    upload(at, "upload_truth_0", ("truth.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    listing = frame_with(at, "status")
    assert list(listing["file"]) == ["truth.csv"] and list(listing["role"]) == ["ground truth"]
    assert any(i.value.startswith(text.md("Loaded: ground truth (truth.csv). No model's results yet"))
               for i in at.info)
    assert not any("shows the **demo data**" in i.value for i in at.info)


def test_attributes_alone_are_named_not_called_a_ground_truth():
    d = small_demo()
    at = data_page()
    attrs = b"user_id,segment\n" + b"".join(f"{u},a\n".encode() for u in d.qrels["user_id"].unique())
    upload(at, "upload_attributes_0", ("attrs.csv", attrs, "text/csv"))
    assert list(frame_with(at, "status")["role"]) == ["user attributes"]
    infos = [i.value for i in at.info]
    assert any(i.startswith(text.md("Loaded: user attributes (attrs.csv). No model's results yet")) for i in infos)
    assert not any("ground truth" in i.replace("\\", "") for i in infos)


def test_cr_only_file_is_a_message_removable_on_its_own_and_read_once(monkeypatch):
    d = small_demo()
    at = data_page()
    cr = b"user_id,item_id,score\ru1,i1,0.5\ru1,i2,0.4\r"
    upload(at, "upload_runs_0", runs_as_files(d)[:1] + [("cr_only.csv", cr, "text/csv")])
    upload(at, "upload_truth_0", truth_file(d))
    assert any(text.md("cr_only") in e.value for e in at.error)
    assert not any(f.key and f.key.startswith("mapping_") for f in at.get("form"))
    # every page still works with the good model
    for name in ("overview", "curves", "distributions", "failures"):
        page(at, name)
    page(at, "data")
    # the failure is remembered: no second read of the same bytes
    calls = []
    monkeypatch.setattr("metrics_core.io.read_table", lambda *a, **k: calls.append(1))
    at.run()
    assert calls == [] and any(text.md("cr_only") in e.value for e in at.error)
    at.button(key="remove_cr_only").click().run()
    assert not at.error and not at.exception
    assert list(frame_with(at, "status")["file"]) == ["popularity.csv", "qrels.csv"]


def test_mapping_form_only_when_it_helps_and_prefilled():
    d = small_demo()
    run = d.runs["two_tower"].rename(columns={"user_id": "customer", "item_id": "sku", "score": "affinity"})
    at = data_page()
    upload(at, "upload_runs_0", [("custom.csv", demo.to_csv_bytes(run), "text/csv")])
    upload(at, "upload_truth_0", truth_file(d))
    assert at.selectbox(key="map_custom_user_id").value == "(none)"
    # a file whose columns are recognised but whose values are bad gets no form
    bad = b"user_id,item_id,score\nu1,i1,0.5\nu1,i2,abc\n"
    assert files.mapping_proposal(bad, "bad.csv", "run", {}) is None
    # partly recognised: the form is prefilled with what was detected
    partial = b"user,sku,affinity\nu1,i1,0.5\n"
    assert files.mapping_proposal(partial, "p.csv", "run", {}) == {
        "user_id": "user", "item_id": None, "score": None, "rank": None}
    # TREC files never get a form
    trec = b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 x bm25\n"
    assert files.mapping_proposal(trec, "run.trec", "run", {}) is None
    assert files.mapping_proposal(trec, "run.txt", "run", {}) is None


def test_cache_limits_are_stated():
    at = data_page()
    assert any(f"{cache.SHARED.max_bytes // 2**20:,} MB" in c.value for c in at.caption)


def test_upload_read_and_store_limits_are_stated(monkeypatch):
    from metrics_core.io.limits import ReadLimits

    monkeypatch.setenv("METRICS_CORE_STORE_QUOTA", "3GiB")
    at = data_page()
    caption = " ".join(c.value for c in at.caption)
    assert "up to 1,024 MB (server.maxUploadSize)" in caption
    assert ReadLimits.from_env().describe() in caption
    assert "up to 3.0 GiB in all" in caption and "METRICS_CORE_STORE_QUOTA" in caption
    assert f"more than {background.FOREGROUND_USERS:,} users per model" in caption
    assert "METRICS_CORE_DASHBOARD_FOREGROUND_USERS" in caption


def test_files_uploaded_just_before_leaving_the_data_page_are_kept():
    d = small_demo()
    at = data_page()
    at.file_uploader(key="upload_runs_0").set_value(runs_as_files(d))
    at.file_uploader(key="upload_truth_0").set_value(truth_file(d))
    page(at, "overview")  # the rerun that carries the upload runs the Overview
    assert "analysis" in at.query_params
    table = frame_with(at, "ndcg@10")
    ref = mc.evaluate(d.runs["two_tower"], d.qrels, metrics=["ndcg@10"])
    assert table.loc["two_tower", "ndcg@10"] == pytest.approx(ref.summary["ndcg@10"], abs=1e-12)


def test_upload_larger_than_the_store_can_hold_is_refused_at_upload(monkeypatch):
    d = small_demo()
    truth = demo.to_csv_bytes(d.qrels)
    monkeypatch.setenv("METRICS_CORE_STORE_QUOTA", str(len(truth) // 2))
    at = data_page()
    upload(at, "upload_truth_0", ("big [truth](http://x).csv", truth, "text/csv"))
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert "big \\[truth\\]" in errors[0] and "was not loaded" in errors[0]
    assert text.md("METRICS_CORE_STORE_QUOTA") in errors[0] and "quota" in errors[0]
    # not taken in: the page still shows the demo, and the store holds nothing
    assert any("shows the **demo data**" in i.value for i in at.info)
    assert "analysis" not in at.query_params
    at.run()  # said once, not on every rerun, and the refused file is not read again
    assert not at.error
    # a file that fits is taken in as usual
    monkeypatch.setenv("METRICS_CORE_STORE_QUOTA", str(10 * len(truth)))
    upload(at, "upload_runs_0", runs_as_files(d)[:1])
    assert not at.error and "analysis" in at.query_params


def test_results_uploaded_before_the_truth_are_read_once(monkeypatch):
    from metrics_core import io as mc_io

    d = small_demo()
    reads = []
    real = mc_io.read_table

    def counting(data, **kw):
        reads.append(kw["name"])
        return real(data, **kw)

    monkeypatch.setattr(mc_io, "read_table", counting)
    cache.SHARED.clear()
    at = data_page()
    upload(at, "upload_runs_0", runs_as_files(d))
    upload(at, "upload_truth_0", truth_file(d))
    page(at, "overview")
    assert sorted(reads) == sorted([f"{n}.csv" for n in d.runs] + ["qrels.csv"])
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("truth_first", [True, False])
def test_repeated_pair_in_results_is_named_by_its_lines(truth_first):
    d = small_demo()
    good = runs_as_files(d)[:1]
    bad = b"user_id,item_id,score\nu1,i1,0.5\nu1,i2,0.4\nu1,i1,0.3\n"
    truth = truth_file(d)
    at = data_page()
    if truth_first:
        upload(at, "upload_truth_0", truth)
    upload(at, "upload_runs_0", good + [("twice.csv", bad, "text/csv")])
    if not truth_first:
        upload(at, "upload_truth_0", truth)
    errors = [e.value for e in at.error]
    expected = text.md("twice.csv: line 4: duplicate (user_id, item_id)")
    assert any(expected in e and "first seen on line 2" in e for e in errors), errors
    page(at, "overview")
    assert not at.exception


def test_results_without_scores_are_refused_once_a_truth_is_loaded():
    d = small_demo()
    labels_only = b"user_id,item_id,relevance\nu1,i1,1\nu1,i2,0\n"
    at = data_page()
    upload(at, "upload_runs_0", runs_as_files(d)[:1] + [("labels.csv", labels_only, "text/csv")])
    upload(at, "upload_truth_0", truth_file(d))
    errors = [e.value for e in at.error]
    assert any(text.md("labels.csv: required score column missing") in e for e in errors), errors


def test_uploads_are_saved_by_the_end_of_the_run_and_a_later_upload_updates_the_same_copy():
    from metrics_core.store import AnalysisStore

    d = small_demo()
    at = data_page()
    upload(at, "upload_runs_0", runs_as_files(d))
    first = at.query_params["analysis"]
    first = first[0] if isinstance(first, list) else first
    saved = AnalysisStore().load(first)
    assert sorted(f.name for f in saved.files_with_role("run")) == sorted(f"{n}.csv" for n in d.runs)
    upload(at, "upload_truth_0", truth_file(d))
    again = at.query_params["analysis"]
    assert (again[0] if isinstance(again, list) else again) == first
    truth = AnalysisStore().load(first).files_with_role("qrels")
    assert [f.data for f in truth] == [demo.to_csv_bytes(d.qrels)]


def test_a_save_the_store_refuses_leaves_the_data_in_the_session_and_says_why(monkeypatch):
    from metrics_core.store import AnalysisStore, StoreError

    def refuse(self, *a, **k):
        raise StoreError("the disk is full")

    monkeypatch.setattr(AnalysisStore, "create_working", refuse)
    d = small_demo()
    at = data_page()
    upload(at, "upload_runs_0", runs_as_files(d))
    upload(at, "upload_truth_0", truth_file(d))
    assert "analysis" not in at.query_params
    assert any("the disk is full" in w.value for w in at.warning), [w.value for w in at.warning]
    page(at, "overview")  # the data is still there
    assert frame_with(at, "ndcg@10").shape[0] == len(d.runs)


def test_mapping_proposal_offers_the_roles_of_the_file_kind_and_guesses_by_name():
    truth = b"reader,article,clicks_last_hour\nu1,a1,1\n"
    # a ground truth: user, item and relevance only; "clicks" in a name reads as relevance
    assert files.mapping_proposal(truth, "t.csv", "qrels", {}) == {
        "user_id": None, "item_id": "article", "relevance": "clicks_last_hour"}
    # a name with the words of two roles is not guessed; exact names win over words
    both = b"user_clicks,doc,label\nu1,d1,1\n"
    assert files.mapping_proposal(both, "b.csv", "qrels", {}) == {
        "user_id": None, "item_id": "doc", "relevance": "label"}
    # a run once a ground truth is loaded: user, item, score or rank; no relevance
    run = b"customer_id,movie,predicted_logit_v2\nu1,m1,0.3\n"
    proposal = files.mapping_proposal(run, "r.csv", "run", {})
    assert list(proposal) == ["user_id", "item_id", "score", "rank"]
    assert proposal == {"user_id": "customer_id", "item_id": "movie", "score": "predicted_logit_v2", "rank": None}
    # without a ground truth a run may carry the relevance: every role is offered
    assert list(files.mapping_proposal(truth, "t.csv", "auto", {})) == list(mc.io.ROLES)


def test_new_aliases_are_read_without_a_mapping():
    from metrics_core.io.columns import detect

    assert detect(["customer_id", "article", "clicks"], "qrels", "t.csv") == {
        "user_id": "customer_id", "item_id": "article", "score": None, "rank": None, "relevance": "clicks"}
    assert detect(["visitor_id", "product_id", "logit"], "run", "r.csv")["score"] == "logit"
    for item in ("doc", "document", "product", "movie", "movie_id", "article_id"):
        assert detect(["user_id", item, "purchased"], "qrels", "t.csv")["item_id"] == item


def test_ground_truth_form_offers_user_item_and_relevance_only():
    d = small_demo()
    truth = d.qrels.rename(columns={"user_id": "member", "relevance": "clicks_last_hour", "item_id": "article"})
    at = data_page()
    upload(at, "upload_truth_0", ("truth.csv", demo.to_csv_bytes(truth), "text/csv"))
    keys = [s.key for s in at.selectbox if s.key and s.key.startswith("map_None_")]
    assert keys == ["map_None_user_id", "map_None_item_id", "map_None_relevance"]
    assert at.selectbox(key="map_None_item_id").value == "article"
    assert at.selectbox(key="map_None_relevance").value == "clicks_last_hour"
    at.selectbox(key="map_None_user_id").set_value("member")
    at.button[[b.label for b in at.button].index("Apply mapping")].click()
    at.run()
    assert not at.error and not at.exception
    assert list(frame_with(at, "status")["status"]) == ["ready, waiting for models"]


def test_the_data_page_has_the_overview_tables_computed_on_the_server_thread(monkeypatch):
    """After an upload on the Data page the worker computes the Overview's ranking and scored-row
    tables; the Overview opened next computes neither and shows the engine's values."""
    import threading
    import time

    import _deadlines as deadlines

    from dashboard import metric_lists

    d = small_demo()
    scored = metric_lists.scored_labels()
    calls: list[tuple[str, tuple[str, ...]]] = []
    real = mc.evaluate

    def recording(*args, **kw):
        calls.append((threading.current_thread().name, tuple(kw.get("metrics") or ())))
        return real(*args, **kw)

    monkeypatch.setattr(mc, "evaluate", recording)
    cache.SHARED.clear()
    at = data_page()
    upload(at, "upload_runs_0", runs_as_files(d))
    upload(at, "upload_truth_0", truth_file(d))
    deadline = time.monotonic() + deadlines.BACKGROUND
    while background._QUEUED and time.monotonic() < deadline:  # the worker's queue drains
        time.sleep(0.05)
    # the server's threads: the worker, and the thread for the next page's work these run on
    on_worker = [m for thread, m in calls if thread.startswith(("metrics-core-background", "metrics-core-next-page"))]
    assert sum(set(m) <= set(scored) for m in on_worker) == len(d.runs)  # one scored-row table per model
    calls.clear()
    page(at, "overview")
    assert not [m for _, m in calls if set(m) <= set(scored) or "ndcg@10" in m], calls
    table = frame_with(at, "auc")
    for name, run in d.runs.items():
        ref = real(run, d.qrels, metrics=["auc"])
        assert table.loc[name, "auc"] == pytest.approx(ref.summary["auc"], abs=1e-12)


def test_loading_uploaded_files_shows_each_step_and_how_far_then_removes_the_bar(monkeypatch):
    """Reading and preparing uploads shows a progress bar, "Step k of n: reading FILE" (the fraction
    done), from the first step that is not cached; once every file is ready no bar is left."""
    from dashboard import loading

    shown = []
    real_step = loading._LoadProgress.step

    def step(self, key, action, name):
        real_step(self, key, action, name)
        if self.bar is not None:
            shown.append((self.done - 1, self.total, loading.load_step_text(self.done - 1, self.total, action, name)))

    monkeypatch.setattr(loading._LoadProgress, "step", step)
    d = demo.make_demo(n_users=300, n_items=200, list_length=20, seed=47)  # files no other test has read
    at = data_page()
    upload(at, "upload_truth_0", ("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    shown.clear()
    upload(at, "upload_runs_0", runs_as_files(d))
    n = 1 + 2 * len(d.runs)
    texts = [t for _, _, t in shown]
    assert texts[0].startswith(f"Step 2 of {n}: reading ") and texts[-1].startswith(f"Step {n} of {n}: sorting")
    assert [done for done, _, _ in shown] == list(range(1, n)) and {total for _, total, _ in shown} == {n}
    assert not at.get("progress")  # removed once everything is ready
    shown.clear()
    at.run()  # everything cached: no bar at all
    assert shown == [] and not at.get("progress")


def test_a_long_upload_shows_the_bytes_parsed_the_rows_checked_and_the_sorting(monkeypatch):
    """Within a file's step the bar says what metrics_core is doing and how far: the bytes parsed
    (a text parsed in pieces, each reported), the rows checked, the sorting; the fraction only grows,
    the file's name is shown as given, and no bar is left once the files are ready."""
    from dashboard import loading, progress_bar
    from metrics_core.io import delimited

    monkeypatch.setattr(delimited, "PIECE_BYTES", 4096)  # pieces of 4 KiB: a 40 KiB file reports each
    monkeypatch.setattr(progress_bar, "REDRAW_SECONDS", 0.0)  # every report drawn (else at most 10 a second)
    seen = []
    real = loading._LoadProgress.shown

    def shown(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        if self.bar is not None:
            seen.append(out)
        return out

    monkeypatch.setattr(loading._LoadProgress, "shown", shown)
    d = demo.make_demo(n_users=120, n_items=90, list_length=20, seed=4747)  # files no other test has read
    truth = demo.to_csv_bytes(d.qrels)
    name, run = next(iter(d.runs.items()))
    data = demo.to_csv_bytes(run)
    body = len(data)  # the header is on the first line: the text parsed is the whole file
    at = data_page()
    upload(at, "upload_truth_0", ("qrels *v2*.csv", truth, "text/csv"))
    seen.clear()
    upload(at, "upload_runs_0", [(f"{name}.csv", data, "text/csv")])
    labels = [label for _, label in seen]
    parsing = [label for label in labels if f": parsing {name}.csv, " in label]
    # the bytes parsed, piece by piece, up to the whole file (KiB with one decimal, as drawn)
    expected = [f"{p[1] / 1024:,.1f} of {body / 1024:,.1f} KiB" for p in delimited.piece_bounds(data, 0, 4096)]
    assert len(expected) >= 4 and [label.split(", ")[-1] for label in parsing] == [f"0.0 of {body / 1024:,.1f} KiB"] + expected
    assert parsing[0].startswith(f"Step 2 of 3: reading {name}.csv: parsing")
    assert any(f"checking {name}.csv: the ids and numbers of {len(run):,} rows" in label for label in labels)
    assert any(label.startswith(f"Step 3 of 3: sorting each user's list of {name}: preparing {name}") for label in labels)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and 1 / 3 <= fractions[0] and fractions[-1] < 1
    assert not at.get("progress")  # removed once everything is ready


def test_a_stage_counts_bytes_in_kib_mib_and_gib():
    from dashboard.progress_bar import progress_label, stage_text

    assert stage_text("parsing a.csv", 512, 1000, "B") == "parsing a.csv, 512 of 1,000 bytes"
    assert stage_text("parsing a.csv", 3 << 29, 5 << 30, "B") == "parsing a.csv, 1.5 of 5.0 GiB"
    assert stage_text("testing", 1, 2, "comparison") == "testing, 1 of 2 comparisons"
    assert progress_label("Loading", 0, 2, "a", "parsing a.csv", 1 << 20, 4 << 20, "B") == (
        0.125, "Loading: step 1 of 2 (a): parsing a.csv, 1.0 of 4.0 MiB")


def test_a_load_step_names_the_file_as_given():
    from dashboard import loading

    assert loading.load_step_text(0, 3, "reading", "runs *v2*.csv") == "Step 1 of 3: reading runs *v2*.csv"
