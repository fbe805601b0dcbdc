"""The decision brief (metrics_core.brief.build) against independent computations.

References: scipy.stats.ttest_rel and wilcoxon for the paired tests, statsmodels' multipletests
for the Holm and Benjamini-Hochberg corrections, plain pandas for the users counted, the lifts,
the segment selection and the failure groups. The per-user metric values come from
mc.evaluate (tested against trec_eval, pytrec_eval and brute force elsewhere); the brief is
checked for what it adds on top of them.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

import metrics_core as mc
from metrics_core.brief import build as mb
from metrics_core.brief import text as bt
from metrics_core.brief.build import Decision, build_brief
from metrics_core.errors import MetricsError
from metrics_core.outputs.report import build_report


def make_data(seed: int = 5, n_users: int = 240, n_items: int = 60):
    """Three runs over graded truth: ``good`` better than ``base`` except for the users of segment
    "cold" (where it is worse), ``gappy`` misses 30 users (most of them "cold")."""
    rng = np.random.default_rng(seed)
    users = [f"u{i:03d}" for i in range(n_users)]
    segment = np.where(np.arange(n_users) % 4 == 0, "cold", np.where(np.arange(n_users) % 4 == 1, "new", "warm"))
    truth = []
    for u in users:
        for item in rng.choice(n_items, size=6, replace=False):
            truth.append((u, f"i{item}", int(rng.integers(0, 3))))
    qrels = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    relevant = qrels[qrels["relevance"] > 0].groupby("user_id")["item_id"].apply(set)

    def run(quality, worse_for_cold, drop=()):
        rows = []
        for u, seg in zip(users, segment):
            if u in drop:
                continue
            q = quality * (0.2 if (seg == "cold" and worse_for_cold) else 1.0)
            for item in range(n_items):
                name = f"i{item}"
                bonus = q if name in relevant.get(u, set()) else 0.0
                rows.append((u, name, float(rng.random() + bonus)))
        return pd.DataFrame(rows, columns=["user_id", "item_id", "score"])

    cold = [u for u, s in zip(users, segment) if s == "cold"]
    dropped = set(cold[:25]) | {users[1], users[2], users[5], users[6], users[9]}
    runs = {"base": run(0.6, False), "good": run(1.2, True), "gappy": run(0.9, False, drop=dropped)}
    attributes = pd.DataFrame({"user_id": users, "segment": segment, "tier": np.where(np.arange(n_users) < 120, "a", "b")})
    return runs, qrels, attributes, dropped


@pytest.fixture(scope="module")
def data():
    runs, qrels, attributes, dropped = make_data()
    evals = {n: mc.evaluate(r, qrels, ["ndcg@10", "recall@10"]) for n, r in runs.items()}
    return runs, qrels, attributes, dropped, evals


def _counted(evals, runs, users):
    """Per-user tables over the users counted, from the run frames directly."""
    tables = {n: e.per_user for n, e in evals.items()}
    if users == "served":
        served = set.intersection(*(set(r["user_id"]) for r in runs.values()))
        tables = {n: t[t.index.isin(served)] for n, t in tables.items()}
    return tables


@pytest.mark.parametrize("users", ["all", "served"])
@pytest.mark.parametrize("test, correction", [("t", "holm"), ("wilcoxon", "bh")])
def test_verdicts_equal_scipy_and_statsmodels(data, users, test, correction):
    runs, _, attributes, dropped, evals = data
    decision = Decision("base", ("good", "gappy"), ("ndcg@10", "recall@10"), users=users, test=test,
                        correction=correction)
    brief = build_brief(evals, decision, attributes=attributes, n_resamples=0)
    tables = _counted(evals, runs, users)
    expected_n = 240 if users == "all" else 240 - len(dropped)
    assert brief.n_users == expected_n
    pvalues, lifts = [], []
    for metric in decision.metrics:
        for challenger in decision.challengers:
            a, b = tables["base"][metric], tables[challenger][metric].reindex(tables["base"].index)
            if test == "t":
                pvalues.append(sps.ttest_rel(b, a).pvalue)
            else:
                # the differences rounded to 12 decimals: equal exact differences tie despite float noise
                pvalues.append(sps.wilcoxon(np.round((b - a).to_numpy(), 12), zero_method="wilcox").pvalue)
            lifts.append(b.mean() / a.mean() - 1)
    adjusted = multipletests(pvalues, method={"holm": "holm", "bh": "fdr_bh"}[correction])[1]
    got = brief.verdicts
    assert list(got["n"]) == [expected_n] * 4
    np.testing.assert_allclose(got["lift"], lifts, rtol=1e-12)
    np.testing.assert_allclose(got["p_adjusted"], adjusted, rtol=1e-9, atol=1e-300)
    lines = bt.verdict_lines(brief)
    for line, lift in zip(lines, lifts):
        assert f"{100 * lift:+.1f}%" in line
    gappy = [line for line in lines if line.startswith("gappy")]
    if users == "all":  # coverage is part of every verdict of a model that did not serve everyone
        assert all(f"served {240 - len(dropped)} of 240 users" in line for line in gappy)
    assert brief.coverage and "gappy did not serve 30 of the 240 evaluated users" in brief.coverage[0]
    assert "segment: cold 25" in brief.coverage[0]


def test_segments_corrected_over_every_segment_test(data):
    runs, _, attributes, _, evals = data
    decision = Decision("base", ("good",), ("ndcg@10",), users="all", correction="holm")
    brief = build_brief(evals, decision, attributes=attributes, n_resamples=0)
    table = evals["base"].per_user
    labels = attributes.set_index("user_id")
    rows = []
    for attribute in ("segment", "tier"):
        for value, ids in labels.groupby(attribute).groups.items():
            a = table.loc[table.index.isin(ids), "ndcg@10"]
            b = evals["good"].per_user["ndcg@10"].reindex(a.index)
            rows.append((attribute, value, sps.ttest_rel(b, a).pvalue, b.mean() / a.mean() - 1))
    adjusted = multipletests([r[2] for r in rows], method="holm")[1]
    assert brief.n_segment_tests == len(rows) == 5
    expected_losses = {(attr, val) for (attr, val, _, lift), p in zip(rows, adjusted) if p < 0.05 and lift < 0}
    assert expected_losses == {("segment", "cold")}  # the data is made so
    got = {(r["attribute"], r["segment"]) for _, r in brief.segment_losses.iterrows()}
    assert got == expected_losses
    by_key = {(r["attribute"], r["segment"]): r["p_adjusted"] for _, r in brief.segments.iterrows()}
    for (attr, val, _, _), p in zip(rows, adjusted):
        assert by_key[(attr, val)] == pytest.approx(p, rel=1e-9)
    note = bt.segment_note(brief)
    assert ("adjusted over 5 tests: every segment of every user attribute (segment, tier) x metric x challenger, "
            "Holm correction") in note


def test_failure_groups_partition_the_loss(data):
    runs, _, attributes, dropped, evals = data
    decision = Decision("base", ("gappy",), ("recall@10",), users="all")
    brief = build_brief(evals, decision, attributes=attributes, n_resamples=0)
    a = evals["base"].per_user["recall@10"]
    b = evals["gappy"].per_user["recall@10"].reindex(a.index)
    loss = (a - b).clip(lower=0)
    losing = loss[loss > 0]
    group = pd.Series(mb.RANKED_LOWER, index=losing.index)
    group[b.reindex(losing.index) == 0] = mb.SCORES_ZERO
    group[losing.index.isin(dropped)] = "not served"
    expected = losing.groupby(group).sum() / losing.sum()
    got = brief.failures.set_index("group")["share"]
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False, rtol=1e-12)
    assert brief.failures["share"].sum() == pytest.approx(1.0)
    counts = losing.groupby(group).size()
    assert dict(brief.failures.set_index("group")["users"]) == counts.to_dict()


def test_the_report_opens_on_the_same_brief(data):
    runs, _, attributes, _, evals = data
    decision = Decision("good", ("base", "gappy"), ("ndcg@10",), users="served")
    brief = build_brief(evals, decision, attributes=attributes, title="Ship <good>?", notes="a & b")
    page = build_report(evals, brief=brief)
    assert "<title>Ship &lt;good&gt;?</title>" in page and "<p id='notes' class='notes'>a &amp; b</p>" in page
    start = page.index("<section id='brief'>")
    assert start < page.index("<h2>Summary</h2>")
    section = page[start:page.index("</section>")]
    for line in bt.verdict_lines(brief):
        assert html.escape(line, quote=True) in section
    for value in bt.failure_rows(brief)["share of loss"]:
        assert value in section
    # the rest of the report is over the same users and baseline
    assert "only those every model served" in page[page.index("<h2>Users</h2>"):]
    comparison = page[page.index("<table id='comparison'>"):]
    assert "<td class='l'>good</td><td class='l'>base</td>" in comparison


def test_bad_decisions_are_one_line_errors(data):
    evals = data[4]
    with pytest.raises(MetricsError, match="baseline 'nope' is not one of the models"):
        build_brief(evals, Decision("nope", ("good",), ("ndcg@10",)))
    with pytest.raises(MetricsError, match="at least one challenger"):
        build_brief(evals, Decision("base", ("base",), ("ndcg@10",)))
    with pytest.raises(MetricsError, match="no per-user values of 'auc'"):
        build_brief(evals, Decision("base", ("good",), ("auc",)))
    with pytest.raises(MetricsError, match="users must be one of"):
        build_brief(evals, Decision("base", ("good",), ("ndcg@10",), users="some"))


def test_cli_report_and_library_tell_the_same_brief(data, tmp_path):
    from metrics_core.cli import main

    runs, qrels, attributes, _, _ = data
    for name, frame in runs.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    attributes.to_csv(tmp_path / "users.csv", index=False)
    out = tmp_path / "r.html"
    code = main(["report", "--qrels", str(tmp_path / "qrels.csv"), *sum((["--run", str(tmp_path / f"{n}.csv")]
                                                                         for n in runs), []),
                 "--metrics", "ndcg@10,recall@10", "--baseline", "base", "--primary", "recall@10",
                 "--user-attributes", str(tmp_path / "users.csv"), "--title", "T", "-o", str(out), "-q"])
    assert code == 0
    page = out.read_text(encoding="utf-8")
    evals = {n: mc.evaluate(r, qrels, ["ndcg@10", "recall@10"]) for n, r in runs.items()}
    brief = build_brief(evals, Decision("base", ("good", "gappy"), ("recall@10",)), attributes=attributes)
    for line in bt.verdict_lines(brief):
        assert html.escape(line, quote=True) in page
