"""AppTest checks of every dashboard page.

Each test drives the real app (``dashboard/app.py`` with st.navigation) and
compares what a page shows with ``metrics_core.evaluate`` called directly on
the same data (the demo tables, or small demo files uploaded through the
file uploaders).
"""

from __future__ import annotations

import _deadlines as deadlines
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from _apptest import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import demo, text  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
TIMEOUT = deadlines.SCRIPT_RUN



@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    """Uploads are saved as working copies: keep them in a temporary store."""
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def app(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def page(at: AppTest, name: str) -> AppTest:
    at.switch_page(f"views/{name}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def opened_on(name: str) -> AppTest:
    """A new session opened on the address of page ``name`` (the Overview is not drawn first)."""
    return page(AppTest.from_file(APP, default_timeout=TIMEOUT), name)


def data_page() -> AppTest:
    """A new session opened on the Data page's address."""
    return opened_on("data")


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The first st.dataframe that has ``column`` (as a column or its index name)."""
    for df in at.dataframe:
        v = df.value
        if column in v.columns or v.index.name == column:
            return v
    raise AssertionError(f"no dataframe with column {column!r}: "
                         f"{[list(d.value.columns) for d in at.dataframe]}")


@lru_cache(maxsize=1)
def full_demo() -> demo.DemoData:
    return demo.make_demo()


@lru_cache(maxsize=1)
def small_demo() -> demo.DemoData:
    return demo.make_demo(n_users=300, n_items=200, list_length=20, seed=7)


def reference(data: demo.DemoData, metrics, **kw) -> dict[str, dict[str, float]]:
    return {name: mc.evaluate(run, data.qrels, metrics=metrics, **kw).summary
            for name, run in data.runs.items()}


def upload_small(at: AppTest, with_truth: bool = True) -> demo.DemoData:
    """The small demo's files uploaded on ``at``, a session showing the Data page."""
    d = small_demo()
    files = [(f"{name}.csv", demo.to_csv_bytes(run), "text/csv") for name, run in d.runs.items()]
    at.file_uploader(key="upload_runs_0").set_value(files)
    if with_truth:
        at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return d


# --------------------------------------------------------------------------
# Overview, controls, query parameters
# --------------------------------------------------------------------------

def test_overview_demo_matches_metrics_core_and_has_cis():
    at = app()
    assert any("Demo data" in i.value for i in at.info)
    assert not at.error
    table = frame_with(at, "ndcg@10")
    ref = reference(full_demo(), ["ndcg@10", "map@10", "recall@10", "r_precision"])
    assert list(table.index) == list(demo.MODEL_NAMES)
    for name in demo.MODEL_NAMES:
        for m in ("ndcg@10", "map@10", "recall@10", "r_precision"):
            assert table.loc[name, m] == pytest.approx(ref[name][m], abs=1e-12)
    # the demo's models differ visibly in quality
    nd = table["ndcg@10"]
    assert nd["popularity"] < nd["matrix_factorization"] < nd["two_tower"]
    # 95% bootstrap CI strings bracket the value
    ci = next(d.value for d in at.dataframe
              if "ndcg@10" in d.value.columns and not pd.api.types.is_numeric_dtype(d.value["ndcg@10"]))["ndcg@10"]
    for name in demo.MODEL_NAMES:
        low, high = (float(x) for x in ci[name].strip("[]").split(","))
        assert low < ref[name]["ndcg@10"] < high
        assert high - low < 0.05
    scored = frame_with(at, "auc")
    ref_s = reference(full_demo(), ["auc", "gauc", "logloss", "pcopc"])
    for name in demo.MODEL_NAMES:
        for m in ("auc", "gauc", "logloss", "pcopc"):
            assert scored.loc[name, m] == pytest.approx(ref_s[name][m], abs=1e-12)
    assert len(at.get("plotly_chart")) >= 2
    assert at.get("download_button")


def set_control(at: AppTest, key: str, value) -> None:
    """Change a sidebar control. The first run uses the widget itself; AppTest
    (1.67) drops sidebar elements from its tree after a rerun of an
    st.navigation app, so later changes go through the widget's session state
    (the same key the widget reads)."""
    try:
        widget = at.number_input(key=key) if key == "k" else at.selectbox(key=key)
    except KeyError:
        at.session_state[key] = value
        at.run()
    else:
        widget.set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]


def test_k_and_gain_change_recompute_without_error():
    at = app()
    set_control(at, "k", 5)
    set_control(at, "gain", "exponential")
    assert not at.exception and not at.error
    table = frame_with(at, "ndcg@5")
    ref = reference(full_demo(), ["ndcg@5", "dcg@5", "precision@5"], gain="exponential")
    for name in demo.MODEL_NAMES:
        for m in ("ndcg@5", "dcg@5", "precision@5"):
            assert table.loc[name, m] == pytest.approx(ref[name][m], abs=1e-12)
    # the exponential gain really changed DCG (grades 2 and 3 gain more)
    lin = reference(full_demo(), ["dcg@5"])
    assert all(ref[n]["dcg@5"] > lin[n]["dcg@5"] for n in demo.MODEL_NAMES)


def test_query_params_set_k_gain_and_ties():
    at = app(k=20, gain="exponential", ties="trec")
    assert at.number_input(key="k").value == 20
    assert at.selectbox(key="gain").value == "exponential"
    table = frame_with(at, "ndcg@20")
    ref = reference(full_demo(), ["ndcg@20", "map@20"], gain="exponential", ties="trec")
    for name in demo.MODEL_NAMES:
        assert table.loc[name, "ndcg@20"] == pytest.approx(ref[name]["ndcg@20"], abs=1e-12)
        assert table.loc[name, "map@20"] == pytest.approx(ref[name]["map@20"], abs=1e-12)


# --------------------------------------------------------------------------
# Data page: uploads, mapping, errors, remove, demo
# --------------------------------------------------------------------------

def test_upload_results_and_ground_truth_then_overview():
    at = data_page()
    d = upload_small(at)
    assert not at.error
    models = frame_with(at, "rows")
    assert list(models.index) == list(d.runs)
    assert models.loc["two_tower", "rows"] == len(d.runs["two_tower"])
    page(at, "overview")
    assert not any("Demo data" in i.value for i in at.info)
    table = frame_with(at, "ndcg@10")
    ref = reference(d, ["ndcg@10", "hit_rate@10"])
    for name in d.runs:
        assert table.loc[name, "ndcg@10"] == pytest.approx(ref[name]["ndcg@10"], abs=1e-12)
        assert table.loc[name, "hit_rate@10"] == pytest.approx(ref[name]["hit_rate@10"], abs=1e-12)


def test_results_with_label_column_need_no_ground_truth():
    d = small_demo()
    run = d.runs["two_tower"].merge(d.qrels, on=["user_id", "item_id"], how="left")
    run["label"] = (run.pop("relevance").fillna(0) >= 1).astype(int)
    at = data_page()
    at.file_uploader(key="upload_runs_0").set_value(("ctr_log.csv", demo.to_csv_bytes(run), "text/csv")).run()
    assert not at.exception and not at.error
    page(at, "overview")
    table = frame_with(at, "auc")
    ref = mc.evaluate(run, metrics=["auc", "logloss"]).summary
    assert list(table.index) == ["ctr_log"]
    assert table.loc["ctr_log", "auc"] == pytest.approx(ref["auc"], abs=1e-12)
    assert table.loc["ctr_log", "logloss"] == pytest.approx(ref["logloss"], abs=1e-12)


def test_bad_file_is_an_error_message_not_a_traceback():
    at = data_page()
    bad = b"user_id,item_id,score\nu1,i1,0.5\nu1,i2,abc\n"
    at.file_uploader(key="upload_runs_0").set_value(("broken.csv", bad, "text/csv"))
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", b"user_id,item_id,relevance\nu1,i1,1\n", "text/csv"))
    at.run()
    assert not at.exception
    messages = [e.value for e in at.error]
    assert any(text.md("broken.csv") in m and "line 3" in m for m in messages), messages
    # the other pages say the same, without a traceback
    page(at, "overview")
    assert any("broken" in e.value for e in at.error)


def test_unrecognised_columns_can_be_mapped():
    d = small_demo()
    run = d.runs["two_tower"].rename(columns={"user_id": "customer", "item_id": "sku", "score": "affinity"})
    at = data_page()
    at.file_uploader(key="upload_runs_0").set_value(("custom.csv", demo.to_csv_bytes(run), "text/csv"))
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.run()
    assert any("custom" in e.value for e in at.error)
    at.selectbox(key="map_custom_user_id").set_value("customer")
    at.selectbox(key="map_custom_item_id").set_value("sku")
    at.selectbox(key="map_custom_score").set_value("affinity")
    at.button[[b.label for b in at.button].index("Apply mapping")].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    page(at, "overview")
    table = frame_with(at, "ndcg@10")
    ref = mc.evaluate(d.runs["two_tower"], d.qrels, metrics=["ndcg@10"]).summary["ndcg@10"]
    assert table.loc["custom", "ndcg@10"] == pytest.approx(ref, abs=1e-12)


def test_remove_model_and_return_to_demo():
    at = data_page()
    upload_small(at)
    at.button(key="remove_popularity").click().run()
    assert list(frame_with(at, "rows").index) == ["matrix_factorization", "two_tower"]
    # the uploader still holds the file, but a removed model stays removed
    at.run()
    assert list(frame_with(at, "rows").index) == ["matrix_factorization", "two_tower"]
    at.button(key="data_demo").click().run()
    assert not at.exception
    assert frame_with(at, "rows").loc["two_tower", "rows"] == len(full_demo().runs["two_tower"])
    assert any("demo data" in i.value for i in at.info)


def test_data_page_shows_diagnostics_as_one_table():
    at = data_page()
    # the demo data has no real problem: facts go in the table, not in warnings
    assert not at.warning, [w.value for w in at.warning]
    diag = frame_with(at, "users evaluated")
    assert list(diag.index) == list(demo.MODEL_NAMES)
    d = full_demo()
    for name in demo.MODEL_NAMES:
        run = d.runs[name]
        top = (run.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])
               .groupby("user_id").head(10))
        tied = top.groupby("user_id")["score"].agg(lambda s: s.duplicated().any())
        assert diag.loc[name, "ties in the top 10"] == f"{tied.mean():.1%} of users"
        users = set(run.user_id) & set(d.qrels.user_id)
        assert diag.loc[name, "users evaluated"] == f"{len(users):,}"
    # the popularity baseline ties many scores, the others do not
    assert float(diag.loc["popularity", "ties in the top 10"].split("%")[0]) > 50


# --------------------------------------------------------------------------
# Curves, Distributions, Failures
# --------------------------------------------------------------------------

def test_curves_page_values_and_threshold():
    at = opened_on("curves")
    assert not at.error
    table = frame_with(at, "gauc")
    ref = reference(full_demo(), ["auc", "gauc", "pr_auc", "pcopc"])
    for name in demo.MODEL_NAMES:
        for m in ("auc", "gauc", "pr_auc", "pcopc"):
            assert table.loc[name, m] == pytest.approx(ref[name][m], abs=1e-12)
    keys = [c.key for c in at.get("plotly_chart")]
    assert keys == ["curves_vs_k", "curves_roc", "curves_pr", "curves_calibration", "curves_cm"]
    # how a user the run does not answer counts at every K (the default convention: 0)
    assert any("does not answer counts as 0 at every K" in c.value for c in at.caption)
    # the threshold slider spans the chosen model's own scores
    ranked = mc.prepare(full_demo().runs["two_tower"], full_demo().qrels)
    at.selectbox(key="curves_cm_model").set_value("two_tower").run()
    slider = at.slider(key="curves_threshold")
    assert (slider.min, slider.max) == pytest.approx((ranked.score.min(), ranked.score.max()))
    assert slider.value == 0.5  # probabilities open at 0.5, and the caption says so
    assert any(text.md("opens at 0.5, as this model's scores are probabilities") in c.value for c in at.caption)
    slider.set_value(0.2).run()
    assert not at.exception
    acc = reference(full_demo(), ["accuracy", "recall"], threshold=0.2)["two_tower"]
    shown = frame_with(at, "value").set_index("metric")["value"]
    assert shown["accuracy"] == pytest.approx(acc["accuracy"], abs=1e-12)
    assert shown["recall"] == pytest.approx(acc["recall"], abs=1e-12)


def test_curves_figures_follow_their_options_and_are_reused_otherwise():
    """ROC / PR figures are built once per models and options: the recall basis changes the PR
    curve only, and a move of the threshold slider draws the same figures again."""
    import json

    def specs(at):
        return {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}

    at = opened_on("curves")
    first = specs(at)
    at.slider(key="curves_threshold").set_value(0.3).run()
    again = specs(at)
    assert again["curves_roc"] == first["curves_roc"] and again["curves_pr"] == first["curves_pr"]
    at.radio(key="curves_recall").set_value("retrieved relevant rows").run()
    moved = specs(at)
    assert moved["curves_roc"] == first["curves_roc"] and moved["curves_pr"] != first["curves_pr"]
    at.radio(key="curves_recall").set_value("all relevant items").run()
    assert specs(at)["curves_pr"] == first["curves_pr"]


def test_curves_and_overview_on_raw_scores_never_show_probability_metrics(tmp_path):
    d = small_demo()
    at = data_page()
    files = []
    for name, run in d.runs.items():
        raw = run.assign(score=5 + 6 * run["score"])  # scores 5..11, not probabilities
        files.append((f"{name}.csv", demo.to_csv_bytes(raw), "text/csv"))
    at.file_uploader(key="upload_runs_0").set_value(files)
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.run()
    page(at, "overview")
    scored = frame_with(at, "auc")
    for hidden in ("logloss", "brier", "ece", "pcopc", "accuracy", "rmse", "mse", "mae", "r2"):
        assert hidden not in scored.columns
    assert any("Needs probabilities" in c.value for c in at.caption)
    assert any("Needs scores on the relevance scale" in c.value for c in at.caption)
    # the user says the scores predict the grade: RMSE and R² are shown, as numpy computes them
    at.radio(key="overview_errors").set_value("always: the scores predict the grade").run()
    scored = frame_with(at, "auc")
    for name, run in d.runs.items():
        rows = run.merge(d.qrels, on=["user_id", "item_id"], how="left")
        err = 5 + 6 * rows["score"] - rows["relevance"].fillna(0)  # unjudged rows: relevance 0
        assert scored.loc[name, "rmse"] == pytest.approx(float(np.sqrt((err ** 2).mean())), abs=1e-9)
        grade = rows["relevance"].fillna(0)
        r2 = 1 - (err ** 2).sum() / ((grade - grade.mean()) ** 2).sum()
        assert scored.loc[name, "r2"] == pytest.approx(float(r2), abs=1e-9)
    assert at.query_params["overview_errors"] == "always: the scores predict the grade"  # kept in the URL
    at.radio(key="overview_errors").set_value("never: the scores only rank").run()
    assert "rmse" not in frame_with(at, "auc").columns
    assert any("you chose that the scores only rank" in c.value for c in at.caption)
    page(at, "curves")
    assert "pcopc" not in frame_with(at, "gauc").columns
    assert any("no model has scores in [0, 1]" in i.value for i in at.info)
    name = at.selectbox(key="curves_cm_model").value
    raw = 5 + 6 * d.runs[name]["score"]
    slider = at.slider(key="curves_threshold")
    assert (slider.min, slider.max) == pytest.approx((raw.min(), raw.max()))
    # raw scores open at the threshold with the highest F1 over the model's rows (unjudged rows negative)
    from sklearn.metrics import f1_score

    rows = d.runs[name].assign(score=raw).merge(d.qrels, on=["user_id", "item_id"], how="left")
    labels = (rows["relevance"].fillna(0) >= 1).astype(int)
    f1s = {t: f1_score(labels, (rows["score"] >= t).astype(int)) for t in rows["score"].unique()}
    best = max(f1s.values())
    want = max(t for t, f in f1s.items() if f >= best - 1e-12)
    assert slider.value == pytest.approx(want, abs=1e-9)
    shown = [c.value.replace("\\", "") for c in at.caption]
    assert any(f"opens at {want:.4g}, the threshold with the highest F1 ({best:.4f})" in c for c in shown)


def test_distributions_page_shares_and_segments():
    at = opened_on("distributions")
    assert not at.error
    summary = frame_with(at, "share at 0")
    d = full_demo()
    for name, run in d.runs.items():
        pu = mc.evaluate(run, d.qrels, metrics=["ndcg@10"]).per_user["ndcg@10"]
        assert summary.loc[name, "share at 0"] == pytest.approx(float((pu == 0).mean()), abs=1e-12)
        assert summary.loc[name, "share at 1"] == pytest.approx(float((pu == 1).mean()), abs=1e-12)
        assert summary.loc[name, "users"] == len(pu)
    seg = frame_with(at, "two_tower")
    assert set(seg.index) == {"new", "casual", "heavy"}
    pu = mc.evaluate(d.runs["two_tower"], d.qrels, metrics=["ndcg@10"]).per_user["ndcg@10"]
    users = d.users.set_index("user_id")["segment"]
    expected = pu.groupby(users.reindex(pu.index.astype(str)).to_numpy()).mean()
    for s in ("new", "casual", "heavy"):
        assert seg.loc[s, "two_tower"] == pytest.approx(expected[s], abs=1e-12)
    # cold start: the strong model is clearly worse on new users
    assert seg.loc["new", "two_tower"] < seg.loc["heavy", "two_tower"]
    at.selectbox(key="dist_metric").set_value("recall@10").run()
    assert not at.exception
    assert [c.key for c in at.get("plotly_chart")] == ["dist_ecdf", "dist_box", "dist_segments"]  # no overlaid histograms


def test_distributions_bucket_by_relevant_items_without_attributes():
    at = data_page()
    upload_small(at)
    page(at, "distributions")
    assert not at.exception and not at.error
    seg = frame_with(at, "two_tower")
    d = small_demo()
    n_rel = d.qrels[d.qrels.relevance >= 1].groupby("user_id").size()
    assert set(seg.index) <= {"1", "2-3", "4-7", "8-15", "16+"}
    pu = mc.evaluate(d.runs["two_tower"], d.qrels, metrics=["ndcg@10"]).per_user["ndcg@10"]
    ones = pu[n_rel.reindex(pu.index.astype(str)).to_numpy() == 1]
    assert seg.loc["1", "two_tower"] == pytest.approx(ones.mean(), abs=1e-12)


def _triage_reference(d, model: str, metric: str, k: int) -> pd.DataFrame:
    """Groups and gaps written with pandas from mc.evaluate's per-user values and the run file."""
    per_user = {n: mc.evaluate(r, d.qrels, metrics=[metric, f"hit_rate@{k}"]).per_user for n, r in d.runs.items()}
    own = per_user[model]
    lengths = d.runs[model].groupby("user_id").size().reindex(own.index).fillna(0)
    served = lengths > 0
    cut = own.loc[served & (own[f"hit_rate@{k}"] > 0), metric].quantile(0.25)
    group = pd.Series("fine", index=own.index)
    group[own[metric] < cut] = "hit but low"
    group[own[f"hit_rate@{k}"] <= 0] = "no hit in the top K"
    group[~served] = "not served"
    best = pd.concat([per_user[n][metric] for n in per_user if n != model], axis=1).max(axis=1)
    return pd.DataFrame({"group": group, "gap": best - own[metric]})


def test_failures_groups_and_order_match_pandas():
    at = opened_on("failures")
    at.selectbox(key="failures_model").set_value("two_tower").run()
    d = full_demo()
    ref = _triage_reference(d, "two_tower", "ndcg@10", 10)
    counts = frame_with(at, "share").set_index("group")
    for group, n in ref["group"].value_counts().items():
        assert counts.loc[group, "users"] == f"{n:,}", group
    worst = frame_with(at, "gap")
    assert worst["gap"].tolist() == pytest.approx(sorted(ref["gap"], reverse=True)[: len(worst)], abs=1e-12)
    for uid, group in zip(worst["user_id"], worst["group"]):
        assert ref.loc[uid, "group"] == group
    at.selectbox(key="failures_group").set_value("no hit in the top K").run()
    only = frame_with(at, "gap")
    assert set(only["group"]) == {"no hit in the top K"}
    assert len(only) == min(25, int((ref["group"] == "no hit in the top K").sum()))
    at.text_input(key="failures_search").set_value("u00").run()
    assert all(u.startswith("u00") for u in frame_with(at, "gap")["user_id"])


def test_failures_drilldown_by_row_selection():
    at = opened_on("failures")
    at.selectbox(key="failures_model").set_value("two_tower").run()
    worst = frame_with(at, "gap")
    d = full_demo()
    at.session_state["failures_worst"] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()
    assert not at.exception and not at.error
    user = worst.iloc[2]["user_id"]
    assert any(f"User {user}" in h.value for h in at.subheader)
    listing = frame_with(at, "rank · two_tower")
    run = d.runs["two_tower"]
    mine = run[run.user_id == user].sort_values(["score", "item_id"], ascending=False).head(10)
    other = d.runs[at.selectbox(key="failures_other").value]
    theirs = other[other.user_id == user].sort_values(["score", "item_id"], ascending=False).head(10)
    assert set(listing["item_id"]) == set(mine["item_id"]) | set(theirs["item_id"])
    judged = d.qrels[d.qrels.user_id == user].set_index("item_id")["relevance"]
    for item, rel in zip(listing["item_id"], listing["relevance"]):
        assert rel == (f"{judged[item]:g}" if item in judged.index else "unjudged")
    missed = frame_with(at, "rank in list")
    truth = d.qrels[(d.qrels.user_id == user) & (d.qrels.relevance >= 1)]
    hits = set(truth["item_id"]) & set(mine["item_id"])
    assert sorted(missed["item_id"]) == sorted(set(truth["item_id"]) - hits)
    metrics = frame_with(at, "recall@10")
    for name, r in d.runs.items():
        ref = mc.evaluate(r, d.qrels, metrics=["ndcg@10"]).per_user["ndcg@10"]
        assert metrics.loc[name, "ndcg@10"] == pytest.approx(ref.loc[user], abs=1e-12)


def test_failures_drilldown_request_from_another_page():
    at = opened_on("failures")
    at.session_state["mcd_focus"] = ("matrix_factorization", "u0042", None)
    at.run()
    assert not at.exception
    assert at.selectbox(key="failures_model").value == "matrix_factorization"
    assert any("User u0042" in h.value for h in at.subheader)
    listing = frame_with(at, "rank · matrix_factorization")
    assert listing["rank · matrix_factorization"].dropna().min() == 1


def test_fresh_install_lays_the_demo_out_in_python_and_leaves_the_metric_curves_to_the_server(monkeypatch):
    """Before the layout and curve kernels are compiled, the demo is laid out in plain Python (same
    numbers) and the Overview's metric-versus-K chart comes from the worker thread, then appears."""
    import importlib
    import time

    from dashboard import cache, loading
    from metrics_core.layout import build

    mc_evaluate = importlib.import_module("metrics_core.evaluation")  # the module (the package exports a function)

    plain_calls = []
    real_plain = build.prepare_plain

    def plain(*args, **kwargs):
        plain_calls.append(kwargs.get("name"))
        return real_plain(*args, **kwargs)

    monkeypatch.setattr(build, "layout_kernel_cached", lambda: False)
    monkeypatch.setattr(build, "prepare_plain", plain)
    monkeypatch.setattr(loading.demo_cache, "cached", lambda kind, compute: compute())  # nothing on disk yet
    monkeypatch.setattr(loading.demo_cache, "bundled", lambda: {})  # nor a shipped first page
    monkeypatch.setattr(mc_evaluate, "metric_curve_compiled", lambda: False)
    loading._demo_ranked.clear()
    cache.SHARED.clear()
    try:
        at = app()
        assert sorted(plain_calls) == sorted(demo.MODEL_NAMES)
        table = frame_with(at, "ndcg@10")
        ref = reference(full_demo(), ["ndcg@10", "map@10"])
        for name in demo.MODEL_NAMES:
            for m in ("ndcg@10", "map@10"):
                assert table.loc[name, m] == pytest.approx(ref[name][m], abs=1e-12)
        assert any("compiled code is being built" in c.value for c in at.caption)
        charts = len(at.get("plotly_chart"))
        deadline = time.monotonic() + deadlines.BACKGROUND
        while not any(k.startswith("metric_curves_all|") for k in list(cache.SHARED._entries)):
            assert time.monotonic() < deadline, "the curves never arrived"
            time.sleep(0.1)
        monkeypatch.setattr(mc_evaluate, "metric_curve_compiled", lambda: True)  # the warm-up has compiled them
        at.run()
        assert not any("compiled code is being built" in c.value for c in at.caption)
        assert len(at.get("plotly_chart")) == charts + 1
    finally:
        loading._demo_ranked.clear()  # later tests prepare the demo with the compiled layout again


def test_every_table_leaves_missing_cells_empty():
    """A model with raw scores beside one with probabilities: its probability metrics are
    missing cells, which every table of every page shows empty (Streamlit writes "None"
    unless told otherwise)."""
    d = small_demo()
    at = data_page()
    files = [(f"{name}.csv", demo.to_csv_bytes(run.assign(score=5 + 6 * run["score"]) if i == 0 else run),
              "text/csv") for i, (name, run) in enumerate(d.runs.items())]
    at.file_uploader(key="upload_runs_0").set_value(files)
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    raw = next(iter(d.runs))
    seen = 0
    for name in ("data", "overview", "curves", "distributions", "failures", "compare", "share"):
        if name != "data":  # the upload's run drew the Data page
            page(at, name)
        if name == "overview":
            assert pd.isna(frame_with(at, "logloss").loc[raw, "logloss"])  # a missing cell is there to show
        for table in at.dataframe:
            assert table.proto.HasField("placeholder") and table.proto.placeholder == "", (name, table.key)
            seen += 1
    assert seen >= 10


def test_counts_agree_with_their_nouns():
    """One challenger against one baseline on one metric: "1 comparison", never "1 comparisons";
    every caption of the page is free of "1 <plural>"."""
    import re

    d = small_demo()
    at = data_page()
    two = list(d.runs.items())[:2]
    at.file_uploader(key="upload_runs_0").set_value(
        [(f"{name}.csv", demo.to_csv_bytes(run), "text/csv") for name, run in two])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(d.qrels), "text/csv"))
    at.run()
    page(at, "compare")
    at.multiselect(key="compare_metrics").set_value(["ndcg@10"]).run()
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any(c.startswith("1 comparison, each paired") for c in captions), captions
    for name in ("overview", "compare", "failures", "data"):
        page(at, name)
        for c in at.caption:
            assert not re.search(r"(?<![\d.,])1 (comparisons|users|models|tests|columns|items)\b", c.value), c.value


@pytest.mark.parametrize("large", [False, True], ids=["vs-K section on", "large data: vs-K section off"])
def test_overview_of_large_models_prepares_the_curves_page_on_the_server_thread(monkeypatch, large):
    """Above background.FOREGROUND_USERS the Overview starts the Curves page's ROC, precision-recall,
    opening threshold and precision / recall at every K of every model on the server thread, also on
    large data where its own metrics-against-K section is off (the page ends early); the Curves page
    then reads them from the cache (the same values as computed for it), and shows metrics_core's AUCs."""
    from dashboard import background, cache, loading, metric_lists

    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    if large:  # every model counts as large: the Overview's optional sections are off by default
        monkeypatch.setattr(loading, "LARGE_ROWS", 0)
    cache.SHARED.clear()
    at = app()
    assert not at.exception
    deadline = time.monotonic() + deadlines.SCRIPT_RUN  # until the server thread has nothing queued
    while time.monotonic() < deadline:
        with background._LOCK:
            if not background._QUEUED:
                break
        time.sleep(0.05)
    started = {k.split("|")[1] for k in cache.SHARED.keys() if k.startswith("curve|")}
    assert started >= {"roc", "pr", "opening_threshold"}, started
    roc_keys = [k for k in cache.SHARED.keys() if k.startswith("curve|roc|")]
    assert len(roc_keys) == len(demo.MODEL_NAMES)
    curves_k = f"|{tuple(metric_lists.CURVES_K)!r}|{metric_lists.CURVES_K_MAX}|"
    at_k = [k for k in cache.SHARED.keys() if k.startswith("metric_curve|") and curves_k in k]
    assert len(at_k) == len(demo.MODEL_NAMES), at_k
    if large:
        assert not at.toggle(key="overview_curves_on").value
    before = set(cache.SHARED.keys())
    page(at, "curves")
    assert not at.exception
    # the page computed no ROC, precision-recall or vs-K curve of its own: its keys were the prefetched ones
    assert not {k for k in set(cache.SHARED.keys()) - before
                if k.startswith(("curve|roc|", "curve|pr|", "metric_curve|"))}
    table = frame_with(at, "gauc")
    ref = reference(full_demo(), ["auc", "pr_auc"])
    for name in demo.MODEL_NAMES:
        assert table.loc[name, "auc"] == pytest.approx(ref[name]["auc"], abs=1e-12)


def test_a_restarted_server_draws_the_demo_overview_from_the_results_on_disk(monkeypatch, tmp_path):
    """The engine's results for the demo are kept on disk: a restarted server (nothing in memory)
    shows the same Overview without calling the engine; a changed source (a kernel edited) makes it
    compute them again."""
    from dashboard import cache, demo_cache, loading
    from metrics_core.analysis import stats

    def restart() -> None:
        loading.demo_data.clear()
        loading._demo_ranked.clear()
        cache.SHARED.clear()
        demo_cache._digest.cache_clear()

    def shown(at: AppTest) -> list[pd.DataFrame]:
        return [d.value for d in at.dataframe]

    def refuse(*args, **kwargs):
        raise AssertionError("the engine was called although its result is on disk")

    monkeypatch.setattr(demo_cache.cache_stamp, "folder", lambda: tmp_path)
    monkeypatch.setattr(demo_cache, "bundled", lambda: {})  # the results on disk, not the shipped first page
    restart()
    try:
        first = shown(app())
        assert list(tmp_path.glob(f"{demo_cache.PREFIX}{demo_cache.RESULT}*.pkl"))
        restart()
        with monkeypatch.context() as m:
            for module, name in ((mc, "evaluate"), (mc, "metric_curve"), (stats, "bootstrap_ci_columns")):
                m.setattr(module, name, refuse)
            again = app()
            assert len(again.get("plotly_chart")) >= 2
            for a, b in zip(first, shown(again), strict=True):
                pd.testing.assert_frame_equal(a, b)
        restart()
        monkeypatch.setattr(demo_cache.cache_stamp, "fingerprint", lambda: "a kernel was edited")
        calls = []
        real = mc.evaluate
        monkeypatch.setattr(mc, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
        edited = shown(app())
        assert calls, "the results kept for other sources were read"
        for a, b in zip(first, edited, strict=True):
            pd.testing.assert_frame_equal(a, b)
    finally:
        restart()
