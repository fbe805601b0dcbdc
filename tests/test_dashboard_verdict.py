"""The Compare page's segment rows and all-pairs matrix (dashboard.verdict) against
p-values corrected by statsmodels, scipy's paired t-test and matrices written out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst
from statsmodels.stats.multitest import multipletests

from dashboard import verdict
from metrics_core.analysis.compare import compare

ALPHA = 0.05


def _p_text(p: float) -> str:
    """The page's p-value text: 4 decimals, ``< 0.0001`` below that."""
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def _rows(metric: str, rows) -> pd.DataFrame:
    """A compare table (the columns segment_rows and pair_matrix read) from
    ``(baseline, model, n, lift, diff, p_value, significant)`` tuples."""
    table = pd.DataFrame(rows, columns=["baseline", "model", "n", "lift", "diff", "p_value", "significant"])
    return table.assign(metric=metric, lift_ci_low=table["lift"] - 0.01, lift_ci_high=table["lift"] + 0.01)


# --- segment_rows: p-values of every segment x comparison corrected as one family -------------------------

# raw p-values chosen so that Holm and Benjamini-Hochberg over all six rows move several
# of them across alpha, and a correction within each segment (3 rows) would give other values
SEGMENT_P = {"new": [0.004, 0.012, 0.3], "loyal": [0.009, 0.02, 0.04]}


def _segment_tables() -> dict[str, pd.DataFrame]:
    return {seg: _rows("ndcg@10", [("base", m, 40, 0.1, 0.05, p, p < ALPHA)
                                   for m, p in zip(("a", "b", "c"), ps)])
            for seg, ps in SEGMENT_P.items()}


@pytest.mark.parametrize("correction, method", [("holm", "holm"), ("bh", "fdr_bh")])
def test_segment_rows_correct_every_segment_together_as_statsmodels(correction, method):
    raw = [p for ps in SEGMENT_P.values() for p in ps]
    reject, adjusted, _, _ = multipletests(raw, alpha=ALPHA, method=method)
    rows = verdict.segment_rows(_segment_tables(), correction, ALPHA)
    assert rows["segment"].tolist() == ["new"] * 3 + ["loyal"] * 3
    assert rows["challenger"].tolist() == ["a", "b", "c"] * 2
    assert rows["adjusted p"].tolist() == [_p_text(p) for p in adjusted]
    # all differences are positive on a higher-is-better metric: significant rows are better
    assert rows["verdict"].tolist() == [verdict.BETTER if r else verdict.SAME for r in reject]
    assert not reject.all() and reject.any()  # the correction decides some verdicts


def test_segment_rows_without_correction_keep_the_raw_p_values():
    raw = [p for ps in SEGMENT_P.values() for p in ps]
    rows = verdict.segment_rows(_segment_tables(), "none", ALPHA)
    assert rows["adjusted p"].tolist() == [_p_text(p) for p in raw]
    assert rows["verdict"].tolist() == [verdict.BETTER if p < ALPHA else verdict.SAME for p in raw]


def test_segment_rows_of_real_comparisons_match_scipy_then_statsmodels():
    """Per-segment compare tables computed without a correction, as the page does; the rows'
    adjusted p-values are scipy's paired t-tests of each segment, Holm-corrected over all rows."""
    rng = np.random.default_rng(11)
    users = pd.Index([f"u{i}" for i in range(90)], name="user_id")
    segment = pd.Series(np.where(np.arange(90) % 3 == 0, "new", "loyal"), index=users)
    base = rng.random(90)
    per_user = {"base": pd.DataFrame({"ndcg@10": base, "recall@10": rng.random(90)}, index=users),
                "a": pd.DataFrame({"ndcg@10": base + 0.08 * rng.random(90), "recall@10": rng.random(90)},
                                  index=users),
                "b": pd.DataFrame({"ndcg@10": base + 0.02 * rng.standard_normal(90),
                                   "recall@10": rng.random(90)}, index=users)}
    metrics = ["ndcg@10", "recall@10"]
    tables, raw = {}, []
    for seg in ("loyal", "new"):
        ids = segment.index[segment == seg]
        part = {name: table.loc[ids] for name, table in per_user.items()}
        tables[seg] = compare(part, baseline="base", metrics=metrics, test="t", correction="none", n_resamples=0)
        for m in metrics:
            for model in ("a", "b"):
                raw.append(sst.ttest_rel(part[model][m], part["base"][m]).pvalue)
    _, adjusted, _, _ = multipletests(raw, alpha=ALPHA, method="holm")
    rows = verdict.segment_rows(tables, "holm", ALPHA)
    assert list(zip(rows["segment"], rows["metric"], rows["challenger"])) == [
        (seg, m, model) for seg in ("loyal", "new") for m in metrics for model in ("a", "b")]
    assert rows["adjusted p"].tolist() == [_p_text(p) for p in adjusted]
    assert rows["users paired"].tolist() == ["60", "60", "60", "60", "30", "30", "30", "30"]


def test_segment_rows_without_any_comparison_are_an_empty_table():
    empty = _rows("ndcg@10", []).iloc[0:0]
    rows = verdict.segment_rows({"new": empty}, "holm", ALPHA)
    assert rows.empty and list(rows.columns) == ["segment", "metric", "challenger", "users paired",
                                                 "lift [95% CI]", "adjusted p", "verdict"]


# --- pair_matrix: rows are challengers, columns baselines -----------------------------------------------

def test_pair_matrix_puts_each_lift_at_challenger_row_and_baseline_column():
    # lifts differ in every direction, so a transposed matrix would not match
    by_base = {
        "pop": _rows("ndcg@10", [("pop", "mf", 50, 0.25, 0.02, 0.001, True),
                                 ("pop", "tt", 50, 0.40, 0.03, 0.001, True)]),
        "mf": _rows("ndcg@10", [("mf", "pop", 50, -0.20, -0.02, 0.001, True),
                                ("mf", "tt", 50, 0.012, 0.001, 0.4, False)]),
        "tt": _rows("ndcg@10", [("tt", "pop", 50, -0.286, -0.03, 0.001, True),
                                ("tt", "mf", 50, -0.0119, -0.001, 0.4, False)]),
    }
    # rows of another metric in the same tables are left out
    by_base = {b: pd.concat([t, _rows("recall@10", [(b, m, 50, 9.0, 1.0, 0.0, True) for m in t["model"]])])
               for b, t in by_base.items()}
    want = pd.DataFrame([["", "-20.0% ▼", "-28.6% ▼"],
                         ["+25.0% ▲", "", "-1.2% –"],
                         ["+40.0% ▲", "+1.2% –", ""]],
                        index=["pop", "mf", "tt"], columns=["pop", "mf", "tt"]).rename_axis("challenger \\ baseline")
    pd.testing.assert_frame_equal(verdict.pair_matrix(by_base, "ndcg@10"), want)


def test_pair_matrix_of_real_comparisons_holds_the_ratio_of_means():
    """Each cell's lift is the row model's mean over the column model's mean, minus 1."""
    rng = np.random.default_rng(5)
    users = pd.Index([f"u{i}" for i in range(40)], name="user_id")
    per_user = {name: pd.DataFrame({"ndcg@10": rng.random(40) * scale}, index=users)
                for name, scale in (("pop", 0.5), ("mf", 0.8), ("tt", 1.0))}
    by_base = {b: compare(per_user, baseline=b, metrics=["ndcg@10"], n_resamples=0) for b in per_user}
    matrix = verdict.pair_matrix(by_base, "ndcg@10")
    means = {name: t["ndcg@10"].mean() for name, t in per_user.items()}
    for row in per_user:
        for col in per_user:
            cell = matrix.loc[row, col]
            if row == col:
                assert cell == ""
            else:
                assert cell.split(" ")[0] == f"{100 * (means[row] / means[col] - 1):+.1f}%"
