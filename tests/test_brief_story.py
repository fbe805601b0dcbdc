"""What a product manager asks of the brief: why N rows became M (each step with its convention and
count, counted here with plain pandas), the winner against the runner-up directly (scipy's paired
t-test on the two models), and one unit (users, queries or sessions) named in every sentence and table."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import metrics_core as mc
from metrics_core.brief import text as bt
from metrics_core.brief.build import Decision, build_brief
from metrics_core.brief.html import brief_html
from metrics_core.brief.record import from_record, to_record
from metrics_core.errors import MetricsError


def make_data(seed: int = 2):
    """Ground truth of 120 queries, 9 of them with only non-relevant judgments; ``base`` ranks at
    random, ``dense`` and ``hybrid`` put relevant items higher (hybrid a little more); ``dense``
    misses 7 queries and ``hybrid`` lists 4 queries that have no judgment at all."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i:03d}" for i in range(120)]
    truth = [(q, f"d{d}", int(rng.integers(1, 3)) if i >= 9 else 0)
             for i, q in enumerate(queries) for d in rng.choice(40, 5, replace=False)]
    qrels = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    relevant = qrels[qrels["relevance"] > 0].groupby("user_id")["item_id"].apply(set)

    def run(boost, skip=(), extra=()):
        rows = [(q, f"d{d}", float(rng.random() + (boost if f"d{d}" in relevant.get(q, set()) else 0)))
                for q in queries if q not in skip for d in range(40)]
        rows += [(q, f"d{d}", float(rng.random())) for q in extra for d in range(10)]
        return pd.DataFrame(rows, columns=["user_id", "item_id", "score"])

    runs = {"base": run(0.0), "dense": run(0.5, skip=queries[20:27]),
            "hybrid": run(0.7, extra=["x1", "x2", "x3", "x4"])}
    return runs, qrels


@pytest.fixture(scope="module")
def evals():
    runs, qrels = make_data()
    return runs, qrels, {n: mc.evaluate(r, qrels, ["ndcg@10"]) for n, r in runs.items()}


def test_the_winner_is_compared_with_the_runner_up_directly(evals):
    _, _, ev = evals
    brief = build_brief(ev, Decision("base", ("dense", "hybrid"), ("ndcg@10",)), n_resamples=0)
    means = {n: e.per_user["ndcg@10"].mean() for n, e in ev.items()}
    winner, runner = sorted(means, key=means.get, reverse=True)[:2]
    assert {winner, runner} == {"dense", "hybrid"}  # the data is made so: both challengers beat the baseline
    row = brief.head_to_head.iloc[0]
    assert (row["model"], row["baseline"], row["metric"]) == (winner, runner, "ndcg@10")
    a, b = ev[runner].per_user["ndcg@10"], ev[winner].per_user["ndcg@10"].reindex(ev[runner].per_user.index)
    assert row["p_value"] == pytest.approx(sps.ttest_rel(b, a).pvalue, rel=1e-9)
    assert row["lift"] == pytest.approx(b.mean() / a.mean() - 1, rel=1e-12) and row["n"] == len(a)
    line = bt.head_to_head_lines(brief)[0]
    assert line.startswith(f"Best two on ndcg@10, compared directly over {len(a)} users: ") and winner in line
    # the runner-up being the baseline: the verdicts already compare them, no extra row
    alone = build_brief(ev, Decision("base", ("hybrid",), ("ndcg@10",)), n_resamples=0)
    assert alone.head_to_head.empty and bt.head_to_head_lines(alone) == []


def test_why_the_rows_counted_are_fewer_names_each_convention_with_its_count(evals):
    runs, qrels, ev = evals
    brief = build_brief(ev, Decision("base", ("dense", "hybrid"), ("ndcg@10",), unit="queries"), n_resamples=0)
    truth = qrels["user_id"].nunique()
    without = int((qrels.groupby("user_id")["relevance"].max() < 1).sum())
    run_only = sorted(set(runs["hybrid"]["user_id"]) - set(qrels["user_id"]))
    evaluated = truth - without
    missing = len(set(qrels.loc[qrels["relevance"] > 0, "user_id"]) - set(runs["dense"]["user_id"]))
    assert (without, len(run_only), missing) == (9, 4, 7)
    assert brief.accounting == [
        f"The ground truth holds {truth} queries.",
        f"{without} queries have no relevant judgment (relevance >= 1): left out (empty_users=exclude; "
        "empty_users=zero would count them with a score of 0).",
        f"hybrid's run lists {len(run_only)} queries without any judgment: left out (run_only_users=exclude; zero "
        "would count them with a score of 0).",
        f"Evaluated queries a run has no list for score 0 for it (dense {missing}; missing_users=zero; exclude would "
        "leave them out).",
        f"{evaluated} queries evaluated."]
    assert brief.n_users == evaluated
    served = build_brief(ev, Decision("base", ("dense",), ("ndcg@10",), users="served", unit="queries"),
                         n_resamples=0)
    assert served.accounting[-1] == (f"Only the {evaluated - missing} queries every model served are counted (users=served; "
                                     f"users=all would count all {evaluated}).")
    zero = {n: mc.evaluate(r, qrels, ["ndcg@10"], empty_users="zero") for n, r in runs.items()}
    flipped = build_brief(zero, Decision("base", ("dense",), ("ndcg@10",)), n_resamples=0)
    assert flipped.accounting[1].endswith("counted with a score of 0 (empty_users=zero; empty_users=exclude would "
                                          "leave them out).")
    assert flipped.accounting[-1] == f"{truth} users evaluated."


@pytest.mark.parametrize("unit,one", [("queries", "query"), ("sessions", "session")])
def test_one_unit_in_every_sentence_table_and_kept_brief(evals, unit, one):
    runs, qrels, ev = evals
    attributes = pd.DataFrame({"user_id": sorted(qrels["user_id"].unique())}).assign(
        length=lambda t: np.where(t.index % 3 == 0, "long", "short"))
    brief = build_brief(ev, Decision("base", ("dense", "hybrid"), ("ndcg@10",), unit=unit), attributes=attributes,
                        n_resamples=0)
    texts = [brief.population, *brief.coverage, *bt.verdict_lines(brief), *bt.head_to_head_lines(brief),
             bt.segment_note(brief), bt.failure_note(brief), *brief.accounting,
             *brief.verdicts["sentence"], *brief.head_to_head["sentence"]]
    for text in texts:
        assert not re.search(r"\busers?\b", text.replace("users=", "").replace("_users", "")), text
    assert any(unit in t for t in texts) and f"{one} attribute" in bt.segment_note(brief)
    for table in (bt.verdict_rows(brief), bt.failure_rows(brief), bt.segment_loss_rows(brief)):
        assert "users" not in table.columns and unit in table.columns
    page = brief_html(brief, {})
    assert not re.search(r"\busers?\b", re.sub(r"\w*_users|users=", "", page))
    kept = from_record(to_record(brief))
    assert kept.decision == brief.decision and kept.accounting == brief.accounting
    pd.testing.assert_frame_equal(kept.head_to_head, brief.head_to_head)
    with pytest.raises(MetricsError, match="unknown unit 'rows'; use one of: users, queries, sessions"):
        build_brief(ev, Decision("base", ("dense",), ("ndcg@10",), unit="rows"))
