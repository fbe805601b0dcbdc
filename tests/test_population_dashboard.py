"""The users counted on every page of the dashboard, and the Failures page's explanation:
AppTest runs against metrics_core and pandas called here, and the pure table builder of
``dashboard.failure_tables`` against a pandas computation written in the test."""

from __future__ import annotations

import _deadlines as deadlines
import io
import json
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pandas as pd
import pytest

from dashboard import demo, failure_tables
from metrics_core.store import AnalysisStore

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
TIMEOUT = deadlines.SCRIPT_RUN


# ----------------------------------------------------------------------------- pure builder

def test_overrepresented_matches_a_pandas_count():
    rng = np.random.default_rng(3)
    users = pd.Index([f"u{i}" for i in range(400)])
    attrs = pd.DataFrame({"user_id": users[:380],  # 20 users without attributes
                          "tenure": rng.choice(["cold", "warm", "loyal"], 380, p=[0.2, 0.5, 0.3]),
                          "country": rng.choice(["US", "DE"], 380)})
    cold = set(attrs.loc[attrs["tenure"] == "cold", "user_id"])
    failing = pd.Index([u for u in users if (u in cold and rng.random() < 0.9) or rng.random() < 0.1])
    got = failure_tables.overrepresented(users, failing, attrs)
    # independent: one row per (attribute, value) over all users, "(missing)" for those without
    full = pd.DataFrame({"user_id": users}).merge(attrs, on="user_id", how="left").fillna("(missing)")
    full["failing"] = full["user_id"].isin(failing)
    expected = []
    for column in ("tenure", "country"):
        for value, part in full.groupby(column):
            expected.append((column, value, int(part["failing"].sum()), int(part["failing"].sum()) / len(failing),
                             len(part), len(part) / len(users)))
    expected = pd.DataFrame(expected, columns=failure_tables.COLUMNS[:-1])
    expected["ratio"] = expected["share of failing"] / expected["share of all"]
    merged = got.merge(expected, on=["attribute", "value"], suffixes=("", "_ref"))
    assert len(merged) == len(got) == len(expected) == 3 + 2 + 2
    for column in failure_tables.COLUMNS[2:]:
        np.testing.assert_allclose(merged[column].astype(float), merged[f"{column}_ref"].astype(float))
    assert list(got["ratio"]) == sorted(got["ratio"], reverse=True)
    assert tuple(got.iloc[0][["attribute", "value"]]) == ("tenure", "cold")  # the planted cause comes first
    assert failure_tables.overrepresented(users, pd.Index([]), attrs).empty


def test_failing_users_and_attribute_columns():
    per_user = {"a": pd.DataFrame({"ndcg@10": [0.1, 0.5, 0.3, np.nan]}, index=["1", "2", "3", "4"]),
                "b": pd.DataFrame({"ndcg@10": [0.2, 0.5, 0.1, 0.9]}, index=[1, 2, 3, 4])}
    assert list(failure_tables.failing_users(per_user, "a", "b", "ndcg@10")) == ["1"]
    assert list(failure_tables.failing_users(per_user, "b", "a", "ndcg@10")) == ["3"]
    table = pd.DataFrame({"user_id": ["2", "9"], "gap": [0.1, 0.2]})
    attrs = pd.DataFrame({"user_id": [2, 2, 3], "gap": ["x", "y", "z"], "tenure": ["new", "old", "old"]})
    out = failure_tables.with_attributes(table, attrs)
    assert list(out.columns) == ["user_id", "gap (attribute)", "tenure", "gap"]
    assert out.to_dict("list") == {"user_id": ["2", "9"], "gap (attribute)": ["x", "(missing)"],
                                   "tenure": ["new", "(missing)"], "gap": [0.1, 0.2]}


# ----------------------------------------------------------------------------- AppTest

pytest.importorskip("streamlit")
from _apptest import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402


@lru_cache(maxsize=1)
def files() -> dict[str, bytes]:
    """Demo data: two_tower does not serve 30 users, all of them cold-start (tenure "new")."""
    d = demo.make_demo(n_users=300, n_items=200, list_length=20, seed=11)
    runs = dict(d.runs)
    users = sorted(d.qrels["user_id"].astype(str).unique())
    dropped = set(users[:30])
    runs["two_tower"] = runs["two_tower"][~runs["two_tower"]["user_id"].astype(str).isin(dropped)]
    out = {f"{n}.csv": demo.to_csv_bytes(run) for n, run in runs.items()}
    out["qrels.csv"] = demo.to_csv_bytes(d.qrels)
    attrs = pd.DataFrame({"user_id": users, "tenure": ["new" if u in dropped else "old" for u in users],
                          "country": ["FR" if i % 3 else "JP" for i in range(len(users))]})
    out["attributes.csv"] = attrs.to_csv(index=False).encode()
    return out


def frame(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), dtype={"user_id": str, "item_id": str})


def reference(metric: str) -> dict[str, pd.Series]:
    f = files()
    qrels = frame(f["qrels.csv"])
    return {name[:-4]: mc.evaluate(frame(data), qrels, metrics=[metric]).per_user[metric]
            for name, data in f.items() if name not in ("qrels.csv", "attributes.csv")}


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def uploaded(monkeypatch, tmp_path, **query) -> AppTest:
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = value
    if query:
        ok(at.run())
    ok(at.switch_page("views/data.py").run())
    f = files()
    at.file_uploader(key="upload_runs_0").set_value(
        [(name, data, "text/csv") for name, data in f.items() if name not in ("qrels.csv", "attributes.csv")])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", f["qrels.csv"], "text/csv"))
    at.file_uploader(key="upload_attributes_0").set_value(("attributes.csv", f["attributes.csv"], "text/csv"))
    return ok(at.run())


def table_with(at: AppTest, column: str) -> pd.DataFrame:
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no dataframe with {column!r}")


def plain(markdown: str) -> str:
    """Shown text of markdown escaped by ``dashboard.text.md``."""
    return re.sub(r"\\(.)", r"\1", markdown)


def captions(at: AppTest) -> str:
    return "\n".join(plain(c.value) for c in at.caption)


def warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning]


def test_every_page_counts_the_chosen_users(monkeypatch, tmp_path):
    ref = reference("ndcg@10")
    everyone = ref["popularity"].index
    served = everyone[everyone.isin(frame(files()["two_tower.csv"])["user_id"].unique())]
    at = uploaded(monkeypatch, tmp_path)
    # the Data page flags the 30 users (10%) even below any share line
    assert any("two_tower: 30 (10.0%) users of the ground truth are missing from the run; they score 0 for it"
               in w for w in warnings(at))
    assert not at.success
    for users, ids in (("all", everyone), ("served", served)):
        if users == "served":
            ok(at.selectbox(key="users").set_value("served").run())
        ok(at.switch_page("views/overview.py").run())
        wide = table_with(at, "ndcg@10")
        wide = wide.set_index("model") if "model" in wide.columns else wide
        for name, values in ref.items():
            assert wide.loc[name, "ndcg@10"] == pytest.approx(values.loc[ids].mean(), abs=1e-12)
        said = captions(at)
        assert f"Users counted: {len(ids):,} users" in said and "two_tower served 270" in said
        assert ("two_tower did not serve 30 of the 300 evaluated users (tenure: new 30; country: FR 20, JP 10)"
                in "\n".join(warnings(at)))
        ok(at.switch_page("views/distributions.py").run())
        summary = table_with(at, "median")
        summary = summary.set_index("model") if "model" in summary.columns else summary
        assert summary.loc["two_tower", "mean"] == pytest.approx(ref["two_tower"].loc[ids].mean(), abs=1e-12)
        assert f"Users counted: {len(ids):,} users" in captions(at)


def test_failures_explains_the_pair(monkeypatch, tmp_path):
    ref = reference("ndcg@10")
    attrs = frame(files()["attributes.csv"])
    at = uploaded(monkeypatch, tmp_path)
    ok(at.switch_page("views/failures.py").run())
    ok(at.selectbox(key="failures_model").set_value("two_tower").run())
    ok(at.selectbox(key="failures_other").set_value("matrix_factorization").run())
    # the attribute values over-represented among the users where two_tower is worse
    explained = table_with(at, "share of failing")
    mine, theirs = ref["two_tower"], ref["matrix_factorization"]
    theirs = theirs.reindex(mine.index)
    failing = set(mine.index[(mine < theirs).to_numpy()])
    new = set(attrs.loc[attrs["tenure"] == "new", "user_id"])
    row = explained[(explained["attribute"] == "tenure") & (explained["value"] == "new")].iloc[0]
    assert row["failing users"] == len(failing & new) and row["users"] == 30
    assert row["share of failing"] == pytest.approx(len(failing & new) / len(failing))
    assert row["share of all"] == pytest.approx(30 / 300)
    assert explained.iloc[0]["attribute"] == "tenure" and explained.iloc[0]["value"] == "new"
    # counts are drawn with the reader's thousands separators, like every other count of the dashboard
    config = next(json.loads(d.proto.columns) for d in at.dataframe if "share of failing" in d.value.columns)
    assert {config[c]["type_config"]["format"] for c in ("failing users", "users")} == {"localized"}
    # any attribute filters the worst users and every attribute is a column
    worst = table_with(at, "gap")
    assert {"tenure", "country", "behind matrix_factorization"} <= set(worst.columns)
    ok(at.selectbox(key="failures_attribute").set_value("country").run())
    ok(at.selectbox(key="failures_segment").set_value("JP").run())
    worst = table_with(at, "gap")
    assert len(worst) and set(worst["country"]) == {"JP"}
    jp = set(attrs.loc[attrs["country"] == "JP", "user_id"])
    assert f"{len(jp)} users match" in captions(at)


def test_the_setting_is_saved_with_a_snapshot(monkeypatch, tmp_path):
    at = uploaded(monkeypatch, tmp_path, users="served")
    assert at.selectbox(key="users").value == "served"
    ok(at.switch_page("views/share.py").run())
    at.text_input(key="share_title").input("served only")
    at.button[[b.label for b in at.button].index("Share: create a read-only link")].click()
    ok(at.run())
    query = parse_qs(urlparse(at.code[0].value).query)
    assert query["users"] == ["served"]
    saved = AnalysisStore(tmp_path / "store").load(query["analysis"][0])
    assert saved.settings["view"]["users"] == "served"
    ok(at.button(key="share_build_report").click().run())
    report = at.session_state["share_report_html"].decode()
    assert "270 users (only those every model served, of 300 evaluated)" in report
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params["analysis"] = query["analysis"][0]
    ok(fresh.run())
    assert fresh.session_state["users"] == "served"
    assert fresh.title[0].value == "served only"  # a snapshot opens on its brief
    assert "Over 270 users (only those every model served, of 300 evaluated)" in captions(fresh)
    ok(fresh.switch_page("views/overview.py").run())
    assert "Users counted: 270 users" in captions(fresh)


def test_the_coverage_follows_a_new_attributes_file(monkeypatch, tmp_path):
    """The sentence naming the segments a model did not serve is kept between reruns; another
    attributes file with the same columns gives the new file's segments."""
    at = uploaded(monkeypatch, tmp_path)
    ok(at.switch_page("views/overview.py").run())
    assert "(tenure: new 30; country: FR 20, JP 10)" in "\n".join(warnings(at))
    moved = pd.read_csv(io.BytesIO(files()["attributes.csv"]), dtype=str).assign(country="IT")
    at.file_uploader(key="upload_attributes_0").set_value(
        ("attributes_moved.csv", moved.to_csv(index=False).encode(), "text/csv"))
    ok(at.run())
    said = "\n".join(warnings(at))
    assert "(tenure: new 30; country: IT 30)" in said and "FR 20" not in said
