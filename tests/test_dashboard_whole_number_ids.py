"""The dashboard's whole-number ids control: off (the default) ids are kept exactly as written, so
``12.0`` and ``12`` are two ids, as trec_eval reads them; on, every file is read with ids that write a
whole number as that number (the command line's ``--whole-number-ids``). The control is bound to the
address, and the Overview's and Compare's numbers follow it: checked against an nDCG written here in
plain Python over the two readings of the ids."""

from __future__ import annotations

import math
import re
from pathlib import Path

import _deadlines as deadlines
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
USERS = [str(u) for u in range(1, 7)]


def _csv(rows: list[tuple], header: str) -> bytes:
    return (header + "\n" + "".join(",".join(str(v) for v in row) + "\n" for row in rows)).encode()


def _files() -> dict[str, bytes]:
    """A ground truth written through a spreadsheet (``101.0``; query ``3`` as ``3.0``), one run writing the
    same numbers without the fraction, one writing them as the ground truth does, and a text id ``x1``."""
    qrels = []
    for u in USERS:
        user = f"{u}.0" if u == "3" else u
        qrels += [(user, f"{100 + int(u)}.0", 1), (user, f"{200 + int(u)}.0", 2), (user, f"x{u}", 1)]
    plain = [(u, item, score) for u in USERS
             for item, score in ((f"{100 + int(u)}", 4), (f"x{u}", 3), (f"{200 + int(u)}", 2), (f"{300 + int(u)}", 1))]
    written = [(u, item, score) for u in USERS
               for item, score in ((f"{300 + int(u)}", 4), (f"{200 + int(u)}.0", 3), (f"{100 + int(u)}.0", 2),
                                   (f"x{u}", 1))]
    return {"qrels.csv": _csv(qrels, "user_id,item_id,relevance"),
            "plain.csv": _csv(plain, "user_id,item_id,score"), "written.csv": _csv(written, "user_id,item_id,score")}


def _whole(text: str) -> str:
    return re.sub(r"^([+-]?\d+)\.0+$", r"\1", text)


def _ndcg10(data: dict[str, bytes], run: str, whole: bool) -> pd.Series:
    """Per query nDCG@10 with linear gain, the ideal list from the judgments; every query of the ground
    truth counted (0 when its list holds nothing relevant), ids read exactly or as whole numbers."""
    read = _whole if whole else (lambda s: s)

    def rows(name):
        lines = data[name].decode().splitlines()[1:]
        return [tuple(line.split(",")) for line in lines]
    truth: dict[str, dict[str, float]] = {}
    for user, item, rel in rows("qrels.csv"):
        truth.setdefault(read(user), {})[read(item)] = float(rel)
    lists: dict[str, list[tuple[float, str]]] = {}
    for user, item, score in rows(run):
        lists.setdefault(read(user), []).append((float(score), read(item)))
    out = {}
    for user, judged in truth.items():
        ranked = [item for _, item in sorted(lists.get(user, []), reverse=True)][:10]
        dcg = sum(judged.get(item, 0.0) / math.log2(i + 2) for i, item in enumerate(ranked))
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
        out[user] = dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return pd.Series(out)


def _plain(markdown: str) -> str:
    """Shown text of markdown escaped by ``dashboard.text.md``."""
    return re.sub(r"\\(.)", r"\1", markdown)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table_with(at: AppTest, column: str) -> pd.DataFrame:
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with {column!r}")


def _upload(at: AppTest, data: dict[str, bytes]) -> AppTest:
    _ok(at.switch_page("views/data.py").run())
    at.file_uploader(key="upload_runs_0").set_value(
        [(name, blob, "text/csv") for name, blob in data.items() if name != "qrels.csv"])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", data["qrels.csv"], "text/csv"))
    return _ok(at.run())


def _overview(at: AppTest) -> pd.DataFrame:
    _ok(at.switch_page("views/overview.py").run())
    wide = _table_with(at, "ndcg@10")
    return wide.set_index("model") if "model" in wide.columns else wide


def test_overview_and_compare_follow_the_whole_number_ids_control(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    data = _files()
    exact = {m: _ndcg10(data, f"{m}.csv", whole=False) for m in ("plain", "written")}
    whole = {m: _ndcg10(data, f"{m}.csv", whole=True) for m in ("plain", "written")}
    assert len(exact["plain"]) == 6 and len(whole["plain"]) == 6  # query 3.0 is query 3 once read whole
    assert exact["plain"].mean() != pytest.approx(whole["plain"].mean())  # the two readings differ
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    _upload(at, data)
    assert at.checkbox(key="whole_number_ids").value is False
    notes = " ".join(_plain(w.value) for w in at.warning)
    assert "plain.csv" in notes and "write the same whole number" in notes and "Read ids 12.0 and 12" in notes
    wide = _overview(at)
    for model in ("plain", "written"):
        assert wide.loc[model, "ndcg@10"] == pytest.approx(exact[model].mean(), abs=1e-12), model

    at.checkbox(key="whole_number_ids").check()
    _ok(at.run())
    wide = _overview(at)
    for model in ("plain", "written"):
        assert wide.loc[model, "ndcg@10"] == pytest.approx(whole[model].mean(), abs=1e-12), model
    _ok(at.switch_page("views/compare.py").run())
    stats = _table_with(at, "model_mean")
    baseline = at.selectbox(key="compare_baseline").value
    challenger = next(m for m in ("plain", "written") if m != baseline)
    row = stats.set_index("model").loc[challenger]
    assert row["baseline_mean"] == pytest.approx(whole[baseline].mean(), abs=1e-12)
    assert row["model_mean"] == pytest.approx(whole[challenger].mean(), abs=1e-12)
    assert row["n"] == 6

    # the address carries the choice (a bound widget: the browser writes ?whole_number_ids=true): a new
    # session opened on the working copy's address with it reads the ids as whole numbers
    again = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    again.query_params["analysis"] = at.query_params["analysis"]
    again.query_params["whole_number_ids"] = "true"
    _ok(again.run())
    assert again.checkbox(key="whole_number_ids").value is True
    wide = _overview(again)
    assert wide.loc["plain", "ndcg@10"] == pytest.approx(whole["plain"].mean(), abs=1e-12)


def test_ids_that_differ_only_in_writing_stay_apart_until_the_user_joins_them(monkeypatch, tmp_path):
    """The TREC docnos ``12.0`` (relevance 3) and ``12`` (relevance 0) are two documents; read as whole
    numbers they would be one document with two grades: refused in one line naming the file."""
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    data = {"qrels.csv": _csv([("q1", "12.0", 3), ("q1", "12", 0), ("q2", "7", 1)], "user_id,item_id,relevance"),
            "run.csv": _csv([("q1", "12", 2), ("q1", "12.0", 1), ("q2", "7", 1)], "user_id,item_id,score")}
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    _upload(at, data)
    assert not at.error, [e.value for e in at.error]
    wide = _overview(at)
    # q1: 12 (grade 0) then 12.0 (grade 3): 3 / log2(3) over the ideal 3; q2: 1
    assert wide.loc["run", "ndcg@10"] == pytest.approx((1 / math.log2(3) + 1) / 2, abs=1e-12)
    at.checkbox(key="whole_number_ids").check()
    _ok(at.switch_page("views/data.py").run())
    shown = " ".join(_plain(e.value) for e in at.error)
    assert "qrels.csv" in shown and "conflicting relevance" in shown, shown
