"""Extreme numbers in files, library keywords, command-line options and headers.

Relevance values at and beyond 2^53 are coded exactly (checked against the
plain-Python reference of tests/_ranking_reference.py and scikit-learn);
exponential gains that would overflow, non-finite or overflowing conventions
and cutoffs are refused with one line naming the value and the limit, from
the library and the command line alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import _cli
import metrics_core as mc
from _ranking_reference import summary as reference_summary
from metrics_core.errors import MetricsError

RANKING = ["ndcg", "map", "mrr", "precision@2", "recall@2", "r_precision", "dcg"]


def cli(*args):
    """``metrics-core ARGS...`` in this process (:mod:`_cli`; exit codes of a real process are checked
    in test_hostile_inputs.py and test_cli_evaluate.py)."""
    return _cli.run(*args)


def assert_refused(p, *fragments: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    for f in fragments:
        assert f in p.stderr, (f, p.stderr)
    return p.stderr


def frames(relevance: dict):
    """A run (distinct scores, three users) and a ground truth with ``relevance[(user, item)]``."""
    run = pd.DataFrame({"user_id": ["a", "a", "a", "b", "b", "c", "c"],
                        "item_id": ["x", "y", "z", "x", "w", "y", "z"],
                        "score": [0.9, 0.8, 0.1, 0.7, 0.6, 0.5, 0.4]})
    truth = pd.DataFrame([(u, i, r) for (u, i), r in relevance.items()], columns=["user_id", "item_id", "relevance"])
    return run, truth


def reference(run, truth, k_metrics, gain="linear"):
    rows = {u: [(s, i, n) for n, (u2, i, s) in enumerate(run[["user_id", "item_id", "score"]].itertuples(index=False))
                if u2 == u] for u in run["user_id"].unique()}
    judged = {u: dict(zip(g["item_id"], g["relevance"])) for u, g in truth.groupby("user_id")}
    out = {}
    for label in k_metrics:
        name, _, k = label.partition("@")
        values = reference_summary(rows, judged, int(k) if k else None, gain_kind=gain)
        out[label] = values["map" if name == "map" else name]
    return out


BIG = 2.0**53
HUGE_SETS = {
    "2^53 neighbours": {("a", "x"): BIG, ("a", "y"): BIG + 2, ("a", "z"): 0.0, ("b", "w"): BIG + 4, ("c", "z"): 3.0},
    "single value 1e300": {("a", "x"): 1e300, ("b", "w"): 1e300, ("c", "y"): 1e300},
    "far apart": {("a", "y"): 2.0**60, ("a", "z"): 1.0, ("b", "x"): -BIG, ("b", "w"): 7.0, ("c", "z"): 1e308},
}


@pytest.mark.parametrize("case", list(HUGE_SETS))
def test_relevance_at_and_beyond_2_53_is_exact(case):
    run, truth = frames(HUGE_SETS[case])
    ev = mc.evaluate(run, truth, metrics=RANKING + ["auc"])
    expected = reference(run, truth, RANKING)
    for label in RANKING:
        assert ev.summary[label] == pytest.approx(expected[label], rel=1e-12), label
    joined = run.merge(truth, on=["user_id", "item_id"], how="left").fillna({"relevance": 0.0})
    joined = joined[joined["user_id"].isin(truth["user_id"])]
    labels = (joined["relevance"] >= 1).astype(int)
    if labels.nunique() == 2:
        assert ev.summary["auc"] == pytest.approx(roc_auc_score(labels, joined["score"]), abs=1e-12)
    else:  # one class only: no AUC, as scikit-learn says
        assert np.isnan(ev.summary["auc"])


def test_relevance_codes_keep_every_value():
    values = np.array([BIG, BIG + 2, BIG + 4, 1e300, -1e300, 5.0])
    run = pd.DataFrame({"user_id": ["u"] * 6, "item_id": list("abcdef"), "score": np.arange(6.0)})
    truth = run[["user_id", "item_id"]].assign(relevance=values)
    ranked = mc.prepare(run, truth)
    assert sorted(ranked.rel_values[ranked.rel_code]) == sorted(values)


def test_exponential_gain_refuses_relevance_above_1000_and_computes_up_to_it():
    run, truth = frames({("a", "x"): 1000.0, ("a", "y"): 999.0, ("b", "w"): 3.0, ("c", "z"): 1.0})
    ev = mc.evaluate(run, truth, metrics=["ndcg", "dcg"], gain="exponential")
    expected = reference(run, truth, ["ndcg", "dcg"], gain="exponential")
    assert ev.summary["ndcg"] == pytest.approx(expected["ndcg"], rel=1e-12)
    assert ev.summary["dcg"] == pytest.approx(expected["dcg"], rel=1e-12) and np.isfinite(ev.summary["dcg"])
    run, truth = frames({("a", "x"): 1024.0, ("b", "w"): 3.0})
    message = r"^column relevance holds 1024; gain='exponential' \(2\^rel - 1\) takes relevance up to 1000"
    with pytest.raises(MetricsError, match=message):
        mc.evaluate(run, truth, metrics=["ndcg"], gain="exponential")
    with pytest.raises(MetricsError, match=message):
        mc.metric_curve(mc.prepare(run, truth), ["ndcg"], 2, gain="exponential")
    with pytest.raises(MetricsError, match="column relevances holds 1024"):
        mc.ndcg_at_k([1024.0, 1.0], gain="exponential")
    # metrics the gain does not change are computed whatever the relevance
    assert mc.evaluate(run, truth, metrics=["map"], gain="exponential").summary["map"] == \
        reference(run, truth, ["map"])["map"]


def test_cli_relevance_beyond_2_53_and_exponential_overflow(tmp_path):
    run = tmp_path / "run.csv"
    run.write_text("user_id,item_id,score\na,x,0.9\na,y,0.8\na,z,0.1\nb,w,0.6\nb,x,0.7\n")
    truth = tmp_path / "truth.csv"
    truth.write_text("user_id,item_id,relevance\na,y,9007199254740994\na,z,1\nb,w,1e300\n")
    p = cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg,map,auc", "--json")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)["models"]["run"]
    lib = mc.evaluate(pd.read_csv(run), pd.read_csv(truth), metrics=["ndcg", "map", "auc"]).summary
    assert got == pytest.approx(lib, rel=1e-12)
    assert got["map"] == pytest.approx((1 / 2 + 2 / 3) / 2 / 2 + 1 / 2 / 2, rel=1e-12)  # a: ranks 2, 3; b: rank 2
    truth.write_text("user_id,item_id,relevance\na,y,1024\n")
    assert_refused(cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg", "--gain", "exponential"),
                   "column relevance holds 1024", "up to 1000")


@pytest.mark.parametrize("option, value, fragment", [
    ("--beta", "1e308", "--beta: beta must be a finite number greater than 0 and at most 1e+100; got 1e+308"),
    ("--beta", "1e999", "--beta: beta must be a finite number greater than 0 and at most 1e+100; got inf"),
    ("--threshold", "nan", "--threshold: threshold must be a finite number; got nan"),
    ("--relevance-threshold=-inf", None, "--relevance-threshold: relevance_threshold must be a finite number"),
])
def test_cli_conventions_out_of_range_are_one_line(tmp_path, option, value, fragment):
    run = tmp_path / "run.csv"
    run.write_text("user_id,item_id,score\na,x,0.9\na,y,0.2\n")
    truth = tmp_path / "truth.csv"
    truth.write_text("user_id,item_id,relevance\na,x,1\n")
    given = [option] if value is None else [option, value]  # "=": argparse reads "-inf" alone as an option
    assert_refused(cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "fbeta@2,precision", *given), fragment)


def test_library_threshold_nan_is_refused_not_a_silent_zero():
    run, truth = frames({("a", "x"): 1.0})
    for key in ("threshold", "relevance_threshold"):
        with pytest.raises(MetricsError, match=f"^{key} must be a finite number; got nan$"):
            mc.evaluate(run, truth, metrics=["precision"], **{key: float("nan")})


def wide_csv(path: Path, n_extra: int, name_width: int = 0) -> Path:
    """A run with ``n_extra`` columns beside user, item and score (names padded to ``name_width``)."""
    extra = [f"f{i}".ljust(name_width, "x") for i in range(n_extra)]
    path.write_text(",".join(["user_id", "item_id", "score", *extra]) + "\n"
                    + "a,x,0.9" + ",0" * n_extra + "\n" + "a,y,0.2" + ",1" * n_extra + "\n")
    return path


@pytest.mark.parametrize("n_extra, name_width, fragment", [
    (150_000, 12, None),  # over 1 MiB: refused by its size before the header is parsed
    (10_000 - 2, 0, "the header holds 10,001 columns"),
])
def test_cli_header_over_the_limits_is_refused_early(tmp_path, n_extra, name_width, fragment):
    truth = tmp_path / "truth.csv"
    truth.write_text("user_id,item_id,relevance\na,x,1\n")
    run = wide_csv(tmp_path / "wide.csv", n_extra, name_width)
    if fragment is None:
        header = run.read_bytes().split(b"\n")[0]
        fragment = f"the header holds {len(header):,} bytes"
    assert_refused(cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg"),
                   "wide.csv: line 1: ", fragment, "at most 1 MiB and 10,000 columns")


def test_header_of_10000_columns_is_read():
    from metrics_core.io import read_run
    from metrics_core.io.delimited import MAX_COLUMNS

    text = ",".join(["user_id", "item_id", "score", *(f"f{i}" for i in range(MAX_COLUMNS - 3))]) + "\n"
    text += "a,x,0.9" + ",0" * (MAX_COLUMNS - 3) + "\n"
    df, _ = read_run(text.encode(), name="w.csv")
    assert list(df["item_id"]) == ["x"] and list(df["score"]) == [0.9]


# ------------------------------------------------------------------ ids written as 7.0 in any format
def seven_files(tmp_path: Path) -> dict[str, Path]:
    """The same ground truth (user 7, items 1 and 2, item 2 relevant) as CSV text "7.0", JSON numbers
    and strings, and Parquet floats and integers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = {}
    paths["csv"] = tmp_path / "t.csv"
    paths["csv"].write_text("user_id,item_id,relevance\n7.0,1.00,0\n7.0,2.0,1\n")
    paths["jsonl"] = tmp_path / "t.jsonl"
    paths["jsonl"].write_text('{"user_id": 7.0, "item_id": "1.0", "relevance": 0}\n'
                              '{"user_id": "7.0", "item_id": 2.0, "relevance": 1}\n')
    paths["float.parquet"] = tmp_path / "t_float.parquet"
    pq.write_table(pa.table({"user_id": [7.0, 7.0], "item_id": [1.0, 2.0], "relevance": [0.0, 1.0]}),
                   paths["float.parquet"])
    paths["int.parquet"] = tmp_path / "t_int.parquet"
    pq.write_table(pa.table({"user_id": [7, 7], "item_id": [1, 2], "relevance": [0, 1]}), paths["int.parquet"])
    return paths


def test_text_ids_stay_as_written_and_numbers_are_their_value(tmp_path):
    """Text is exact ("7.0", "1.00"); a numeric column has no written form: its whole numbers read as
    integers ("7")."""
    from metrics_core.io import read_qrels

    paths = seven_files(tmp_path)
    expected = {"csv": (["7.0", "7.0"], ["1.00", "2.0"]), "jsonl": (["7", "7.0"], ["1.0", "2"]),
                "float.parquet": (["7", "7"], ["1", "2"]), "int.parquet": (["7", "7"], ["1", "2"])}
    for fmt, path in paths.items():
        df, _ = read_qrels(path)
        assert (df["user_id"].tolist(), df["item_id"].tolist()) == expected[fmt], fmt


def test_whole_number_ids_are_one_id_in_every_format_when_chosen(tmp_path):
    from metrics_core.io import read_qrels

    paths = seven_files(tmp_path)
    for path in paths.values():
        df, _ = read_qrels(path, whole_number_ids=True)
        assert df["user_id"].tolist() == ["7", "7"] and df["item_id"].tolist() == ["1", "2"], path.name
    # every ground-truth format against a run written "7" and "7.0": item 2 at rank 2 (ndcg = 1 / log2(3))
    run = tmp_path / "run.csv"
    run.write_text("user_id,item_id,score\n7,1,0.9\n7.0,2.0,0.5\n")
    for truth in paths.values():
        got = json.loads(cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg,mrr", "--json",
                             "--whole-number-ids").stdout)
        assert got["models"]["run"] == pytest.approx({"ndcg": 1 / np.log2(3), "mrr": 0.5}, rel=1e-12), truth.name


def test_a_join_that_differs_only_in_writing_is_explained_in_one_line(tmp_path):
    """The run writes item 2 as "2.0", the Parquet ground truth holds the number 2: no match, said once."""
    paths = seven_files(tmp_path)
    run = tmp_path / "run.csv"
    run.write_text("user_id,item_id,score\n7,1,0.9\n7,2.0,0.5\n")
    out = cli("evaluate", "--qrels", paths["int.parquet"], "--run", run, "--metrics", "mrr", "--json")
    assert json.loads(out.stdout)["models"]["run"]["mrr"] == 0.0  # "2.0" is not the item 2
    notes = [line for line in out.stderr.splitlines() if "--whole-number-ids" in line]
    assert len(notes) == 1 and "1 item id(s)" in notes[0] and "'2.0' against '2'" in notes[0]


def test_other_number_like_ids_keep_their_text():
    from metrics_core.io import read_run

    text = "user_id,item_id,score\nu,7.50,1\nu,07.0,2\nu,1e3,3\nu,-0.0,4\nu,v1.0,5\nu,7.,6\nu,12.0,7\nu,12,8\n"
    df, _ = read_run(text.encode(), name="r.csv")
    assert df["item_id"].tolist() == ["7.50", "07.0", "1e3", "-0.0", "v1.0", "7.", "12.0", "12"]


def test_library_frames_follow_the_same_rule():
    from metrics_core.encode import whole_number_twins

    run = pd.DataFrame({"user_id": ["7", "7"], "item_id": ["2.0", "2"], "score": [0.9, 0.5]})
    truth = pd.DataFrame({"user_id": [7.0, 7.0], "item_id": ["2.0", "2"], "relevance": [3, 0]})
    # the float 7.0 is the user "7"; the items "2.0" and "2" are two ids, judged 3 and 0
    ev = mc.evaluate(run, truth, metrics=["mrr", "ndcg@1"])
    assert ev.per_user.index.tolist() == ["7"] and ev.summary["mrr"] == 1.0 and ev.summary["ndcg@1"] == 1.0
    mixed = pd.DataFrame({"user_id": pd.Series(["7.00", 8], dtype=object), "item_id": ["2", "2"], "score": [1, 1]})
    with pytest.raises(MetricsError) as refused:  # "7.00" is not the user 7: said in the one line
        mc.evaluate(mixed.iloc[:1], truth, metrics=["mrr"])
    assert "no user in common" in str(refused.value) and "'7.00' against '7'" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert whole_number_twins(mixed["user_id"], truth["user_id"]) == (1, "7.00", "7")
    assert whole_number_twins(run["item_id"], truth["item_id"]) is None  # both writings on both sides


def test_large_id_columns_take_the_compiled_look_and_give_the_same_ids():
    import re

    import pyarrow as pa

    from metrics_core.encode import _SMALL_IDS, whole_decimal_text

    edges = ["7.0", "-12.00", "0.0", "-0.0", "07.0", "7.", ".0", "-.0", "1.10", "10", "x.0", "7.0x", "--7.0", "1e3"]

    def reference(v: str) -> str:  # the rule as the docs state it, in plain Python
        m = re.fullmatch(r"(-?)(0|[1-9][0-9]*)\.0+", v)
        return v if m is None else ("" if m.group(2) == "0" else m.group(1)) + m.group(2)

    plain = [f"item_{i}" for i in range(_SMALL_IDS)]
    column = pa.chunked_array([pa.array(plain[: _SMALL_IDS // 2]), pa.array(plain[_SMALL_IDS // 2:] + edges)])
    assert whole_decimal_text(column).to_pylist() == [reference(v) for v in plain + edges]
    untouched = pa.array(plain + [e for e in edges if reference(e) == e])
    assert whole_decimal_text(untouched) is untouched  # nothing to change: the same column, not a copy
