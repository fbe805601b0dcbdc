"""The one adapter from settings to kernel codes (:mod:`metrics_core.metrics.kernel_settings`) owns the
binary gain: the gain's view of the lists is 0/1 there, the measures defined on judgments read the
relevances as given, and no other module tests the gain's name.

References: NDCG with the binary gain against a plain-Python formula written here (gains 1 when
``rel >= threshold``), bpref against trec_eval through pytrec_eval (which has no gain), on small
generated data with graded, zero and negative (unjudged) judgments.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import metrics_core as mc
from metrics_core.kernels.ranking import GAIN_EXPONENTIAL, GAIN_LINEAR, IDEAL_K, one_list
from metrics_core.metrics import kernel_settings

PACKAGE = Path(mc.__file__).resolve().parent


def data(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Users with distinct scores (no ties), graded judgments -1..3 on part of the items, some unjudged."""
    rng = np.random.default_rng(seed)
    runs, truths = [], []
    for u in range(12):
        items = rng.choice(40, size=int(rng.integers(3, 12)), replace=False)
        runs.append(pd.DataFrame({"user_id": f"u{u}", "item_id": [f"i{i}" for i in items],
                                  "score": rng.permutation(len(items)) + rng.random()}))
        judged = rng.choice(40, size=15, replace=False)
        truths.append(pd.DataFrame({"user_id": f"u{u}", "item_id": [f"i{i}" for i in judged],
                                    "relevance": rng.integers(-1, 4, size=15)}))
    return pd.concat(runs, ignore_index=True), pd.concat(truths, ignore_index=True)


def ndcg_binary(run: pd.DataFrame, qrels: pd.DataFrame, k: int, threshold: float) -> dict:
    """NDCG@k per user with gain 1 when rel >= threshold else 0, discount 1/log2(rank + 1), the ideal
    from every judged item (users without a relevant item left out)."""
    out = {}
    for user, judged in qrels.groupby("user_id"):
        rel = dict(zip(judged["item_id"], judged["relevance"]))
        gains = sorted((1.0 if r >= threshold else 0.0 for r in rel.values()), reverse=True)
        if not any(gains):
            continue
        ranked = run[run["user_id"] == user].sort_values("score", ascending=False)["item_id"]
        dcg = sum((1.0 if rel.get(item, 0) >= threshold else 0.0) / math.log2(rank + 2)
                  for rank, item in enumerate(list(ranked)[:k]))
        ideal = sum(g / math.log2(rank + 2) for rank, g in enumerate(gains[:k]))
        out[user] = dcg / ideal
    return out


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("threshold", [1, 2])
def test_binary_gain_ndcg_against_the_formula(seed, threshold):
    run, qrels = data(seed)
    ev = mc.evaluate(run, qrels, ["ndcg@5"], gain="binary", relevance_threshold=threshold)
    reference = ndcg_binary(run, qrels, 5, threshold)
    assert ev.per_user["ndcg@5"].to_dict() == pytest.approx(reference, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("threshold", [1, 2])
def test_bpref_reads_the_judgments_whatever_the_gain(seed, threshold):
    run, qrels = data(seed)
    q = {}
    for row in qrels.itertuples():
        q.setdefault(row.user_id, {})[row.item_id] = int(row.relevance)
    r = {}
    for row in run.itertuples():
        r.setdefault(row.user_id, {})[row.item_id] = float(row.score)
    trec = pytrec_eval.RelevanceEvaluator(q, {"bpref"}, relevance_level=threshold).evaluate(r)
    for gain in ("binary", "linear", "exponential"):
        per_user = mc.evaluate(run, qrels, ["bpref"], gain=gain, relevance_threshold=threshold,
                               ties="trec").per_user["bpref"]
        assert per_user.to_dict() == pytest.approx({u: trec[u]["bpref"] for u in per_user.index}, abs=1e-12), gain


def test_the_views_and_codes():
    lists = one_list(np.array([3.0, -1.0, 0.0, 2.0, 1.0]), np.array([3.0, 2.0, 1.0, 0.0, -1.0]), None, 2.0)
    linear = kernel_settings.relevance_views(lists, mc.Settings(relevance_threshold=2))
    assert linear.gain is lists and linear.graded is lists and linear.threshold == linear.graded_threshold == 2.0
    binary = kernel_settings.relevance_views(lists, mc.Settings(gain="binary", relevance_threshold=2))
    assert binary.graded is lists and binary.graded_threshold == 2.0 and binary.threshold == 1.0
    assert binary.gain.rel_values[lists.rel_code].tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]  # rel >= 2 in rank order
    assert binary.gain.ideal_rel.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert binary.gain.n_rel.tolist() == lists.n_rel.tolist() == [2.0]
    options = kernel_settings.kernel_options(mc.Settings(gain="binary", ideal="k", ties="input"), np.ones(3))
    assert (options.gain_kind, options.ideal_kind, options.threshold, options.ties_average) == (
        GAIN_LINEAR, IDEAL_K, 1.0, False)
    assert kernel_settings.kernel_options(mc.Settings(gain="exponential"), np.ones(3)).gain_kind == GAIN_EXPONENTIAL
    with pytest.raises(mc.MetricsError, match="column relevances holds 1001"):
        kernel_settings.check_relevance(mc.Settings(gain="exponential"), [1001.0], "relevances")
    kernel_settings.check_relevance(mc.Settings(), [1001.0], "relevances")  # the linear gain takes any value


def test_no_other_module_reads_the_gain_by_name():
    """The gain's values are turned into kernel codes and views in one module: nowhere else is ``gain``
    compared with one of its values."""
    pattern = re.compile(r"""gain["'\]]*\s*[!=]=\s*["'](binary|linear|exponential)["']""")
    found = [f"{path.relative_to(PACKAGE)}:{n}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.name != "kernel_settings.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, found
