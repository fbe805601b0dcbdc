"""Scored-row and diversity metrics as partial sums -> combine -> finalize.

Every metric here is written once as three steps:

1. **partial**: sums over one partition of whole users (a dict of numbers for
   scored rows, per-item arrays for coverage and personalization);
2. **combine**: add the partials of every partition (:func:`combine`; per item
   for the item arrays);
3. **finalize**: turn the combined sums into the metric value.

``mc.evaluate`` is the one-partition case (its partial is the combined sum);
the Spark backend runs the same partial on each group of users, combines the
partials on the driver (or with a Spark group-by per item) and calls the same
finalize. The input checks a metric's registry ``needs`` ask for (``probabilities``:
every score in [0, 1]) read the partial of :func:`scored_partials` and run before
finalize (:func:`check_needs`), so both paths raise the same error for every such metric.

``auc`` and ``pr_auc`` are rank statistics over all scored rows
(:attr:`RowReduction.whole`): their partial is the number of positive and
negative rows per distinct score (:func:`score_counts`); locally the
classification kernel computes them from the rows directly, Spark merges the
per-score counts in score order. The registry's entries point at the
reductions here (:attr:`metrics_core.metrics.registry.Metric.reduction`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from ..errors import MetricsError
from ..kernels import classification as cls


# --------------------------------------------------------------------------- scored rows
@dataclass
class ScoredRows:
    """The scored rows of one partition: rows of users present in the ground truth.

    ``score`` is the prediction, ``label`` 1.0 when relevance >= the relevance
    threshold (unjudged rows are 0), ``relevance`` the graded relevance (0.0
    when unjudged); ``threshold`` makes a row a predicted positive
    (``score >= threshold``). ``user_auc`` returns ``(auc, positives, rows)``
    per user code (AUC is NaN for users with a single class); ``counted``
    marks the users of the ground truth and ``in_run`` those of the run.
    """

    score: np.ndarray
    label: np.ndarray
    relevance: np.ndarray
    threshold: float
    gauc_weight: str = "rows"
    user_auc: Callable[[], tuple] | None = None
    counted: np.ndarray | None = None
    in_run: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.score.shape[0])

    def auc_per_user(self) -> tuple:
        if "per_user_auc" not in self._cache:
            self._cache["per_user_auc"] = self.user_auc()
        return self._cache["per_user_auc"]


def scored_rows(ranked, relevance_threshold: float, threshold: float = 0.5, gauc_weight: str = "rows",
                judged_only: bool = False) -> ScoredRows:
    """The scored rows of a :class:`~metrics_core.layout.Ranked` (rows of users in its ground truth;
    only the judged ones with ``judged_only``)."""
    keep_user = ranked.in_truth
    labels = ranked.labels(relevance_threshold)
    offsets, tie_key = ranked.offsets, ranked.tie_key
    if judged_only:
        judged = ranked.judged.astype(bool)
        mask = np.repeat(keep_user, ranked.list_lengths) & judged
        user_of_row = np.repeat(np.arange(ranked.n_users), ranked.list_lengths)
        per_user = np.bincount(user_of_row[judged], minlength=ranked.n_users)
        offsets = np.concatenate(([0], np.cumsum(per_user))).astype(ranked.offsets.dtype)
        tie_key, auc_labels = ranked.score[judged], labels[judged]  # scores: the tie key needs neighbours
        p, y, rel = ranked.score[mask], labels[mask], ranked.rel[mask]
    elif keep_user.all():
        p, y, rel = ranked.score, labels, ranked.rel
        auc_labels = labels
    else:
        mask = np.repeat(keep_user, ranked.list_lengths)
        p, y, rel = ranked.score[mask], labels[mask], ranked.rel[mask]
        auc_labels = labels
    return ScoredRows(p, y, rel, float(threshold), gauc_weight,
                      user_auc=lambda: cls.per_user_auc(offsets, tie_key, auc_labels),
                      counted=ranked.in_truth, in_run=ranked.in_run)


def _probabilities_partial(r: ScoredRows) -> dict:
    """Rows, and scores outside [0, 1] (count and first one) for the metrics that read scores as probabilities."""
    bad = (r.score < 0) | (r.score > 1)
    n_bad = int(bad.sum())
    return {"rows": r.n, "outside_0_1": n_bad, "first_outside_0_1": float(r.score[bad][0]) if n_bad else None}


def check_needs(name: str, needs, t: dict) -> None:
    """The input checks of a scored-row metric ``name`` whose registry entry needs ``needs``, on the combined
    partial sums ``t`` (of :func:`scored_partials` with ``probabilities=True`` when any metric needs them):
    ``probabilities`` -> every score in [0, 1] (one-line MetricsError naming the first score outside)."""
    if "probabilities" in needs and t.get("outside_0_1"):
        raise MetricsError(
            f"{name} needs probabilities in [0, 1]; {int(t['outside_0_1'])} score(s) fall outside, "
            f"e.g. {t['first_outside_0_1']:g}; apply a sigmoid first or drop {name}"
        )


def _logloss_partial(r: ScoredRows) -> dict:
    out = _probabilities_partial(r)
    out["logloss_sum"] = cls.log_loss_sum(r.label, r.score) if not out["outside_0_1"] else 0.0
    return out


def _logloss_final(t: dict) -> float:
    return _ratio(t["logloss_sum"], t["rows"])


def _brier_partial(r: ScoredRows) -> dict:
    out = _probabilities_partial(r)
    out["brier_sum"] = float(np.sum((r.score - r.label) ** 2))
    return out


def _brier_final(t: dict) -> float:
    return _ratio(t["brier_sum"], t["rows"])


def _variance_partial(r: ScoredRows) -> dict:
    """Sums for R² and explained variance: relevance y, residual d = y - score, and their squares."""
    d = r.relevance - r.score
    return {"rows": r.n, "sum_relevance": float(r.relevance.sum()),
            "sum_relevance_sq": float(np.sum(r.relevance * r.relevance)),
            "squared_error": float(np.sum(d * d)), "sum_residual": float(d.sum())}


def _centered(sum_sq: float, total: float, n: float) -> float:
    """n * variance from a sum of squares and a sum: sum_sq - total^2 / n (0 when it is rounding noise)."""
    value = sum_sq - total * total / n
    return value if value > 1e-12 * max(sum_sq, 1.0) else 0.0


def _r2_final(t: dict) -> float:
    """1 - SS_res / SS_tot; NaN when the relevance is constant (SS_tot = 0) or there are no rows."""
    if not t["rows"]:
        return float("nan")
    ss_tot = _centered(t["sum_relevance_sq"], t["sum_relevance"], t["rows"])
    return 1.0 - t["squared_error"] / ss_tot if ss_tot > 0 else float("nan")


def _explained_variance_final(t: dict) -> float:
    """1 - Var(y - score) / Var(y); NaN when the relevance is constant or there are no rows."""
    if not t["rows"]:
        return float("nan")
    ss_tot = _centered(t["sum_relevance_sq"], t["sum_relevance"], t["rows"])
    ss_res = _centered(t["squared_error"], t["sum_residual"], t["rows"])
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")


#: equal-width probability bins of ``ece``: [0, 0.1], (0.1, 0.2], ..., (0.9, 1] (scikit-learn's
#: ``calibration_curve(strategy="uniform")`` edges and bin assignment)
ECE_BINS = 10


def _ece_partial(r: ScoredRows) -> dict:
    """Per bin: rows, sum of scores and sum of labels (keys ``ece_n_b``, ``ece_p_b``, ``ece_y_b``)."""
    out = _probabilities_partial(r)
    edges = np.linspace(0.0, 1.0, ECE_BINS + 1)
    bins = np.searchsorted(edges[1:-1], r.score) if not out["outside_0_1"] else np.zeros(r.n, dtype=np.int64)
    n = np.bincount(bins, minlength=ECE_BINS)
    p = np.bincount(bins, weights=r.score, minlength=ECE_BINS)
    y = np.bincount(bins, weights=r.label, minlength=ECE_BINS)
    for b in range(ECE_BINS):
        out[f"ece_n_{b}"], out[f"ece_p_{b}"], out[f"ece_y_{b}"] = int(n[b]), float(p[b]), float(y[b])
    return out


def _ece_final(t: dict) -> float:
    """sum_b (n_b / n) |mean label_b - mean score_b| = sum_b |sum label_b - sum score_b| / n."""
    gap = sum(abs(t[f"ece_y_{b}"] - t[f"ece_p_{b}"]) for b in range(ECE_BINS))
    return _ratio(gap, t["rows"])


def confusion_counts(r: ScoredRows) -> dict:
    """(tp, fp, fn, tn) with predicted positive = score >= threshold."""
    pred = r.score >= r.threshold
    pos = r.label > 0.5
    return {"tp": int(np.sum(pred & pos)), "fp": int(np.sum(pred & ~pos)),
            "fn": int(np.sum(~pred & pos)), "tn": int(np.sum(~pred & ~pos))}


def _accuracy(t: dict) -> float:
    return (t["tp"] + t["tn"]) / max(t["tp"] + t["fp"] + t["fn"] + t["tn"], 1)


def _precision(t: dict) -> float:
    return t["tp"] / (t["tp"] + t["fp"]) if t["tp"] + t["fp"] else 0.0


def _recall(t: dict) -> float:
    return t["tp"] / (t["tp"] + t["fn"]) if t["tp"] + t["fn"] else 0.0


def _f1(t: dict) -> float:
    return 2 * t["tp"] / (2 * t["tp"] + t["fp"] + t["fn"]) if t["tp"] + t["fp"] + t["fn"] else 0.0


def gauc_weights(npos: np.ndarray, nrows: np.ndarray, gauc_weight: str) -> np.ndarray:
    """Weight of each user's AUC: its scored rows, its positives, or 1."""
    return {"rows": nrows, "positives": npos, "uniform": np.ones_like(nrows)}[gauc_weight]


def _gauc_partial(r: ScoredRows) -> dict:
    auc, npos, nrows = r.auc_per_user()
    single_class = np.isnan(auc)
    ok = ~single_class & r.counted
    w = gauc_weights(npos, nrows, r.gauc_weight)[ok]
    return {"gauc_num": float(np.sum(w * auc[ok])), "gauc_den": float(w.sum()),
            "gauc_skipped": int((r.counted & r.in_run & single_class).sum())}


def _sum_partial(key: str, term: Callable[[ScoredRows], np.ndarray]) -> Callable[[ScoredRows], dict]:
    return lambda r: {"rows": r.n, key: float(np.sum(term(r)))}


def _ratio(num: float, den: float, empty: float = float("nan")) -> float:
    return float(num / den) if den > 0 else empty


@dataclass(frozen=True)
class RowReduction:
    """A scored-row metric: ``partial(rows) -> dict of sums`` and ``finalize(combined sums) -> value``.

    Keys shared by several metrics (``rows``, the confusion counts) hold the
    same value in each partial, so one partition's partials merge into one dict.
    A rank statistic (``whole`` set: ROC AUC, average precision) is computed
    from one partition holding every scored row; its partial for several
    partitions is :func:`score_counts`, merged in score order. ``per_user``,
    when set, gives one value per user code (GAUC's per-user AUC).
    """

    partial: Callable[[ScoredRows], dict]
    finalize: Callable[[dict], float]
    whole: Callable[[ScoredRows], float] | None = None
    per_user: Callable[[ScoredRows], np.ndarray] | None = None

    def value(self, rows: ScoredRows, totals: dict) -> float:
        """The value of one partition holding every row: its rank statistic, else ``finalize(totals)``."""
        return self.whole(rows) if self.whole is not None else self.finalize(totals)


def _nothing(r: ScoredRows) -> dict:
    return {}


def _whole_only(t: dict) -> float:
    raise MetricsError("a rank statistic is computed from every scored row at once, not from partial sums")


def _squared_error(r: ScoredRows) -> np.ndarray:
    return (r.score - r.relevance) ** 2


# one reduction per scored-row metric, bound to its registry entry by name in BY_METRIC
LOGLOSS = RowReduction(_logloss_partial, _logloss_final)
BRIER = RowReduction(_brier_partial, _brier_final)
RMSE = RowReduction(_sum_partial("squared_error", _squared_error),
                    lambda t: float(np.sqrt(t["squared_error"] / t["rows"])) if t["rows"] else float("nan"))
MSE = RowReduction(_sum_partial("squared_error", _squared_error), lambda t: _ratio(t["squared_error"], t["rows"]))
MAE = RowReduction(_sum_partial("absolute_error", lambda r: np.abs(r.score - r.relevance)),
                   lambda t: _ratio(t["absolute_error"], t["rows"]))
PCOPC = RowReduction(lambda r: {"sum_score": float(r.score.sum()), "sum_label": float(r.label.sum())},
                     lambda t: _ratio(t["sum_score"], t["sum_label"]))
ACCURACY = RowReduction(confusion_counts, _accuracy)
PRECISION = RowReduction(confusion_counts, _precision)
RECALL = RowReduction(confusion_counts, _recall)
F1 = RowReduction(confusion_counts, _f1)
GAUC = RowReduction(_gauc_partial, lambda t: _ratio(t["gauc_num"], t["gauc_den"]),
                    per_user=lambda r: r.auc_per_user()[0])
R2 = RowReduction(_variance_partial, _r2_final)
EXPLAINED_VARIANCE = RowReduction(_variance_partial, _explained_variance_final)
ECE = RowReduction(_ece_partial, _ece_final)
ROC_AUC = RowReduction(_nothing, _whole_only, whole=lambda r: cls.roc_auc(r.label, r.score))
AVERAGE_PRECISION = RowReduction(_nothing, _whole_only, whole=lambda r: cls.average_precision(r.label, r.score))
#: the rank statistics, in the order of the Spark engine's exact pass (ROC AUC, then average precision)
RANK_STATISTICS = (ROC_AUC, AVERAGE_PRECISION)


def scored_partials(reductions: Iterable[RowReduction], rows: ScoredRows, probabilities: bool = False) -> dict:
    """The partial sums one partition contributes to the scored-row metrics of ``reductions``; with
    ``probabilities`` (a metric needs them) also the count of scores outside [0, 1] that :func:`check_needs` reads."""
    out: dict = _probabilities_partial(rows) if probabilities else {}
    for reduction in dict.fromkeys(reductions):
        out.update(reduction.partial(rows))
    return out


def combine(partials: Iterable[dict]) -> dict:
    """Add the partial sums of several partitions (the first non-empty example is kept)."""
    total: dict = {}
    for part in partials:
        for key, value in part.items():
            if key.startswith("first_"):
                if value is not None and total.get(key) is None:
                    total[key] = value
                continue
            total[key] = total.get(key, 0) + value
    return total


def score_counts(score: np.ndarray, label: np.ndarray):
    """Partial of ``auc`` / ``pr_auc``: distinct scores (ascending), positives and rows per score."""
    values, inverse = np.unique(score, return_inverse=True)
    positives = np.bincount(inverse, weights=label, minlength=len(values)).astype(np.int64)
    totals = np.bincount(inverse, minlength=len(values)).astype(np.int64)
    return values, positives, totals


# --------------------------------------------------------------------------- per-user means
def mean_partial(values: np.ndarray) -> dict:
    """Partial of a mean over users with a finite value (ILS, novelty: NaN for users it cannot score)."""
    finite = np.isfinite(values)
    return {"sum": float(np.sum(np.where(finite, values, 0.0))), "count": int(finite.sum())}


def finalize_mean(t: dict) -> float:
    return _ratio(t["sum"], t["count"])


# --------------------------------------------------------------------------- diversity across users
def coverage_partial(items: np.ndarray, weight: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Per item code: certain top-k inclusions and the sum of log(1 - p) over uncertain ones.

    ``weight`` is each ranked row's probability of being in its user's top k
    (0 for rows of users not evaluated).
    """
    certain = np.bincount(items, weights=(weight >= 1.0), minlength=n_items)
    partial = weight < 1.0
    log_miss = np.bincount(items[partial], weights=np.log1p(-weight[partial]), minlength=n_items)
    return certain, log_miss


def coverage_expected_items(certain: np.ndarray, log_miss: np.ndarray) -> float:
    """E[number of covered items]: 1 for an item some user holds for sure, else 1 - prod(1 - p)."""
    return float(np.where(certain > 0, 1.0, -np.expm1(log_miss)).sum())


def finalize_coverage(expected_items: float, catalogue: int) -> float:
    return float(expected_items / catalogue) if catalogue else 0.0


def personalization_partial(items: np.ndarray, weight: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Per item code: S1 = sum of top-k inclusion probabilities and S2 = sum of their squares."""
    s1 = np.bincount(items, weights=weight, minlength=n_items)
    s2 = np.bincount(items, weights=weight * weight, minlength=n_items)
    return s1, s2


def personalization_shared_pairs(s1: np.ndarray, s2: np.ndarray) -> float:
    """E[sum_i C(c_i, 2)] = sum_i (S1_i^2 - S2_i) / 2 (users are independent)."""
    return float(np.sum(s1 * s1 - s2) / 2.0)


def finalize_personalization(shared_pairs: float, n_users: int, k: int) -> float:
    """1 - E[shared pairs] / (C(n, 2) k); NaN with fewer than two users."""
    if n_users < 2:
        return float("nan")
    pairs = n_users * (n_users - 1) / 2.0
    return 1.0 - shared_pairs / (pairs * k)


# --------------------------------------------------------------------------- exposure across users
def exposure_partial(items: np.ndarray, weight: np.ndarray, n_items: int) -> np.ndarray:
    """Per item code: expected top-k slots (sum of the rows' top-k inclusion probabilities); adds per item."""
    return np.bincount(items, weights=weight, minlength=n_items)


def finalize_entropy(slots: np.ndarray) -> float:
    """``-sum_i p_i log2 p_i`` with ``p_i = slots_i / sum(slots)`` (NaN without any slot)."""
    c = slots[slots > 0]
    total = c.sum()
    if total <= 0:
        return float("nan")
    p = c / total
    return float(-np.sum(p * np.log2(p)))


def finalize_gini(slots: np.ndarray, catalogue: int) -> float:
    """Gini index of the slots over a catalogue of N items, never recommended items counting 0:
    ``sum_j (2j - N - 1) c_(j) / (N sum c)`` with c ascending (= ``sum_{i,j} |c_i - c_j| / (2 N sum c)``)."""
    c = np.sort(slots[slots > 0])
    total = c.sum()
    n = max(int(catalogue), len(c))
    if total <= 0 or n == 0:
        return float("nan")
    j = np.arange(n - len(c) + 1, n + 1, dtype=np.float64)
    return float(np.sum((2.0 * j - n - 1.0) * c) / (n * total))

#: scored-row metric name (:attr:`metrics_core.metrics.registry.Metric.name` of a ``scored`` or ``scored_per_user``
#: entry) -> its reduction
BY_METRIC: dict[str, RowReduction] = {
    "accuracy": ACCURACY,
    "auc": ROC_AUC,
    "brier": BRIER,
    "ece": ECE,
    "explained_variance": EXPLAINED_VARIANCE,
    "f1": F1,
    "gauc": GAUC,
    "logloss": LOGLOSS,
    "mae": MAE,
    "mse": MSE,
    "pcopc": PCOPC,
    "pr_auc": AVERAGE_PRECISION,
    "precision": PRECISION,
    "r2": R2,
    "recall": RECALL,
    "rmse": RMSE,
}


def of(entry) -> RowReduction:
    """The reduction of a scored-row registry entry."""
    return BY_METRIC[entry.name]
