"""Paired comparisons for the Compare page, cached one metric at a time.

``metrics_core.compare.compare`` adjusts p-values over every row of its table, so a
table cached whole would be recomputed when a metric is added or the correction
changes. Here each metric's rows are computed without a correction and cached by the
models' content keys, the metric, the baseline, the test and everything else that
shapes them; :func:`comparison` then adjusts the p-values of all rows together, exactly
as ``compare`` does (same columns, same order, same values).
"""

from __future__ import annotations

import pandas as pd

from metrics_core import stats
from metrics_core.compare import compare

from . import cache

N_PERMUTATIONS = 10_000
N_RESAMPLES = 1_000


def _metric_rows(keys: tuple, per_user: dict, metric: str, baseline: str | None, test: str, alpha: float,
                 bootstrap: bool, opt_key: tuple) -> pd.DataFrame:
    resamples = N_RESAMPLES if bootstrap else 0
    key = f"compare|{keys!r}|{metric!r}|{baseline}|{test}|{alpha!r}|{resamples}|{opt_key!r}"
    return cache.SHARED.get_or_compute(key, lambda: compare(
        per_user, baseline=baseline, metrics=[metric], test=test, correction="none", alpha=alpha,
        n_resamples=resamples, n_permutations=N_PERMUTATIONS, seed=0))


def comparison(keys: tuple, per_user: dict, metrics: tuple, baseline: str | None, test: str,
               correction: str, alpha: float, opt_key: tuple, bootstrap: bool = True) -> pd.DataFrame:
    """``compare(per_user, baseline, metrics, test, correction, alpha)`` with the chosen test
    only, each metric's rows cached (``keys``: the models' content keys, in the order of
    ``per_user``; ``opt_key``: every other setting that shapes the per-user values).
    Without ``bootstrap`` the CI of the difference is not computed (NaN)."""
    parts = [_metric_rows(keys, per_user, m, baseline, test, alpha, bootstrap, opt_key) for m in metrics]
    table = pd.concat(parts, ignore_index=True)
    for column in (f"p_{test}", "p_value"):
        adjusted = stats.adjust_pvalues(table[column].to_numpy(), correction)
        table[f"{column}_adjusted" if column != "p_value" else "p_adjusted"] = adjusted
    table["significant"] = (table["p_adjusted"] < alpha).fillna(False).astype(bool)
    table.attrs.update({**parts[0].attrs, "correction": correction})
    return table
