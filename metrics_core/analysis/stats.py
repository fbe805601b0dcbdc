"""Statistics over users: bootstrap confidence intervals and paired model comparison.

Conventions (shared by every function here):

* The unit of analysis is the **user**. A per-user metric is one number per user
  (e.g. NDCG@10 of that user's list); a model's score is the mean over users.
* A **paired** comparison of a baseline ``a`` and a challenger ``b`` uses only users
  evaluated for both models (present in both per-user tables with a finite value);
  ``n`` reports how many. The per-user difference is ``d_u = b_u - a_u`` so a positive
  mean difference means the challenger scores higher.
* Everything random is seeded (``seed``, default 0) and reproducible.

Formulas:

* Bootstrap CI of a mean (percentile method): resample the ``n`` values with
  replacement ``n_resamples`` times, take the mean of each resample; the interval is the
  ``(1-confidence)/2`` and ``(1+confidence)/2`` quantiles of those means.
* Paired t-test: ``t = mean(d) / (sd(d) / sqrt(n))`` with ``sd`` using ``n-1``;
  two-sided p-value from Student's t with ``n-1`` degrees of freedom (``scipy.stats.ttest_rel``).
* Wilcoxon signed-rank: ``scipy.stats.wilcoxon(d, zero_method="wilcox")`` (zero
  differences are dropped, the usual convention; two-sided; scipy's exact distribution up to
  50 non-zero differences without ties, else its normal approximation with the tie
  correction). Before ranking, differences equal up to floating-point noise are made equal
  (:func:`snap_differences`: within ``1e-9`` times the largest ``|d|``), so ``0.3 - 0.1`` and
  ``0.5 - 0.3`` tie as their exact values do; the p-value is then scipy's on the exact
  differences.
* Fisher randomization (sign-flip permutation) test: under H0 each ``d_u`` is equally
  likely to be ``+d_u`` or ``-d_u``. ``T = |mean(d)|``; two-sided p-value is the share of
  the ``2^n`` sign assignments with ``|mean(s * d)| >= T``. Computed exactly when
  ``2^n <= n_resamples``, otherwise by Monte Carlo with ``p = (count + 1) / (B + 1)``.
* Cohen's d for paired samples (d_z): ``mean(d) / sd(d)`` (``sd`` with ``n-1``).
* Win/tie/loss: a user is a *win* for the challenger when ``d_u > tol``, a *loss* when
  ``d_u < -tol``, a *tie* otherwise (for metrics where lower is better the signs swap).
* Holm-Bonferroni: sort the ``m`` p-values ascending, ``p_(i) * (m - i + 1)``, made
  monotone non-decreasing by a running maximum, capped at 1.
* Bonferroni: ``min(1, m * p)``.
* Benjamini-Hochberg: ``p_(i) * m / i``, made monotone by a running minimum from the
  largest p-value down, capped at 1 (``scipy.stats.false_discovery_control``).
* Tukey's HSD over ``g`` models at once (``scipy.stats.tukey_hsd``, as ranx): the models' per-user
  values are ``g`` groups; ``MSE`` is the pooled within-group variance with ``N - g`` degrees of
  freedom; a pair's statistic is ``q = |mean_i - mean_j| / sqrt(MSE / 2 * (1/n_i + 1/n_j))`` and its
  p-value the studentized range's tail ``P(Q_{g, N-g} >= q)``, already adjusted for all ``g(g-1)/2``
  pairs (it treats the groups as independent, as ranx and statsmodels' ``pairwise_tukeyhsd`` do).
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from metrics_core.errors import MetricsError
from metrics_core.metrics.registry import lower_is_better_names

__all__ = [
    "TESTS",
    "CORRECTIONS",
    "LOWER_IS_BETTER",
    "bootstrap_ci",
    "bootstrap_means",
    "paired_t_test",
    "wilcoxon_test",
    "randomization_test",
    "cohens_d_paired",
    "win_tie_loss",
    "holm",
    "bonferroni",
    "benjamini_hochberg",
    "adjust_pvalues",
    "adjust_within",
    "align_pairs",
    "tukey_hsd",
    "PairedGroups",
    "PairedComparison",
    "paired_comparison",
    "mean_ci_table",
]

TESTS = ("t", "wilcoxon", "randomization")
#: tests over every model of a comparison at once (one p-value per pair, adjusted for the pairs)
JOINT_TESTS = ("tukey",)
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
#: names and aliases of the metrics for which a smaller value is better (win/tie/loss flips for them),
#: read from the metric table; ``registry.higher_is_better(label)`` answers for a full label
LOWER_IS_BETTER = lower_is_better_names()

# Memory budget for one batch of resampled indices / signs (number of matrix cells).
_BATCH_CELLS = 4_000_000


def _scipy_stats():
    """scipy.stats, imported on first use (it adds about 2 s to every command-line start)."""
    from scipy import stats

    return stats


def _as_float_array(values) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    return arr[np.isfinite(arr)]


def bootstrap_means(values, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples (with replacement) of ``values``.

    Non-finite values are dropped first. When the values take few distinct values (per-user
    metrics are often 0/1 or heavily tied) the resample counts of each distinct value are
    drawn from the equivalent multinomial distribution, which is the same bootstrap
    distribution at a fraction of the cost; otherwise indices are drawn in batches.
    """
    x = _as_float_array(values)
    n = x.size
    if n == 0:
        return np.full(int(n_resamples), np.nan)
    rng = np.random.default_rng(seed)
    uniq, counts = np.unique(x, return_counts=True)
    if uniq.size * 8 <= n:
        draws = rng.multinomial(n, counts / n, size=int(n_resamples))
        return draws @ uniq / n
    batch = max(1, _BATCH_CELLS // n)
    out = np.empty(int(n_resamples))
    for start in range(0, int(n_resamples), batch):
        stop = min(int(n_resamples), start + batch)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = x[idx].mean(axis=1)
    return out


def bootstrap_ci(values, n_resamples: int = 1000, confidence: float = 0.95,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval ``(low, high)`` for the mean of ``values``.

    ``low``/``high`` are the ``(1-confidence)/2`` and ``(1+confidence)/2`` quantiles of the
    bootstrap means (see :func:`bootstrap_means`). Non-finite values are ignored.
    Returns ``(nan, nan)`` for no values and ``(v, v)`` for a single value or constant values.
    """
    if not 0 < confidence < 1:
        raise MetricsError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
    if int(n_resamples) < 1:
        raise MetricsError(f"n_resamples must be a positive integer, got {n_resamples}")
    x = _as_float_array(values)
    if x.size == 0:
        return (math.nan, math.nan)
    if x.size == 1 or np.all(x == x[0]):
        v = float(x.mean())
        return (v, v)
    means = bootstrap_means(x, n_resamples=n_resamples, seed=seed)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(low), float(high))


def bootstrap_ci_columns(matrix, n_resamples: int = 1000, confidence: float = 0.95,
                         seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals for the mean of every column of ``matrix`` (rows = users).

    One set of ``n_resamples`` resamples of the rows serves every column: the resample
    counts ``W`` (``n_resamples x n``, each row a multinomial draw of ``n``) give all
    bootstrap means at once as ``W @ matrix / n``. Each column's interval is the same
    percentile bootstrap as :func:`bootstrap_ci` (its own resampling distribution); the
    columns share their resamples, as a paired bootstrap over users does. Rows with a
    non-finite value in any column are dropped. Returns ``(lows, highs)``.
    """
    if not 0 < confidence < 1:
        raise MetricsError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
    if int(n_resamples) < 1:
        raise MetricsError(f"n_resamples must be a positive integer, got {n_resamples}")
    x = np.asarray(matrix, dtype=float)
    if x.ndim != 2:
        raise MetricsError(f"matrix must have two dimensions (users x metrics), got {x.ndim}")
    x = x[np.isfinite(x).all(axis=1)]
    n, m = x.shape
    if n == 0:
        return np.full(m, np.nan), np.full(m, np.nan)
    rng = np.random.default_rng(seed)
    b = int(n_resamples)
    means = np.empty((b, m))
    batch = max(1, _BATCH_CELLS // n)
    for start in range(0, b, batch):
        stop = min(b, start + batch)
        idx = rng.integers(0, n, size=(stop - start, n)) + (np.arange(stop - start) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=(stop - start) * n).reshape(stop - start, n)
        means[start:stop] = counts @ x / n
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha], axis=0)
    constant = np.all(x == x[0], axis=0)
    low[constant] = high[constant] = x[0, constant]
    return low, high


def bootstrap_ci_many(vectors: Sequence, n_resamples: int = 1000, confidence: float = 0.95,
                      seed: int = 0) -> list[tuple[float, float]]:
    """Percentile bootstrap interval ``(low, high)`` of the mean of each vector in ``vectors``.

    Non-finite values are dropped from each vector first. Vectors left with the same
    number of values ``n`` are bootstrapped together by :func:`bootstrap_ci_columns`: the
    resample counts it draws depend only on ``n``, ``n_resamples`` and ``seed``, so each
    vector still gets its own percentile bootstrap interval, whatever else is in the
    batch, and one pass over the counts serves them all. ``(nan, nan)`` for no values,
    ``(v, v)`` for constant values.
    """
    clean = [_as_float_array(v) for v in vectors]
    out: list[tuple[float, float]] = [(math.nan, math.nan)] * len(clean)
    by_size: dict[int, list[int]] = {}
    for i, x in enumerate(clean):
        if x.size:
            by_size.setdefault(int(x.size), []).append(i)
    for members in by_size.values():
        lows, highs = bootstrap_ci_columns(np.column_stack([clean[i] for i in members]),
                                           n_resamples=n_resamples, confidence=confidence, seed=seed)
        for i, low, high in zip(members, lows, highs):
            out[i] = (float(low), float(high))
    return out


def t_interval_columns(matrix, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The t interval of the mean of every column of ``matrix`` (rows = users),
    ``mean ± t_{(1+confidence)/2, n-1} sd / sqrt(n)`` with ``sd`` on ``n - 1``; rows with a
    non-finite value in any column are dropped (as :func:`bootstrap_ci_columns` does). NaN with
    fewer than 2 rows. Returns ``(lows, highs)``."""
    x = np.asarray(matrix, dtype=float)
    x = x[np.isfinite(x).all(axis=1)]
    n = x.shape[0]
    if n < 2:
        return np.full(x.shape[1], np.nan), np.full(x.shape[1], np.nan)
    half = _scipy_stats().t.ppf((1 + confidence) / 2, n - 1) * x.std(axis=0, ddof=1) / math.sqrt(n)
    mean = x.mean(axis=0)
    return mean - half, mean + half


def _diffs(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise MetricsError(f"paired samples must have the same length ({a.size} vs {b.size})")
    return b - a


#: a paired difference within this distance of zero is a tie (:meth:`PairedGroups.win_tie_loss`)
TIE_TOLERANCE = 1e-9
#: the power at which the minimum detectable effect is computed (:meth:`PairedGroups.mde`)
POWER = 0.8


class PairedGroups:
    """Paired values split into groups of users, every statistic computed for all groups at once.

    One group is a whole comparison (:meth:`one`); several are its segments (:meth:`by_codes`):
    Compare, the segments, the brief and the gate read their paired statistics from here, so each
    formula is written once, vectorised over the groups (one ``numpy.add.reduceat`` per sum).

    ``a`` (baseline) and ``b`` (challenger) are ordered by group: group ``g`` holds the ``n[g]``
    pairs from position ``starts[g]``. With ``d = b - a`` over a group's ``n`` pairs (two-pass
    formulas: every spread is a sum of centred products):

    * ``diff = mean(d)``, ``sd = sqrt(sum((d - mean(d))^2) / (n - 1))``;
    * paired t-test: ``t = mean(d) / (sd / sqrt(n))``, ``p = 2 P(T_{n-1} <= -|t|)`` (what
      ``scipy.stats.ttest_rel(b, a)`` gives); every difference zero: ``(0, 1)``; a constant non-zero
      difference: ``(+-inf, 0)``; fewer than 2 pairs: NaN;
    * Cohen's ``d_z = mean(d) / sd``: 0 when every difference is zero, NaN under 2 pairs or when
      ``sd`` is 0;
    * wins, ties, losses: ``s d > tol``, ``|d| <= tol``, ``s d < -tol`` with ``s = +1`` when higher
      is better, else ``-1``;
    * lift ``r - 1`` with ``r = mean(b) / mean(a)`` and its delta-method interval
      ``± z_{(1+confidence)/2} sqrt((s_b^2 - 2 r s_ab + r^2 s_a^2) / (n mean(a)^2))`` (sample
      variances and covariance on ``n - 1``); NaN under 2 pairs or when ``mean(a)`` is 0;
    * minimum detectable effect ``detectable_effect_size(n, alpha, power) * sd``: 0 when every
      difference is equal, NaN under 2 pairs;
    * the Wilcoxon signed-rank and randomization tests, whose statistics are not sums, run group by
      group (:func:`wilcoxon_test`, :func:`randomization_test`).
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, n: np.ndarray):
        self.a = np.asarray(a, dtype=float)
        self.b = np.asarray(b, dtype=float)
        self.d = self.b - self.a
        self.n = np.asarray(n, dtype=np.int64)
        self.starts = np.concatenate(([0], np.cumsum(self.n)[:-1])).astype(np.int64)
        self._filled = self.n > 0
        self._at = self.starts[self._filled]
        # each pair's group, to spread a per-group value over its pairs (one group: a scalar)
        self._group = 0 if self.n.size == 1 else np.repeat(np.arange(self.n.size), self.n)

    @classmethod
    def one(cls, a, b) -> "PairedGroups":
        """Every pair of the equal-length ``a`` and ``b`` in one group."""
        d = _diffs(a, b)
        return cls(np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel(), np.array([d.size]))

    @classmethod
    def by_codes(cls, a, b, codes, n_groups: int) -> "PairedGroups":
        """The pairs ``a[i], b[i]`` in group ``codes[i]`` among ``n_groups`` (a code of -1: no group,
        left out), each group's pairs kept in their order."""
        codes = np.asarray(codes, dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        order = order[codes[order] >= 0]
        a = np.asarray(a, dtype=float)[order]
        return cls(a, np.asarray(b, dtype=float)[order], np.bincount(codes[order], minlength=int(n_groups)))

    def pairs(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)`` of group ``g``."""
        lo, hi = self.starts[g], self.starts[g] + self.n[g]
        return self.a[lo:hi], self.b[lo:hi]

    def total(self, values) -> np.ndarray:
        """The sum of ``values`` (one per pair) in each group (0 in an empty one)."""
        out = np.zeros(self.n.size, dtype=float)
        if self._at.size:
            out[self._filled] = np.add.reduceat(np.asarray(values, dtype=float), self._at)
        return out

    def _mean(self, values) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.total(values) / self.n

    def _spread(self, per_group: np.ndarray):
        return per_group[self._group]

    def _var(self, centred_products) -> np.ndarray:
        """The sample (co)variance from products of centred values, on ``n - 1`` (NaN under 2 pairs)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n >= 2, self.total(centred_products) / (self.n - 1), np.nan)

    @functools.cached_property
    def baseline_mean(self) -> np.ndarray:
        return self._mean(self.a)

    @functools.cached_property
    def challenger_mean(self) -> np.ndarray:
        return self._mean(self.b)

    @functools.cached_property
    def diff(self) -> np.ndarray:
        """``mean(b - a)`` of each group (NaN when empty)."""
        return self._mean(self.d)

    @functools.cached_property
    def sd(self) -> np.ndarray:
        """The standard deviation of the differences, on ``n - 1``."""
        centred = self.d - self._spread(self.diff)
        return np.sqrt(self._var(centred * centred))

    @functools.cached_property
    def all_zero(self) -> np.ndarray:
        return self.total(self.d != 0) == 0

    @functools.cached_property
    def all_equal(self) -> np.ndarray:
        first = self.d[np.minimum(self.starts, self.d.size - 1)] if self.d.size else np.zeros(self.n.size)
        return self.total(self.d != self._spread(first)) == 0

    def t_test(self) -> tuple[np.ndarray, np.ndarray]:
        """The paired t-test of each group: ``(t, p)``."""
        from scipy import special

        with np.errstate(divide="ignore", invalid="ignore"):
            t = self.diff / (self.sd / np.sqrt(self.n))
            p = 2.0 * special.stdtr(np.maximum(self.n - 1, 1), -np.abs(t))
        t = np.where(self.all_zero, 0.0, t)
        p = np.where(self.all_zero, 1.0, p)
        few = self.n < 2
        return np.where(few, np.nan, t), np.where(few, np.nan, p)

    def effect_size(self) -> np.ndarray:
        """Cohen's ``d_z`` of each group."""
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = self.diff / self.sd
        undefined = (self.n < 2) | (self.sd == 0)
        return np.where(self.n == 0, np.nan, np.where(self.all_zero, 0.0, np.where(undefined, np.nan, effect)))

    def win_tie_loss(self, higher_is_better: bool = True, tol: float = TIE_TOLERANCE
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(wins, ties, losses)`` of the challenger in each group (integer arrays)."""
        signed = self.d if higher_is_better else -self.d
        wins = self.total(signed > tol).astype(np.int64)
        losses = self.total(signed < -tol).astype(np.int64)
        return wins, self.n - wins - losses, losses

    def lift(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(lift, low, high)`` of each group: ``mean(b) / mean(a) - 1`` and its delta-method interval."""
        ma, mb = self.baseline_mean, self.challenger_mean
        ca, cb = self.a - self._spread(ma), self.b - self._spread(mb)
        var_a, var_b, cov_ab = self._var(ca * ca), self._var(cb * cb), self._var(ca * cb)
        z = float(_scipy_stats().norm.ppf((1 + confidence) / 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = mb / ma
            half = z * np.sqrt(np.maximum((var_b - 2 * r * cov_ab + r * r * var_a) / (self.n * ma * ma), 0.0))
        undefined = (self.n < 2) | (ma == 0)
        lift = np.where(undefined, np.nan, r - 1.0)
        return lift, lift - half, lift + half

    def mde(self, alpha: float = 0.05, power: float = POWER) -> np.ndarray:
        """The minimum detectable mean difference of each group (:func:`detectable_effect_size`)."""
        factor = np.array([detectable_effect_size(int(n), alpha, power) if n >= 2 else np.nan for n in self.n])
        return np.where(self.n < 2, np.nan, np.where(self.all_equal, 0.0, factor * self.sd))

    def test(self, name: str, n_permutations: int = 10000, seed: int = 0,
             done: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(statistic, p)`` of the paired test ``name`` (one of :data:`TESTS`) in each group.

        ``done(k)``, when given, is called as groups are tested, ``k`` groups at a time (every group
        at once for the t-test, one by one for the tests that run group by group): the calls add up
        to the number of groups."""
        if name == "t":
            out = self.t_test()
            if done is not None:
                done(int(self.n.size))
            return out
        if name not in TESTS:
            raise MetricsError(f"unknown test {name!r}; use one of: {', '.join(TESTS)}")
        out = np.full((2, self.n.size), np.nan)
        for g in range(self.n.size):
            a, b = self.pairs(g)
            out[:, g] = (wilcoxon_test(a, b) if name == "wilcoxon"
                         else randomization_test(a, b, n_resamples=n_permutations, seed=seed))
            if done is not None:
                done(1)
        return out[0], out[1]

    def table(self, tests: Sequence[str] = ("t",), *, alpha: float = 0.05, confidence: float = 0.95,
              n_permutations: int = 10000, seed: int = 0, higher_is_better: bool = True,
              power: float = POWER, done: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
        """Every statistic of each group, as :func:`metrics_core.analysis.compare.compare` names them: ``n``,
        ``baseline_mean``, ``model_mean``, ``diff``, ``effect_size``, ``wins``, ``ties``, ``losses``,
        ``lift``, ``lift_ci_low``, ``lift_ci_high``, ``mde``, ``mde_relative`` (``mde / |baseline_mean|``)
        and, for each of ``tests``, ``statistic_<test>`` and ``p_<test>``. ``done``: as :meth:`test`,
        called for each test (the calls add up to the groups times the tests)."""
        wins, ties, losses = self.win_tie_loss(higher_is_better)
        lift, low, high = self.lift(confidence)
        mde = self.mde(alpha, power)
        base = self.baseline_mean
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(base != 0, mde / np.abs(base), np.nan)
        out = {"n": self.n, "baseline_mean": base, "model_mean": self.challenger_mean, "diff": self.diff,
               "effect_size": self.effect_size(), "wins": wins, "ties": ties, "losses": losses,
               "lift": lift, "lift_ci_low": low, "lift_ci_high": high, "mde": mde, "mde_relative": relative}
        for name in dict.fromkeys(str(t).lower() for t in tests):
            out[f"statistic_{name}"], out[f"p_{name}"] = self.test(name, n_permutations, seed, done)
        return out


def paired_t_test(a, b) -> tuple[float, float]:
    """Two-sided paired t-test of ``b`` against ``a``: ``(t, p)``, as ``scipy.stats.ttest_rel(b, a)``
    (:meth:`PairedGroups.t_test`).

    All differences zero gives ``(0.0, 1.0)`` (no evidence of a difference); constant non-zero
    differences give ``(+-inf, 0.0)``; fewer than 2 pairs give ``(nan, nan)``.
    """
    t, p = PairedGroups.one(a, b).t_test()
    return (float(t[0]), float(p[0]))


#: differences within this share of the largest ``|d|`` are the same number up to floating-point noise
SNAP_RELATIVE = 1e-9


def snap_differences(d: np.ndarray) -> np.ndarray:
    """``d`` with floating-point noise removed before ranking: a difference within
    ``SNAP_RELATIVE * max|d|`` of 0 becomes 0, and magnitudes that follow each other in sorted
    order within that tolerance take the smallest one's value (their signs are kept). Per-user
    metrics computed by different floating-point paths (``0.3 - 0.1`` and ``0.5 - 0.3``) then tie
    as their exact values do, which the rank-based Wilcoxon statistic and its tie correction need."""
    d = np.asarray(d, dtype=float)
    scale = float(np.max(np.abs(d))) if d.size else 0.0
    if scale == 0.0 or not np.isfinite(scale):
        return d
    tol = SNAP_RELATIVE * scale
    magnitude = np.abs(d)
    magnitude[magnitude <= tol] = 0.0
    order = np.argsort(magnitude, kind="stable")
    ordered = magnitude[order]
    starts = np.r_[True, np.diff(ordered) > tol]
    magnitude[order] = ordered[np.flatnonzero(starts)][np.cumsum(starts) - 1]
    return np.sign(d) * magnitude


def wilcoxon_test(a, b) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test on ``d = b - a``: ``(W, p)``.

    Uses ``scipy.stats.wilcoxon(d, zero_method="wilcox")`` on the differences with their
    floating-point noise removed (:func:`snap_differences`): zero differences are dropped.
    No non-zero difference gives ``(0.0, 1.0)``; no pairs give ``(nan, nan)``.
    """
    d = snap_differences(_diffs(a, b))
    if d.size == 0:
        return (math.nan, math.nan)
    if np.all(d == 0):
        return (0.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _scipy_stats().wilcoxon(d, zero_method="wilcox")
    return (float(res.statistic), float(res.pvalue))


def randomization_test(a, b, n_resamples: int = 10000, seed: int = 0,
                       exact: bool | None = None) -> tuple[float, float]:
    """Fisher's two-sided paired randomization (sign-flip permutation) test: ``(mean(d), p)``.

    ``d = b - a``. Under H0 every sign assignment ``s in {-1,+1}^n`` is equally likely; the
    p-value is the share of assignments with ``|mean(s*d)| >= |mean(d)|`` (a relative
    tolerance of 1e-9 absorbs floating-point noise). ``exact=None`` enumerates all ``2^n``
    assignments when ``2^n <= n_resamples`` (and ``n <= 20``), otherwise draws
    ``n_resamples`` random assignments (vectorised, in batches) and returns
    ``(count + 1) / (n_resamples + 1)``, which is never 0.
    Matches ``scipy.stats.permutation_test((d,), mean, permutation_type="samples")`` in
    distribution, but is much faster on many users.

    ``n_resamples=0`` gives the normal approximation of the sign-flip distribution instead:
    ``sum(s*d)`` has mean 0 and variance ``sum(d^2)`` under H0, so
    ``p = erfc(|sum(d)| / sqrt(2 sum(d^2)))`` (the limit of the Monte Carlo p-value as users
    grow; it needs no draws).
    """
    d = _diffs(a, b)
    n = d.size
    if n == 0:
        return (math.nan, math.nan)
    observed = float(d.mean())
    if np.all(d == 0):
        return (0.0, 1.0)
    target = abs(d.sum())
    tol = 1e-9 * max(np.abs(d).sum(), 1e-300)
    if exact is None:
        exact = n <= 20 and 2 ** n <= int(n_resamples)
    if not exact and int(n_resamples) == 0:
        return (observed, math.erfc(target / math.sqrt(2.0 * float(np.dot(d, d)))))
    if exact:
        if n > 24:
            raise MetricsError(f"exact enumeration of 2^{n} sign assignments is too large; use exact=False")
        codes = np.arange(2 ** n, dtype=np.int64)
        count = 0
        batch = max(1, _BATCH_CELLS // n)
        for start in range(0, codes.size, batch):
            c = codes[start:start + batch]
            signs = ((c[:, None] >> np.arange(n)) & 1).astype(float) * 2.0 - 1.0
            count += int(np.count_nonzero(np.abs(signs @ d) >= target - tol))
        return (observed, count / 2 ** n)
    rng = np.random.default_rng(seed)
    total = d.sum()
    # Each random byte flips 8 users at once: ``table[j, byte]`` is the sum of the differences
    # of users 8j..8j+7 whose bit is set in ``byte``, so one assignment costs n/8 lookups.
    groups = -(-n // 8)
    padded = np.zeros(groups * 8)
    padded[:n] = d  # padding users have d = 0: flipping them changes nothing
    bits = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(float)
    table = padded.reshape(groups, 8) @ bits.T  # (groups, 256)
    rows = np.arange(groups)
    count = 0
    batch = max(1, _BATCH_CELLS // groups)
    B = int(n_resamples)
    for start in range(0, B, batch):
        size = min(batch, B - start)
        flips = rng.integers(0, 256, size=(size, groups), dtype=np.uint8)  # set bit -> sign -1
        # sum(s*d) = total - 2 * sum(d over flipped users)
        sums = total - 2.0 * table[rows, flips].sum(axis=1)
        count += int(np.count_nonzero(np.abs(sums) >= target - tol))
    return (observed, (count + 1) / (B + 1))


def cohens_d_paired(a, b) -> float:
    """Cohen's d for paired samples (d_z): ``mean(b - a) / sd(b - a)`` with ``sd`` on ``n-1``
    (:meth:`PairedGroups.effect_size`).

    ``0.0`` when every difference is zero, ``nan`` when undefined (fewer than 2 pairs, or a
    constant non-zero difference, whose sd is 0).
    """
    return float(PairedGroups.one(a, b).effect_size()[0])


def win_tie_loss(a, b, tol: float = TIE_TOLERANCE, higher_is_better: bool = True) -> tuple[int, int, int]:
    """Counts ``(wins, ties, losses)`` of the challenger ``b`` over the baseline ``a``
    (:meth:`PairedGroups.win_tie_loss`).

    With ``d = b - a``: win when ``d > tol``, loss when ``d < -tol``, tie otherwise;
    swapped when ``higher_is_better`` is False.
    """
    counts = PairedGroups.one(a, b).win_tie_loss(higher_is_better, tol)
    return tuple(int(c[0]) for c in counts)


def lift_ci(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """Relative lift ``mean(b) / mean(a) - 1`` of paired samples with its delta-method interval
    (:meth:`PairedGroups.lift`).

    With ``r = mean(b) / mean(a)``, the variance of ``r`` is approximated by
    ``(s_b^2 - 2 r s_ab + r^2 s_a^2) / (n mean(a)^2)`` (sample variances and covariance
    of the paired values), and the interval is ``lift ± z_{(1+confidence)/2} * se``.
    Returns ``(lift, low, high)``; NaN when ``mean(a)`` is 0 or fewer than 2 pairs.
    """
    return tuple(float(v[0]) for v in PairedGroups.one(a, b).lift(confidence))


def minimum_detectable_effect(differences, alpha: float = 0.05, power: float = POWER) -> float:
    """Smallest mean paired difference a two-sided paired t-test at ``alpha`` detects with ``power``
    (:meth:`PairedGroups.mde`).

    The standardised effect ``d`` (:func:`detectable_effect_size`) times ``sd(differences)``.
    Non-finite differences are left out. NaN with fewer than 2 pairs; 0 when every difference is equal.
    """
    d = np.asarray(differences, dtype=float).ravel()
    d = d[np.isfinite(d)]
    return float(PairedGroups.one(np.zeros_like(d), d).mde(alpha, power)[0])


@functools.lru_cache(maxsize=4096)
def detectable_effect_size(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The standardised effect ``d`` a two-sided paired t-test on ``n`` pairs at ``alpha`` detects
    with ``power``: ``d`` solves ``P(|T| > t_{1-alpha/2, n-1}) = power`` for ``T`` non-central t
    with ``n - 1`` degrees of freedom and non-centrality ``d sqrt(n)`` (what ``statsmodels``'
    ``TTestPower().solve_power`` solves). It depends on ``n``, ``alpha`` and ``power`` only."""
    st = _scipy_stats()
    crit = st.t.ppf(1 - alpha / 2, n - 1)

    def shortfall(effect: float) -> float:
        nc = effect * math.sqrt(n)
        lower = st.nct.cdf(-crit, n - 1, nc)  # negligible for a large effect (scipy gives NaN there)
        return st.nct.sf(crit, n - 1, nc) + (0.0 if math.isnan(lower) else lower) - power

    from scipy.optimize import brentq

    high = 1.0
    while shortfall(high) < 0:
        high *= 2
    return float(brentq(shortfall, 0.0, high, xtol=1e-12))


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (same order as given; NaN stays NaN, not counted in m).

    For ascending p-values ``p_(1) <= ... <= p_(m)``:
    ``adj_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j))``.
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def bonferroni(pvalues: Sequence[float]) -> np.ndarray:
    """Bonferroni adjusted p-values: ``min(1, m * p)`` over the ``m`` p-values that are not NaN
    (NaN stays NaN)."""
    p = np.asarray(pvalues, dtype=float).ravel()
    m = int((~np.isnan(p)).sum())
    return np.minimum(1.0, p * m)


def benjamini_hochberg(pvalues: Sequence[float]) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (NaN stays NaN and is not counted in m).

    For ascending p-values: ``adj_(i) = min(1, min_{j >= i} m * p_(j) / j)``
    (``scipy.stats.false_discovery_control(p, method="bh")``).
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = _scipy_stats().false_discovery_control(p[ok], method="bh")
    return out


def adjust_pvalues(pvalues: Sequence[float], correction: str = "holm") -> np.ndarray:
    """Adjust a family of p-values: ``correction`` is ``"holm"``, ``"bonferroni"``, ``"bh"`` or ``"none"``."""
    c = str(correction).lower()
    if c == "holm":
        return holm(pvalues)
    if c == "bonferroni":
        return bonferroni(pvalues)
    if c in ("bh", "fdr", "benjamini-hochberg"):
        return benjamini_hochberg(pvalues)
    if c == "none":
        return np.asarray(pvalues, dtype=float).ravel().copy()
    raise MetricsError(f"unknown correction {correction!r}; use one of: {', '.join(CORRECTIONS)}")


def adjust_within(pvalues: Sequence[float], families: Sequence, correction: str = "holm") -> np.ndarray:
    """``pvalues`` adjusted by ``correction`` within each family: ``families[i]`` names the family of
    ``pvalues[i]`` (any hashable value); each family is adjusted apart, as :func:`adjust_pvalues`
    adjusts one (NaN stays NaN and is not counted)."""
    p = np.asarray(pvalues, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    codes = pd.factorize(pd.Series(list(families), dtype=object), use_na_sentinel=False)[0] if p.size else p
    for code in np.unique(codes):
        pick = codes == code
        out[pick] = adjust_pvalues(p[pick], correction)
    return out


def align_pairs(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Pair two per-user Series by index (user id): only users with a finite value in both.

    Returns ``(a_values, b_values, users)`` in the order of ``a``'s index.
    """
    a = pd.Series(a, dtype=float)
    b = pd.Series(b, dtype=float)
    a = a[np.isfinite(a.to_numpy())]
    b = b[np.isfinite(b.to_numpy())]
    a = a[~a.index.duplicated(keep="first")]
    b = b[~b.index.duplicated(keep="first")]
    at_b = b.index.get_indexer(a.index)  # one hash lookup per user (b's index is unique now)
    both = at_b >= 0
    users = a.index[both]
    return (a.to_numpy(dtype=float)[both], b.to_numpy(dtype=float)[at_b[both]], users)


@dataclass(frozen=True)
class PairedComparison:
    """Result of :func:`paired_comparison` (one baseline, one challenger, one metric)."""

    n: int
    baseline_mean: float
    challenger_mean: float
    diff: float
    ci_low: float
    ci_high: float
    test: str
    statistic: float
    p_value: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    p_t: float
    p_wilcoxon: float
    p_randomization: float

    def to_dict(self) -> dict:
        return asdict(self)


def paired_comparison(a, b, test: str = "t", confidence: float = 0.95,
                      n_resamples: int = 1000, n_permutations: int = 10000, seed: int = 0,
                      higher_is_better: bool = True, tests: Iterable[str] = TESTS) -> PairedComparison:
    """Compare challenger ``b`` with baseline ``a`` on one per-user metric.

    ``a`` and ``b`` are per-user Series indexed by user id (paired by :func:`align_pairs`) or
    equal-length arrays already paired. ``diff = mean(b) - mean(a)`` over paired users with a
    percentile bootstrap CI of the mean difference (NaN with ``n_resamples=0``, when only the
    test is wanted); ``statistic``/``p_value`` come from
    ``test``; every test in ``tests`` is also reported as ``p_<test>`` (NaN if not run).
    The statistics are :meth:`PairedGroups.table`'s on one group.
    """
    test = str(test).lower()
    if test not in TESTS:
        raise MetricsError(f"unknown test {test!r}; use one of: {', '.join(TESTS)}")
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        av, bv, _ = align_pairs(a, b)
    else:
        av = np.asarray(a, dtype=float).ravel()
        bv = np.asarray(b, dtype=float).ravel()
        if av.shape != bv.shape:
            raise MetricsError(f"paired samples must have the same length ({av.size} vs {bv.size})")
        keep = np.isfinite(av) & np.isfinite(bv)
        av, bv = av[keep], bv[keep]
    wanted = [test] + [t for t in TESTS if t != test and t in {str(x).lower() for x in tests}]
    row = {k: v[0] for k, v in PairedGroups.one(av, bv).table(
        wanted, confidence=confidence, n_permutations=n_permutations, seed=seed,
        higher_is_better=higher_is_better).items()}
    low, high = (bootstrap_ci(bv - av, n_resamples=n_resamples, confidence=confidence, seed=seed)
                 if int(n_resamples) > 0 else (math.nan, math.nan))
    return PairedComparison(
        n=int(row["n"]), baseline_mean=float(row["baseline_mean"]), challenger_mean=float(row["model_mean"]),
        diff=float(row["diff"]), ci_low=low, ci_high=high, test=test,
        statistic=float(row[f"statistic_{test}"]), p_value=float(row[f"p_{test}"]),
        effect_size=float(row["effect_size"]), wins=int(row["wins"]), ties=int(row["ties"]),
        losses=int(row["losses"]),
        p_t=float(row.get("p_t", math.nan)), p_wilcoxon=float(row.get("p_wilcoxon", math.nan)),
        p_randomization=float(row.get("p_randomization", math.nan)),
    )


def mean_ci_table(per_user: pd.DataFrame, metrics: Sequence[str] | None = None,
                  n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Mean and bootstrap CI of every per-user metric column.

    Returns a DataFrame indexed by metric with columns ``mean``, ``ci_low``, ``ci_high``, ``n``
    (users with a finite value).
    """
    cols = list(per_user.columns) if metrics is None else [m for m in metrics if m in per_user.columns]
    rows = []
    for col in cols:
        x = _as_float_array(pd.to_numeric(per_user[col], errors="coerce"))
        low, high = bootstrap_ci(x, n_resamples=n_resamples, confidence=confidence, seed=seed)
        rows.append({"metric": col, "mean": float(x.mean()) if x.size else math.nan,
                     "ci_low": low, "ci_high": high, "n": int(x.size)})
    return pd.DataFrame(rows, columns=["metric", "mean", "ci_low", "ci_high", "n"]).set_index("metric")


def tukey_hsd(samples: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Tukey's HSD over every group of ``samples`` (one array of per-user values per model, NaN left out):
    ``(q, p)``, two ``g x g`` matrices of the studentized range statistic and the p-value of each pair
    (diagonal: 0 and 1). Needs at least two groups and more values than groups."""
    groups = [np.asarray(v, dtype=float).ravel() for v in samples]
    groups = [v[np.isfinite(v)] for v in groups]
    g = len(groups)
    sizes = np.array([len(v) for v in groups], dtype=float)
    if g < 2 or (sizes < 1).any() or sizes.sum() <= g:
        raise MetricsError("Tukey's HSD needs at least two models, each with a value, and more values than models")
    means = np.array([v.mean() for v in groups])
    mse = sum(float(((v - v.mean()) ** 2).sum()) for v in groups) / (sizes.sum() - g)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(means[:, None] - means[None, :]) / np.sqrt(mse / 2 * (1 / sizes[:, None] + 1 / sizes[None, :]))
    if mse == 0:  # every model constant: equal means are no difference, unequal ones are certain
        q = np.where(means[:, None] == means[None, :], 0.0, np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = _scipy_stats().tukey_hsd(*groups).pvalue if mse > 0 else np.where(q == 0, 1.0, 0.0)
    np.fill_diagonal(q, 0.0)
    p = np.array(p, dtype=float)
    np.fill_diagonal(p, 1.0)
    return q, p
