"""The log's contexts and actions as integer codes, made once and shared by every model.

Looking up ``pi_e(a_i | x_i)`` for millions of logged rounds is a search of
``context_code * n_actions + action_code`` among the policy's sorted keys,
not a join of text columns. A policy given per ``position`` (``policy="given"``)
is looked up by a join instead (:meth:`LogCodes.at_logged`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ..errors import MetricsError


@dataclass
class LogCodes:
    """``context``/``action``: the code of each round's context and action; ``contexts``/``actions``:
    the distinct values (``pd.Index``) those codes point to; ``rounds``: rounds per context."""

    context: np.ndarray
    action: np.ndarray
    contexts: pd.Index
    actions: pd.Index
    rounds: np.ndarray

    @classmethod
    def of(cls, log: pd.DataFrame) -> "LogCodes":
        context, contexts = pd.factorize(log["user_id"])
        action, actions = pd.factorize(log["item_id"])
        return cls.from_codes(context, action, pd.Index(contexts), pd.Index(actions))

    @classmethod
    def from_codes(cls, context, action, contexts: pd.Index, actions: pd.Index) -> "LogCodes":
        """From codes into dictionaries that may also hold ids the log never shows (they get 0 rounds)."""
        context, action = np.asarray(context, np.int64), np.asarray(action, np.int64)
        return cls(context, action, contexts, actions, np.bincount(context, minlength=len(contexts)))

    @cached_property
    def logged_actions(self) -> np.ndarray:
        """Per action code, whether the log shows it at least once."""
        return np.bincount(self.action, minlength=len(self.actions)) > 0

    def _policy_codes(self, probs: pd.DataFrame) -> tuple[np.ndarray | None, np.ndarray]:
        ctx = self.contexts.get_indexer(probs["user_id"]) if "user_id" in probs.columns else None
        return ctx, self.actions.get_indexer(probs["item_id"])

    def at_logged(self, log: pd.DataFrame, probs: pd.DataFrame) -> np.ndarray:
        """``pi_e(a_i | x_i)`` of every logged round (0 where the policy does not list the action)."""
        if "position" in probs.columns:
            if "position" not in log.columns:
                raise MetricsError("the run gives probabilities per position but the log has no position column")
            keys = [c for c in ("user_id", "position", "item_id") if c in probs.columns]
            return log[keys].merge(probs, on=keys, how="left")["probability"].fillna(0.0).to_numpy()
        ctx, act = self._policy_codes(probs)
        n_actions = len(self.actions)
        keep = act >= 0 if ctx is None else (act >= 0) & (ctx >= 0)
        key = act[keep] if ctx is None else ctx[keep] * n_actions + act[keep]
        value = probs["probability"].to_numpy()[keep]
        order = np.argsort(key, kind="stable")
        key, value = key[order], value[order]
        wanted = self.action if ctx is None else self.context * n_actions + self.action
        at = np.searchsorted(key, wanted)
        at_ok = np.minimum(at, max(len(key) - 1, 0))
        found = (at < len(key)) & (key[at_ok] == wanted) if len(key) else np.zeros(len(wanted), bool)
        return np.where(found, value[at_ok] if len(key) else 0.0, 0.0)

    def contexts_without_list(self, probs: pd.DataFrame) -> int:
        """Logged contexts the policy gives no action (0 for a context-free policy)."""
        if "user_id" not in probs.columns:
            return 0
        ctx, _ = self._policy_codes(probs)
        listed = np.zeros(len(self.contexts), bool)
        listed[ctx[ctx >= 0]] = True
        return int(np.count_nonzero((self.rounds > 0) & ~listed))

    def unlogged_mass(self, probs: pd.DataFrame) -> float:
        """Mean over rounds of the policy's probability on actions the log never shows."""
        ctx, act = self._policy_codes(probs)
        off = (act < 0) | ~self.logged_actions[np.maximum(act, 0)]
        p = probs["probability"].to_numpy()
        if ctx is None:
            slots = probs["position"].nunique() if "position" in probs.columns else 1
            return float(p[off].sum()) / slots
        keep = off & (ctx >= 0)
        mass = np.bincount(ctx[keep], weights=p[keep], minlength=len(self.contexts))
        if "position" in probs.columns:
            mass = mass / max(probs["position"].nunique(), 1)
        return float(np.dot(mass, self.rounds) / len(self.context))

    def per_context(self, values: dict[str, np.ndarray]) -> pd.DataFrame:
        """Sums of each per-round column over each logged context's rounds: ``user_id`` (categorical),
        ``rounds``, then the columns (contexts the log never shows are left out)."""
        in_log = np.flatnonzero(self.rounds)
        # the ids as a categorical over the dictionary: no text is copied per context
        out = {"user_id": pd.Categorical.from_codes(in_log, categories=self.contexts), "rounds": self.rounds[in_log]}
        summed: dict[int, np.ndarray] = {}
        for name, v in values.items():  # one array given under two names (unclipped IPS, SNIPS) is summed once
            if id(v) not in summed:
                summed[id(v)] = np.bincount(self.context, weights=v, minlength=len(self.contexts))[in_log]
            out[name] = summed[id(v)]
        return pd.DataFrame(out)


__all__ = ["LogCodes"]
