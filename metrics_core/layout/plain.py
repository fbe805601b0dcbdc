"""The layout pass of :func:`~metrics_core.layout.sort_and_join.rank_and_join` in plain Python.

Same arguments, same outputs, no compiled code: one loop per user over Python
objects, so it is only for a few rows. :mod:`metrics_core.warmup` prepares its
tiny data with it, so that it can compile the metric kernels without first
compiling the layout kernel (the dashboard's first page compiles that one
meanwhile), and the tests compare it with the compiled kernel.
"""

from __future__ import annotations

import numpy as np

from .sort_and_join import LayoutArrays, RunSide, TruthSide


def _id_reader(ids):
    """``row -> item id of input row row`` as the bytes its ties are ordered by (decimal string of an
    integer id); the buffers are read into Python objects once, not element by element."""
    if isinstance(ids, tuple):
        off, data = ids[0].tolist(), ids[1].tobytes()
        return lambda row: data[off[row]:off[row + 1]]
    values = ids.tolist()
    return lambda row: str(int(values[row])).encode()


def _user_rows(side, offsets: np.ndarray, u: int) -> list[int]:
    """Input rows of user ``u``, in input order."""
    n = int(offsets[u + 1] - offsets[u])
    first = int(side.start[u])
    return list(range(first, first + n)) if side.grouped else [int(r) for r in side.rows[first:first + n]]


def rank_and_join(chunks: np.ndarray, offsets: np.ndarray, q_offsets: np.ndarray, run: RunSide, truth: TruthSide,
                  out: LayoutArrays) -> tuple[int, int]:
    """:func:`~metrics_core.layout.sort_and_join.rank_and_join` in Python (``chunks`` is unused)."""
    dup, conflict = -1, -1
    run_id, truth_id = _id_reader(run.ids), _id_reader(truth.ids)
    for u in range(offsets.shape[0] - 1):
        # phase 1: the user's judgments, exact repeats dropped, conflicts reported
        qa = int(q_offsets[u])
        judged: dict[bytes, int] = {}  # item -> its first input row in the ground truth
        gains = []
        for j, src in enumerate(_user_rows(truth, q_offsets, u)):
            item = truth_id(src)
            first = judged.get(item)
            out.q_keep[qa + j] = first is None
            if first is None:
                judged[item] = src
                gains.append(truth.relevance[src])
            elif truth.relevance[first] != truth.relevance[src] and conflict < 0:
                conflict = qa + j
        out.kept[u] = len(gains)
        out.ideal[qa:qa + len(gains)] = sorted(gains, reverse=True)
        # phase 2: score descending, ties by item id descending
        rows = _user_rows(run, offsets, u)
        items = [run_id(r) for r in rows]
        order = sorted(range(len(rows)), key=items.__getitem__, reverse=True)
        order.sort(key=lambda j: run.score[rows[j]], reverse=True)  # stable: keeps the id order of ties
        # phase 3: tie key, input row, relevance code; an item met twice is reported
        ra = int(offsets[u])
        seen = set()
        tie = 0
        for i, j in enumerate(order):
            src = rows[j]
            if i > 0 and run.score[src] != run.score[rows[order[i - 1]]]:
                tie = 1 - tie
            out.tie[ra + i] = tie
            if out.local_rows:
                out.local[ra + i] = j
            else:
                out.row[ra + i] = src
            item = items[j]
            if item in seen and dup < 0:
                dup = ra + i
            seen.add(item)
            out.code[ra + i] = truth.code[judged[item]] if item in judged else 0
    return dup, conflict
