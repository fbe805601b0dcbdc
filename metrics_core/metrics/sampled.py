"""Metrics of runs scored on the target plus N sampled negatives, corrected as Krichene and Rendle (KDD 2020).

The 1+N protocol ranks each user's held-out target among ``m`` negatives drawn
uniformly without replacement from the ``n - 1`` other items, instead of among
all ``n`` items. A target at full rank ``r`` (1 = top) then lands at sampled
rank ``R~ = 1 + X``, ``X ~ Hypergeometric(n - 1, r - 1, m)`` (the number of the
``r - 1`` items above it that were drawn); the paper's binomial form
``X ~ Binomial(r - 1, m / (n - 1))`` is the with-replacement approximation
(``sampling="binomial"``). With ``A[r, j] = P(R~ = j | r)`` (``n x (m + 1)``)
and the full metric ``f(r)``:

* HR@K and recall@K (one target): ``f(r) = 1[r <= K]``;
* NDCG@K: ``f(r) = 1[r <= K] / log2(r + 1)``;
* AP (one target): ``f(r) = 1 / r``.

The sampled metric applies ``f`` to the sampled rank, which overstates it
(``E[f(R~) | r] > f(r)``) and can reorder models. The corrected metric applies
a function ``f~`` of the sampled rank chosen once for ``(n, m, f)``:

* ``correction="ls"`` (least squares): ``f~ = argmin sum_r (f(r) - (A f~)_r)^2``
  (the minimum-norm solution of ``numpy.linalg.lstsq``): unbiased on average
  over ranks, but ``A`` is ill-conditioned, so ``f~`` takes huge alternating
  values and one run's corrected mean has a large variance, as the paper
  reports; report ``bv``;
* ``correction="bv"`` (bias-variance trade-off, ``gamma`` in [0, 1]):
  ``f~ = argmin sum_r [(f(r) - E[f~(R~)|r])^2 + gamma Var[f~(R~)|r]]``, in
  closed form ``f~ = ((1 - gamma) A'A + gamma diag(A'1))^-1 A'f``; ``gamma = 0``
  is least squares, the default ``gamma = 0.1`` is stated here;
* ``correction="none"``: the sampled metric as computed.

Every full rank counts with the same weight (the paper's uniform prior over
ranks). A tie between the target and ``t`` negatives puts the target
uniformly at each of the ``t + 1`` tied sampled ranks: its value is the mean of
``f~`` over them. ``m`` is read from the run (a user's candidates minus its
target); users with another number of candidates are corrected with their own
``m``; ``n`` (the catalogue size) must be given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from ..errors import MetricsError

CORRECTIONS = ("none", "ls", "bv")
SAMPLINGS = ("without_replacement", "binomial")
#: registry names of the metrics with a single-target closed form (one relevant item per user)
METRICS = ("hit_rate", "recall", "ndcg", "map")
DEFAULT_GAMMA = 0.1


def full_metric(metric: str, k: int | None, n_items: int) -> np.ndarray:
    """``f(r)`` for ``r = 1..n_items`` of the registry metric ``metric`` (canonical name) for one target at
    full rank ``r`` (see the module docstring; tests/test_sampled.py checks it against mc.evaluate)."""
    r = np.arange(1, n_items + 1, dtype=float)
    if metric not in METRICS:
        raise MetricsError(f"sampled-metric correction covers hr@k, recall@k, ndcg@k and ap, not {metric!r}")
    within = r <= k if k else np.ones(n_items, bool)
    if metric == "map":
        return np.where(within, 1.0 / r, 0.0)
    if not k:
        raise MetricsError(f"{metric} needs a cutoff k >= 1 (write {metric}@10)")
    if metric == "ndcg":
        return np.where(within, 1.0 / np.log2(r + 1.0), 0.0)
    return within.astype(float)


def rank_transition(n_items: int, n_negatives: int, sampling: str = "without_replacement") -> np.ndarray:
    """``A[r - 1, j - 1] = P(sampled rank j | full rank r)``, shape ``(n_items, n_negatives + 1)``."""
    if sampling not in SAMPLINGS:
        raise MetricsError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
    if not 1 <= n_negatives <= n_items - 1:
        raise MetricsError(f"{n_negatives} sampled negatives need a catalogue of more than {n_negatives} items; "
                           f"n_items is {n_items}")
    return _transition(int(n_items), int(n_negatives), sampling)


@lru_cache(maxsize=2)
def _transition(n_items: int, n_negatives: int, sampling: str) -> np.ndarray:
    """:func:`rank_transition`, cached (two matrices at most: one holds ``8 n (m + 1)`` bytes, 160 MB
    for 200,000 items and 99 negatives; :func:`correction_function` caches its small results apart).
    The probabilities are written from log-gamma functions
    (``log C(a, b) = lgamma(a + 1) - lgamma(b + 1) - lgamma(a - b + 1)``), vectorised over the
    matrix: scipy.stats' exact pmf takes about 30 microseconds an entry, minutes for a catalogue of
    100,000 items; tests/test_sampled.py checks these against scipy.stats."""
    from scipy.special import gammaln

    above = np.arange(n_items, dtype=float)[:, None]  # r - 1 items above the target
    drawn = np.arange(n_negatives + 1, dtype=float)[None, :]
    m, pool = float(n_negatives), float(n_items - 1)
    if sampling == "binomial":
        p = m / pool
        possible = drawn <= above
        with np.errstate(divide="ignore", invalid="ignore"):
            log = (gammaln(above + 1) - gammaln(drawn + 1) - gammaln(above - drawn + 1)
                   + drawn * np.log(p) + (above - drawn) * np.log1p(-p))
    else:
        below = pool - above  # items under the target
        possible = (drawn <= above) & (m - drawn <= below)
        with np.errstate(divide="ignore", invalid="ignore"):
            log = (gammaln(above + 1) - gammaln(drawn + 1) - gammaln(above - drawn + 1)
                   + gammaln(below + 1) - gammaln(m - drawn + 1) - gammaln(below - m + drawn + 1)
                   - (gammaln(pool + 1) - gammaln(m + 1) - gammaln(pool - m + 1)))
    out = np.zeros((n_items, n_negatives + 1))
    out[possible] = np.exp(log[possible])
    out.flags.writeable = False  # shared by every caller of the cache
    return out


def correction_function(metric: str, k: int | None, n_items: int, n_negatives: int, correction: str = "bv",
                        gamma: float = DEFAULT_GAMMA, sampling: str = "without_replacement") -> np.ndarray:
    """``f~(j)`` for sampled ranks ``j = 1..n_negatives + 1`` (a new array; the values are cached)."""
    if correction not in CORRECTIONS:
        raise MetricsError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    if correction == "none":
        return full_metric(metric, k, n_negatives + 1)
    if correction == "bv" and not 0 <= gamma <= 1:
        raise MetricsError(f"gamma must be in [0, 1], got {gamma}")
    rank_transition(int(n_items), int(n_negatives), sampling)  # refuses impossible sizes with its message
    return _correction(metric, k, int(n_items), int(n_negatives), correction,
                       float(gamma) if correction == "bv" else 0.0, sampling).copy()


@lru_cache(maxsize=256)
def _correction(metric: str, k: int | None, n_items: int, n_negatives: int, correction: str, gamma: float,
                sampling: str) -> np.ndarray:
    """:func:`correction_function` of ``ls`` or ``bv``, cached (``n_negatives + 1`` values each: a server
    correcting the same runs again reads them, not the matrix)."""
    a = _transition(n_items, n_negatives, sampling)
    f = full_metric(metric, k, n_items)
    if correction == "ls":
        return np.linalg.lstsq(a, f, rcond=None)[0]
    lhs = (1 - gamma) * a.T @ a + gamma * np.diag(a.sum(axis=0))
    return np.linalg.lstsq(lhs, a.T @ f, rcond=None)[0]


def _parse(label: str) -> tuple[str, int | None]:
    """(registry name, cutoff or None) of a metric label (``hr@10`` -> ``("hit_rate", 10)``)."""
    from .registry import parse_metric

    spec = parse_metric(label)
    return spec.name, (spec.k or None)


def sampled_ranks(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """Per user: ``above`` (negatives scored higher than the target), ``tied`` (negatives scored equal) and
    ``negatives`` (the user's candidates minus the target). Each user needs exactly one relevant item of
    ``qrels`` among its candidates (a ``qrels`` without ``relevance``: every row is a target)."""
    for name, frame, needed in (("run", run, ("user_id", "item_id", "score")), ("qrels", qrels, ("user_id", "item_id"))):
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise MetricsError(f"the {name} has no column {missing[0]!r}; it needs {', '.join(needed)}")
    rel = qrels[qrels["relevance"] > 0] if "relevance" in qrels.columns else qrels
    rel = rel[["user_id", "item_id"]]
    many = rel["user_id"].duplicated(keep=False)
    if many.any():
        raise MetricsError(f"user {rel.loc[many, 'user_id'].iloc[0]!r} has several relevant items; the 1+N "
                           "protocol scores one held-out target per user")
    m = run.merge(rel.assign(_target=True), on=["user_id", "item_id"], how="left")
    m["_target"] = m["_target"].fillna(False).astype(bool)
    target = m[m["_target"]].set_index("user_id")["score"]
    lost = set(rel["user_id"]) - set(target.index)
    if lost:
        raise MetricsError(f"user {sorted(lost)[0]!r}: its target is not among its scored candidates; "
                           f"{len(lost)} user(s) are like this. Score the target with its negatives")
    m = m[m["user_id"].isin(target.index)]
    ts = m["user_id"].map(target).to_numpy()
    neg = ~m["_target"].to_numpy()
    s = m["score"].to_numpy()
    out = pd.DataFrame({"user_id": m["user_id"].to_numpy(), "above": neg & (s > ts), "tied": neg & (s == ts),
                        "negatives": neg})
    return out.groupby("user_id", sort=True).sum().astype(int)


@dataclass
class SampledMetrics:
    """``summary``: one row per metric: ``sampled``, ``corrected``; ``per_user``: each user's corrected
    values; ``settings``: correction, gamma, sampling, n_items and the negatives per user read."""

    summary: pd.DataFrame
    per_user: pd.DataFrame
    settings: dict


def sampled_metrics(run: pd.DataFrame, qrels: pd.DataFrame, metrics, *,
                    n_items: int, correction: str = "bv", gamma: float = DEFAULT_GAMMA,
                    sampling: str = "without_replacement") -> SampledMetrics:
    """The sampled and the corrected ``metrics`` of a 1+N run (see the module docstring).

    Parameters
    ----------
    run : DataFrame
        ``user_id``, ``item_id``, ``score``: each user's target and its sampled negatives, scored.
    qrels : DataFrame
        ``user_id``, ``item_id``: each user's one target (held-out item).
    metrics : list of str
        labels ``hr@K``, ``recall@K``, ``ndcg@K`` and ``ap`` (one target: recall@K equals hr@K).
    n_items : int
        the catalogue size ``n`` (at least 2); the negatives per user ``m`` are read from the run.
    correction : {"bv", "ls", "none"}
        how the sampled rank is corrected; ``gamma`` is the bias-variance weight of ``bv``.
    sampling : {"without_replacement", "binomial"}
        how the negatives were drawn (hypergeometric or the paper's binomial approximation).

    Returns a :class:`SampledMetrics`; a user whose target ties with negatives counts the mean
    over the tied sampled ranks.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> run = pd.DataFrame({"user_id": ["u1"] * 3 + ["u2"] * 3 + ["u3"] * 3,
    ...                     "item_id": ["t", "x", "y"] * 3,
    ...                     "score": [3, 2, 1, 2, 3, 1, 1, 3, 2]})  # target "t" sampled rank 1, 2 and 3
    >>> qrels = pd.DataFrame({"user_id": ["u1", "u2", "u3"], "item_id": "t"})
    >>> result = mc.sampled_metrics(run, qrels, ["hr@1", "ndcg@2"], n_items=1000)
    >>> result.summary["sampled"].round(4).to_dict()  # hr@1 = 1/3; ndcg@2 = (1 + 1/log2(3) + 0) / 3
    {'hr@1': 0.3333, 'ndcg@2': 0.5436}
    >>> bool((result.summary["corrected"] < result.summary["sampled"]).all())  # among 1000 items, lower
    True
    >>> result.settings["negatives"], result.settings["correction"]
    ([2], 'bv')
    """
    if not isinstance(n_items, (int, np.integer)) or n_items < 2:
        raise MetricsError(f"n_items (the catalogue size) must be an integer >= 2, got {n_items!r}")
    ranks = sampled_ranks(run, qrels)
    per_user = pd.DataFrame(index=ranks.index)
    rows = []
    for label in metrics:
        base, k = _parse(label)
        full_metric(base, k, 2)  # refuses an unknown metric or a missing cutoff before any work
        corrected = np.empty(len(ranks))
        sampled = np.empty(len(ranks))
        for m_neg, idx in ranks.groupby("negatives").indices.items():
            f_tilde = correction_function(base, k, int(n_items), int(m_neg), correction, gamma, sampling)
            f_raw = full_metric(base, k, int(m_neg) + 1)
            lo = ranks["above"].to_numpy()[idx]
            t = ranks["tied"].to_numpy()[idx]
            corrected[idx] = _tie_mean(f_tilde, lo, t)
            sampled[idx] = _tie_mean(f_raw, lo, t)
        per_user[label] = corrected
        rows.append({"metric": label, "sampled": float(sampled.mean()), "corrected": float(corrected.mean())})
    settings = {"correction": correction, "gamma": gamma if correction == "bv" else None, "sampling": sampling,
                "n_items": int(n_items), "negatives": sorted(int(x) for x in ranks["negatives"].unique())}
    return SampledMetrics(pd.DataFrame(rows).set_index("metric"), per_user, settings)


def _tie_mean(values: np.ndarray, above: np.ndarray, tied: np.ndarray) -> np.ndarray:
    """Mean of ``values[j]`` over 0-based sampled ranks ``above .. above + tied`` (uniform tie order)."""
    cum = np.r_[0.0, np.cumsum(values)]
    return (cum[above + tied + 1] - cum[above]) / (tied + 1)


def may_reverse(a: SampledMetrics, b: SampledMetrics, names=("A", "B")) -> list[str]:
    """Sentences for the metrics whose sampled order of two models differs from their corrected order.

    ``a``, ``b``: two :func:`sampled_metrics` results; ``names``: what the sentences call them. Only
    metrics both hold are read; a tie of the sampled values says nothing.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> def result(sampled, corrected):  # a summary as sampled_metrics returns it
    ...     summary = pd.DataFrame({"sampled": [sampled], "corrected": [corrected]}, index=["hr@10"])
    ...     return mc.SampledMetrics(summary, pd.DataFrame(), {})
    >>> mc.may_reverse(result(0.60, 0.020), result(0.55, 0.031), names=("popular", "personal"))
    ['hr@10: sampled, popular leads personal (0.6 vs 0.55), but the corrected estimates put personal ahead: the order may reverse under full ranking']
    >>> mc.may_reverse(result(0.60, 0.031), result(0.55, 0.020))  # same order both ways: nothing to say
    []
    """
    out = []
    for metric in a.summary.index.intersection(b.summary.index):
        sa, sb = a.summary.loc[metric, "sampled"], b.summary.loc[metric, "sampled"]
        ca, cb = a.summary.loc[metric, "corrected"], b.summary.loc[metric, "corrected"]
        if math.copysign(1, sa - sb) != math.copysign(1, ca - cb) and sa != sb:
            top, low = (names[0], names[1]) if sa > sb else (names[1], names[0])
            out.append(f"{metric}: sampled, {top} leads {low} ({max(sa, sb):.4g} vs {min(sa, sb):.4g}), but the "
                       f"corrected estimates put {low} ahead: the order may reverse under full ranking")
    return out


def out_of_range(result: SampledMetrics, name: str = "the model") -> list[str]:
    """Sentences for the corrected values of ``result`` (a :func:`sampled_metrics` result; ``name``: what
    they call the model) outside 0 to 1, the range of every metric corrected: an unstable estimate.
    Least squares is ill-conditioned on most catalogues (its values of the sampled ranks alternate
    by orders of magnitude), so its corrected means can land anywhere.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> summary = pd.DataFrame({"sampled": [0.27, 0.27], "corrected": [-6.1e7, 0.3]}, index=["ndcg@10", "hr@10"])
    >>> out_of_range(mc.SampledMetrics(summary, pd.DataFrame(), {"correction": "ls"}), "A")
    ['A: the corrected ndcg@10 is -6.1e+07, outside 0 to 1: least squares is ill-conditioned at this catalogue and number of negatives, its per-user values swing by orders of magnitude; read the bias-variance correction']
    """
    why = ("least squares is ill-conditioned at this catalogue and number of negatives, its per-user values "
           "swing by orders of magnitude; read the bias-variance correction"
           if result.settings.get("correction") == "ls" else "the estimate varies much over these users")
    corrected = result.summary["corrected"]
    return [f"{name}: the corrected {metric} is {value:.4g}, outside 0 to 1: {why}"
            for metric, value in corrected.items() if not 0 <= value <= 1]


__all__ = ["CORRECTIONS", "SampledMetrics", "correction_function", "full_metric", "may_reverse", "out_of_range",
           "rank_transition", "sampled_metrics", "sampled_ranks"]
