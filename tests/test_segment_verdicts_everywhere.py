"""One segment, one verdict: ``metrics-core compare``, ``metrics-core check`` and ``metrics-core report``
(the brief the dashboard's Compare and Brief pages show) run on one data set with user attributes,
under each family of tests and correction, give every segment the verdict an independent
computation gives it: scipy's paired t-test per segment, statsmodels' multipletests within the family.

The per-user ndcg@10 values come from mc.evaluate (tested against trec_eval, pytrec_eval and brute
force elsewhere); what is checked here is which segments each command calls worse.
"""

from __future__ import annotations

import csv
import functools
import html
import io
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

import metrics_core as mc
from metrics_core.cli import main

METHODS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}
FAMILY_COLUMNS = {"analysis": (), "attribute": ("attribute",), "attribute_metric": ("attribute",),
                  "segment": ("attribute", "segment")}  # one metric and one challenger here


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """``base`` and ``chal`` over 300 users with graded truth; ``chal`` is better overall but much
    worse for the users of segment ``cold``, and worse for tier ``b`` by a margin that is significant
    in some families of tests and not in others."""
    rng = np.random.default_rng(11)
    n_users, n_items = 300, 50
    users = [f"u{i:03d}" for i in range(n_users)]
    segment = np.array(["cold", "new", "warm", "warm"])[np.arange(n_users) % 4]
    tier = np.where(np.arange(n_users) < 150, "a", "b")
    truth = [(u, f"i{item}", int(rng.integers(0, 3))) for u in users
             for item in rng.choice(n_items, size=6, replace=False)]
    qrels = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    relevant = qrels[qrels["relevance"] > 0].groupby("user_id")["item_id"].apply(set)

    def run(boost):
        rows = []
        for u, seg, t in zip(users, segment, tier):
            q = boost(seg, t)
            rows += [(u, f"i{i}", float(rng.random() + (q if f"i{i}" in relevant.get(u, set()) else 0.0)))
                     for i in range(n_items)]
        return pd.DataFrame(rows, columns=["user_id", "item_id", "score"])

    out = tmp_path_factory.mktemp("segments")
    run(lambda s, t: 0.6).to_csv(out / "base.csv", index=False)
    run(lambda s, t: 0.15 if s == "cold" else (1.0 if t == "a" else 0.64)).to_csv(out / "chal.csv", index=False)
    qrels.to_csv(out / "qrels.csv", index=False)
    pd.DataFrame({"user_id": users, "segment": segment, "tier": tier}).to_csv(out / "users.csv", index=False)
    return out


@functools.lru_cache(maxsize=1)
def _segment_tests(folder) -> pd.DataFrame:
    """Each segment's paired t-test of ``chal`` against ``base`` (scipy), read and computed once per
    folder: its attribute, segment, p-value and mean difference."""
    qrels = pd.read_csv(folder / "qrels.csv", dtype={"user_id": str, "item_id": str})
    per_user = {n: mc.evaluate(pd.read_csv(folder / f"{n}.csv", dtype={"user_id": str, "item_id": str}), qrels,
                               ["ndcg@10"]).per_user["ndcg@10"] for n in ("base", "chal")}
    attributes = pd.read_csv(folder / "users.csv", dtype=str).set_index("user_id")
    rows = []
    for attribute in ("segment", "tier"):
        for value, ids in attributes.groupby(attribute).groups.items():
            a, b = per_user["base"].reindex(ids), per_user["chal"].reindex(ids)
            rows.append({"attribute": attribute, "segment": value, "p": sps.ttest_rel(b, a).pvalue,
                         "diff": float((b - a).mean())})
    return pd.DataFrame(rows)


def expected(folder, family, correction):
    """``{(attribute, segment): "worse" | "better" | "same"}`` from scipy and statsmodels."""
    rows = _segment_tests(folder).copy()
    keys = [tuple(r[c] for c in FAMILY_COLUMNS[family]) for _, r in rows.iterrows()]
    adjusted = np.empty(len(rows))
    for key in set(keys):
        pick = [i for i, k in enumerate(keys) if k == key]
        p = rows["p"].to_numpy()[pick]
        adjusted[pick] = p if correction == "none" else multipletests(p, method=METHODS[correction])[1]
    return {(r.attribute, r.segment): ("same" if adj >= 0.05 else "worse" if r.diff < 0 else "better")
            for r, adj in zip(rows.itertuples(), adjusted)}


def _run(capsys, args):
    code = main(args)
    return code, capsys.readouterr().out


def test_the_data_make_a_segment_verdict_depend_on_the_family(folder):
    assert expected(folder, "analysis", "holm")[("tier", "b")] == "same"
    assert expected(folder, "segment", "bonferroni")[("tier", "b")] == "worse"


@pytest.mark.parametrize("family,correction", [("analysis", "holm"), ("attribute", "bonferroni"),
                                               ("segment", "bonferroni"), ("segment", "bh"), ("analysis", "none")])
def test_compare_check_and_report_give_each_segment_the_same_verdict(folder, capsys, tmp_path, family, correction):
    want = expected(folder, family, correction)
    assert "worse" in want.values() and "worse" != want[("segment", "warm")]  # the data is made so
    inputs = ["--qrels", str(folder / "qrels.csv"), "--user-attributes", str(folder / "users.csv"),
              "--correction", correction, "--family", family, "-q"]

    code, out = _run(capsys, ["compare", "--run", str(folder / "base.csv"), "--run", str(folder / "chal.csv"),
                              "--metrics", "ndcg@10", "--csv", *inputs])
    assert code == 0
    got = {}
    for r in csv.DictReader(io.StringIO(out)):
        significant = r["significant"] == "True"
        got[(r["attribute"], r["segment"])] = ("same" if not significant else
                                              "worse" if float(r["diff"]) < 0 else "better")
    assert got == want

    code, out = _run(capsys, ["check", "--run", str(folder / "chal.csv"), "--baseline", str(folder / "base.csv"),
                              "--json", *inputs, "ndcg@10 not worse than baseline in every segment",
                              "ndcg@10 not worse than baseline in every tier"])
    doc = json.loads(out)
    failed = {tuple(r["segment"].split("=")) for r in doc["conditions"] if not r["passed"]}
    assert failed == {key for key, verdict in want.items() if verdict == "worse"}
    assert code == 1 and doc["settings"]["family"] == family and doc["settings"]["correction"] == correction

    page = tmp_path / "report.html"
    code, _ = _run(capsys, ["report", "--run", str(folder / "base.csv"), "--run", str(folder / "chal.csv"),
                            "--metrics", "ndcg@10", "--title", "T", "-o", str(page), *inputs])
    assert code == 0
    text = page.read_text(encoding="utf-8")
    for (attribute, segment), verdict in want.items():  # the brief lists the segments where chal loses
        assert (html.escape(f"{attribute}: {segment}") in text) == (verdict == "worse"), (attribute, segment)
    named = {"analysis": "every segment of every user attribute (segment, tier) x metric x challenger",
             "attribute": "each user attribute apart (segment, tier): its segments x metric x challenger",
             "segment": "each segment apart: metric x challenger"}[family]
    assert html.escape(named) in text


def test_the_unit_is_the_word_of_every_line_and_header(folder, capsys, tmp_path):
    import re

    inputs = ["--qrels", str(folder / "qrels.csv"), "--user-attributes", str(folder / "users.csv"), "--unit",
              "queries", "-q"]
    _, out = _run(capsys, ["compare", "--run", str(folder / "base.csv"), "--run", str(folder / "chal.csv"),
                           "--metrics", "ndcg@10", *inputs])
    _, lines = _run(capsys, ["check", "--run", str(folder / "chal.csv"), "--baseline", str(folder / "base.csv"),
                             *inputs, "ndcg@10 not worse than baseline in every segment", "ndcg@10 >= 0.1 in every tier"])
    page = tmp_path / "report.html"
    _run(capsys, ["report", "--run", str(folder / "base.csv"), "--run", str(folder / "chal.csv"), "--metrics",
                  "ndcg@10", "--title", "T", "-o", str(page), *inputs])
    brief = page.read_text(encoding="utf-8").split("<section id='brief'>")[1].split("</section>")[0]
    for text in (out, lines, brief):
        assert not re.search(r"\busers?\b", text), text
    assert out.startswith("Queries: 300 queries (every evaluated query;") and "over 75 queries;" in lines
    assert "every segment of every query attribute (segment, tier)" in out


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh", "none"])
def test_adjusting_within_families_is_statsmodels_per_family(correction):
    from metrics_core.analysis.stats import adjust_within

    rng = np.random.default_rng(3)
    p = rng.uniform(0, 0.2, 40)
    p[[3, 17]] = np.nan  # not counted, kept as NaN
    families = [("a", "x"), ("a", "y"), ("b", "x")] * 13 + [("c", "z")]
    got = adjust_within(p, families, correction)
    for key in set(families):
        pick = np.array([f == key for f in families]) & ~np.isnan(p)
        want = p[pick] if correction == "none" else multipletests(p[pick], method=METHODS[correction])[1]
        np.testing.assert_allclose(got[pick], want, rtol=1e-12)
    assert np.isnan(got[[3, 17]]).all()
