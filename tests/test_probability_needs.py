"""Every metric whose registry entry needs probabilities refuses scores outside [0, 1], in ``mc.evaluate``
and on the command line, with one line naming the metric (and on the command line the file and line).

The check is read from the registry's ``needs``, not from a list of names: the metrics below are the
ones that read scores as probabilities, written here independently of the registry, and the registry
must agree with this list.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.metrics import registry
from metrics_core.cli import main

HERE = Path(__file__).resolve().parent
BAD_SCORES = HERE / "data" / "bad" / "logloss_scores.csv"  # scores 0.5, 1.7, -0.2: the first outside on line 3
GOOD_QRELS = HERE / "data" / "formats" / "qrels.csv"

#: metrics that read a score as the probability of a positive label
PROBABILITY_METRICS = ("logloss", "brier", "ece", "pcopc")


def _frames(scores):
    run = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "c"],
                        "score": np.asarray(scores, dtype=float)})
    qrels = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["a", "c"], "relevance": [1, 1]})
    return run, qrels


def test_the_registry_declares_exactly_the_metrics_that_read_probabilities():
    declared = {m.name for m in registry.METRICS if "probabilities" in m.needs}
    assert declared == set(PROBABILITY_METRICS)


@pytest.mark.parametrize("metric", PROBABILITY_METRICS)
def test_evaluate_refuses_scores_outside_0_1(metric):
    run, qrels = _frames([0.9, 3.0, 0.2, 0.7])  # pcopc on these returned sum(score) / sum(label) = 2.4 before
    with pytest.raises(mc.MetricsError, match=rf"^{metric} needs probabilities in \[0, 1\]; 1 score\(s\) fall "
                                              r"outside, e\.g\. 3; apply a sigmoid first or drop " + metric):
        mc.evaluate(run, qrels, metrics=[metric])


@pytest.mark.parametrize("metric", PROBABILITY_METRICS)
def test_evaluate_accepts_probabilities(metric):
    run, qrels = _frames([0.9, 0.1, 0.2, 0.7])
    value = mc.evaluate(run, qrels, metrics=[metric]).summary[metric]
    expected = {  # plain formulas over the four rows, labels 1, 0, 0, 1
        "logloss": -np.mean([np.log(0.9), np.log(0.9), np.log(0.8), np.log(0.7)]),
        "brier": np.mean([0.01, 0.01, 0.04, 0.09]),
        "pcopc": (0.9 + 0.1 + 0.2 + 0.7) / 2,
        # ten equal bins: [0.1, 0.2) holds 0.1 (label 0), [0.2, 0.3) 0.2 (0), [0.7, 0.8) 0.7 (1), [0.9, 1] 0.9 (1)
        "ece": (0.1 + 0.2 + 0.3 + 0.1) / 4,
    }[metric]
    assert value == pytest.approx(expected, rel=1e-12)


def test_an_alias_is_named_as_requested():
    run, qrels = _frames([0.9, 3.0, 0.2, 0.7])
    with pytest.raises(mc.MetricsError, match=r"^copc needs probabilities"):
        mc.evaluate(run, qrels, metrics=["copc"])


def test_a_metric_without_the_need_takes_any_score():
    run, qrels = _frames([0.9, 3.0, 0.2, 0.7])
    assert np.isfinite(mc.evaluate(run, qrels, metrics=["auc", "rmse"]).summary["auc"])


@pytest.mark.parametrize("metrics,named", [("ndcg@3,brier", "brier needs"), ("ece", "ece needs"),
                                           ("pcopc", "pcopc needs"), ("brier,copc", "brier, copc need")])
def test_the_command_line_names_file_line_and_every_metric(capsys, metrics, named):
    code = main(["evaluate", "--qrels", str(GOOD_QRELS), "--run", str(BAD_SCORES), "--metrics", metrics])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"error: {BAD_SCORES}: line 3: {named} probabilities in [0, 1] but column 'score' holds 1.7; "
                          "2 score(s) fall outside [0, 1]. Apply a sigmoid first or drop "), err
    assert err.count("\n") == 1 and "Traceback" not in err
