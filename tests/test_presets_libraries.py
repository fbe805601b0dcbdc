"""Each preset against the library it names, through the preset alone (no other keyword), to 1e-9.

Random data with graded relevance (0..3), tied scores, short lists (1 item),
users whose judgments hold no relevant item, users missing from the run and
users only in the run. Each library is fed the data the way its users feed it:

* pytrec_eval (trec_eval's C code): queries of the run that have judgments; its
  per-query values are averaged. It breaks score ties by docno descending, which
  the ``trec_eval`` preset does too, so the data keeps its ties.
* ranx with ``make_comparable=True`` (queries missing from the run score 0). ranx
  keeps the input order of tied documents (a stable sort), as the preset does.
* scikit-learn's ``ndcg_score``/``dcg_score`` per user over the user's retrieved
  items (unjudged: relevance 0), averaged over the users of the ground truth in
  the run; it averages over every order of tied scores, as the preset does.
  Lists of one item are left out of this data: scikit-learn refuses them.
* RecTools reads ranks, not scores: ranks are the input order, so the run given to
  metrics_core has distinct scores in that order (no ties to break); every judged
  row with relevance >= 1 is an interaction (RecTools has no grades).
* Microsoft Recommenders' ``python_evaluation`` ranks with an unstable sort, so its
  data has distinct scores; every row of its ``rating_true`` is relevant, so it gets
  the rows with relevance >= 1. Its NDCG also averages over users missing from the
  predictions (a documented difference of the preset), so NDCG is compared on data
  where every user of the ground truth has predictions.
* ir_measures (``calc_aggregate``, queries missing from the run score 0) and trectools'
  ``TrecEval`` (MAP, P@k and RR; its NDCG reads rows in file order, see the preset's
  notes) break ties as trec_eval does, so the data keeps its ties.
* recmetrics' ``mark`` gets, for every user of the ground truth, the relevant items
  and the list sorted by score (stable; an empty list for users missing from the run).
* pyspark's ``RankingMetrics``: (predictions sorted by score, stable, labels = the
  relevant items) for users in both the run and the ground truth.

The libraries are imported here only: a missing one fails the test (CI treats a
skip as a failure; they are in the dev extra).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

TOL = 1e-9
KS = (1, 3, 5)


def make_data(seed: int, min_len: int = 1, ties: bool = True):
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for u in range(40):
        uid = f"q{u}"
        kind = u % 8  # 0: missing from the run, 1: no relevant judgment, 2: only in the run, else normal
        n = int(rng.integers(min_len, 9))
        items = rng.choice(30, size=n, replace=False)
        scores = rng.integers(0, 4, n) / 4.0 if ties else rng.permutation(n) / n + 0.01
        judged = rng.choice(30, size=int(rng.integers(1, 8)), replace=False)
        rels = rng.integers(0, 4, len(judged))
        if kind == 1:
            rels[:] = 0
        if kind != 2:
            qrel_rows += [(uid, f"d{i}", int(r)) for i, r in zip(judged, rels)]
            if kind == 0 or not (rels >= 1).any() and kind != 1:
                qrel_rows.append((uid, "d99", 2))
        if kind != 0:
            run_rows += [(uid, f"d{i}", float(s)) for i, s in zip(items, scores)]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    return run, qrels


def _dicts(run, qrels):
    q, r = {}, {}
    for u, i, rel in qrels.itertuples(index=False):
        q.setdefault(u, {})[i] = int(rel)
    for u, i, s in run.itertuples(index=False):
        r.setdefault(u, {})[i] = float(s)
    return q, r


@pytest.mark.parametrize("preset", ["trec_eval", "pytrec_eval"])
@pytest.mark.parametrize("seed", range(3))
def test_trec_eval_presets_match_pytrec_eval(preset, seed):
    import pytrec_eval

    run, qrels = make_data(seed)
    q, r = _dicts(run, qrels)
    names = ["ndcg_cut_5", "ndcg_cut_10", "P_5", "P_10", "map", "recip_rank", "Rprec", "ndcg", "map_cut_5"]
    ev = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.5,10", "P.5,10", "map", "recip_rank", "Rprec", "ndcg",
                                            "map_cut.5"})
    per_query = ev.evaluate({u: d for u, d in r.items() if u in q})
    ours = mc.evaluate(run, qrels, metrics=names, preset=preset)
    for name in names:
        want = np.mean([v[name] for v in per_query.values()])
        assert ours.summary[name] == pytest.approx(want, abs=TOL), name


@pytest.mark.parametrize("seed", range(3))
def test_ranx_preset_matches_ranx(seed):
    from ranx import Qrels, Run, evaluate

    run, qrels = make_data(seed)
    q, r = _dicts(run, qrels)
    names = [f"ndcg@{k}" for k in KS] + [f"map@{k}" for k in KS] + [f"precision@{k}" for k in KS]
    names += [f"recall@{k}" for k in KS] + ["mrr", "r-precision", "hit_rate@3"]
    want = evaluate(Qrels(q), Run(r), names, make_comparable=True)
    ours = mc.evaluate(run, qrels, metrics=names, preset="ranx")
    for name in names:
        assert ours.summary[name] == pytest.approx(want[name], abs=TOL), name


@pytest.mark.parametrize("seed", range(3))
def test_sklearn_preset_matches_ndcg_score(seed):
    from sklearn.metrics import dcg_score, ndcg_score

    run, qrels = make_data(seed, min_len=2)
    truth_users = set(qrels["user_id"])
    judged = run.merge(qrels, on=["user_id", "item_id"], how="left").fillna({"relevance": 0})
    for k in KS:
        ndcg, dcg = [], []
        for user, g in judged.groupby("user_id", sort=False):
            if user not in truth_users:
                continue  # users only in the run are never evaluated
            y, s = g["relevance"].to_numpy()[None, :], g["score"].to_numpy()[None, :]
            ndcg.append(ndcg_score(y, s, k=k))
            dcg.append(dcg_score(y, s, k=k))
        ours = mc.evaluate(run, qrels, metrics=[f"ndcg_score@{k}", f"dcg_score@{k}"], preset="sklearn")
        assert ours.summary[f"ndcg_score@{k}"] == pytest.approx(np.mean(ndcg), abs=TOL)
        assert ours.summary[f"dcg_score@{k}"] == pytest.approx(np.mean(dcg), abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_rectools_preset_matches_rectools(seed):
    from rectools.metrics import MAP, NDCG, Precision, Recall, calc_metrics

    run, qrels = make_data(seed, ties=False)
    run = run.assign(rank=run.groupby("user_id").cumcount() + 1)
    run["score"] = -run["rank"].astype(float)  # distinct scores in input order: RecTools' ranks
    interactions = qrels[qrels["relevance"] >= 1][["user_id", "item_id"]]
    # RecTools evaluates the users of its interactions table: the preset's ground truth is the same table
    truth = interactions.assign(relevance=1)
    metrics = {}
    for k in KS:
        metrics |= {f"NDCG@{k}": NDCG(k=k), f"MAP@{k}": MAP(k=k), f"Precision@{k}": Precision(k=k),
                    f"Recall@{k}": Recall(k=k)}
    want = calc_metrics(metrics, run[["user_id", "item_id", "rank"]], interactions)
    ours = mc.evaluate(run[["user_id", "item_id", "score"]], truth, metrics=list(metrics), preset="rectools")
    for name in metrics:
        assert ours.summary[name] == pytest.approx(want[name], abs=TOL), name
    # the conventions RecTools offers as options, set by keywords over the preset
    options = {"MAP@5": (MAP(k=5, divide_by_k=True), {"ap_norm": "k"}),
               "Precision@5": (Precision(k=5, r_precision=True), {"precision_norm": "min_k"}),
               "NDCG@5": (NDCG(k=5, divide_by_achievable=True), {"ideal": "judged"})}
    for name, (metric, keywords) in options.items():
        want = calc_metrics({name: metric}, run[["user_id", "item_id", "rank"]], interactions)[name]
        got = mc.evaluate(run[["user_id", "item_id", "score"]], truth, metrics=[name], preset="rectools",
                          **keywords).summary[name]
        assert got == pytest.approx(want, abs=TOL), name


@pytest.mark.parametrize("seed", range(3))
def test_ms_recommenders_preset_matches_python_evaluation(seed):
    from recommenders.evaluation import python_evaluation as pe

    run, qrels = make_data(seed, ties=False)
    truth = qrels[qrels["relevance"] >= 1]
    cols = dict(col_user="user_id", col_item="item_id", col_prediction="score", col_rating="relevance")
    pred = run.rename(columns={})
    for k in KS:
        ours = mc.evaluate(run, truth, metrics=[f"precision_at_k@{k}", f"recall_at_k@{k}", f"map_at_k@{k}"],
                           preset="ms_recommenders").summary
        assert ours[f"precision_at_k@{k}"] == pytest.approx(pe.precision_at_k(truth, pred, k=k, **cols), abs=TOL)
        assert ours[f"recall_at_k@{k}"] == pytest.approx(pe.recall_at_k(truth, pred, k=k, **cols), abs=TOL)
        assert ours[f"map_at_k@{k}"] == pytest.approx(pe.map_at_k(truth, pred, k=k, **cols), abs=TOL)
        in_run = truth[truth["user_id"].isin(set(run["user_id"]))]
        ours_ndcg = mc.evaluate(run, in_run, metrics=[f"ndcg_at_k@{k}"], preset="ms_recommenders").summary
        assert ours_ndcg[f"ndcg_at_k@{k}"] == pytest.approx(pe.ndcg_at_k(in_run, pred, k=k, **cols), abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_ir_measures_preset_matches_calc_aggregate(seed):
    import ir_measures
    from ir_measures import AP, RR, P, R, Rprec, nDCG

    run, qrels = make_data(seed)
    measures = {"nDCG@5": nDCG @ 5, "nDCG@10": nDCG @ 10, "AP": AP, "AP@5": AP @ 5, "P@5": P @ 5, "RR": RR,
                "Rprec": Rprec, "R@5": R @ 5}
    want = ir_measures.calc_aggregate(list(measures.values()),
                                      qrels.rename(columns={"user_id": "query_id", "item_id": "doc_id"}),
                                      run.rename(columns={"user_id": "query_id", "item_id": "doc_id"}))
    ours = mc.evaluate(run, qrels, metrics=list(measures), preset="ir_measures").summary
    for name, measure in measures.items():
        assert ours[name] == pytest.approx(want[measure], abs=TOL), name


@pytest.mark.parametrize("seed", range(3))
def test_trectools_preset_matches_trec_eval_measures(seed):
    from trectools import TrecEval, TrecQrel, TrecRun

    run, qrels = make_data(seed)
    trec_run, trec_qrels = TrecRun(), TrecQrel()
    trec_run.run_data = run.rename(columns={"user_id": "query", "item_id": "docid"}).assign(
        q0="Q0", system="s", rank=lambda d: d.groupby("query")["score"].rank(ascending=False, method="first"))
    trec_qrels.qrels_data = qrels.rename(columns={"user_id": "query", "item_id": "docid", "relevance": "rel"}).assign(
        q0=0)
    te = TrecEval(trec_run, trec_qrels)
    ours = mc.evaluate(run, qrels, metrics=["MAP", "P@5", "P@10", "RR"], preset="trectools").summary
    assert ours["MAP"] == pytest.approx(te.get_map(), abs=TOL)
    assert ours["P@5"] == pytest.approx(te.get_precision(depth=5), abs=TOL)
    assert ours["P@10"] == pytest.approx(te.get_precision(depth=10), abs=TOL)
    assert ours["RR"] == pytest.approx(te.get_reciprocal_rank(), abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_recmetrics_preset_matches_mark(seed):
    import recmetrics

    run, qrels = make_data(seed)
    actual, predicted = [], []
    for user, judged in qrels.groupby("user_id", sort=False):
        actual.append(judged.loc[judged["relevance"] >= 1, "item_id"].tolist())
        mine = run[run["user_id"] == user].sort_values("score", ascending=False, kind="stable")
        predicted.append(mine["item_id"].tolist())
    for k in KS:
        ours = mc.evaluate(run, qrels, metrics=[f"mark@{k}"], preset="recmetrics").summary
        assert ours[f"mark@{k}"] == pytest.approx(recmetrics.mark(actual, predicted, k=k), abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_ms_recommenders_preset_matches_novelty(seed):
    from recommenders.evaluation import python_evaluation as pe

    run, qrels = make_data(seed)
    rng = np.random.default_rng(seed)
    # every recommended item appears in the training interactions (see the preset's notes)
    items = sorted(set(run["item_id"]))
    train = pd.DataFrame({"user_id": rng.integers(0, 60, 400).astype(str),
                          "item_id": rng.choice(items, 400)})
    train = pd.concat([train, pd.DataFrame({"user_id": "t", "item_id": items})], ignore_index=True)
    # pe.novelty's last line indexes a Series by position ([0]), which pandas 3 refuses; its item novelty
    # comes from the library, and its average (sum of count * item_novelty over n_recommendations) is
    # repeated here from python_evaluation.novelty
    item_novelty = pe.historical_item_novelty(train, run, col_user="user_id", col_item="item_id")
    counts = run.groupby("item_id").size().rename("count").reset_index().merge(item_novelty, on="item_id")
    want = float((counts["count"] * counts["item_novelty"]).sum() / run.shape[0])
    ours = mc.evaluate(run, qrels, metrics=["novelty"], preset="ms_recommenders", interactions=train).summary
    assert ours["novelty"] == pytest.approx(want, abs=TOL)


@pytest.fixture(scope="module")
def spark_context():
    """A local session of this module's own, started as the suite starts every one: its Python workers
    run this interpreter, not whichever ``python3`` comes first on PATH."""
    from _spark_cluster import start_session

    session = start_session("local[1]", "metrics-core-presets")
    yield session.sparkContext
    session.stop()


@pytest.mark.spark
def test_spark_mllib_preset_matches_ranking_metrics(spark_context):
    from pyspark.mllib.evaluation import RankingMetrics

    for seed in range(2):
        run, qrels = make_data(seed)
        relevant = qrels[qrels["relevance"] >= 1].groupby("user_id")["item_id"].apply(list)
        pairs = []
        for user, g in run.groupby("user_id", sort=False):
            if user in set(qrels["user_id"]):
                ranked = g.sort_values("score", ascending=False, kind="stable")["item_id"].tolist()
                pairs.append((ranked, relevant.get(user, [])))
        spark_metrics = RankingMetrics(spark_context.parallelize(pairs))
        for k in KS:
            ours = mc.evaluate(run, qrels, metrics=[f"ndcgAt@{k}", f"meanAveragePrecisionAt@{k}",
                                                    f"precisionAt@{k}", f"recallAt@{k}"], preset="spark_mllib")
            assert ours.summary[f"ndcgAt@{k}"] == pytest.approx(spark_metrics.ndcgAt(k), abs=TOL)
            assert ours.summary[f"meanAveragePrecisionAt@{k}"] == pytest.approx(
                spark_metrics.meanAveragePrecisionAt(k), abs=TOL)
            assert ours.summary[f"precisionAt@{k}"] == pytest.approx(spark_metrics.precisionAt(k), abs=TOL)
            assert ours.summary[f"recallAt@{k}"] == pytest.approx(spark_metrics.recallAt(k), abs=TOL)


def test_library_metric_names_resolve_under_their_preset():
    run, qrels = make_data(0)
    a = mc.evaluate(run, qrels, metrics=["ndcg_cut_10", "P_5", "recip_rank"], preset="trec_eval").summary
    b = mc.evaluate(run, qrels, metrics=["ndcg@10", "precision@5", "mrr"], preset="trec_eval").summary
    assert list(a.values()) == list(b.values())
    explicit = mc.evaluate(run, qrels, metrics=["ndcg@10"], preset="trec_eval", ties="average").summary
    plain = mc.evaluate(run, qrels, metrics=["ndcg@10"], ties="average", empty_users="zero",
                        missing_users="exclude").summary
    assert explicit == plain  # an explicit keyword overrides the preset's
    with pytest.raises(mc.MetricsError):
        mc.evaluate(run, qrels, metrics=["ndcg@10"], preset="nope")
    table = mc.presets()
    assert {"trec_eval", "pytrec_eval", "trectools", "ranx", "ir_measures", "sklearn", "spark_mllib",
            "ms_recommenders", "rectools", "recmetrics", "recbole", "torchmetrics"} <= set(table.index)
    assert "ndcg_cut -> ndcg" in table.loc["trec_eval", "metric_names"]
    assert "binary NDCG" in table.loc["spark_mllib", "notes"]
