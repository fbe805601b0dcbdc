"""trec_eval's own fixtures (tests/data/trec_eval/): per query and mean.

With ties="trec" (score descending, then docno descending as strings) every
value must equal what trec_eval printed (4 decimals): |ours - printed| <= 5e-5.

* out.test.aq  : qrels.test      + results.test
* out.test.aql : qrels.rel_level + results.test, relevance >= 2 is relevant
                 (nDCG keeps the graded gains, negative judgments gain 0)
* out.test.aqc : qrels.test      + results.trunc, query 302 absent from the
                 run counts as 0 (trec_eval -c; our default)
"""

from __future__ import annotations

import pytest

import metrics_core as mc
from _trec import expected_table, printed_decimals, read_qrels, read_results

# our metric name -> trec_eval measure
MEASURES = {
    "P@5": "P_5",
    "precision@10": "P_10",
    "p@100": "P_100",
    "recall@10": "recall_10",
    "recall@1000": "recall_1000",
    "ndcg@10": "ndcg_cut_10",
    "ndcg@100": "ndcg_cut_100",
    "ndcg": "ndcg",
    "map": "map",
    "map@10": "map_cut_10",
    "mrr": "recip_rank",
    "hit_rate@5": "success_5",
    "hit_rate@10": "success_10",
    "r_precision": "Rprec",
}

TOL = 5e-5 + 1e-9  # half a unit in the 4th printed decimal

CASES = {
    "aq": ("qrels.test", "results.test", "out.test.aq", 1),
    "aql": ("qrels.rel_level", "results.test", "out.test.aql", 2),
    "aqc": ("qrels.test", "results.trunc", "out.test.aqc", 1),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request, trec_dir):
    qrels_name, run_name, out_name, level = CASES[request.param]
    qrels = read_qrels(trec_dir / qrels_name)
    run = read_results(trec_dir / run_name)
    expected = expected_table(trec_dir / out_name, list(MEASURES.values()))
    ev = mc.evaluate(run, qrels, metrics=list(MEASURES), ties="trec", relevance_threshold=level)
    return request.param, ev, expected, trec_dir / out_name


def test_printed_with_four_decimals(case):
    _, _, _, out = case
    for measure in MEASURES.values():
        assert printed_decimals(out, measure) == 4


def test_evaluated_users(case):
    name, ev, expected, _ = case
    queries = sorted(q for q in expected.index if q != "all")
    assert queries == ["301", "302", "303"]
    assert ev.n_users == 3
    assert sorted(str(u) for u in ev.per_user.index) == queries
    assert ev.per_user.index.name == "user_id"


@pytest.mark.parametrize("metric", list(MEASURES))
def test_per_query(case, metric):
    name, ev, expected, _ = case
    for q in ["301", "302", "303"]:
        ours = float(ev.per_user.loc[q, metric])
        want = float(expected.loc[q, MEASURES[metric]])
        assert abs(ours - want) <= TOL, f"{name} query {q} {metric}: ours {ours:.6f} trec_eval {want:.4f}"


@pytest.mark.parametrize("metric", list(MEASURES))
def test_mean(case, metric):
    name, ev, expected, _ = case
    ours = float(ev.summary[metric])
    want = float(expected.loc["all", MEASURES[metric]])
    assert abs(ours - want) <= TOL, f"{name} mean {metric}: ours {ours:.6f} trec_eval {want:.4f}"
    assert ours == pytest.approx(float(ev.per_user[metric].mean()), abs=1e-12)


def test_missing_query_scores_zero(trec_dir):
    qrels = read_qrels(trec_dir / "qrels.test")
    run = read_results(trec_dir / "results.trunc")
    assert "302" not in set(run["user_id"])
    ev = mc.evaluate(run, qrels, metrics=["map", "ndcg@10", "mrr"], ties="trec")
    assert (ev.per_user.loc["302"] == 0).all()
    # excluding nobody: the mean is over 3 users, as trec_eval -c
    assert ev.summary["map"] == pytest.approx(ev.per_user["map"].sum() / 3, abs=1e-12)


def test_prepared_once_evaluated_twice(trec_dir):
    """A Ranked from mc.prepare gives the same numbers as evaluating the frames."""
    qrels = read_qrels(trec_dir / "qrels.test")
    run = read_results(trec_dir / "results.test")
    ranked = mc.prepare(run, qrels)
    expected = expected_table(trec_dir / "out.test.aq", ["P_10", "ndcg_cut_10", "map"])
    ev = mc.evaluate(ranked, metrics=["p@10", "ndcg@10", "map"], ties="trec")
    for m, t in [("p@10", "P_10"), ("ndcg@10", "ndcg_cut_10"), ("map", "map")]:
        assert abs(ev.summary[m] - expected.loc["all", t]) <= TOL
    # the same Ranked at another cutoff
    ev2 = mc.evaluate(ranked, metrics=["p@5"], ties="trec")
    want = expected_table(trec_dir / "out.test.aq", ["P_5"]).loc["all", "P_5"]
    assert abs(ev2.summary["p@5"] - want) <= TOL


def test_trec_ties_ignore_row_order(trec_dir):
    """results.test has tied scores; ties="trec" is unaffected by the order of the rows."""
    qrels = read_qrels(trec_dir / "qrels.test")
    run = read_results(trec_dir / "results.test")
    tied = run.duplicated(["user_id", "score"], keep=False)
    assert tied.sum() > 0
    shuffled = run.sample(frac=1.0, random_state=7).reset_index(drop=True)
    metrics = ["map", "ndcg", "r_precision"]
    a = mc.evaluate(run, qrels, metrics=metrics, ties="trec").per_user
    b = mc.evaluate(shuffled, qrels, metrics=metrics, ties="trec").per_user
    assert (a.sort_index() - b.sort_index()).abs().to_numpy().max() <= 1e-12
