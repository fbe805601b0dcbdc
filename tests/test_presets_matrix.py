"""Every preset x the library names it maps x awkward cases, against the library itself, to 1e-9.

Each case is a small generated data set holding one awkward feature (checked
before use, so no case passes by lacking it): users missing from the run,
users only in the run, the two in unequal numbers, users without a relevant
item, lists shorter than k, one-item lists, tied scores, scores tied only in
float32, unjudged scored rows, recommended items without interactions and a
user of the run without history. ``mc.evaluate(..., preset=P)`` is called with
the library's own metric names and nothing else; each library gets the data as
its users give it (see tests/test_presets_libraries.py for each library's
input form). Libraries that sort with an unstable sort (Microsoft
Recommenders) are not paired with the case of tied scores: their order of ties is not
defined, so no preset can equal it (the pair is left out of the matrix, not skipped).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from _quick_cases import covering

TOL = 1e-9
K = 3
CASES = ("missing_and_run_only", "no_relevant", "short_lists", "one_item", "ties", "float32_ties", "unjudged",
         "cold_items", "no_history")


def make_case(case: str, seed: int = 0):
    """(run, qrels, interactions): 10 users u0..u9; the case decides what is awkward."""
    rng = np.random.default_rng(100 * CASES.index(case) + seed)
    run_rows, qrel_rows = [], []
    n_users = 10
    missing = {"u0", "u1", "u2"} if case == "missing_and_run_only" else set()
    run_only = {"u9"} if case == "missing_and_run_only" else set()
    for u in range(n_users):
        uid = f"u{u}"
        n = 1 if case == "one_item" else int(rng.integers(1, 3)) if case == "short_lists" else int(rng.integers(4, 8))
        items = rng.choice(20, size=n, replace=False)
        if case == "ties":
            scores = rng.integers(0, 2, n).astype(float)
        elif case == "float32_ties":
            scores = 1.0 + (np.arange(n) % 2) * 1e-9 + (np.arange(n) // 2) * 0.5  # pairs equal as float32
            scores = rng.permutation(scores)
        else:
            scores = rng.permutation(n) + 0.5
        if uid not in missing:
            run_rows += [(uid, f"i{i}", float(s)) for i, s in zip(items, scores)]
        if uid not in run_only:
            judged = list(items[: max(1, n // 2)]) if case != "unjudged" else list(items[:1])
            judged += list(rng.choice(np.arange(20, 26), size=2, replace=False))  # relevant, never ranked
            rels = rng.integers(0, 3, len(judged))
            rels[-1] = 2
            if case == "no_relevant" and u % 3 == 0:
                rels[:] = 0
            qrel_rows += [(uid, f"i{i}", int(r)) for i, r in zip(judged, rels)]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    # history: every user but (for "no_history") the last one; items 0..13 only (cold items beyond)
    hist_users = [f"u{u}" for u in range(n_users - (1 if case == "no_history" else 0))] + ["h0", "h1"]
    n_hist_items = 14 if case == "cold_items" else 26
    inter = pd.DataFrame([(hu, f"i{i}") for hu in hist_users
                          for i in rng.choice(n_hist_items, size=5, replace=False)], columns=["user_id", "item_id"])
    _check_case(case, run, qrels, inter)
    return run, qrels, inter


def _check_case(case, run, qrels, inter):
    """The case really holds its awkward feature."""
    run_users, truth_users = set(run["user_id"]), set(qrels["user_id"])
    if case == "missing_and_run_only":
        assert len(truth_users - run_users) == 3 and len(run_users - truth_users) == 1
    if case == "no_relevant":
        assert (qrels.groupby("user_id")["relevance"].max() == 0).any()
    if case in ("short_lists", "one_item"):
        assert run.groupby("user_id").size().max() < K
    if case == "one_item":
        assert (run.groupby("user_id").size() == 1).all()
    if case == "ties":
        assert run.duplicated(["user_id", "score"]).any()
    if case == "float32_ties":
        assert not run.duplicated(["user_id", "score"]).any()
        assert run.assign(s=run["score"].astype(np.float32)).duplicated(["user_id", "s"]).any()
    if case == "unjudged":
        joined = run.merge(qrels, on=["user_id", "item_id"], how="left")
        assert joined["relevance"].isna().mean() > 0.5
    if case == "cold_items":
        assert not set(run["item_id"]) <= set(inter["item_id"])
    if case == "no_history":
        assert not run_users <= set(inter["user_id"])


def _dicts(run, qrels):
    q, r = {}, {}
    for u, i, rel in qrels.itertuples(index=False):
        q.setdefault(u, {})[i] = int(rel)
    for u, i, s in run.itertuples(index=False):
        r.setdefault(u, {})[i] = float(s)
    return q, r


def _ranks(run):
    """RecTools' ranks: score descending, ties in input order (the presets' ties="input")."""
    order = run.assign(_pos=np.arange(len(run))).sort_values(["user_id", "score", "_pos"],
                                                             ascending=[True, False, True], kind="stable")
    return order.assign(rank=order.groupby("user_id").cumcount() + 1)[["user_id", "item_id", "rank"]]


def lib_pytrec_eval(run, qrels, inter):
    import pytrec_eval

    q, r = _dicts(run, qrels)
    names = {f"ndcg_cut_{K}": "ndcg_cut", f"P_{K}": "P", "map": "map", "recip_rank": "recip_rank",
             "Rprec": "Rprec", f"map_cut_{K}": "map_cut", f"recall_{K}": "recall", f"success_{K}": "success"}
    ev = pytrec_eval.RelevanceEvaluator(q, {f"ndcg_cut.{K}", f"P.{K}", "map", "recip_rank", "Rprec",
                                            f"map_cut.{K}", f"recall.{K}", f"success.{K}"})
    per_query = ev.evaluate({u: d for u, d in r.items() if u in q})
    return {name: float(np.mean([v[name] for v in per_query.values()])) for name in names}, {}


def lib_ir_measures(run, qrels, inter):
    import ir_measures
    from ir_measures import AP, RR, P, R, Rprec, Success, nDCG

    measures = {f"nDCG@{K}": nDCG @ K, "AP": AP, f"AP@{K}": AP @ K, f"P@{K}": P @ K, "RR": RR, "Rprec": Rprec,
                f"R@{K}": R @ K, f"Success@{K}": Success @ K}
    want = ir_measures.calc_aggregate(list(measures.values()),
                                      qrels.rename(columns={"user_id": "query_id", "item_id": "doc_id"}),
                                      run.rename(columns={"user_id": "query_id", "item_id": "doc_id"}))
    return {name: float(want[m]) for name, m in measures.items()}, {}


def lib_trectools(run, qrels, inter):
    from trectools import TrecEval, TrecQrel, TrecRun

    trec_run, trec_qrels = TrecRun(), TrecQrel()
    trec_run.run_data = run.rename(columns={"user_id": "query", "item_id": "docid"}).assign(
        q0="Q0", system="s", rank=lambda d: d.groupby("query")["score"].rank(ascending=False, method="first"))
    trec_qrels.qrels_data = qrels.rename(columns={"user_id": "query", "item_id": "docid", "relevance": "rel"}).assign(
        q0=0)
    te = TrecEval(trec_run, trec_qrels)
    return {"MAP": te.get_map(), f"P@{K}": te.get_precision(depth=K), "RR": te.get_reciprocal_rank()}, {}


def lib_ranx(run, qrels, inter):
    from ranx import Qrels, Run, evaluate

    q, r = _dicts(run, qrels)
    names = [f"ndcg@{K}", f"map@{K}", f"precision@{K}", f"recall@{K}", "mrr", "r-precision", f"hit_rate@{K}"]
    want = evaluate(Qrels(q), Run(r), names, make_comparable=True)
    return {n: float(want[n]) for n in names}, {}


def lib_rectools(run, qrels, inter):
    from rectools.metrics import (MAP, MRR, NDCG, AvgRecPopularity, CatalogCoverage, HitRate, IntraListDiversity,
                                  MeanInvUserFreq, Precision, Recall, Serendipity, calc_metrics)
    from rectools.metrics.distances import PairwiseHammingDistanceCalculator

    # PartialAUC is left out: under pandas 3 its fit fails inside RecTools (a groupby cumsum over an object
    # column); pauc@k follows its code (tests/test_topk_classification.py)
    run, qrels, inter = (d.assign(item_id=d["item_id"].str[1:].astype(int)) for d in (run, qrels, inter))
    interactions = qrels[qrels["relevance"] >= 1][["user_id", "item_id"]]
    reco = _ranks(run)
    catalog = sorted(set(run["item_id"]) | set(qrels["item_id"]) | set(inter["item_id"]))
    # item features: two columns of few values (Hamming distances 0, 1 or 2), for every catalog item
    features = pd.DataFrame({"item_id": catalog, "genre": [i % 3 for i in catalog],
                             "era": [(i // 5) % 2 for i in catalog]})
    metrics = {f"NDCG@{K}": NDCG(k=K), f"MAP@{K}": MAP(k=K), f"Precision@{K}": Precision(k=K),
               f"Recall@{K}": Recall(k=K), f"MRR@{K}": MRR(k=K), f"HitRate@{K}": HitRate(k=K),
               f"MeanInvUserFreq@{K}": MeanInvUserFreq(k=K),
               f"AvgRecPopularity@{K}": AvgRecPopularity(k=K), f"CatalogCoverage@{K}": CatalogCoverage(k=K,
                                                                                                    normalize=True),
               f"Serendipity@{K}": Serendipity(k=K),
               f"IntraListDiversity@{K}": IntraListDiversity(
                   k=K, distance_calculator=PairwiseHammingDistanceCalculator(features.set_index("item_id")))}
    want = calc_metrics(metrics, reco, interactions, prev_interactions=inter, catalog=catalog)
    # RecTools' ground truth is its interactions table (no grades); the catalog is the item_features' items
    truth = interactions.assign(relevance=1)
    extra = dict(run=run, qrels=truth, interactions=inter, item_features=features)
    return {n: float(v) for n, v in want.items()}, extra


def lib_ms_recommenders(run, qrels, inter):
    from recommenders.evaluation import python_evaluation as pe

    truth = qrels[qrels["relevance"] >= 1]
    cols = dict(col_user="user_id", col_item="item_id", col_prediction="score", col_rating="relevance")
    want = {f"precision_at_k@{K}": pe.precision_at_k(truth, run, k=K, **cols),
            f"recall_at_k@{K}": pe.recall_at_k(truth, run, k=K, **cols),
            f"map_at_k@{K}": pe.map_at_k(truth, run, k=K, **cols),
            f"map@{K}": pe.map(truth, run, k=K, **cols)}
    if set(truth["user_id"]) <= set(run["user_id"]):  # its NDCG also averages over missing users (see notes)
        want[f"ndcg_at_k@{K}"] = pe.ndcg_at_k(truth, run, k=K, **cols)
    return {n: float(v) for n, v in want.items()}, dict(qrels=truth)


def lib_recmetrics(run, qrels, inter):
    import recmetrics

    actual, predicted = [], []
    for user, judged in qrels.groupby("user_id", sort=False):
        actual.append(judged.loc[judged["relevance"] >= 1, "item_id"].tolist())
        predicted.append(run[run["user_id"] == user].sort_values("score", ascending=False, kind="stable")[
            "item_id"].tolist())
    return {f"mark@{K}": float(recmetrics.mark(actual, predicted, k=K))}, {}


LIBRARIES = {"trec_eval": lib_pytrec_eval, "pytrec_eval": lib_pytrec_eval, "ir_measures": lib_ir_measures,
             "trectools": lib_trectools, "ranx": lib_ranx, "rectools": lib_rectools,
             "ms_recommenders": lib_ms_recommenders, "recmetrics": lib_recmetrics}
UNSTABLE_SORT = {"ms_recommenders"}


MATRIX = [(preset, case) for preset in LIBRARIES for case in CASES
          if not (preset in UNSTABLE_SORT and case == "ties")]
#: the pairs run: all of them, or in the quick tier every preset and every case at least once
RUN = covering(MATRIX, lambda pair: pair[0], lambda pair: pair[1])


@pytest.mark.parametrize("preset, case", RUN)
def test_preset_equals_its_library(preset, case):
    run, qrels, inter = make_case(case)
    want, extra = LIBRARIES[preset](run, qrels, inter)
    kwargs = dict(run=run, qrels=qrels) | extra
    run, truth = kwargs.pop("run"), kwargs.pop("qrels")
    got = mc.evaluate(run, truth, metrics=list(want), preset=preset, **kwargs).summary
    assert list(got) == list(want)  # results under the names given
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=TOL), (preset, case, name)


def test_cli_json_reports_the_names_typed(tmp_path, capsys):
    import json

    from metrics_core.cli import main

    run, qrels, _ = make_case("missing_and_run_only")
    run.to_csv(tmp_path / "run.csv", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    names = [f"map_at_k@{K}", f"map@{K}", f"precision_at_k@{K}"]
    code = main(["evaluate", "--run", str(tmp_path / "run.csv"), "--qrels", str(tmp_path / "qrels.csv"),
                 "--metrics", ",".join(names), "--preset", "ms_recommenders", "--json", "-q"])
    assert code == 0
    (values,) = json.loads(capsys.readouterr().out)["models"].values()
    want = mc.evaluate(run, qrels, metrics=names, preset="ms_recommenders").summary
    assert list(values) == names
    assert values == pytest.approx(want, abs=TOL)
    assert values[f"map@{K}"] != values[f"map_at_k@{K}"]  # R and min(k, R) differ on this data
