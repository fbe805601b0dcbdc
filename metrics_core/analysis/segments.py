"""Per-user tables split by a label of each user (a user-attribute value), every table at once.

``split_by_label(tables, labels)`` gives, for each label value, the rows of every table whose
user carries that value: the same rows, in the same order, as selecting
``table[ids_in(table.index, labels.index[labels == value])]`` value by value, but each table's
users are looked up once (one hash join per table) instead of once per value, which matters
when an attribute has many values (a tenure in months: 60 segments), and each label's value is
looked up once for all the tables.

Users are matched by their id as text (``str``), as the label series is indexed; a user of a
table without a label belongs to no segment.
"""

from __future__ import annotations

from typing import Callable, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd


def unique_labels(labels: pd.Series) -> pd.Series:
    """``labels`` with one label per user: the first of a user id given twice."""
    return labels[~labels.index.duplicated(keep="first")] if labels.index.has_duplicates else labels


def label_codes(index: pd.Index, labels: pd.Series, values: Sequence[Hashable]) -> np.ndarray:
    """For each user of ``index``: the position of its label in ``values`` (-1: no label or
    another value). ``labels`` is indexed by user id as text, one row per user."""
    return label_coder(labels, values)(index)


def label_coder(labels: pd.Series, values: Sequence[Hashable]) -> Callable[[pd.Index], np.ndarray]:
    """:func:`label_codes` of ``labels`` and ``values`` for any number of indexes, each label's
    value looked up once for all of them."""
    positions = _value_positions(labels, values)
    return lambda index: _codes_of(index, labels.index, positions)


def _value_positions(labels: pd.Series, values: Sequence[Hashable]) -> np.ndarray:
    """The position in ``values`` of each label (-1: a value not in ``values``, or no label)."""
    return np.asarray(pd.Index(list(values), dtype=object).get_indexer(labels.to_numpy(dtype=object)), dtype=np.int64)


def _codes_of(index: pd.Index, users: pd.Index, positions: np.ndarray) -> np.ndarray:
    """``positions`` (one per user of ``users``, ids as text) for each user of ``index`` (-1: not
    among ``users``), the ids of ``index`` matched as text."""
    as_text = index if isinstance(index.dtype, pd.StringDtype) else pd.Index(pd.Series(index).astype(str).to_numpy())
    found = users.get_indexer(as_text)
    known = found >= 0
    codes = np.full(len(found), -1, dtype=np.int64)
    codes[known] = positions[found[known]]
    return codes


def split_by_label(tables: Mapping[str, pd.DataFrame], labels: pd.Series,
                   values: Sequence[Hashable] | None = None) -> dict[Hashable, dict[str, pd.DataFrame]]:
    """``{value: {name: rows of tables[name] whose user is labelled value}}`` for each of ``values``
    (default: every label value, sorted), in that order; each table keeps its row order."""
    labels = unique_labels(labels)
    values = sorted(labels.unique()) if values is None else list(values)
    positions = _value_positions(labels, values)  # once for every table
    codes = {name: _codes_of(table.index, labels.index, positions) for name, table in tables.items()}
    return {value: {name: table[codes[name] == i] for name, table in tables.items()}
            for i, value in enumerate(values)}
