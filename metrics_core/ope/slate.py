"""Slate (ranked-list) off-policy estimators as obp 0.5.7's ``estimators_slate`` defines them, and the
evaluation policy's slot probabilities of a ranked run.

A slate ``s`` shows items ``a_s(1), ..., a_s(L)`` at slots ``1..L`` and earns a
slot reward ``r_s(l)`` at each. With ``S`` slates:

* independent IPS (IIPS, Li et al. 2018):
  ``V = (1/S) sum_s sum_l r_s(l) pi_e(a_s(l) at l | x_s) / pi_b(a_s(l) at l | x_s)``,
  the marginal probabilities of the item at its slot;
* reward-interaction IPS (RIPS, McInerney et al. 2020):
  ``V = (1/S) sum_s sum_l r_s(l) pi_e(a_s(1..l) | x_s) / pi_b(a_s(1..l) | x_s)``,
  the probabilities of the list's top part down to slot ``l`` (cascade);
* standard IPS (SIPS, McInerney et al. 2020, eq. 1):
  ``V = (1/S) sum_s sum_l r_s(l) pi_e(s | x_s) / pi_b(s | x_s)``, the whole
  slate's probability at every slot (no assumption on how the slots' rewards
  interact, hence the largest weights). ``pi_b(s | x_s)`` is the log's
  ``propensity_slate``, or else its ``propensity_cascade`` at the slate's last
  logged slot (the top part down to the last slot is the whole slate);
  ``pi_e(s | x_s)`` is the evaluation policy's cascade probability at that slot.

The evaluation policy of a ranked run is either its ranking (``rank``: the
items by score, ties in a uniformly random order) or a Plackett-Luce sampling
of ``softmax(score / T)`` without replacement (``softmax``).

* ``rank``: with tie blocks of ``g`` items starting at 0-based rank ``b``, item
  ``a`` is at 0-based slot ``j`` with probability ``1/g`` when its block covers
  ``j`` (``b <= j < b + g``), else 0; the top part ``a(1..l)`` has probability
  ``prod_{j<l} 1[block of a(j) covers j] / (g_j - (j - b_j))``, the chance that each
  slot draws its item from what is left of its block.
* ``softmax``: the top part has probability
  ``prod_{j<l} e_{a(j)} / (Z - sum_{i<j} e_{a(i)})`` with ``e_a = exp(s_a / T)``
  and ``Z`` the context's total; the marginal of slot ``l > 1`` has no closed
  form, so IIPS under ``softmax`` is refused (give ``given`` probabilities).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import MetricsError
from .policy import tie_blocks


def slate_value(terms: np.ndarray, slate_codes: np.ndarray) -> float:
    """``(1/S) sum`` of the slot terms: each slate's sum, averaged over slates."""
    n_slates = len(np.unique(slate_codes))
    return float(np.sum(terms) / n_slates) if n_slates else float("nan")


def iips_terms(reward: np.ndarray, pi_e_marginal: np.ndarray, pscore_marginal: np.ndarray) -> np.ndarray:
    """IIPS slot terms ``r(l) pi_e(a(l) at l) / pi_b(a(l) at l)``."""
    return reward * pi_e_marginal / pscore_marginal


def sips_terms(reward: np.ndarray, pi_e_slate: np.ndarray, pscore_slate: np.ndarray) -> np.ndarray:
    """SIPS slot terms ``r(l) pi_e(s) / pi_b(s)`` (the whole slate's probabilities, repeated at each slot)."""
    return reward * pi_e_slate / pscore_slate


def whole_slate(values: np.ndarray, slate_codes: np.ndarray) -> np.ndarray:
    """Each slate's value at its last row, repeated on every row of the slate (rows in slate order)."""
    last = np.r_[slate_codes[1:] != slate_codes[:-1], True] if len(slate_codes) else np.zeros(0, bool)
    return np.asarray(values, float)[last][np.cumsum(np.r_[0, last[:-1]])] if len(slate_codes) else \
        np.zeros(0)


def rips_terms(reward: np.ndarray, pi_e_cascade: np.ndarray, pscore_cascade: np.ndarray) -> np.ndarray:
    """RIPS slot terms ``r(l) pi_e(a(1..l)) / pi_b(a(1..l))``."""
    return reward * pi_e_cascade / pscore_cascade


def _slot_frame(log: pd.DataFrame) -> pd.DataFrame:
    """The log's slot rows with ``slate`` (code) and ``slot`` (0-based, by position within the slate)."""
    key = "slate_id" if "slate_id" in log.columns else "user_id"
    frame = pd.DataFrame({"row": np.arange(len(log)), "user_id": log["user_id"].to_numpy(),
                          "item_id": log["item_id"].to_numpy(), "position": log["position"].to_numpy(),
                          "slate": pd.factorize(log[key])[0]})
    frame = frame.sort_values(["slate", "position"], kind="mergesort")
    frame["slot"] = frame.groupby("slate").cumcount()
    dup = frame.duplicated(["slate", "position"])
    if dup.any():
        r = int(frame.loc[dup, "row"].iloc[0])
        raise MetricsError(f"log row {r + 1}: position {log['position'].iloc[r]:g} appears twice in one slate "
                           f"({key} {log[key].iloc[r]!r}); give each slot of a slate once")
    return frame


def _rank_probabilities(frame: pd.DataFrame, run: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    keys = ["user_id"] if "user_id" in run.columns else []
    ranked = tie_blocks(run, keys)[keys + ["item_id", "block_start", "block_size"]]
    m = frame.merge(ranked, on=keys + ["item_id"], how="left")
    start, size, slot = m["block_start"].to_numpy(), m["block_size"].to_numpy(), m["slot"].to_numpy()
    covers = (start <= slot) & (slot < start + size)
    marginal = np.where(covers, 1.0 / size, 0.0)
    left = np.where(covers, size - (slot - start), 1.0)  # items of the block still to place, this one included
    step = np.where(covers, 1.0 / left, 0.0)
    cascade = pd.Series(step).groupby(m["slate"].to_numpy()).cumprod().to_numpy()
    return marginal, cascade


def _softmax_cascade(frame: pd.DataFrame, run: pd.DataFrame, temperature: float) -> np.ndarray:
    keys = ["user_id"] if "user_id" in run.columns else []
    score = run["score"].to_numpy(float)
    top = run.groupby(keys)["score"].transform("max").to_numpy() if keys else score.max()
    e = run.assign(e=np.exp((score - top) / temperature))
    total = e.groupby(keys)["e"].transform("sum") if keys else pd.Series(e["e"].sum(), index=e.index)
    e = e.assign(z=total)[keys + ["item_id", "e", "z"]]
    m = frame.merge(e, on=keys + ["item_id"], how="left")
    ev = m["e"].fillna(0.0).to_numpy()
    z = m["z"].to_numpy()
    slates = m["slate"].to_numpy()
    before = pd.Series(ev).groupby(slates).cumsum().to_numpy() - ev
    left = z - before
    step = np.where(np.isfinite(z) & (left > 0), ev / np.where(left > 0, left, 1.0), 0.0)
    return pd.Series(step).groupby(slates).cumprod().to_numpy()


def slot_probabilities(log: pd.DataFrame, run: pd.DataFrame, policy: str, temperature: float = 1.0):
    """(slot frame in slate order, marginal, cascade): the evaluation policy's probability of each logged
    item at its slot and of the slate's top part down to it. ``marginal`` is None under ``softmax``."""
    if policy not in ("rank", "softmax"):
        raise MetricsError(f"slate policy must be 'rank' or 'softmax', got {policy!r}")
    if "position" not in log.columns:
        raise MetricsError("slate estimators need a position column in the log (the slot of each row)")
    frame = _slot_frame(log)
    if policy == "rank":
        marginal, cascade = _rank_probabilities(frame, run)
        return frame, marginal, cascade
    return frame, None, _softmax_cascade(frame, run, float(temperature))


__all__ = ["iips_terms", "rips_terms", "sips_terms", "slate_value", "slot_probabilities", "whole_slate"]
