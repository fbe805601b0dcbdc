"""Item features for intra-list similarity and diversity, aligned to a Ranked's item codes.

An item-features table has an ``item_id`` column and either numeric feature
columns (similarity = cosine of the vectors; Hamming distance = number of
columns whose values differ) or one ``tags`` column holding lists/sets of tags
or strings of tags separated by ``|``, ``,`` or ``;`` (similarity = Jaccard of
the tag sets; Hamming distance = number of tags in one set only, the Hamming
distance of the sets' 0/1 indicator vectors).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import MetricsError

_SPLIT = re.compile(r"[|,;]")


@dataclass(frozen=True)
class ItemFeatures:
    """Features indexed by item code: cosine rows (``feat_row``, ``matrix``; ``raw`` holds the rows as
    given, for Hamming distances) or tag ranges."""

    kind: str  # "cosine" | "jaccard"
    known: np.ndarray  # bool per item code: has features
    feat_row: np.ndarray | None = None
    matrix: np.ndarray | None = None  # L2-normalised rows
    raw: np.ndarray | None = None  # rows as given
    tag_start: np.ndarray | None = None  # -1 where an item has no features
    tag_end: np.ndarray | None = None
    tags: np.ndarray | None = None


def _tag_list(value) -> list[str]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        return [t.strip() for t in _SPLIT.split(value) if t.strip()]
    return [str(t) for t in value]


def align_features(item_features: pd.DataFrame, item_ids: pd.Index) -> ItemFeatures:
    """Align an item-features table to the item codes of a Ranked."""
    if not isinstance(item_features, pd.DataFrame) or "item_id" not in item_features.columns:
        raise MetricsError("item features must be a DataFrame with an 'item_id' column")
    df = item_features.drop_duplicates("item_id", keep="first")
    ids = df["item_id"]
    index = item_ids
    if pd.api.types.is_integer_dtype(ids.dtype) != pd.api.types.is_integer_dtype(index.dtype):
        ids, index = ids.astype(str), pd.Index(index.astype(str))
    code = index.get_indexer(ids)
    n_items = len(item_ids)
    known = np.zeros(n_items, dtype=bool)
    known[code[code >= 0]] = True
    others = [c for c in df.columns if c != "item_id"]
    if "tags" in others or (len(others) == 1 and not pd.api.types.is_numeric_dtype(df[others[0]].dtype)):
        column = "tags" if "tags" in others else others[0]
        lists = [_tag_list(v) for v in df[column].to_numpy(dtype=object)]
        vocab: dict[str, int] = {}
        per_code: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n_items
        for c, tags in zip(code, lists):
            if c >= 0:
                per_code[c] = np.unique(np.array([vocab.setdefault(t, len(vocab)) for t in tags], dtype=np.int64))
        lengths = np.array([len(t) for t in per_code], dtype=np.int64)
        tag_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        tags = np.concatenate(per_code) if n_items else np.empty(0, dtype=np.int64)
        starts = np.where(known, tag_offsets[:-1], -1)
        return ItemFeatures("jaccard", known, tag_start=starts, tag_end=tag_offsets[1:].copy(), tags=tags)
    numeric = df[others].apply(pd.to_numeric, errors="coerce") if others else None
    if numeric is None or numeric.isna().any().any():
        raise MetricsError(
            "item features need numeric feature columns (cosine similarity) or a 'tags' column (Jaccard); "
            f"columns found: {', '.join(map(str, df.columns))}"
        )
    raw = numeric.to_numpy(dtype=np.float64)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    matrix = np.divide(raw, norms, out=np.zeros_like(raw), where=norms > 0)
    feat_row = np.full(n_items, -1, dtype=np.int64)
    rows = np.arange(len(df))
    feat_row[code[code >= 0]] = rows[code >= 0]
    return ItemFeatures("cosine", known, feat_row=feat_row, matrix=np.ascontiguousarray(matrix),
                        raw=np.ascontiguousarray(raw))
