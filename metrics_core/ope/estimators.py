"""Off-policy estimators of one evaluation policy's value from logged rounds, as obp 0.5.7 defines them.

Notation, for logged rounds ``i = 1..n``: context ``x_i``, logged action
``a_i``, reward ``r_i``, logging propensity ``pi_b(a_i | x_i)``; the evaluation
policy ``pi_e``; the importance weight ``w_i = pi_e(a_i | x_i) / pi_b(a_i | x_i)``;
a reward model ``q(x, a)`` with ``q_i = q(x_i, a_i)`` and
``q_pi_i = sum_a pi_e(a | x_i) q(x_i, a)``.

Every estimator but SNIPS is the mean of per-round terms, returned by the
``*_terms`` functions (the per-context contributions and the bootstrap use the
terms):

* DM (direct method): ``V = mean(q_pi_i)``.
* IPS: ``V = mean(min(w_i, lambda) r_i)``; ``lambda = inf`` (obp's default) clips nothing.
* SNIPS (self-normalised IPS): ``V = sum(w_i r_i) / sum(w_i)``.
* DR (doubly robust, Dudik, Langford and Li 2011):
  ``V = mean(q_pi_i + min(w_i, lambda) (r_i - q_i))``.
* Switch-DR (Wang, Agarwal and Dudik 2017, obp's form):
  ``V = mean(q_pi_i + 1[w_i <= tau] w_i (r_i - q_i))``: DR where the weight is at
  most ``tau``, DM elsewhere; ``tau = inf`` is DR, ``tau = 0`` is DM.
* DRos (DR with optimistic shrinkage, Su, Dimakopoulou, Krishnamurthy and Dudik 2020):
  ``V = mean(q_pi_i + w~_i (r_i - q_i))`` with ``w~_i = lambda w_i / (w_i^2 + lambda)``;
  ``lambda = inf`` is DR, ``lambda = 0`` is DM.
"""

from __future__ import annotations

import numpy as np

from ..errors import MetricsError


def importance_weights(pi_e: np.ndarray, pscore: np.ndarray) -> np.ndarray:
    """``w_i = pi_e(a_i | x_i) / pi_b(a_i | x_i)`` (propensities are in (0, 1], checked on reading)."""
    return np.asarray(pi_e, float) / np.asarray(pscore, float)


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not value >= 0:
        raise MetricsError(f"{name} must be a number >= 0 (inf for none), got {value}")
    return value


def dm_terms(q_pi: np.ndarray) -> np.ndarray:
    """Direct method terms: ``q_pi_i``, the reward model's value of the policy in context ``x_i``."""
    return np.asarray(q_pi, float)


def ips_terms(reward: np.ndarray, w: np.ndarray, clip: float = np.inf) -> np.ndarray:
    """IPS terms ``min(w_i, clip) r_i`` (no pass for the minimum when ``clip`` is inf)."""
    clip = _positive("clip", clip)
    return (w if np.isinf(clip) else np.minimum(w, clip)) * reward


def snips_value(reward: np.ndarray, w: np.ndarray) -> float:
    """SNIPS ``sum(w_i r_i) / sum(w_i)`` (NaN when every weight is 0: the policy never takes a logged action)."""
    total = float(np.sum(w))
    return float(np.dot(w, reward) / total) if total > 0 else float("nan")


def dr_terms(reward, w, q_logged, q_pi, clip: float = np.inf) -> np.ndarray:
    """DR terms ``q_pi_i + min(w_i, clip) (r_i - q_i)``."""
    return q_pi + np.minimum(w, _positive("clip", clip)) * (reward - q_logged)


def switch_dr_terms(reward, w, q_logged, q_pi, tau: float) -> np.ndarray:
    """Switch-DR terms ``q_pi_i + 1[w_i <= tau] w_i (r_i - q_i)``."""
    return q_pi + (w <= _positive("switch tau", tau)) * w * (reward - q_logged)


def shrunk_weights(w: np.ndarray, lam: float) -> np.ndarray:
    """Optimistic shrinkage ``lambda w / (w^2 + lambda)`` (``w`` itself when ``lambda = inf``)."""
    lam = _positive("shrinkage lambda", lam)
    if np.isinf(lam):
        return np.asarray(w, float)
    if lam == 0:
        return np.zeros_like(w, dtype=float)
    return lam * w / (w * w + lam)


def dros_terms(reward, w, q_logged, q_pi, lam: float) -> np.ndarray:
    """DRos terms ``q_pi_i + lambda w_i / (w_i^2 + lambda) (r_i - q_i)``."""
    return q_pi + shrunk_weights(w, lam) * (reward - q_logged)


def effective_sample_size(w: np.ndarray) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` (0 when every weight is 0)."""
    s2 = float(np.dot(w, w))
    return float(np.sum(w)) ** 2 / s2 if s2 > 0 else 0.0


__all__ = ["dm_terms", "dr_terms", "dros_terms", "effective_sample_size", "importance_weights", "ips_terms",
           "shrunk_weights", "snips_value", "switch_dr_terms"]
