"""Deterministic demo dataset shown when the user has not uploaded anything.

The data is synthetic but shaped like a real recommender evaluation:

* ``n_users`` users (default 2,400) with a ``segment`` attribute
  (``new`` / ``casual`` / ``heavy``: how much history the user has) and
  ``n_items`` items (default 1,000) with 8 latent feature columns
  ``f0..f7`` (used for ILS, cosine similarity) and a Zipf-like popularity.
* The true affinity of user ``u`` for item ``i`` is
  ``a(u, i) = <user_vec_u, item_vec_i> + 0.6 * pop_i`` where ``pop_i`` is the
  standardised log-popularity.
* Ground truth: each user has 1-3 (new), 3-8 (casual) or 8-20 (heavy)
  relevant items drawn from the items of highest ``a(u, i) + Gumbel noise``,
  graded 3 / 2 / 1 by thirds of that draw, plus as many judged
  non-relevant items (relevance 0) drawn from the low-affinity half.
* Three models, each recommending its top ``list_length`` items (default 50)
  per user with a score in [0, 1]:

  - ``popularity``: the same popularity list for everyone, score = 1.4 x the
    item's share of users who find it relevant, rounded to two decimals, so
    many scores are tied (a weak baseline);
  - ``matrix_factorization``: ``a(u, i)`` plus heavy Gaussian noise (fair;
    its logistic scores are too sharp, slope 1.4: miscalibrated);
  - ``two_tower``: ``a(u, i)`` plus light noise, noisier for new users
    (strong, calibrated, with a visible cold-start gap by segment).

  Model scores are a logistic fit of the hits on the model's estimate
  (Platt scaling), times the slope above.

Everything comes from one ``numpy.random.default_rng(seed)`` so the same
arguments always give identical tables.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

DEMO_SEED = 20240607
N_FEATURES = 8
SEGMENTS = ("new", "casual", "heavy")
SEGMENT_SHARES = (0.3, 0.45, 0.25)
# (low, high) inclusive number of relevant items per segment.
SEGMENT_RELEVANT = {"new": (1, 3), "casual": (3, 8), "heavy": (8, 20)}
# Noise standard deviation added to the affinity, per model and segment.
MODEL_NOISE = {
    "matrix_factorization": {"new": 1.3, "casual": 1.1, "heavy": 1.0},
    "two_tower": {"new": 0.9, "casual": 0.45, "heavy": 0.3},
}
MODEL_NAMES = ("popularity", "matrix_factorization", "two_tower")
# Slope of the logistic score: 1 is calibrated, above 1 over-confident.
MODEL_SLOPE = {"matrix_factorization": 1.4, "two_tower": 1.0}


@dataclass(frozen=True)
class DemoData:
    """The demo tables (all ids are strings).

    runs: model name -> DataFrame ``user_id, item_id, score``
    qrels: DataFrame ``user_id, item_id, relevance`` (graded 0-3)
    item_features: DataFrame ``item_id, f0..f7``
    users: DataFrame ``user_id, segment``
    """

    runs: dict[str, pd.DataFrame]
    qrels: pd.DataFrame
    item_features: pd.DataFrame
    users: pd.DataFrame
    params: dict = field(default_factory=dict)


def _ids(prefix: str, n: int) -> np.ndarray:
    width = len(str(n))
    return np.array([f"{prefix}{i:0{width}d}" for i in range(1, n + 1)], dtype=object)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _top_n(matrix: np.ndarray, n: int) -> np.ndarray:
    """Column indices of the n largest values of each row, best first (equal values by column index)."""
    part = _lowest(-matrix, n)
    vals = np.take_along_axis(matrix, part, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def _lowest(matrix: np.ndarray, n: int) -> np.ndarray:
    """Column indices of the n smallest values of each row, in column order. ``np.argpartition``
    leaves both sides of the split in an order that depends on the CPU's vector instructions (its
    AVX-512 kernel orders them differently from the others); sorted, the demo is the same on every
    machine."""
    return np.sort(np.argpartition(matrix, n - 1, axis=1)[:, :n], axis=1)


def make_demo(n_users: int = 2400, n_items: int = 1000, list_length: int = 50,
              seed: int = DEMO_SEED) -> DemoData:
    """Build the demo dataset (deterministic for given arguments; ~0.5 s)."""
    if list_length > n_items:
        raise ValueError("list_length must not exceed n_items")
    rng = np.random.default_rng(seed)
    user_ids = _ids("u", n_users)
    item_ids = _ids("i", n_items)

    segment_idx = rng.choice(len(SEGMENTS), size=n_users, p=SEGMENT_SHARES)
    segments = np.array(SEGMENTS, dtype=object)[segment_idx]

    item_vec = rng.normal(size=(n_items, N_FEATURES)) / np.sqrt(N_FEATURES) * 1.6
    user_vec = rng.normal(size=(n_users, N_FEATURES))
    popularity = rng.zipf(1.6, size=n_items).astype(float)
    log_pop = np.log1p(popularity)
    pop_z = (log_pop - log_pop.mean()) / log_pop.std()
    affinity = user_vec @ item_vec.T + 0.6 * pop_z[None, :]

    # Ground truth: relevant items from the highest affinity + Gumbel draw.
    draw = affinity + rng.gumbel(size=affinity.shape) * 0.8
    max_rel = max(high for _, high in SEGMENT_RELEVANT.values())
    order = _top_n(draw, max_rel)
    half = n_items // 2
    low_half = _lowest(draw, half)
    lows = np.array([SEGMENT_RELEVANT[s][0] for s in SEGMENTS])[segment_idx]
    highs = np.array([SEGMENT_RELEVANT[s][1] for s in SEGMENTS])[segment_idx]
    n_rel = rng.integers(lows, highs + 1)
    q_users, q_items, q_rel = [], [], []
    for u in range(n_users):
        k = int(n_rel[u])
        rel_items = order[u, :k]
        grades = np.ones(k, dtype=np.int64)
        grades[: int(np.ceil(k / 3))] = 3
        grades[int(np.ceil(k / 3)): int(np.ceil(2 * k / 3))] = 2
        neg_items = rng.choice(low_half[u], size=k, replace=False)
        q_users.append(np.full(2 * k, u))
        q_items.append(np.concatenate([rel_items, neg_items]))
        q_rel.append(np.concatenate([grades, np.zeros(k, dtype=np.int64)]))
    qu = np.concatenate(q_users)
    qi = np.concatenate(q_items)
    qrels = pd.DataFrame({
        "user_id": pd.array(user_ids[qu], dtype="str"),
        "item_id": pd.array(item_ids[qi], dtype="str"),
        "relevance": np.concatenate(q_rel),
    })

    relevant = np.zeros((n_users, n_items), dtype=bool)
    relevant[qu[qrels["relevance"].to_numpy() > 0], qi[qrels["relevance"].to_numpy() > 0]] = True

    runs: dict[str, pd.DataFrame] = {}
    # Popularity baseline: one list for everyone, scores rounded to two
    # decimals (many ties), scaled to about the share of relevant items.
    pop_top = np.argsort(-pop_z, kind="stable")[:list_length]
    hit_rate = relevant[:, pop_top].mean(axis=0)
    pop_score = np.round(np.clip(np.sort(hit_rate)[::-1] * 1.4, 0.01, 0.99), 2)
    runs["popularity"] = _run_frame(
        user_ids, item_ids, np.tile(pop_top, (n_users, 1)), np.tile(pop_score, (n_users, 1)))
    for name, noise in MODEL_NOISE.items():
        sigma = np.array([noise[s] for s in SEGMENTS])[segment_idx][:, None]
        estimate = affinity + rng.normal(size=affinity.shape) * sigma
        top = _top_n(estimate, list_length)
        est_top = np.take_along_axis(estimate, top, axis=1)
        hits = np.take_along_axis(relevant, top, axis=1)
        scores = _platt(est_top, hits, slope=MODEL_SLOPE[name])
        runs[name] = _run_frame(user_ids, item_ids, top, np.round(scores, 6))

    features = pd.DataFrame(np.round(item_vec, 5), columns=[f"f{j}" for j in range(N_FEATURES)])
    features.insert(0, "item_id", pd.array(item_ids, dtype="str"))
    users = pd.DataFrame({"user_id": pd.array(user_ids, dtype="str"),
                          "segment": pd.array(segments, dtype="str")})
    return DemoData(runs={k: runs[k] for k in MODEL_NAMES}, qrels=qrels,
                    item_features=features, users=users,
                    params=dict(n_users=n_users, n_items=n_items,
                                list_length=list_length, seed=seed))


def _platt(estimate: np.ndarray, hits: np.ndarray, slope: float) -> np.ndarray:
    """Logistic scores ``sigmoid(slope * (a * estimate + b))`` with ``a, b`` fitted to ``hits``
    by a few Newton steps of logistic regression (a model's own calibration)."""
    x = estimate.ravel()
    y = hits.ravel().astype(float)
    x = (x - x.mean()) / x.std()
    w = np.array([0.0, np.log(y.mean() / (1 - y.mean()))])
    X = np.column_stack([x, np.ones_like(x)])
    for _ in range(8):
        p = _sigmoid(X @ w)
        grad = X.T @ (y - p)
        hess = (X * (p * (1 - p))[:, None]).T @ X
        w = w + np.linalg.solve(hess, grad)
    return _sigmoid(slope * (X @ w)).reshape(estimate.shape)


def _run_frame(user_ids: np.ndarray, item_ids: np.ndarray, top: np.ndarray,
               scores: np.ndarray) -> pd.DataFrame:
    n_users, n = top.shape
    return pd.DataFrame({
        "user_id": pd.array(np.repeat(user_ids, n), dtype="str"),
        "item_id": pd.array(item_ids[top.ravel()], dtype="str"),
        "score": scores.ravel().astype(float),
    })


def to_csv_bytes(frame: pd.DataFrame) -> bytes:
    """CSV encoding used for demo files written to disk or uploaded in tests."""
    buf = io.StringIO()
    frame.to_csv(buf, index=False, float_format="%.6f")
    return buf.getvalue().encode()


def write_demo_files(directory: str | Path, data: DemoData | None = None) -> dict[str, Path]:
    """Write the demo tables as CSV files (``<model>.csv``, ``qrels.csv``,
    ``item_features.csv``, ``users.csv``) and return name -> path."""
    data = data or make_demo()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for name, run in data.runs.items():
        paths[name] = directory / f"{name}.csv"
        paths[name].write_bytes(to_csv_bytes(run))
    for name, frame in (("qrels", data.qrels), ("item_features", data.item_features),
                        ("users", data.users)):
        paths[name] = directory / f"{name}.csv"
        paths[name].write_bytes(to_csv_bytes(frame))
    return paths
