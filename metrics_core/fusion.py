"""Fuse runs into one: ranx's fusion methods and score normalisations, and weights learnt on some users.

:func:`fuse` takes two or more runs (``user_id, item_id, score``) and returns one run. Each run's scores
are first normalised per user (``norm``), then combined per (user, item) by ``method``. A user missing
from a run counts as an empty list of that run; an item a run does not list for a user is absent from it.
Within a user a run's rank is its order by score, descending, tied scores in the order of the run's rows
(ranx leaves the order of tied scores to its sort; its rank-based methods then differ on ties only).

Normalisations (ranx/normalization; ``s`` a user's scores in one run, ``n`` their number):

* ``min-max``: ``(s - min) / max(max - min, 1e-9)``
* ``max``: ``s / max(max, 1e-9)``
* ``sum``: ``(s - min) / max(sum(s) - n min, 1e-9)``
* ``zmuv`` (z-score): ``(s - mean) / max(std, 1e-9)``, ``std`` the population deviation
* ``none``: the scores as given

Methods (ranx/fusion; ``s_r`` the normalised score of the item in run ``r``, over the runs listing it):

* ``sum`` (CombSUM) ``sum_r s_r``; ``mnz`` (CombMNZ) ``sum_r s_r * |r|``; ``max`` / ``min`` / ``med``
  (CombMAX, CombMIN, CombMED) the largest, smallest, median ``s_r``; ``anz`` (CombANZ) ``sum_r s_r / |r|``.
  As in ranx, CombMAX and CombMIN read -1e9 and 1e9 for a run that does not list the item (it matters only
  for scores beyond 1e9 in size, such as ``max`` normalisation of a list without a positive score)
* ``wsum``: ``sum_r w_r s_r`` (weights in the order of the runs)
* ``rrf``: ``sum_r 1 / (k + rank_r)`` (``k`` = 60 by default)
* ``isr``: ``|r| * sum_r 1 / rank_r^2``
* ``bordafuse``: with ``c`` the user's candidates (items of any run), a run gives its ``i``-th item
  ``c - i + 1`` points and every candidate it does not list ``(c - n + 1) / 2``; the points are summed

:func:`optimize_weights` chooses ``wsum``'s weights on a grid (step ``step``, summing to 1) by a metric's
mean over a random share of the users and reports the chosen fusion on the other users.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import MetricsError
from .frames import as_pandas

__all__ = ["METHODS", "NORMS", "fuse", "optimize_weights", "Optimized"]

METHODS = ("sum", "mnz", "max", "min", "med", "anz", "wsum", "rrf", "isr", "bordafuse")
#: other names of the methods (CombSUM, ...)
METHOD_ALIASES = {"combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min", "combmed": "med",
                  "combanz": "anz", "weighted_sum": "wsum", "borda": "bordafuse"}
NORMS = ("min-max", "max", "sum", "zmuv", "none")
NORM_ALIASES = {"minmax": "min-max", "min_max": "min-max", "z-score": "zmuv", "zscore": "zmuv"}
RANK_BASED = ("rrf", "isr", "bordafuse")
EPSILON = 1e-9
#: what CombMAX / CombMIN read for a run that does not list an item (-1e9 / 1e9, as ranx)
MISSING = 1e9
#: the largest number of weight combinations optimize_weights tries
MAX_GRID = 10_000


def _choice(value, known: tuple, aliases: dict, what: str) -> str:
    name = "none" if value is None else str(value).strip().lower()
    name = aliases.get(name, name)
    if name not in known:
        raise MetricsError(f"unknown fusion {what} {str(value)[:40]!r}; use one of: {', '.join(known)}")
    return name


def _runs_table(runs) -> tuple[list[str], pd.DataFrame]:
    """(names, one table of every run's rows: run, user_id, item_id, score, rank) with each run's ranks."""
    if isinstance(runs, dict):
        names, frames = [str(n) for n in runs], list(runs.values())
    else:
        frames = list(runs)
        names = [f"run{i + 1}" for i in range(len(frames))]
    if len(frames) < 2:
        raise MetricsError("fusion needs at least two runs")
    parts = []
    for i, (name, frame) in enumerate(zip(names, frames)):
        frame = as_pandas(frame, name)
        if not isinstance(frame, pd.DataFrame):
            raise MetricsError(f"run {name!r} must be a table with user_id, item_id and score columns")
        missing = [c for c in ("user_id", "item_id", "score") if c not in frame.columns]
        if missing:
            raise MetricsError(f"run {name!r} has no column {missing[0]}; give user_id, item_id and score")
        score = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(score))
        if len(bad):
            raise MetricsError(f"run {name!r} row {bad[0] + 1}: score {frame['score'].iloc[bad[0]]!r} is not a "
                               "finite number")
        part = pd.DataFrame({"run": i, "user_id": frame["user_id"].to_numpy(), "item_id": frame["item_id"].to_numpy(),
                             "score": score, "row": np.arange(len(frame))})
        dup = part.duplicated(["user_id", "item_id"])
        if dup.any():
            at = int(np.flatnonzero(dup.to_numpy())[0])
            raise MetricsError(f"run {name!r} row {at + 1}: user {part['user_id'].iloc[at]!r} item "
                               f"{part['item_id'].iloc[at]!r} is listed twice; keep one row per (user, item)")
        part = part.sort_values(["user_id", "score", "row"], ascending=[True, False, True], kind="stable")
        part["rank"] = part.groupby("user_id", sort=False).cumcount() + 1
        parts.append(part)
    kinds = {pd.api.types.is_numeric_dtype(p["user_id"]) for p in parts} | \
        {pd.api.types.is_numeric_dtype(p["item_id"]) for p in parts}
    table = pd.concat(parts, ignore_index=True)
    if len(kinds) > 1:  # numbers in one run, text in another: compared as text
        table["user_id"] = table["user_id"].astype(str)
        table["item_id"] = table["item_id"].astype(str)
    return names, table


def _normalise(table: pd.DataFrame, norm: str) -> np.ndarray:
    """Each run's scores normalised per user (see the module's formulas)."""
    s = table["score"]
    if norm == "none":
        return s.to_numpy(dtype=float)
    groups = s.groupby([table["run"], table["user_id"]], sort=False)
    if norm == "min-max":
        low, high = groups.transform("min"), groups.transform("max")
        return ((s - low) / np.maximum(high - low, EPSILON)).to_numpy()
    if norm == "max":
        return (s / np.maximum(groups.transform("max"), EPSILON)).to_numpy()
    if norm == "sum":
        low = groups.transform("min")
        return ((s - low) / np.maximum(groups.transform("sum") - low * groups.transform("size"), EPSILON)).to_numpy()
    deviation = groups.transform(lambda x: float(np.std(x.to_numpy())))
    return ((s - groups.transform("mean")) / np.maximum(deviation, EPSILON)).to_numpy()


def _combine(table: pd.DataFrame, values: np.ndarray, method: str, weights, k: float, n_runs: int) -> pd.Series:
    """The fused score of every (user, item)."""
    keys = [table["user_id"], table["item_id"]]
    if method == "rrf":
        values = 1.0 / (k + table["rank"].to_numpy())
    elif method == "isr":
        values = 1.0 / table["rank"].to_numpy(dtype=float) ** 2
    elif method == "wsum":
        values = values * np.asarray(weights, dtype=float)[table["run"].to_numpy()]
    if method == "bordafuse":
        return _borda(table, n_runs)
    grouped = pd.Series(values).groupby(keys, sort=False)
    if method in ("sum", "wsum", "rrf"):
        return grouped.sum()
    if method in ("mnz", "isr"):
        return grouped.sum() * grouped.size()
    if method in ("max", "min"):  # a run not listing the item counts as -1e9 / 1e9 (ranx's placeholders)
        fill = -MISSING if method == "max" else MISSING
        value = grouped.max() if method == "max" else grouped.min()
        partial = grouped.size() < n_runs
        return value.where(~partial, np.maximum(value, fill) if method == "max" else np.minimum(value, fill))
    return {"med": grouped.median, "anz": grouped.mean}[method]()


def _borda(table: pd.DataFrame, n_runs: int) -> pd.Series:
    """BordaFuse's points summed over the runs: every run's unranked points ``(c - n_r + 1) / 2`` for every
    candidate, plus, where run ``r`` lists the item, its points ``c - rank + 1`` in place of those."""
    c = table.groupby("user_id", sort=False)["item_id"].transform("nunique").to_numpy(dtype=float)
    n = table.groupby(["run", "user_id"], sort=False)["item_id"].transform("size").to_numpy(dtype=float)
    listed_runs = table.groupby("user_id", sort=False)["run"].transform("nunique").to_numpy(dtype=float)
    # a run without the user lists nothing: its unranked points are (c + 1) / 2
    absent_points = (n_runs - listed_runs) * (c + 1) / 2
    unranked = (c - n + 1) / 2
    points = (c - table["rank"].to_numpy() + 1) - unranked
    keys = [table["user_id"], table["item_id"]]
    # every run listing the user gives each candidate its unranked points: the sum over those runs of
    # (c - n_r + 1) / 2, the same for all of the user's items
    per_run = pd.DataFrame({"user_id": table["user_id"], "run": table["run"], "u": unranked}).drop_duplicates(
        ["user_id", "run"]).groupby("user_id", sort=False)["u"].sum()
    base = table["user_id"].map(per_run).to_numpy(dtype=float) + absent_points
    frame = pd.DataFrame({"points": points, "base": base})
    grouped = frame.groupby(keys, sort=False)
    return grouped["points"].sum() + grouped["base"].first()


def fuse(runs, method: str = "wsum", norm: str | None = "min-max", weights=None, k: float = 60) -> pd.DataFrame:
    """One run fusing ``runs`` (a list, or ``{name: run}``; each ``user_id, item_id, score``).

    ``method``: one of :data:`METHODS` (``sum`` CombSUM, ``mnz``, ``max``, ``min``, ``med``, ``anz``,
    ``wsum``, ``rrf``, ``isr``, ``bordafuse``; ``combsum`` ... accepted), ``norm``: one of :data:`NORMS`
    (``z-score`` = ``zmuv``; rank-based methods read only the order), ``weights``: one per run for
    ``wsum`` (default equal weights 1), ``k``: RRF's constant. Formulas in the module's docstring.
    Returns ``user_id, item_id, score``, each user's items by fused score descending (ties by item id).

    Parameters
    ----------
    runs : list or dict of DataFrame
        The runs to fuse, each ``user_id, item_id, score``.
    method : str
        The fusion method (above).
    norm : str, optional
        How each run's scores are normalised per user first (``None`` or ``"none"``: as they are).
    weights : sequence of float, optional
        ``wsum``'s weight of each run.
    k : float
        RRF's constant.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"], "item_id": ["a", "b", "c", "a", "c"],
    ...                     "score": [0.9, 0.8, 0.1, 0.7, 0.6]})
    >>> dense = pd.DataFrame({"user_id": ["u1", "u1"], "item_id": ["b", "a"], "score": [2.0, 1.0]})
    >>> fused = mc.fuse({"bm25": run, "dense": dense}, method="rrf")
    >>> fused[fused.user_id == "u1"].round(5).to_dict("list")  # a: 1/61 + 1/62, b: 1/62 + 1/61, c: 1/63
    {'user_id': ['u1', 'u1', 'u1'], 'item_id': ['a', 'b', 'c'], 'score': [0.03252, 0.03252, 0.01587]}
    """
    method = _choice(method, METHODS, METHOD_ALIASES, "method")
    norm = _choice(norm, NORMS, NORM_ALIASES, "normalisation")
    names, table = _runs_table(runs)
    if method == "wsum":
        weights = [1.0] * len(names) if weights is None else list(weights)
        if len(weights) != len(names) or not all(np.isfinite(np.asarray(weights, dtype=float))):
            raise MetricsError(f"wsum needs one finite weight per run ({len(names)}), got {weights!r}")
    elif weights is not None:
        raise MetricsError(f"weights are for method='wsum', not {method!r}")
    if method == "rrf" and not (np.isfinite(k) and k >= 0):
        raise MetricsError(f"RRF's k must be a number >= 0, got {k!r}")
    values = _normalise(table, norm)
    fused = _combine(table, values, method, weights, float(k), len(names)).rename("score").reset_index()
    fused.columns = ["user_id", "item_id", "score"]
    order = {u: i for i, u in enumerate(pd.unique(table["user_id"]))}
    fused["_user"] = fused["user_id"].map(order)
    fused = fused.sort_values(["_user", "score", "item_id"], ascending=[True, False, True], kind="stable")
    return fused.drop(columns="_user").reset_index(drop=True)


@dataclass
class Optimized:
    """Result of :func:`optimize_weights`: ``weights`` chosen, the fused ``run`` (every user) with them,
    ``grid`` (one row per weight combination: the weights, ``train`` and ``test`` means of the metric),
    ``train_users`` / ``test_users``, ``train`` / ``test`` (the chosen weights' means) and ``metric``."""

    weights: list
    run: pd.DataFrame
    grid: pd.DataFrame
    train_users: pd.Index
    test_users: pd.Index
    train: float
    test: float
    metric: str


def _weight_grid(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """Weights on a grid of ``step`` summing to 1 (ranx's optimize_fusion grid)."""
    parts = int(round(1 / step))
    if not 1 <= parts <= 1000 or abs(parts * step - 1) > 1e-9:
        raise MetricsError(f"step must divide 1 into at most 1,000 parts (0.1, 0.05, ...), got {step!r}")
    grid = [tuple(c / parts for c in combo) for combo in itertools.product(range(parts + 1), repeat=n_runs - 1)
            if sum(combo) <= parts]
    grid = [(*w, round(1 - sum(w), 12)) for w in grid]
    if len(grid) > MAX_GRID:
        raise MetricsError(f"{len(grid):,} weight combinations for {n_runs} runs at step {step:g}: at most "
                           f"{MAX_GRID:,}; use a larger step")
    return grid


def optimize_weights(runs, qrels, metric: str, norm: str | None = "min-max", step: float = 0.1,
                     train_share: float = 0.5, seed: int = 0, preset: str | None = None,
                     **conventions) -> Optimized:
    """``wsum``'s weights that maximise ``metric`` (or minimise an error) over a random ``train_share`` of
    the users of ``qrels`` (seeded), reported on the other users: every weight combination of the grid
    (``step``, summing to 1) is fused and evaluated with :func:`metrics_core.evaluate` (``preset`` and
    convention keywords as there). Ties between combinations go to the first in grid order.

    Parameters
    ----------
    runs : dict of DataFrame
        The runs to fuse.
    qrels : DataFrame
        The ground truth.
    metric : str
        The metric to optimise.
    norm, step, train_share, seed, preset, **conventions
        As above.

    Returns
    -------
    Optimized
        ``weights``, the fused ``run``, the ``grid`` (every combination's value on the training and the
        held-out users), ``train``/``test`` (the chosen weights' values).

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> users = [f"u{i}" for i in range(6)]
    >>> qrels = pd.DataFrame({"user_id": users, "item_id": "hit", "relevance": 1})
    >>> def run(first):  # "hit" first for the users in ``first``, else second
    ...     return pd.DataFrame([(u, item, score) for u in users for item, score in
    ...                          ((("hit", 2), ("miss", 1)) if u in first else (("miss", 2), ("hit", 1)))],
    ...                         columns=["user_id", "item_id", "score"])
    >>> best = mc.optimize_fusion_weights({"a": run(users[:2]), "b": run(users[2:])}, qrels, "mrr@2", step=0.5)
    >>> best.grid.round(4).to_dict("list")
    {'w_a': [0.0, 0.5, 1.0], 'w_b': [1.0, 0.5, 0.0], 'train': [1.0, 0.75, 0.5], 'test': [0.6667, 0.75, 0.8333]}
    >>> best.weights
    [0.0, 1.0]
    """
    from .evaluation import evaluate
    from .metrics.registry import higher_is_better

    if not 0 < train_share < 1:
        raise MetricsError(f"train_share must be between 0 and 1 (the share of users the weights are chosen on), "
                           f"got {train_share!r}")
    names, _ = _runs_table(runs)
    qrels = as_pandas(qrels, "qrels")
    users = pd.Index(pd.unique(qrels["user_id"]))
    if len(users) < 2:
        raise MetricsError("optimising weights needs at least two users in the ground truth (one to choose, one "
                           "to report)")
    chosen = np.random.default_rng(seed).permutation(len(users))
    n_train = min(max(1, int(round(train_share * len(users)))), len(users) - 1)
    train_users, test_users = users[np.sort(chosen[:n_train])], users[np.sort(chosen[n_train:])]
    better = higher_is_better(metric)
    rows = []
    for weights in _weight_grid(len(names), step):
        run = fuse(runs, method="wsum", norm=norm, weights=weights)
        scores = {}
        for part, ids in (("train", train_users), ("test", test_users)):
            truth = qrels[qrels["user_id"].isin(ids)]
            scores[part] = evaluate(run[run["user_id"].isin(ids)], truth, metrics=[metric], preset=preset,
                                    **conventions).summary[metric]
        rows.append({**{f"w_{n}": w for n, w in zip(names, weights)}, **scores})
    grid = pd.DataFrame(rows)
    best = int(grid["train"].idxmax() if better else grid["train"].idxmin())
    weights = [float(grid.iloc[best][f"w_{n}"]) for n in names]
    return Optimized(weights, fuse(runs, method="wsum", norm=norm, weights=weights), grid, train_users, test_users,
                     float(grid.iloc[best]["train"]), float(grid.iloc[best]["test"]), metric)
