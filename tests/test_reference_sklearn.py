"""Cross-checks against scikit-learn on random data.

* ndcg@k / dcg@k with ties="average" == sklearn ndcg_score / dcg_score(ignore_ties=False),
  per user on the whole list (the run carries relevance for every item, so the
  judged items are the retrieved ones and ideal="judged" == ideal="retrieved");
  exponential gain == sklearn on y_true = 2^rel - 1.
* scored rows: auc == roc_auc_score, pr_auc == average_precision_score,
  logloss == log_loss (with 0 and 1 scores: same clipping), rmse == sqrt(MSE),
  mae == MAE, accuracy/precision/recall/f1 == sklearn at prediction
  score >= threshold, confusion_matrix == sklearn's, ROC / PR / reliability
  curves == sklearn's points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve as sk_calibration_curve

import metrics_core as mc

TOL = 1e-9


def ranking_data(seed, ties):
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(12):
        n = int(rng.integers(2, 12))
        scores = rng.integers(0, 3, size=n) / 2.0 if ties else rng.random(n)
        rels = rng.choice([0, 0, 1, 2, 3], size=n)
        if u == 3:
            rels[:] = 0  # no relevant item: excluded by us
        rows += [(f"u{u}", f"i{j}", float(s), int(r)) for j, (s, r) in enumerate(zip(scores, rels))]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "score", "relevance"])


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("gain", ["linear", "exponential"])
@pytest.mark.parametrize("ideal", ["judged", "retrieved"])
def test_ndcg_dcg_match_sklearn(seed, ties, gain, ideal):
    run = ranking_data(seed, ties)
    ks = [1, 3, 5, None]
    labels = [f"ndcg@{k}" if k else "ndcg" for k in ks] + [f"dcg@{k}" if k else "dcg" for k in ks]
    ev = mc.evaluate(run, metrics=labels, ties="average", gain=gain, ideal=ideal)
    expected_users = sorted(u for u, g in run.groupby("user_id") if (g["relevance"] >= 1).any())
    assert sorted(ev.per_user.index) == expected_users
    for u, g in run.groupby("user_id"):
        if u not in expected_users:
            continue
        rel = g["relevance"].to_numpy(dtype=float)
        y_true = rel if gain == "linear" else 2.0**rel - 1.0
        y_score = g["score"].to_numpy()
        for k in ks:
            sfx = f"@{k}" if k else ""
            want_n = skm.ndcg_score([y_true], [y_score], k=k, ignore_ties=False)
            want_d = skm.dcg_score([y_true], [y_score], k=k, log_base=2, ignore_ties=False)
            assert ev.per_user.loc[u, "ndcg" + sfx] == pytest.approx(want_n, abs=TOL), (u, k)
            assert ev.per_user.loc[u, "dcg" + sfx] == pytest.approx(want_d, abs=TOL), (u, k)


def scored_data(seed, n=300, ties=True, graded=False):
    rng = np.random.default_rng(seed)
    users = rng.integers(0, 25, size=n)
    p = rng.random(n)
    if ties:
        p = np.round(p, 1)  # many exact ties, values 0.0 .. 1.0 included
    y = (rng.random(n) < 0.25 + 0.5 * p).astype(int)
    rel = y * rng.integers(1, 4, size=n) if graded else y
    df = pd.DataFrame({"user_id": [f"u{u}" for u in users], "item_id": [f"i{j}" for j in range(n)],
                       "score": p, "relevance": rel})
    return df


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
def test_scored_metrics_match_sklearn(seed, ties):
    df = scored_data(seed, ties=ties)
    y, p = df["relevance"].to_numpy(), df["score"].to_numpy()
    ev = mc.evaluate(df, metrics=["auc", "pr_auc", "logloss", "rmse", "mae"])
    assert ev.summary["auc"] == pytest.approx(skm.roc_auc_score(y, p), abs=TOL)
    assert ev.summary["pr_auc"] == pytest.approx(skm.average_precision_score(y, p), abs=TOL)
    assert ev.summary["logloss"] == pytest.approx(skm.log_loss(y, p), abs=TOL)
    assert ev.summary["rmse"] == pytest.approx(np.sqrt(skm.mean_squared_error(y, p)), abs=TOL)
    assert ev.summary["mae"] == pytest.approx(skm.mean_absolute_error(y, p), abs=TOL)


def test_logloss_clipping_of_zero_and_one():
    df = pd.DataFrame({"user_id": "u", "item_id": ["a", "b", "c", "d"],
                       "score": [0.0, 1.0, 1.0, 0.3], "relevance": [1, 1, 0, 0]})
    ev = mc.evaluate(df, metrics=["logloss"])
    want = skm.log_loss([1, 1, 0, 0], [0.0, 1.0, 1.0, 0.3])
    assert np.isfinite(want)
    assert ev.summary["logloss"] == pytest.approx(want, rel=1e-12)


def test_logloss_rejects_non_probabilities():
    df = pd.DataFrame({"user_id": "u", "item_id": ["a", "b"], "score": [1.5, 0.2], "relevance": [1, 0]})
    with pytest.raises(mc.MetricsError) as err:
        mc.evaluate(df, metrics=["logloss"])
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_threshold_metrics_match_sklearn(seed, threshold):
    # ties=True puts scores exactly on the threshold: predicted positive when score >= threshold
    df = scored_data(seed, ties=True)
    y, p = df["relevance"].to_numpy(), df["score"].to_numpy()
    assert (p == threshold).any()
    pred = (p >= threshold).astype(int)
    ev = mc.evaluate(df, metrics=["accuracy", "precision", "recall", "f1"], threshold=threshold)
    assert ev.summary["accuracy"] == pytest.approx(skm.accuracy_score(y, pred), abs=TOL)
    assert ev.summary["precision"] == pytest.approx(skm.precision_score(y, pred), abs=TOL)
    assert ev.summary["recall"] == pytest.approx(skm.recall_score(y, pred), abs=TOL)
    assert ev.summary["f1"] == pytest.approx(skm.f1_score(y, pred), abs=TOL)
    cm = mc.confusion_matrix(mc.prepare(df), threshold=threshold)
    want = skm.confusion_matrix(y, pred, labels=[0, 1])  # rows actual 0/1, columns predicted 0/1
    assert cm.shape == (2, 2)
    np.testing.assert_array_equal(cm.to_numpy(), want)
    assert list(cm.index) == ["negative", "positive"]
    assert list(cm.columns) == ["negative", "positive"]


def test_graded_labels_and_relevance_threshold():
    """Label = relevance >= relevance_threshold; rmse/mae compare the score with the relevance."""
    df = scored_data(11, ties=True, graded=True)
    rel, p = df["relevance"].to_numpy(), df["score"].to_numpy()
    y2 = (rel >= 2).astype(int)
    ev = mc.evaluate(df, metrics=["auc", "pr_auc", "logloss", "accuracy", "rmse", "mae"],
                     relevance_threshold=2)
    assert ev.summary["auc"] == pytest.approx(skm.roc_auc_score(y2, p), abs=TOL)
    assert ev.summary["pr_auc"] == pytest.approx(skm.average_precision_score(y2, p), abs=TOL)
    assert ev.summary["logloss"] == pytest.approx(skm.log_loss(y2, p), abs=TOL)
    assert ev.summary["accuracy"] == pytest.approx(skm.accuracy_score(y2, p >= 0.5), abs=TOL)
    assert ev.summary["rmse"] == pytest.approx(np.sqrt(skm.mean_squared_error(rel, p)), abs=TOL)
    assert ev.summary["mae"] == pytest.approx(skm.mean_absolute_error(rel, p), abs=TOL)


def test_scored_rows_with_separate_qrels():
    """With a qrels table: rows of users absent from the ground truth are dropped,
    unjudged rows count as label 0."""
    df = scored_data(5, ties=False)
    run = df[["user_id", "item_id", "score"]]
    judged = df.sample(frac=0.6, random_state=1)
    qrels = judged[judged["user_id"] != "u0"][["user_id", "item_id", "relevance"]]
    keep = run["user_id"].isin(set(qrels["user_id"]))
    lab = run.merge(qrels, on=["user_id", "item_id"], how="left")["relevance"].fillna(0).to_numpy()
    y, p = lab[keep.to_numpy()], run["score"].to_numpy()[keep.to_numpy()]
    assert (~keep).any()
    ev = mc.evaluate(run, qrels, metrics=["auc", "pr_auc", "logloss"])
    assert ev.summary["auc"] == pytest.approx(skm.roc_auc_score(y, p), abs=TOL)
    assert ev.summary["pr_auc"] == pytest.approx(skm.average_precision_score(y, p), abs=TOL)
    assert ev.summary["logloss"] == pytest.approx(skm.log_loss(y, p), abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_roc_and_pr_curves_match_sklearn(seed):
    df = scored_data(seed, ties=bool(seed % 2))
    y, p = df["relevance"].to_numpy(), df["score"].to_numpy()
    ranked = mc.prepare(df)
    roc = mc.roc_curve(ranked)
    fpr, tpr, thr = skm.roc_curve(y, p, drop_intermediate=False)
    np.testing.assert_allclose(roc["fpr"].to_numpy(), fpr, atol=TOL)
    np.testing.assert_allclose(roc["tpr"].to_numpy(), tpr, atol=TOL)
    np.testing.assert_array_equal(roc["threshold"].to_numpy()[1:], thr[1:])
    assert np.trapezoid(roc["tpr"], roc["fpr"]) == pytest.approx(skm.roc_auc_score(y, p), abs=TOL)
    pr = mc.pr_curve(ranked)
    precision, recall, pthr = skm.precision_recall_curve(y, p)
    # sklearn: increasing thresholds, ending with (recall 0, precision 1); ours: decreasing
    np.testing.assert_allclose(pr["precision"].to_numpy(), precision[::-1], atol=TOL)
    np.testing.assert_allclose(pr["recall"].to_numpy(), recall[::-1], atol=TOL)
    np.testing.assert_array_equal(pr["threshold"].to_numpy()[1:], pthr[::-1])


def test_curves_of_one_prepared_model_follow_the_relevance_threshold():
    """The curves' counts are kept with the prepared data: a second threshold must not reuse the first's."""
    df = scored_data(4, graded=True)
    p = df["score"].to_numpy()
    ranked = mc.prepare(df)
    for threshold in (1, 2, 3, 1):
        y = (df["relevance"].to_numpy() >= threshold).astype(int)
        fpr, tpr, _ = skm.roc_curve(y, p, drop_intermediate=False)
        roc = mc.roc_curve(ranked, relevance_threshold=threshold)
        np.testing.assert_allclose(roc["tpr"].to_numpy(), tpr, atol=TOL)
        np.testing.assert_allclose(roc["fpr"].to_numpy(), fpr, atol=TOL)
        precision, recall, _ = skm.precision_recall_curve(y, p)
        pr = mc.pr_curve(ranked, relevance_threshold=threshold)
        np.testing.assert_allclose(pr["precision"].to_numpy(), precision[::-1], atol=TOL)


@pytest.mark.parametrize("n_bins", [5, 10])
def test_calibration_curve_matches_sklearn(n_bins):
    df = scored_data(3, ties=False)
    y, p = df["relevance"].to_numpy(), df["score"].to_numpy()
    cal = mc.calibration_curve(mc.prepare(df), n_bins=n_bins)
    prob_true, prob_pred = sk_calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    np.testing.assert_allclose(cal["fraction_positive"].to_numpy(), prob_true, atol=TOL)
    np.testing.assert_allclose(cal["mean_predicted"].to_numpy(), prob_pred, atol=TOL)
    assert cal["count"].sum() == len(df)
