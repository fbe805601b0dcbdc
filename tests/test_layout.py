"""The prepared layout against a plain pandas reference, on every path of the one-pass kernel.

Paths: grouped and shuffled input (rows grouped by a counting sort), one-byte
and full row numbers (lists longer than 256), one-byte and int32 relevance
codes, integer grades and other values, string, integer, negative and huge
integer ids (ties ordered by the ids' decimal strings), mixed id types, users
only in the run or only in the ground truth, duplicate and conflicting rows.
"""

from __future__ import annotations

import inspect

import numba
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import metrics_core as mc
from _ranking_reference import dcg as reference_dcg
from metrics_core.errors import MetricsError
from metrics_core.kernels import item_ids
from metrics_core.kernels._jit import SERIAL, use_variant
from metrics_core.layout import sort_and_join
from metrics_core.layout.build import prepare_plain
from metrics_core.kernels.classification import roc_auc


def _reference(run: pd.DataFrame, qrels: pd.DataFrame) -> dict:
    """{user: (ranked rows as (input row, score, relevance, judged), ideal relevances)} by pandas."""
    truth = qrels.drop_duplicates(["user_id", "item_id"])
    judged = {(str(u), str(i)): float(r) for u, i, r in truth[["user_id", "item_id", "relevance"]].itertuples(index=False)}
    out = {}
    for user, part in run.groupby(run["user_id"].astype(str), sort=False):
        rows = []
        for row, (item, score) in zip(part.index, part[["item_id", "score"]].itertuples(index=False)):
            key = (user, str(item))
            rows.append((row, float(score), judged.get(key, 0.0), key in judged, str(item).encode()))
        rows.sort(key=lambda r: r[4], reverse=True)  # ties: item id string descending
        rows.sort(key=lambda r: r[1], reverse=True)  # stable: score descending
        out[user] = [r[:4] for r in rows]
    ideal = truth.groupby(truth["user_id"].astype(str))["relevance"].apply(
        lambda s: sorted(map(float, s), reverse=True)).to_dict()
    return {u: (out.get(u, []), ideal.get(u, [])) for u in set(out) | set(ideal)}


def _layout(ranked) -> dict:
    got = {}
    for code, user in enumerate(ranked.user_ids):
        a, b = ranked.offsets[code], ranked.offsets[code + 1]
        qa, qb = ranked.q_offsets[code], ranked.q_offsets[code + 1]
        rows = list(zip(ranked.row[a:b].tolist(), ranked.score[a:b].tolist(), ranked.rel[a:b].tolist(),
                        ranked.judged[a:b].tolist()))
        got[str(user)] = (rows, ranked.ideal_rel[qa:qb].tolist())
    return got


def _data(seed: int, n_users=40, max_len=30, ids="str", grades="int", ties=True, shuffle=False):
    rng = np.random.default_rng(seed)
    run_parts, truth_parts = [], []
    for u in range(n_users):
        m = int(rng.integers(1, max_len + 1))
        items = rng.choice(10 * max_len, size=m, replace=False)
        scores = rng.integers(0, 4, size=m) / 4 if ties else rng.random(m)
        run_parts.append(pd.DataFrame({"user_id": u, "item_id": items, "score": scores}))
        n_q = int(rng.integers(0, 8))
        q_items = rng.choice(10 * max_len, size=n_q, replace=False)
        rel = rng.integers(0, 4, size=n_q).astype(float) if grades == "int" else np.round(rng.random(n_q), 3)
        truth_parts.append(pd.DataFrame({"user_id": u, "item_id": q_items, "relevance": rel}))
    truth_parts.append(pd.DataFrame({"user_id": [n_users], "item_id": [1], "relevance": [1.0]}))  # truth only
    run = pd.concat(run_parts, ignore_index=True)
    truth = pd.concat(truth_parts, ignore_index=True)
    if ids == "str":
        run = run.assign(user_id="u" + run.user_id.astype(str), item_id="i" + run.item_id.astype(str))
        truth = truth.assign(user_id="u" + truth.user_id.astype(str), item_id="i" + truth.item_id.astype(str))
    elif ids == "signed":  # negative and 19-digit ids: ties ordered as decimal strings
        run = run.assign(item_id=(run.item_id - 150) * 61_489_147_419_103_231)
        truth = truth.assign(item_id=(truth.item_id - 150) * 61_489_147_419_103_231)
    if shuffle:
        run = run.sample(frac=1.0, random_state=seed).reset_index(drop=True)
        truth = truth.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return run, truth


@pytest.mark.parametrize("ids", ["str", "int", "signed"])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("grades", ["int", "float"])
def test_layout_matches_pandas_reference(ids, shuffle, grades):
    run, truth = _data(7, ids=ids, grades=grades, shuffle=shuffle)
    ranked = mc.prepare(run, truth)
    assert _layout(ranked) == _reference(run, truth)
    assert ranked.rel_code.dtype == np.uint8


def test_long_lists_keep_full_row_numbers():
    run, truth = _data(3, n_users=5, max_len=600, ties=True, shuffle=True)
    assert run.groupby("user_id").size().max() > 256
    ranked = mc.prepare(run, truth)
    assert ranked.rows._full is not None  # no one-byte local rows
    assert _layout(ranked) == _reference(run, truth)


def test_many_distinct_relevances_use_wider_codes():
    rng = np.random.default_rng(5)
    run = pd.DataFrame({"user_id": np.repeat(np.arange(30), 20), "item_id": np.tile(np.arange(20), 30),
                        "score": rng.random(600)})
    truth = run[["user_id", "item_id"]].assign(relevance=rng.random(600))  # 600 distinct values
    ranked = mc.prepare(run, truth)
    assert ranked.rel_code.dtype == np.int32
    assert _layout(ranked) == _reference(run, truth)
    ev = mc.evaluate(ranked, metrics=["ndcg@5"], relevance_threshold=0.5)
    by_user = []
    for u in range(30):
        mine = run[run.user_id == u].sort_values("score", ascending=False)  # distinct scores: no ties
        rels = truth.set_index(["user_id", "item_id"]).loc[[(u, i) for i in mine.item_id], "relevance"].tolist()
        ideal = sorted(truth.loc[truth.user_id == u, "relevance"], reverse=True)
        by_user.append(reference_dcg(rels, 5, "linear") / reference_dcg(ideal, 5, "linear"))
    assert ev.summary["ndcg@5"] == pytest.approx(np.mean(by_user), abs=1e-12)


def test_mixed_integer_and_string_ids_match_as_strings():
    run = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 9, 10], "score": [0.5, 0.5, 0.1]})
    truth = pd.DataFrame({"user_id": ["1", "2"], "item_id": ["9", "10"], "relevance": [2, 1]})
    ranked = mc.prepare(run, truth)
    # tie at 0.5: "9" > "10" as strings, so item 9 ranks first
    assert ranked.user_list(1)["item_id"].tolist() == [9, 10]
    assert ranked.rel.tolist() == [2.0, 0.0, 1.0]


def test_exact_repeats_in_ground_truth_are_dropped():
    run = pd.DataFrame({"user_id": ["a", "a"], "item_id": ["x", "y"], "score": [0.9, 0.1]})
    truth = pd.DataFrame({"user_id": ["a", "a", "a", "b", "b"], "item_id": ["y", "x", "y", "z", "z"],
                          "relevance": [1, 2, 1, 3, 3]})
    ranked = mc.prepare(run, truth)
    assert ranked.q_offsets.tolist() == [0, 2, 3]
    assert ranked.ideal_rel.tolist() == [2.0, 1.0, 3.0]
    assert ranked.rel.tolist() == [2.0, 1.0]
    assert ranked.n_relevant().tolist() == [2.0, 1.0]


@pytest.mark.parametrize("ids", ["str", "int"])
def test_conflicting_judgments_name_the_row(ids):
    run = pd.DataFrame({"user_id": [1, 1], "item_id": [5, 6], "score": [0.9, 0.1]})
    truth = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [6, 5, 6], "relevance": [1, 2, 3]})
    if ids == "str":
        run, truth = run.astype({"item_id": str}), truth.astype({"item_id": str})
    with pytest.raises(MetricsError, match=r"judged twice.*row 3"):
        mc.prepare(run, truth)


@pytest.mark.parametrize("judged", [True, False])
@pytest.mark.parametrize("ids", ["str", "int"])
def test_duplicate_run_rows_are_reported(judged, ids):
    run = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [5, 6, 5, 5], "score": [0.9, 0.1, 0.3, 0.2]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [5 if judged else 7], "relevance": [1]})
    if ids == "str":
        run, truth = run.astype({"item_id": str}), truth.astype({"item_id": str})
    with pytest.raises(MetricsError, match=r"more than once"):
        mc.prepare(run, truth)


def test_integer_ids_compare_as_decimal_strings():
    @numba.njit
    def compare(x, y):
        return item_ids.decimal_compare(x, y)

    rng = np.random.default_rng(11)
    special = [0, 1, 9, 10, 99, 100, -1, -10, -9, 2**63 - 1, -(2**63), 10**18, 123]
    values = special + rng.integers(-(2**63), 2**63 - 1, size=200).tolist() + rng.integers(-1000, 1000, 200).tolist()
    for x, y in zip(values, values[::-1] + values[:0]):
        a, b = str(x).encode(), str(y).encode()
        assert compare(x, y) == (a > b) - (a < b), (x, y)


def test_scores_that_differ_only_in_the_last_bit_rank_exactly():
    base = 1.0 + np.arange(8) * 2.0**-52  # neighbours differ in the last mantissa bit
    run = pd.DataFrame({"user_id": 0, "item_id": np.arange(200), "score": np.tile(base, 25)[::-1].copy()})
    run["score"] = np.random.default_rng(2).permutation(run["score"].to_numpy())
    truth = run[["user_id", "item_id"]].assign(relevance=(run.item_id % 3).astype(float))
    ranked = mc.prepare(run, truth)
    assert _layout(ranked) == _reference(run, truth)


def test_each_item_id_form_has_its_own_compiled_layout():
    """String ids and integer ids reach the layout kernel as different types, so each form
    compiles only its own comparison code."""
    parameters = list(inspect.signature(sort_and_join._rank_and_join.py_func).parameters)
    at = parameters.index("r_ids")
    for ids in ("str", "int"):
        with use_variant(SERIAL):
            run, truth = _data(1, n_users=3, ids=ids)
            assert _layout(mc.prepare(run, truth)) == _reference(run, truth)
    forms = {type(sig[at]) for sig in sort_and_join._rank_and_join.serial.signatures}
    assert numba.types.Array in forms  # int64 ids
    assert forms & {numba.types.UniTuple, numba.types.Tuple}  # Arrow (offsets, data) of string ids


def test_auc_parallel_split_matches_scikit_learn():
    rng = np.random.default_rng(4)
    n = 2_500_001  # above the 1M rows per block: split and sorted on every core
    y = (rng.random(n) < 0.2).astype(np.float64)
    p = np.round(rng.random(n) + 0.3 * y, 4)  # many ties
    assert roc_auc(y, p) == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert np.isnan(roc_auc(np.zeros(n), p))


def _same_layout(a, b) -> None:
    for name in ("offsets", "tie_key", "rel_code", "rel_values", "q_offsets", "ideal_rel", "in_truth"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
    np.testing.assert_array_equal(a.row, b.row)
    np.testing.assert_array_equal(a.q_rows.get(), b.q_rows.get())
    assert list(a.user_ids) == list(b.user_ids)


@pytest.mark.parametrize("ids", ["str", "int", "signed"])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("max_len", [30, 300])
def test_plain_python_layout_equals_the_kernel(ids, shuffle, max_len):
    run, truth = _data(9, n_users=12, max_len=max_len, ids=ids, grades="float", shuffle=shuffle)
    truth = pd.concat([truth, truth.iloc[::5]], ignore_index=True)  # exact repeats: dropped by both
    _same_layout(prepare_plain(run, truth), mc.prepare(run, truth))


@pytest.mark.parametrize("ids", ["str", "int"])
def test_plain_python_layout_reports_the_same_errors(ids):
    run, truth = _data(4, n_users=8, ids=ids)
    messages = []
    for prepare in (prepare_plain, mc.prepare):
        for bad_run, bad_truth in ((pd.concat([run, run.iloc[[3, 1]]], ignore_index=True), truth),
                                   (run, pd.concat([truth, truth.iloc[[2]].assign(relevance=9.0)], ignore_index=True))):
            with pytest.raises(MetricsError) as caught:
                prepare(bad_run, bad_truth)
            messages.append(str(caught.value))
    assert messages[:2] == messages[2:]
