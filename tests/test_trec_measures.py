"""trec_eval's whole measure set (``-m all_trec`` under the trec_eval preset) and ir_measures' names.

References, never the code under test:

* pytrec_eval (trec_eval's C code) with every supported measure, per query and
  aggregated as trec_eval aggregates (``compute_aggregated_measure``; gm_* the exp of the
  mean of its per-query logarithms; num_* summed), on generated TREC runs with tied
  scores, unjudged and pooled-unjudged (-1) documents, graded levels, topics missing on
  either side and docnos such as "12", "12.0" and "012" (three documents, as trec_eval reads them);
* trec_eval's own printed output for its fixtures (tests/data/trec_eval, 4 decimals);
* ir_measures' ``iter_calc`` / ``calc_aggregate`` (pytrec_eval, gdeval and judged providers);
* plain-Python formulas written here (RBP and its residual), and brute force over every
  order of tied items for the measures exact over tie orders.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import MetricsError
from metrics_core.metrics.presets import ALL_TREC
from _trec import read_qrels, read_results, read_trec_eval_output

pytrec_eval = pytest.importorskip("pytrec_eval")
ir_measures = pytest.importorskip("ir_measures")


def _generated(seed: int, n_topics: int = 40):
    """A TREC run and qrels: half-step scores (many ties), grades -1..3, topics only in the run or only
    in the qrels, short lists, and docnos "12" / "12.0" / "012" side by side."""
    rng = np.random.default_rng(seed)
    docs = [str(d) for d in range(50)] + ["12.0", "012", "d12"]
    run, qrels = [], []
    for t in range(n_topics):
        qid = str(300 + t)
        if t % 7 != 3:  # topics 303, 310, ...: run only
            for d in rng.choice(len(docs), int(rng.integers(1, 30)), replace=False):
                qrels.append((qid, docs[d], int(rng.choice([-1, 0, 0, 1, 1, 2, 3]))))
        if t % 9 != 4:  # topics 304, 313, ...: qrels only
            n = int(rng.integers(1, 40))
            for d in rng.choice(len(docs), min(n, len(docs)), replace=False):
                run.append((qid, docs[d], float(rng.integers(0, 8)) / 2))
    return (pd.DataFrame(run, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(qrels, columns=["user_id", "item_id", "relevance"]))


def _dicts(run: pd.DataFrame, qrels: pd.DataFrame):
    qd, rd = {}, {}
    for u, i, r in qrels.itertuples(index=False):
        qd.setdefault(u, {})[i] = int(r)
    for u, i, s in run.itertuples(index=False):
        rd.setdefault(u, {})[i] = float(s)
    return qd, rd


def _trec_aggregate(measure: str, values: list[float]) -> float:
    """How trec_eval makes its summary line of a measure from the per-query values."""
    if measure.startswith("gm_"):
        return math.exp(sum(values) / len(values))
    if measure.startswith("num_"):
        return float(sum(values))
    return pytrec_eval.compute_aggregated_measure(measure, values)


def test_all_trec_is_pytrec_evals_set():
    supported = pytrec_eval.supported_measures - {"runid", "relstring"}
    qd = {"q": {"a": 1}}
    names = set(pytrec_eval.RelevanceEvaluator(qd, supported).evaluate({"q": {"a": 1.0}})["q"])
    assert set(ALL_TREC) == names


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [1, 2])
def test_all_trec_against_pytrec_eval(seed, level):
    run, qrels = _generated(seed)
    qd, rd = _dicts(run, qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(qd, pytrec_eval.supported_measures, relevance_level=level)
    expected = evaluator.evaluate(rd)
    # pytrec_eval bundles a trec_eval from before 10 (its recall levels: floor(x R + 0.9))
    ev = mc.evaluate(run, qrels, metrics=["all_trec"], preset="pytrec_eval", relevance_threshold=level)
    topics = sorted(expected)
    assert sorted(ev.per_user.index) == topics
    assert list(ev.summary) == list(ALL_TREC)
    for measure in ALL_TREC:
        ref = [expected[q][measure] for q in topics]
        ours = ev.per_user[measure].reindex(topics).to_numpy()
        np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12, err_msg=measure)
        assert ev.summary[measure] == pytest.approx(_trec_aggregate(measure, ref), abs=1e-12), measure


def test_trec_names_and_ours_agree():
    run, qrels = _generated(5)
    ours = ["infap", "iprec_at_recall@0.3", "iprec_11pt", "rprec_mult@1.4", "relative_precision@10",
            "set_precision", "set_recall", "set_f", "set_map", "set_relative_precision", "utility", "num_ret",
            "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_q", "gm_map", "gm_bpref", "gain_g", "bin_g",
            "ndcg_rel", "rndcg"]
    theirs = ["infAP", "iprec_at_recall_0.30", "11pt_avg", "Rprec_mult_1.40", "relative_P_10", "set_P",
              "set_recall", "set_F", "set_map", "set_relative_P", "utility", "num_ret", "num_rel", "num_rel_ret",
              "num_nonrel_judged_ret", "num_q", "gm_map", "gm_bpref", "G", "binG", "ndcg_rel", "Rndcg"]
    a = mc.evaluate(run, qrels, metrics=ours, ties="trec", missing_users="exclude", empty_users="zero")
    b = mc.evaluate(run, qrels, metrics=theirs, preset="trec_eval")
    assert list(a.summary.values()) == list(b.summary.values())


def test_recall_levels_rounded_as_trec_eval_10_or_as_pytrec_eval():
    """A user with R = 5 and its relevant items at ranks 1 and 4: level 0.3 is the 2nd relevant item
    (round(1.5) = 2) in trec_eval 10 and the 2nd too with floor(1.5 + 0.9) = 2; level 0.1 is the 1st
    (round(0.5) = 1) against floor(0.5 + 0.9) = 1; level 0.5 is round(2.5) = 3 (none retrieved: 0)
    against floor(3.4) = 3; level 0.24: round(1.2) = 1 against floor(2.1) = 2."""
    run = pd.DataFrame({"user_id": ["q"] * 5, "item_id": list("abcde"), "score": [5.0, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"user_id": ["q"] * 5, "item_id": ["a", "d", "x", "y", "z"], "relevance": [1] * 5})
    labels = ["iprec_at_recall@0.24", "iprec_at_recall@0.3"]
    new = mc.evaluate(run, qrels, metrics=labels, preset="trec_eval").summary
    old = mc.evaluate(run, qrels, metrics=labels, preset="pytrec_eval").summary
    assert new == {"iprec_at_recall@0.24": 1.0, "iprec_at_recall@0.3": 0.5}
    assert old == {"iprec_at_recall@0.24": 0.5, "iprec_at_recall@0.3": 0.5}


def _fixture_cases():
    return [("qrels.test", "results.test", "out.test.aq", 1), ("qrels.rel_level", "results.test", "out.test.aql", 2)]


@pytest.mark.parametrize("qrels_name, run_name, out_name, level", _fixture_cases())
def test_trec_eval_fixtures_every_printed_measure(trec_dir, qrels_name, run_name, out_name, level):
    """Every measure trec_eval printed for its fixtures (-a -q), per query and 'all', to its 4 decimals."""
    printed = read_trec_eval_output(trec_dir / out_name)
    printed = printed[printed["measure"].isin(ALL_TREC)]
    assert len(set(printed["measure"])) >= 80
    ev = mc.evaluate(read_results(trec_dir / run_name), read_qrels(trec_dir / qrels_name), metrics=["all_trec"],
                     preset="trec_eval", relevance_threshold=level)
    for row in printed.itertuples(index=False):
        ours = ev.summary[row.measure] if row.query == "all" else ev.per_user.loc[row.query, row.measure]
        if row.measure.startswith("gm_") and row.query != "all":
            continue  # trec_eval prints no per-query gm_* value (the logarithm stays internal)
        tol = 0.5 if row.measure.startswith("num_") else 5e-5 + 1e-9
        assert abs(ours - row.value) <= tol, (row.measure, row.query, ours, row.value)


# --------------------------------------------------------------------------- ir_measures' names and syntax

IR_MEASURES = ["nDCG@10", "nDCG(dcg='exp-log2')@10", "P(rel=2)@5", "AP(rel=2)", "RR", "R@100", "Success@10",
               "infAP", "IPrec@0.5", "NumRet", "NumRelRet", "AP", "P@5", "Judged@10", "ERR@20"]


def _unique_scores(run: pd.DataFrame) -> pd.DataFrame:
    """The run with its ties broken as trec_eval breaks them (docno descending), written into the scores:
    ir_measures' gdeval and judged providers order tied documents their own ways."""
    run = run.assign(order=run["item_id"]).sort_values(["user_id", "score", "order"], ascending=[True, False, False])
    run["score"] = -run.groupby("user_id").cumcount().astype(float)
    return run.drop(columns="order")


@pytest.mark.parametrize("seed", [0, 3])
def test_ir_measures_names_against_ir_measures(seed):
    run, qrels = _generated(seed)
    qrels = qrels.assign(relevance=qrels["relevance"].clip(upper=3))
    run = _unique_scores(run)
    qd, rd = _dicts(run, qrels)
    measures = [ir_measures.parse_measure(m) for m in IR_MEASURES]
    per_query = {}
    for m in ir_measures.iter_calc(measures, qd, rd):
        per_query.setdefault(str(m.measure), {})[m.query_id] = m.value
    aggregate = {str(k): v for k, v in ir_measures.calc_aggregate(measures, qd, rd).items()}
    ev = mc.evaluate(run, qrels, metrics=IR_MEASURES, preset="ir_measures")
    for label, measure in zip(IR_MEASURES, measures):
        tol = 6e-6 if measure.NAME in ("ERR",) or "exp-log2" in label else 1e-12  # gdeval prints 5 decimals
        values = per_query[str(measure)]
        for qid, value in values.items():
            assert ev.per_user.loc[qid, label] == pytest.approx(value, abs=tol), (label, qid)
        assert ev.summary[label] == pytest.approx(aggregate[str(measure)], abs=tol), label


def test_ir_measures_parameters_refused_in_one_line():
    run, qrels = _generated(0)
    with pytest.raises(MetricsError, match="gains"):
        mc.evaluate(run, qrels, metrics=["nDCG(gains={0:1})@10"], preset="ir_measures")
    with pytest.raises(MetricsError, match="dcg"):
        mc.evaluate(run, qrels, metrics=["nDCG(dcg='log10')@10"], preset="ir_measures")
    with pytest.raises(MetricsError, match="level"):
        mc.evaluate(run, qrels, metrics=["iprec_at_recall@1.5"], ties="trec")
    with pytest.raises(MetricsError, match="needs a level"):
        mc.evaluate(run, qrels, metrics=["iprec_at_recall"], ties="trec")


# --------------------------------------------------------------------------- RBP, ERR, Judged

def _plain_lists(run: pd.DataFrame, qrels: pd.DataFrame):
    """Per topic of both files: the relevances in trec_eval's order (None = not in the qrels)."""
    judged = {(u, i): r for u, i, r in qrels.itertuples(index=False)}
    out = {}
    for u, group in run.groupby("user_id"):
        items = sorted(group.itertuples(index=False), key=lambda t: (np.float32(t.score), t.item_id.encode()),
                       reverse=True)  # score descending, then docno descending
        out[u] = [judged.get((u, t.item_id)) for t in items]
    return out


def _rbp(rels, p, k, threshold):
    K = len(rels) if k == 0 else min(k, len(rels))
    value = (1 - p) * sum(p ** i for i in range(K) if rels[i] is not None and rels[i] >= threshold)
    residual = (1 - p) * sum(p ** i for i in range(K) if rels[i] is None or rels[i] < 0) + p ** K
    return value, residual


@pytest.mark.parametrize("p, k", [(0.8, 0), (0.5, 10), (0.95, 3)])
def test_rbp_and_residual_against_formula(p, k):
    run, qrels = _generated(7)
    suffix = f"@{k}" if k else ""
    ev = mc.evaluate(run, qrels, metrics=[f"rbp{suffix}", f"rbp_residual{suffix}"], ties="trec",
                     rbp_persistence=p)
    lists = _plain_lists(run, qrels)
    for user in ev.per_user.index:
        value, residual = _rbp(lists.get(user, []), p, k, 1)
        assert ev.per_user.loc[user, f"rbp{suffix}"] == pytest.approx(value, abs=1e-12)
        assert ev.per_user.loc[user, f"rbp_residual{suffix}"] == pytest.approx(residual, abs=1e-12)


def test_rbp_persistence_from_ir_measures_syntax():
    run, qrels = _generated(8)
    a = mc.evaluate(run, qrels, metrics=["RBP(p=0.6, rel=1)", "RBP(rel=1)"], preset="ir_measures")
    b = mc.evaluate(run, qrels, metrics=["rbp"], rbp_persistence=0.6, preset="ir_measures")
    assert a.summary["RBP(p=0.6, rel=1)"] == b.summary["rbp"]
    assert a.summary["RBP(rel=1)"] != a.summary["RBP(p=0.6, rel=1)"]


def _err(rels, k):
    """gdeval's ERR@k over relevances in rank order (None = not judged: grade 0)."""
    total, decay = 0.0, 1.0
    for i, rel in enumerate(rels[:k] if k else rels):
        r = (2 ** max(rel or 0, 0) - 1) / 16
        total += r * decay / (i + 1)
        decay *= 1 - r
    return total


def _brute_force_over_ties(scores, rels, value):
    """Mean of ``value(order)`` over every order of the tied items (scores descending)."""
    groups = [list(g) for _, g in itertools.groupby(sorted(range(len(scores)), key=lambda i: -scores[i]),
                                                   key=lambda i: scores[i])]
    total, count = 0.0, 0
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        ranked = [rels[i] for g in orders for i in g]
        total += value(ranked)
        count += 1
    return total / count


@pytest.mark.parametrize("seed", range(4))
def test_judged_rbp_rprec_mult_err_exact_over_tie_orders(seed):
    rng = np.random.default_rng(seed)
    rows, qrows = [], []
    for u in range(6):
        n = int(rng.integers(1, 7))
        for i in range(n):
            rows.append((f"u{u}", f"i{i}", float(rng.integers(0, 3))))
            if rng.random() < 0.7:
                qrows.append((f"u{u}", f"i{i}", int(rng.integers(-1, 5))))
        qrows.append((f"u{u}", "never", 1))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["user_id", "item_id", "relevance"])
    ev = mc.evaluate(run, qrels, metrics=["judged@3", "rbp@4", "rprec_mult@0.6", "rprec_mult@0.5", "err@4", "err"],
                     ties="average", rbp_persistence=0.7)
    judged = {(u, i): r for u, i, r in qrels.itertuples(index=False)}
    for user in ev.per_user.index:
        g = run[run["user_id"] == user]
        scores = g["score"].tolist()
        rels = [judged.get((user, i)) for i in g["item_id"]]
        R = sum(1 for (u, _), r in judged.items() if u == user and r >= 1)
        c, c_half = math.floor(0.6 * R + 0.9), math.floor(0.5 * R + 0.9)
        expect = {
            "judged@3": _brute_force_over_ties(scores, rels,
                                               lambda r: sum(x is not None for x in r[:3]) / min(3, len(r))),
            "rbp@4": _brute_force_over_ties(scores, rels, lambda r: _rbp(r, 0.7, 4, 1)[0]),
            "err@4": _brute_force_over_ties(scores, rels, lambda r: _err(r, 4)),
            "err": _brute_force_over_ties(scores, rels, lambda r: _err(r, 0)),
            "rprec_mult@0.5": _brute_force_over_ties(
                scores, rels, lambda r: sum(x is not None and x >= 1 for x in r[:c_half]) / c_half if c_half else 0.0),
            "rprec_mult@0.6": _brute_force_over_ties(
                scores, rels, lambda r: sum(x is not None and x >= 1 for x in r[:c]) / c if c else 0.0),
        }
        for label, value in expect.items():
            assert ev.per_user.loc[user, label] == pytest.approx(value, abs=1e-12), (label, user)


def test_one_order_measures_refused_on_ties_under_average():
    run, qrels = _generated(0)
    with pytest.raises(MetricsError, match="ties='trec'"):
        mc.evaluate(run, qrels, metrics=["infap"])
    untied = _unique_scores(run)
    a = mc.evaluate(untied, qrels, metrics=["infap", "gain_g"])
    b = mc.evaluate(untied, qrels, metrics=["infap", "gain_g"], ties="trec")
    assert a.summary == b.summary


def test_err_refuses_grades_above_four():
    run, qrels = _generated(0)
    with pytest.raises(MetricsError, match="0..4"):
        mc.evaluate(run, qrels.assign(relevance=qrels["relevance"] * 3), metrics=["err@10"], ties="trec")
