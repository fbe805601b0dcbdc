"""A fused model on the dashboard: the Data page fuses uploaded models (mc.fuse) into a result file that
joins the analysis as an upload does. The fused file is checked against RRF and CombSUM written here in
plain Python; the working copy keeps it, and another browser opening the link evaluates it (its NDCG equal
to ``mc.evaluate`` of the plain-Python fused run)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from _apptest import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import fused  # noqa: E402
from metrics_core.errors import MetricsError  # noqa: E402
from metrics_core.fusion import METHODS, NORMS  # noqa: E402
from metrics_core.store import AnalysisStore  # noqa: E402
from test_compare_dashboard import APP, TIMEOUT, files, frame, frame_with, ok, uploaded_app  # noqa: E402


def plain_ranks(run: pd.DataFrame) -> dict:
    """(user, item) -> 1-based rank: each user's rows by score descending, tied scores in row order."""
    ranks = {}
    for user, rows in run.groupby("user_id", sort=False):
        ordered = sorted(zip(rows["item_id"], rows["score"]), key=lambda t: -t[1])  # stable: row order in ties
        for rank, (item, _) in enumerate(ordered, start=1):
            ranks[(user, item)] = rank
    return ranks


def plain_rrf(runs: list[pd.DataFrame], k: float = 60) -> dict:
    total: dict = {}
    for run in runs:
        for key, rank in plain_ranks(run).items():
            total[key] = total.get(key, 0.0) + 1 / (k + rank)
    return total


def plain_combsum_min_max(runs: list[pd.DataFrame]) -> dict:
    """Per run, each user's scores min-max normalised, then summed per (user, item); in Python lists
    (a pandas group per user costs seconds on the demo's 2,400 users)."""
    total: dict = {}
    for run in runs:
        lists: dict = {}  # user -> [(item, score)] in row order, users in order of first appearance
        for user, item, score in zip(run["user_id"].tolist(), run["item_id"].tolist(), run["score"].tolist()):
            lists.setdefault(user, []).append((item, score))
        for user, rows in lists.items():
            lo, hi = min(score for _, score in rows), max(score for _, score in rows)
            for item, score in rows:
                total[(user, item)] = total.get((user, item), 0.0) + (score - lo) / max(hi - lo, 1e-9)
    return total


def as_scores(data: bytes) -> dict:
    df = pd.read_csv(io.BytesIO(data), dtype={"user_id": str, "item_id": str})
    assert list(df.columns) == ["user_id", "item_id", "score"]
    return dict(zip(zip(df["user_id"].tolist(), df["item_id"].tolist()), df["score"].tolist()))


def test_the_labels_name_every_method_and_normalisation():
    assert set(fused.METHOD_LABELS) == set(METHODS) and set(fused.NORM_LABELS) == set(NORMS)


def test_fused_file_equals_plain_combsum_and_keeps_ids_exactly():
    a = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "7"], "item_id": ["12", "12.0", "012", "x", "=1+1"],
                      "score": [0.3, 0.2, 0.1, 5.0, 1.0]})
    b = pd.DataFrame({"user_id": ["u1", "u1", "u2", "8"], "item_id": ["12.0", "99", "x", "y"],
                      "score": [10.0, -3.0, 2.0, 0.5]})
    got = as_scores(fused.fused_run_bytes({"a": a, "b": b}, "sum", "min-max"))
    expected = plain_combsum_min_max([a, b])
    assert got.keys() == expected.keys()  # "12", "12.0" and "012" stay three items; users of one run kept
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-15)


def test_weights_and_names_are_read_or_refused_in_one_line():
    assert fused.read_weights("", 2) is None
    assert fused.read_weights("0.7; 0.3", 2) == [0.7, 0.3]
    for bad in ("0.7", "a, b", "1, inf"):
        with pytest.raises(MetricsError, match="weight"):
            fused.read_weights(bad, 2)
    assert fused.check_name("  hybrid ", ["a", "b"], {}) == "hybrid"
    for bad, message in (("", "name"), ("a", "cannot replace"), ("x/y", "cannot hold"), ("h.csv", "extension"),
                         ("n" * 200, "at most")):
        with pytest.raises(MetricsError, match=message):
            fused.check_name(bad, ["a", "b"], {})


def test_a_fused_model_is_added_kept_and_opened_by_the_link(monkeypatch, tmp_path):
    at = uploaded_app(monkeypatch, tmp_path)
    aid = at.query_params["analysis"]  # uploaded_app leaves the session on the Data page
    at.multiselect(key="fuse_models").set_value(["popularity", "two_tower"])
    at.selectbox(key="fuse_method").set_value("rrf")
    at.text_input(key="fuse_name").input("hybrid")
    ok(at.button(key="fuse_submit").click().run())
    assert not at.error, [e.value for e in at.error]
    assert "hybrid" in frame_with(at, "users in run").index

    saved = {f.name: f.data for f in AnalysisStore(tmp_path / "store").load(at.query_params["analysis"]).files}
    assert at.query_params["analysis"] == aid
    runs = [frame(files()[f"{name}.csv"]) for name in ("popularity", "two_tower")]
    expected = plain_rrf(runs)
    got = as_scores(saved["hybrid.csv"])
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-15)

    # another browser opening the link evaluates the fused model as any other
    other = AppTest.from_file(APP, default_timeout=TIMEOUT)
    other.query_params["analysis"] = aid
    ok(other.run())
    table = frame_with(other, "ndcg@10")
    table = table.set_index("model") if "model" in table.columns else table
    plain = pd.DataFrame([(u, i, s) for (u, i), s in expected.items()], columns=["user_id", "item_id", "score"])
    reference = mc.evaluate(plain, frame(files()["qrels.csv"]), metrics=["ndcg@10"]).summary["ndcg@10"]
    assert table.loc["hybrid", "ndcg@10"] == pytest.approx(reference, abs=1e-12)

    # a second fusion under a name of the models it fuses is refused in one line, nothing added
    at.text_input(key="fuse_name").input("popularity")
    ok(at.button(key="fuse_submit").click().run())
    assert any("cannot replace popularity" in e.value for e in at.error)


def test_demo_files_read_back_to_the_demo_tables_exactly():
    from dashboard import demo

    d = demo.make_demo(n_users=40, n_items=60, list_length=8, seed=3)
    src = fused.demo_files(d)
    assert set(src.runs) == set(d.runs) and src.logged is None

    def back(blob, frame):
        text = {c: str for c in frame.columns if c in ("user_id", "item_id", "segment")}
        return pd.read_csv(io.BytesIO(blob.data), dtype=text)

    assert all(src.runs[name].name == f"{name}.csv" for name in d.runs)
    for blob, frame in [(src.runs[name], run) for name, run in d.runs.items()] + [
            (src.qrels, d.qrels), (src.item_features, d.item_features), (src.user_attributes, d.users)]:
        got = back(blob, frame)
        assert got.columns.tolist() == frame.columns.tolist()
        for column in frame.columns:  # every value as the demo holds it: ids as text, numbers bit for bit
            assert got[column].astype(str).tolist() == frame[column].astype(str).tolist(), (blob.name, column)
            if pd.api.types.is_float_dtype(frame[column]):
                assert (got[column].to_numpy() == frame[column].to_numpy()).all(), (blob.name, column)


def test_the_demo_models_fuse_into_a_working_copy_of_their_own(monkeypatch, tmp_path):
    from dashboard import loading

    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    ok(at.switch_page("views/data.py").run())
    assert "analysis" not in at.query_params  # the demo: nothing saved yet
    assert at.multiselect(key="fuse_models").options == ["popularity", "matrix_factorization", "two_tower"]
    at.multiselect(key="fuse_models").set_value(["matrix_factorization", "two_tower"])
    at.selectbox(key="fuse_method").set_value("sum")
    at.text_input(key="fuse_name").input("hybrid")
    ok(at.button(key="fuse_submit").click().run())
    assert not at.error, [e.value for e in at.error]
    shown = frame_with(at, "users in run")
    assert list(shown.index) == ["popularity", "matrix_factorization", "two_tower", "hybrid"]

    saved = {f.name: f.data for f in AnalysisStore(tmp_path / "store").load(at.query_params["analysis"]).files}
    assert set(saved) == {"popularity.csv", "matrix_factorization.csv", "two_tower.csv", "hybrid.csv",
                          "demo_qrels.csv", "demo_item_features.csv", "demo_users.csv"}
    demo = loading.demo_data()
    expected = plain_combsum_min_max([demo.runs["matrix_factorization"], demo.runs["two_tower"]])
    got = as_scores(saved["hybrid.csv"])
    assert got.keys() == expected.keys()
    assert max(abs(got[key] - value) for key, value in expected.items()) <= 1e-15


def test_weights_chosen_on_a_metric_are_stated_and_used(monkeypatch, tmp_path):
    import re

    at = uploaded_app(monkeypatch, tmp_path)  # on the Data page
    at.multiselect(key="fuse_models").set_value(["popularity", "two_tower"])
    at.selectbox(key="fuse_method").set_value("wsum")
    at.selectbox(key="fuse_optimize").set_value(at.selectbox(key="fuse_optimize").options[1])
    at.text_input(key="fuse_name").input("tuned")
    ok(at.button(key="fuse_submit").click().run())
    assert not at.error, [e.value for e in at.error]
    (line,) = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Weights ")]  # markdown escapes off
    metric = at.selectbox(key="fuse_optimize").options[1]
    found = re.match(r"Weights ([0-9.]+), ([0-9.]+) chosen on (\S+) over (\d+) of the users", line)
    assert found and found.group(3) == metric, line
    w = [float(found.group(1)), float(found.group(2))]
    assert abs(sum(w) - 1) < 1e-9
    saved = {f.name: f.data for f in AnalysisStore(tmp_path / "store").load(at.query_params["analysis"]).files}
    runs = [frame(files()[f"{name}.csv"]) for name in ("popularity", "two_tower")]
    expected: dict = {}  # the weighted sum of per-user min-max scores, written out
    for weight, run in zip(w, runs):
        for user, rows in run.groupby("user_id", sort=False):
            lo, hi = rows["score"].min(), rows["score"].max()
            for item, score in zip(rows["item_id"], rows["score"]):
                norm = (score - lo) / (hi - lo) if hi > lo else 0.0
                expected[(user, item)] = expected.get((user, item), 0.0) + weight * norm
    got = as_scores(saved["tuned.csv"])
    assert got.keys() == expected.keys()
    assert max(abs(got[key] - value) for key, value in expected.items()) <= 1e-12
