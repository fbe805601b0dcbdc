"""Deterministic synthetic ranking data for the benchmarks.

Shape
    ``n_users`` users x ``n_candidates`` (default 100) scored candidates each.
    Every user has between 1 and 20 relevant items (uniform), graded 1, 2 or 3
    (uniform).  About 80 % of a user's relevant items are among its candidates
    (binomial, p = 0.8 per item); the others are *not retrieved*: they appear in
    the ground truth only, so recall and the ideal DCG (taken over all judged
    items) see them.  A user may end up with no relevant candidate at all.

Items
    The catalogue has ``P = 1_000_003`` items (a prime).  User ``u`` sees items
    ``(a_u + j * b_u) mod P`` for slots ``j = 0 .. n_candidates + 19`` with
    random ``a_u`` and ``b_u != 0``; because ``P`` is prime these are distinct,
    so no user has a duplicate item.  Slots ``j < n_candidates`` are the
    candidates; the following slots hold the not-retrieved relevant items.
    Which candidate slots are relevant is scattered with
    ``(37 * j + r_u) mod n_candidates < n_retrieved_u`` so that relevance is not
    correlated with the row order.

Scores
    ``base = (v + 0.35 * grade) / 2.05`` with ``v ~ U[0, 1)`` and ``grade = 0``
    for non-relevant rows: in ``[0, 1)`` (usable as probabilities for logloss)
    and better than random.  The score is ``base`` on a grid of 2**-13 with the
    slot index in the next 7 bits: ``(floor(base * 2**13) * 128 + j) / 2**20``.
    So scores are distinct within a user *and* exact in float32 -- trec_eval
    (pytrec_eval) stores scores as C ``float``, and float64 scores closer than
    float32 resolution would tie there and nowhere else.  With ``ties=True`` the
    score is ``floor(base * 20) / 20``: 20 levels, most users have many ties.

Ids
    ``id_type="int"``: ``user_id = 10_000_000 + 7 * u`` and ``item_id`` = the
    catalogue index (int64, deliberately not dense).  ``id_type="str"``: the
    same numbers formatted as ``"u%08d"`` / ``"i%07d"``, held in pandas' ``str``
    dtype (Arrow-backed under pandas 3), as a reader of CSV/Parquet gives them.

Everything is vectorised with NumPy and Arrow ``take``: 1,000,000 users
(100M rows, integer ids) generate in about 20 s on this 2-core VM.  The run DataFrame is grouped by user in user
order; within a user the rows are in slot order, not score order.

The :class:`Dataset` also carries the arrays of the compiled-loop floor
(:mod:`benchmarks.floor`): per-row relevance joined by construction and the
per-user ground-truth relevance, both contiguous by user.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import time

import numpy as np
import pandas as pd
import pyarrow as pa

CATALOGUE = 1_000_003  # prime: (a + j*b) mod P is injective in j for b != 0
MAX_RELEVANT = 20
MAX_GRADE = 3
P_RETRIEVED = 0.8
SCATTER = 37  # coprime with 100; scatters relevant slots among candidates
TIE_LEVELS = 20


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One synthetic evaluation set.

    run:   DataFrame user_id, item_id, score (n_users * n_candidates rows)
    qrels: DataFrame user_id, item_id, relevance (relevance in 1..3, int64)
    offsets:       int64[n_users + 1], user u's run rows are offsets[u]:offsets[u+1]
    row_relevance: int8[n_rows], relevance of each run row (0 = not relevant)
    scores:        float64[n_rows], the run's score column
    qrel_offsets:  int64[n_users + 1], user u's ground truth rows
    qrel_relevance: int8[n_qrels], ground-truth grades, contiguous by user
    """

    run: pd.DataFrame
    qrels: pd.DataFrame
    offsets: np.ndarray
    row_relevance: np.ndarray
    scores: np.ndarray
    qrel_offsets: np.ndarray
    qrel_relevance: np.ndarray
    n_users: int
    n_candidates: int
    id_type: str
    ties: bool

    @property
    def n_rows(self) -> int:
        return int(self.offsets[-1])

    def input_bytes(self) -> int:
        """In-memory size of the run and ground-truth DataFrames (deep)."""
        return int(self.run.memory_usage(deep=True).sum() + self.qrels.memory_usage(deep=True).sum())


def _format_ids(prefix: str, width: int, numbers: np.ndarray) -> pa.Array:
    fmt = f"{prefix}%0{width}d"
    return pa.array([fmt % n for n in numbers.tolist()], type=pa.string())


@functools.lru_cache(maxsize=1)
def _catalogue_ids() -> pa.Array:
    return _format_ids("i", 7, np.arange(CATALOGUE, dtype=np.int64))


def _string_ids(dictionary: pa.Array, codes: np.ndarray) -> pd.Series:
    """Gather the formatted distinct ids with Arrow ``take`` (no Python loop per row)."""
    taken = dictionary.take(pa.array(codes))
    return pd.Series(taken.to_pandas(), copy=False)


def generate(
    n_users: int,
    n_candidates: int = 100,
    seed: int = 0,
    ties: bool = False,
    id_type: str = "str",
) -> Dataset:
    """Build the dataset; the same arguments always give the same data."""
    if n_users < 1:
        raise ValueError("n_users must be at least 1")
    if n_candidates < MAX_RELEVANT:
        raise ValueError(f"n_candidates must be at least {MAX_RELEVANT}")
    if id_type not in ("str", "int"):
        raise ValueError("id_type must be 'str' or 'int'")
    rng = np.random.default_rng([seed, n_users, n_candidates])
    U, C = n_users, n_candidates
    slots = C + MAX_RELEVANT

    n_rel = rng.integers(1, MAX_RELEVANT + 1, size=U)
    n_ret = rng.binomial(n_rel, P_RETRIEVED)
    n_notret = n_rel - n_ret
    rot = rng.integers(0, C, size=U)
    a = rng.integers(0, CATALOGUE, size=U, dtype=np.int64)
    b = rng.integers(1, CATALOGUE, size=U, dtype=np.int64)

    j = np.arange(slots, dtype=np.int64)
    items = (a[:, None] + j[None, :] * b[:, None]) % CATALOGUE  # (U, slots)
    grades = rng.integers(1, MAX_GRADE + 1, size=(U, slots), dtype=np.int8)

    jc = np.arange(C, dtype=np.int64)
    cand_rel = ((SCATTER * jc[None, :] + rot[:, None]) % C) < n_ret[:, None]  # (U, C)
    row_rel = np.where(cand_rel, grades[:, :C], np.int8(0)).astype(np.int8)
    v = rng.random((U, C))
    base = (v + 0.35 * row_rel) / 2.05
    del v
    if ties:
        scores = np.floor(base * TIE_LEVELS) / TIE_LEVELS
    else:
        # distinct within a user and exact in float32 (trec_eval keeps scores as C floats)
        scores = (np.floor(base * 2.0**13) * 128.0 + jc[None, :]) / 2.0**20
    del base

    # Ground truth: retrieved relevant candidates, then the not-retrieved ones.
    jn = np.arange(MAX_RELEVANT, dtype=np.int64)
    notret = jn[None, :] < n_notret[:, None]  # (U, MAX_RELEVANT)
    qmask = np.concatenate([cand_rel, notret], axis=1)  # (U, slots), row-major = user-grouped
    q_user, q_slot = np.nonzero(qmask)
    q_items = items[q_user, q_slot]
    q_rel = grades[q_user, q_slot].astype(np.int8)
    del qmask, q_slot, grades

    run_user = None if id_type == "int" else np.repeat(np.arange(U, dtype=np.int64), C)
    run_items = np.ascontiguousarray(items[:, :C]).ravel()
    del items
    scores = scores.ravel()
    row_rel = row_rel.ravel()

    user_numbers = 10_000_000 + 7 * np.arange(U, dtype=np.int64)
    if id_type == "int":
        run_uid = pd.Series(np.repeat(user_numbers, C), copy=False)
        run_iid = pd.Series(run_items, copy=False)
        q_uid = pd.Series(user_numbers[q_user], copy=False)
        q_iid = pd.Series(q_items, copy=False)
    else:
        users = _format_ids("u", 8, user_numbers)
        run_uid = _string_ids(users, run_user)
        q_uid = _string_ids(users, q_user)
        if run_items.size + q_items.size < CATALOGUE // 4:  # small: format only the items used
            used, codes = np.unique(np.concatenate([run_items, q_items]), return_inverse=True)
            dictionary = _format_ids("i", 7, used)
            run_iid = _string_ids(dictionary, codes[: run_items.size])
            q_iid = _string_ids(dictionary, codes[run_items.size :])
        else:
            run_iid = _string_ids(_catalogue_ids(), run_items)
            q_iid = _string_ids(_catalogue_ids(), q_items)
    del run_user

    run = pd.DataFrame({"user_id": run_uid, "item_id": run_iid, "score": scores}, copy=False)
    qrels = pd.DataFrame(
        {"user_id": q_uid, "item_id": q_iid, "relevance": q_rel.astype(np.int64)}, copy=False
    )
    offsets = np.arange(0, (U + 1) * C, C, dtype=np.int64)
    qrel_offsets = np.zeros(U + 1, dtype=np.int64)
    np.cumsum(n_rel, out=qrel_offsets[1:])
    return Dataset(
        run=run,
        qrels=qrels,
        offsets=offsets,
        row_relevance=row_rel,
        scores=run["score"].to_numpy(),
        qrel_offsets=qrel_offsets,
        qrel_relevance=q_rel,
        n_users=U,
        n_candidates=C,
        id_type=id_type,
        ties=ties,
    )


def main(argv: list[str] | None = None) -> None:
    """Generate a dataset, print its size and timing; optionally write Parquet."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=10_000)
    p.add_argument("--ids", choices=["str", "int"], default="str")
    p.add_argument("--ties", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--parquet", metavar="DIR", help="write DIR/run.parquet and DIR/qrels.parquet")
    args = p.parse_args(argv)
    t = time.perf_counter()
    ds = generate(args.users, seed=args.seed, ties=args.ties, id_type=args.ids)
    elapsed = time.perf_counter() - t
    print(
        f"{ds.n_users} users, {ds.n_rows} run rows, {len(ds.qrels)} ground-truth rows, "
        f"{ds.input_bytes() / 2**20:.0f} MiB in memory, generated in {elapsed:.2f} s"
    )
    if args.parquet:
        import os

        os.makedirs(args.parquet, exist_ok=True)
        ds.run.to_parquet(os.path.join(args.parquet, "run.parquet"), index=False)
        ds.qrels.to_parquet(os.path.join(args.parquet, "qrels.parquet"), index=False)
        print(f"wrote {args.parquet}/run.parquet and {args.parquet}/qrels.parquet")


if __name__ == "__main__":
    main()
