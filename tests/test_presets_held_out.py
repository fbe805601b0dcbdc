"""The presets on generated cases that each hold the feature a library handles its own way, against the library.

* trectools: a run lacking many topics of the qrels (and topics only in the run): trectools leaves the
  missing topics out and divides by the run's topics; ``run_only_users="zero"`` adds the run's topics
  without judgments, never the qrels' topics the run lacks.
* RecTools: beyond-accuracy metrics keep their per-user columns under the preset; IntraListDiversity
  with a cosine distance calculator (written here on scikit-learn's ``cosine_distances``) scores a top k
  of fewer than two items 0 and keeps the user (``ild_distance="cosine"``, ``short_lists="zero"``).

The libraries are imported here only: a missing one fails the test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

TOL = 1e-9


def run_lacking_topics(seed: int, share_missing: float = 0.3):
    """(run, qrels): 60 topics judged; a share of them absent from the run; 5 topics only in the run;
    tied scores; lists of 1 to 15 documents."""
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    topics = [f"{t}" for t in range(60)]
    missing = set(rng.choice(topics, size=int(share_missing * len(topics)), replace=False))
    for t in topics:
        judged = rng.choice(50, size=12, replace=False)
        qrel_rows += [(t, f"d{d}", int(r)) for d, r in zip(judged, rng.integers(0, 3, 12))]
        if t not in missing:
            n = int(rng.integers(1, 16))
            docs = rng.choice(50, size=n, replace=False)
            run_rows += [(t, f"d{d}", float(s)) for d, s in zip(docs, rng.integers(0, 5, n) / 4)]
    for t in range(100, 105):  # only in the run
        run_rows += [(f"{t}", f"d{d}", float(10 - i)) for i, d in enumerate(rng.choice(50, 5, replace=False))]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    assert set(qrels["user_id"]) - set(run["user_id"]) and set(run["user_id"]) - set(qrels["user_id"])
    return run, qrels


def _trectools(run, qrels):
    from trectools import TrecEval, TrecQrel, TrecRun

    trec_run, trec_qrels = TrecRun(), TrecQrel()
    trec_run.run_data = run.rename(columns={"user_id": "query", "item_id": "docid"}).assign(
        q0="Q0", system="s", rank=lambda d: d.groupby("query")["score"].rank(ascending=False, method="first"))
    trec_qrels.qrels_data = qrels.rename(columns={"user_id": "query", "item_id": "docid",
                                                  "relevance": "rel"}).assign(q0=0)
    return TrecEval(trec_run, trec_qrels)


@pytest.mark.parametrize("seed", range(3))
def test_trectools_preset_leaves_out_topics_the_run_lacks(seed):
    run, qrels = run_lacking_topics(seed)
    te = _trectools(run, qrels)
    ev = mc.evaluate(run, qrels, metrics=["P@10", "P@5", "MAP", "RR"], preset="trectools")
    assert ev.summary["P@10"] == pytest.approx(te.get_precision(depth=10), abs=TOL)
    assert ev.summary["P@5"] == pytest.approx(te.get_precision(depth=5), abs=TOL)
    assert ev.summary["MAP"] == pytest.approx(te.get_map(), abs=TOL)
    assert ev.summary["RR"] == pytest.approx(te.get_reciprocal_rank(), abs=TOL)
    # (its get_rprec raises KeyError on a topic without judgments, so Rprec is not compared here)
    # the users counted are the run's topics, as trectools divides by them (never the qrels' topics it lacks)
    assert set(ev.per_user.index) == set(run["user_id"])
    assert ev.n_users == len(te.run.topics())


def test_run_only_users_zero_adds_only_the_runs_topics():
    run, qrels = run_lacking_topics(7)
    in_both = set(run["user_id"]) & set(qrels["user_id"])
    run_only = set(run["user_id"]) - set(qrels["user_id"])
    truth_only = set(qrels["user_id"]) - set(run["user_id"])
    excluded = mc.evaluate(run, qrels, metrics=["P@5"], missing_users="exclude", empty_users="zero")
    widened = mc.evaluate(run, qrels, metrics=["P@5"], missing_users="exclude", empty_users="zero",
                          run_only_users="zero")
    assert set(excluded.per_user.index) == in_both
    assert set(widened.per_user.index) == in_both | run_only
    assert not truth_only & set(widened.per_user.index)
    # with missing_users="zero" the qrels' topics come back, each scoring 0
    both = mc.evaluate(run, qrels, metrics=["P@5"], empty_users="zero", run_only_users="zero")
    assert set(both.per_user.index) == in_both | run_only | truth_only
    assert (both.per_user.loc[sorted(truth_only), "P@5"] == 0).all()


def test_trectools_preset_through_the_command_line(tmp_path, capsys):
    import json

    from metrics_core.cli import main

    run, qrels = run_lacking_topics(3)
    with open(tmp_path / "run.txt", "w") as f:
        for (t, d, s) in run.itertuples(index=False):
            f.write(f"{t} Q0 {d} 0 {s!r} sys\n")
    with open(tmp_path / "qrels.txt", "w") as f:
        for (t, d, r) in qrels.itertuples(index=False):
            f.write(f"{t} 0 {d} {r}\n")
    code = main(["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--metrics", "P@10,MAP", "--preset", "trectools", "--json", "-q"])
    assert code == 0
    (values,) = json.loads(capsys.readouterr().out)["models"].values()
    te = _trectools(run, qrels)
    assert values["P@10"] == pytest.approx(te.get_precision(depth=10), abs=TOL)
    assert values["MAP"] == pytest.approx(te.get_map(), abs=TOL)


def _rectools_data(seed: int):
    """(run with distinct scores, interactions, features): users with 1, 2 and more recommendations, a user
    recommended items but absent from the interactions, a user of the interactions without recommendations,
    an item of zero features."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(14):
        n = 1 if u % 4 == 0 else 2 if u % 4 == 1 else int(rng.integers(3, 7))
        if u == 13:
            continue  # in the interactions only
        items = rng.choice(20, size=n, replace=False)
        rows += [(u, int(i), float(n - r)) for r, i in enumerate(items)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    inter = pd.DataFrame([(u, int(i)) for u in range(14) if u != 12 for i in rng.choice(20, 3, replace=False)],
                         columns=["user_id", "item_id"])
    features = pd.DataFrame(rng.integers(0, 3, size=(20, 4)).astype(float), columns=["f0", "f1", "f2", "f3"])
    features.loc[5] = 0.0  # a zero vector: cosine similarity 0 with every item
    features.insert(0, "item_id", np.arange(20))
    return run, inter, features


def _reco(run):
    order = run.sort_values(["user_id", "score"], ascending=[True, False], kind="stable")
    return order.assign(rank=order.groupby("user_id").cumcount() + 1)[["user_id", "item_id", "rank"]].rename(
        columns={"user_id": "user_id", "item_id": "item_id"})


class _CosineDistance:
    """A RecTools distance calculator: scikit-learn's ``cosine_distances`` of the feature rows."""

    def __init__(self, features: pd.DataFrame):
        from rectools.metrics.distances import PairwiseDistanceCalculator

        class Cosine(PairwiseDistanceCalculator):
            def _get_distances_for_item_pairs(self, items_0, items_1):
                from sklearn.metrics.pairwise import cosine_distances

                table = features.set_index("item_id")
                distances = cosine_distances(table.to_numpy())  # a zero vector: similarity 0, distance 1
                where = pd.Index(table.index)
                return distances[where.get_indexer(list(items_0)), where.get_indexer(list(items_1))]

        self.calculator = Cosine()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_rectools_cosine_intra_list_diversity(seed, k):
    from rectools.metrics import IntraListDiversity

    run, inter, features = _rectools_data(seed)
    reco = _reco(run)
    metric = IntraListDiversity(k=k, distance_calculator=_CosineDistance(features).calculator)
    want = metric.calc_per_user(reco)
    assert ((reco.groupby("user_id").size().clip(upper=k) < 2) & True).any()  # short top k present
    truth = inter.assign(relevance=1)
    ev = mc.evaluate(run, truth, metrics=[f"IntraListDiversity@{k}"], preset="rectools", ild_distance="cosine",
                     item_features=features)
    assert ev.summary[f"IntraListDiversity@{k}"] == pytest.approx(float(want.mean()), abs=TOL)
    # the per-user column is kept under the preset: each evaluated user with a list has RecTools' value
    column = ev.per_user[f"IntraListDiversity@{k}"]
    listed = column.dropna()
    assert len(listed) > 0
    for user, value in listed.items():
        assert value == pytest.approx(float(want[user]), abs=TOL)
    # evaluated users without recommendations have no value (RecTools does not list them)
    assert column[~column.index.isin(run["user_id"])].isna().all()


def test_rectools_preset_keeps_beyond_accuracy_per_user_columns():
    run, inter, features = _rectools_data(0)
    truth = inter.assign(relevance=1)
    names = ["ndcg@3", "ils@3", "ild@3", "novelty@3"]
    with_preset = mc.evaluate(run, truth, metrics=names, preset="rectools", item_features=features,
                              interactions=inter)
    without = mc.evaluate(run, truth, metrics=names, item_features=features, interactions=inter)
    assert list(with_preset.per_user.columns) == names
    assert list(without.per_user.columns) == names


def test_ild_cosine_refuses_tag_sets():
    run, inter, _ = _rectools_data(0)
    tags = pd.DataFrame({"item_id": np.arange(20), "tags": [["a", "b"] if i % 2 else ["c"] for i in range(20)]})
    with pytest.raises(mc.MetricsError, match="ild_distance='cosine' needs numeric"):
        mc.evaluate(run, inter.assign(relevance=1), metrics=["ild@3"], item_features=tags, ild_distance="cosine")
