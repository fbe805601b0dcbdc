"""The reward model ``q(x, a)`` of the direct method and the doubly robust estimators, cross-fitted.

As obp's ``RegressionModel`` (``fitting_method="normal"``): the features of a
round are its context features followed by a one-hot code of the action (the
item), and one model is fitted per slot when the log has a ``position``. With
``n_folds = K > 1`` the rounds are split by
``sklearn.model_selection.KFold(K, shuffle=True, random_state=seed)`` and each
round's predictions (at the logged action and at every action the evaluation
policy may take) come from the model fitted on the other folds (cross-fitting);
``n_folds = 1`` fits once on every round and predicts in sample (obp's default).

The default estimator is stated and deterministic:
``LogisticRegression(C=1.0, max_iter=1000)`` (its probability of reward 1)
when every reward is 0 or 1, else ``Ridge(alpha=1.0)``. Any scikit-learn
estimator may be given instead; it is cloned for each fold and slot. Context
feature columns holding numbers enter as they are, other columns one-hot
coded; an item or category absent from a fold's training rounds codes as all
zeros (``handle_unknown="ignore"``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import MetricsError


def default_estimator(reward: np.ndarray):
    """``LogisticRegression(C=1.0, max_iter=1000)`` for 0/1 rewards, ``Ridge(alpha=1.0)`` otherwise."""
    from sklearn.linear_model import LogisticRegression, Ridge

    if np.isin(reward, (0.0, 1.0)).all():
        return LogisticRegression(C=1.0, max_iter=1000)
    return Ridge(alpha=1.0)


def describe(estimator) -> str:
    """The estimator as scikit-learn prints it, on one line."""
    return " ".join(repr(estimator).split())


def _pipeline(estimator, numeric: list[str], categorical: list[str]):
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    parts = [("action", OneHotEncoder(handle_unknown="ignore"), ["item_id"] + categorical)]
    if numeric:
        parts.append(("numeric", "passthrough", numeric))
    return make_pipeline(ColumnTransformer(parts), clone(estimator))


def _predict(model, frame: pd.DataFrame) -> np.ndarray:
    if hasattr(model, "predict_proba"):
        proba = model.predict_proba(frame)
        classes = list(model.classes_)
        return proba[:, classes.index(1.0)] if 1.0 in classes else np.zeros(len(frame))
    return np.asarray(model.predict(frame), float)


@dataclass
class RewardFit:
    """Cross-fitted predictions: ``q_logged`` (one per round), ``q_candidates`` (one per candidate row),
    ``seconds`` spent fitting and predicting, and the ``model`` description."""

    q_logged: np.ndarray
    q_candidates: np.ndarray
    seconds: float
    model: str


def _fit(estimator, train: pd.DataFrame, y: np.ndarray, numeric, categorical):
    model = _pipeline(estimator, numeric, categorical)
    if hasattr(estimator, "predict_proba") and len(np.unique(y)) < 2:
        return _Constant(float(y[0]) if len(y) else 0.0)
    model.fit(train, y)
    return model


class _Constant:
    """A fold whose training rewards are all equal predicts that reward."""

    def __init__(self, value: float):
        self.value = value

    def predict(self, frame):  # a slot without training rounds: the mean training reward
        return np.full(len(frame), self.value)


def cross_fit(rounds: pd.DataFrame, reward: np.ndarray, candidates: pd.DataFrame, *, context_columns=(),
              estimator=None, n_folds: int = 3, seed: int = 0) -> RewardFit:
    """Fit ``q`` on the rounds and predict it at each round's logged action and at each candidate.

    ``rounds``: one row per logged round with ``item_id``, the context columns and, when the log has
    slots, ``position``. ``candidates``: rows ``round`` (index into ``rounds``), ``item_id``: the
    actions whose ``q(x_round, a)`` is wanted (context columns and position are the round's).
    """
    from sklearn.model_selection import KFold

    if int(n_folds) < 1:
        raise MetricsError(f"n_folds must be >= 1, got {n_folds}")
    n = len(rounds)
    if int(n_folds) > n:
        raise MetricsError(f"n_folds={n_folds} is more than the {n} logged rounds; use fewer folds")
    estimator = default_estimator(reward) if estimator is None else estimator
    context_columns = list(context_columns)
    missing = [c for c in context_columns if c not in rounds.columns]
    if missing:
        raise MetricsError(f"context column {missing[0]!r} is not in the log; columns: {', '.join(map(str, rounds.columns))}")
    numeric = [c for c in context_columns if pd.api.types.is_numeric_dtype(rounds[c])]
    categorical = [c for c in context_columns if c not in numeric]
    features = rounds[["item_id"] + context_columns].copy()
    for c in categorical:
        features[c] = features[c].astype(str)
    positions = rounds["position"].to_numpy() if "position" in rounds.columns else np.zeros(n)
    cand_round = candidates["round"].to_numpy()
    cand = features.iloc[cand_round].reset_index(drop=True).assign(item_id=candidates["item_id"].to_numpy())
    cand_position = positions[cand_round]
    folds = np.zeros(n, np.int64)
    if int(n_folds) > 1:
        for f, (_, test) in enumerate(KFold(int(n_folds), shuffle=True, random_state=seed).split(np.arange(n))):
            folds[test] = f
    q_logged = np.zeros(n)
    q_cand = np.zeros(len(candidates))
    started = time.perf_counter()
    for f in range(int(n_folds)):
        for pos in np.unique(positions):
            at = positions == pos
            train = at & (folds != f) if int(n_folds) > 1 else at
            test = at & (folds == f)
            ctest = (folds[cand_round] == f) & (cand_position == pos)
            if not test.any():
                continue
            model = _fit(estimator, features[train], reward[train], numeric, categorical) if train.any() \
                else _Constant(float(reward[folds != f].mean()) if (folds != f).any() else 0.0)
            q_logged[test] = _predict(model, features[test])
            if ctest.any():
                q_cand[ctest] = _predict(model, cand[ctest])
    return RewardFit(q_logged, q_cand, time.perf_counter() - started, describe(estimator))


__all__ = ["RewardFit", "cross_fit", "default_estimator", "describe"]
