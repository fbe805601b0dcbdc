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
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from metrics_core.errors import MetricsError
from metrics_core.registry import lower_is_better_names

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


def paired_t_test(a, b) -> tuple[float, float]:
    """Two-sided paired t-test of ``b`` against ``a``: ``(t, p)`` via ``scipy.stats.ttest_rel(b, a)``.

    All differences zero gives ``(0.0, 1.0)`` (no evidence of a difference); constant non-zero
    differences give ``(+-inf, 0.0)``; fewer than 2 pairs give ``(nan, nan)``.
    """
    d = _diffs(a, b)
    if d.size < 2:
        return (math.nan, math.nan)
    if np.all(d == 0):
        return (0.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _scipy_stats().ttest_rel(np.asarray(b, dtype=float), np.asarray(a, dtype=float))
    return (float(res.statistic), float(res.pvalue))


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
    """Cohen's d for paired samples (d_z): ``mean(b - a) / sd(b - a)`` with ``sd`` on ``n-1``.

    ``0.0`` when every difference is zero, ``nan`` when undefined (fewer than 2 pairs, or a
    constant non-zero difference, whose sd is 0).
    """
    d = _diffs(a, b)
    if d.size == 0:
        return math.nan
    if np.all(d == 0):
        return 0.0
    if d.size < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    if sd == 0:
        return math.nan
    return float(d.mean() / sd)


def win_tie_loss(a, b, tol: float = 1e-9, higher_is_better: bool = True) -> tuple[int, int, int]:
    """Counts ``(wins, ties, losses)`` of the challenger ``b`` over the baseline ``a``.

    With ``d = b - a``: win when ``d > tol``, loss when ``d < -tol``, tie otherwise;
    swapped when ``higher_is_better`` is False.
    """
    d = _diffs(a, b)
    if not higher_is_better:
        d = -d
    wins = int(np.count_nonzero(d > tol))
    losses = int(np.count_nonzero(d < -tol))
    return (wins, d.size - wins - losses, losses)


def lift_ci(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """Relative lift ``mean(b) / mean(a) - 1`` of paired samples with its delta-method interval.

    With ``r = mean(b) / mean(a)``, the variance of ``r`` is approximated by
    ``(s_b^2 - 2 r s_ab + r^2 s_a^2) / (n mean(a)^2)`` (sample variances and covariance
    of the paired values), and the interval is ``lift ± z_{(1+confidence)/2} * se``.
    Returns ``(lift, low, high)``; NaN when ``mean(a)`` is 0 or fewer than 2 pairs.
    """
    av = np.asarray(a, dtype=float).ravel()
    bv = np.asarray(b, dtype=float).ravel()
    if av.shape != bv.shape:
        raise MetricsError(f"paired samples must have the same length ({av.size} vs {bv.size})")
    n = av.size
    ma = float(av.mean()) if n else math.nan
    if n < 2 or not ma:
        return (math.nan, math.nan, math.nan)
    r = float(bv.mean()) / ma
    cov = np.cov(av, bv, ddof=1)
    var = (cov[1, 1] - 2 * r * cov[0, 1] + r * r * cov[0, 0]) / (n * ma * ma)
    z = _scipy_stats().norm.ppf((1 + confidence) / 2)
    half = z * math.sqrt(max(var, 0.0))
    return (r - 1.0, r - 1.0 - half, r - 1.0 + half)


def minimum_detectable_effect(differences, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest mean paired difference a two-sided paired t-test at ``alpha`` detects with ``power``.

    The standardised effect ``d`` (:func:`detectable_effect_size`) times ``sd(differences)``.
    NaN with fewer than 2 pairs; 0 when every difference is equal.
    """
    d = np.asarray(differences, dtype=float).ravel()
    d = d[np.isfinite(d)]
    n = d.size
    if n < 2:
        return math.nan
    if np.all(d == d[0]):
        return 0.0
    return detectable_effect_size(n, alpha, power) * float(d.std(ddof=1))


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


def _run_test(name: str, a, b, n_permutations: int, seed: int) -> tuple[float, float]:
    if name == "t":
        return paired_t_test(a, b)
    if name == "wilcoxon":
        return wilcoxon_test(a, b)
    if name == "randomization":
        return randomization_test(a, b, n_resamples=n_permutations, seed=seed)
    raise MetricsError(f"unknown test {name!r}; use one of: {', '.join(TESTS)}")


def paired_comparison(a, b, test: str = "t", confidence: float = 0.95,
                      n_resamples: int = 1000, n_permutations: int = 10000, seed: int = 0,
                      higher_is_better: bool = True, tests: Iterable[str] = TESTS) -> PairedComparison:
    """Compare challenger ``b`` with baseline ``a`` on one per-user metric.

    ``a`` and ``b`` are per-user Series indexed by user id (paired by :func:`align_pairs`) or
    equal-length arrays already paired. ``diff = mean(b) - mean(a)`` over paired users with a
    percentile bootstrap CI of the mean difference (NaN with ``n_resamples=0``, when only the
    test is wanted); ``statistic``/``p_value`` come from
    ``test``; every test in ``tests`` is also reported as ``p_<test>`` (NaN if not run).
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
    d = bv - av
    n = int(d.size)
    wanted = {str(t).lower() for t in tests} | {test}
    results = {t: (_run_test(t, av, bv, n_permutations, seed) if t in wanted else (math.nan, math.nan))
               for t in TESTS}
    low, high = (bootstrap_ci(d, n_resamples=n_resamples, confidence=confidence, seed=seed)
                 if int(n_resamples) > 0 else (math.nan, math.nan))
    wins, ties, losses = win_tie_loss(av, bv, higher_is_better=higher_is_better)
    return PairedComparison(
        n=n,
        baseline_mean=float(av.mean()) if n else math.nan,
        challenger_mean=float(bv.mean()) if n else math.nan,
        diff=float(d.mean()) if n else math.nan,
        ci_low=low,
        ci_high=high,
        test=test,
        statistic=results[test][0],
        p_value=results[test][1],
        effect_size=cohens_d_paired(av, bv),
        wins=wins,
        ties=ties,
        losses=losses,
        p_t=results["t"][1],
        p_wilcoxon=results["wilcoxon"][1],
        p_randomization=results["randomization"][1],
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
