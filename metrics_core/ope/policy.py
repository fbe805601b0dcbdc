"""A model's run turned into an evaluation policy: the probability of each action in each context.

A run gives each context (``user_id``) scored items. :func:`action_probabilities`
turns it into ``pi_e(a | x)`` by one stated rule:

* ``top1``: the highest-scored item; tied top scores share the mass equally
  (the policy picks one of them uniformly), ``pi = 1 / g`` for a tie of ``g``.
* ``topk``: uniform over the top ``k`` items, ``pi = 1 / k`` each (a context
  with fewer than ``k`` items: uniform over them). A tie across the cut shares
  the remaining slots: an item of a tied block of ``g`` items starting at
  0-based rank ``s`` gets ``clip(k - s, 0, g) / (g k)``, its chance of being in
  the top ``k`` over the tie orders, divided by ``k``.
* ``softmax``: ``pi(a | x) = exp(s_a / T) / sum_b exp(s_b / T)`` over the
  context's items, temperature ``T > 0`` (computed with the context's largest
  score subtracted, which changes nothing but overflow).
* ``given``: the run's ``probability`` column as it is; each context's
  probabilities must lie in [0, 1] and add up to 1 (within 1e-6), per
  ``position`` when the run has one.

Items a run does not list for a context have probability 0 there. A run
without ``user_id`` is one policy for every context (context-free).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import MetricsError
from ..kernels.ope_lookup import top1_by_runs

POLICIES = ("top1", "topk", "softmax", "given")
SUM_TOLERANCE = 1e-6


def _group_codes(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """One integer per distinct key tuple (0 for everything when there is no key)."""
    if not keys:
        return np.zeros(len(frame), np.int64)
    if len(keys) == 1:
        return pd.factorize(frame[keys[0]])[0].astype(np.int64)
    return frame.groupby(keys, sort=False).ngroup().to_numpy().astype(np.int64)


def _blocks(group: np.ndarray, score: np.ndarray):
    """Rows by context then score (descending): ``(order, group, rank0, block_start, block_size, score)``,
    each in that order: the context code, the 0-based rank and the tie block of equal scores."""
    order = np.lexsort((-score, group))
    group, score = group[order], score[order]
    n = len(order)
    idx = np.arange(n)
    new_group = np.r_[True, group[1:] != group[:-1]] if n else np.zeros(0, bool)
    new_block = new_group | (np.r_[True, score[1:] != score[:-1]] if n else np.zeros(0, bool))
    group_start = np.maximum.accumulate(np.where(new_group, idx, 0)) if n else idx
    block_start = np.maximum.accumulate(np.where(new_block, idx, 0)) if n else idx
    block_id = np.cumsum(new_block) - 1
    block_size = np.bincount(block_id)[block_id] if n else idx
    return order, group, idx - group_start, block_start - group_start, block_size, score


def tie_blocks(run: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The run sorted by context then score (descending) with ``rank0``, ``block_start`` and
    ``block_size``: the 0-based rank of each row and the tie block of equal scores it belongs to."""
    order, _, rank0, start, size, _ = _blocks(_group_codes(run, keys), run["score"].to_numpy(float))
    return run.iloc[order].reset_index(drop=True).assign(rank0=rank0, block_start=start, block_size=size)


def contiguous_runs(group: np.ndarray, n_groups: int) -> np.ndarray | None:
    """Where each run of equal codes starts, when every code's rows are one run (a run file grouped by
    user, in any order of users), else None."""
    if not len(group):
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    return starts if np.bincount(group[starts], minlength=n_groups).max() <= 1 else None


def _group_max(group: np.ndarray, score: np.ndarray, n_groups: int) -> np.ndarray:
    """Each context's largest score, without sorting: one reduction per run of equal codes when each
    context's rows are together (as in almost every run file), else an unbuffered maximum."""
    top = np.full(n_groups, -np.inf)
    starts = contiguous_runs(group, n_groups)
    if starts is not None:
        if len(starts):
            top[group[starts]] = np.maximum.reduceat(score, starts)
    else:
        np.maximum.at(top, group, score)
    return top


def row_probabilities(group: np.ndarray, score: np.ndarray, policy: str, *, k: int | None = None,
                      temperature: float = 1.0) -> np.ndarray:
    """``pi_e`` of every run row, in the rows' order, from its context code ``group`` (integers from 0)
    and its score, by ``top1``, ``topk`` or ``softmax`` (the formulas of the module docstring). Only
    ``topk`` sorts; ``top1`` and ``softmax`` need each context's largest score and a sum."""
    group = np.asarray(group, np.int64)
    score = np.asarray(score, float)
    n_groups = int(group.max()) + 1 if len(group) else 0
    if policy == "top1":
        starts = contiguous_runs(group, n_groups)
        if starts is not None:  # each context's rows together (almost every run file): one pass
            return top1_by_runs(score, starts, np.empty(len(group)))
        best = np.flatnonzero(score == _group_max(group, score, n_groups)[group])
        p = np.zeros(len(group))
        p[best] = 1.0 / np.bincount(group[best], minlength=n_groups)[group[best]]
        return p
    if policy == "softmax":
        if not temperature > 0 or not np.isfinite(temperature):
            raise MetricsError(f"temperature must be a positive finite number, got {temperature}")
        e = np.exp((score - _group_max(group, score, n_groups)[group]) / temperature)
        return e / np.bincount(group, weights=e, minlength=n_groups)[group]
    if policy == "topk":
        if k is None or int(k) < 1:
            raise MetricsError(f"policy='topk' needs k >= 1, got {k}")
        order, sorted_group, _, start, size, _ = _blocks(group, score)
        kk = np.minimum(int(k), np.bincount(sorted_group)[sorted_group])
        p = np.empty(len(group))
        p[order] = np.clip(kk - start, 0, size) / (size * kk)
        return p
    raise MetricsError(f"unknown scoring policy {policy!r}; use top1, topk or softmax")


def given_probabilities(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    if "probability" not in frame.columns:
        raise MetricsError("policy='given' needs a 'probability' column in the run")
    p = pd.to_numeric(frame["probability"], errors="coerce").to_numpy(float)
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))
    if len(bad):
        raise MetricsError(f"run row {int(bad[0]) + 1}: probability {frame['probability'].iloc[bad[0]]!r} is not "
                           f"in [0, 1]; {len(bad)} row(s) are")
    sums = pd.Series(p).groupby([frame[k].to_numpy() for k in keys], sort=False).sum() if keys \
        else pd.Series([p.sum()])
    off = np.flatnonzero(np.abs(sums.to_numpy() - 1.0) > SUM_TOLERANCE)
    if len(off):
        where = f"context {sums.index[off[0]]!r}" if keys else "the run"
        raise MetricsError(f"{where}: the probabilities add up to {sums.iloc[off[0]]:.6g}, not 1; {len(off)} "
                           "context(s) do. Give every action of each context with its probability")
    return p


def action_probabilities(run: pd.DataFrame, policy: str = "softmax", *, k: int | None = None,
                         temperature: float = 1.0) -> pd.DataFrame:
    """``pi_e(a | x)`` of a run: ``user_id`` (absent for a context-free run), [``position``,]
    ``item_id``, ``probability``; rows of probability 0 are left out.

    ``policy`` is one of :data:`POLICIES` (see the module docstring); ``k`` is needed by
    ``topk``, ``temperature`` by ``softmax``. Each context's probabilities add up to 1.
    """
    if policy not in POLICIES:
        raise MetricsError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}")
    keys = [c for c in ("user_id", "position") if c in run.columns]
    if policy == "given":
        frame = run.reset_index(drop=True)
        p = given_probabilities(frame, keys)
        cols = [c for c in ("user_id", "position", "item_id") if c in frame.columns]
        out = frame[cols].assign(probability=p)
        return out[out["probability"] > 0].reset_index(drop=True)
    keys = [c for c in keys if c != "position"]
    if "score" not in run.columns:
        raise MetricsError(f"policy={policy!r} needs a 'score' column in the run")
    p = row_probabilities(_group_codes(run, keys), run["score"].to_numpy(float), policy, k=k,
                          temperature=temperature)
    keep = p > 0
    cols = [c for c in ("user_id", "item_id") if c in run.columns]
    return run[cols][keep].reset_index(drop=True).assign(probability=p[keep])


__all__ = ["POLICIES", "action_probabilities", "given_probabilities", "row_probabilities", "tie_blocks"]
