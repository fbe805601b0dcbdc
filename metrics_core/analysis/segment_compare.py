"""Paired comparisons of models within every segment of users at once.

``compare_segments(tables, labels, baseline=..., metrics=..., test=...)`` gives, for each value
of ``labels`` (a user attribute: one segment of users per value), the table that
:func:`metrics_core.analysis.compare.compare` gives on that segment's users with ``correction="none"``
and ``n_resamples=0``: the same rows in the same order, the same columns, the same values (up
to the order of floating-point sums). A caller corrects over every segment itself.

Comparing segment by segment builds per-user tables for each segment and pays the per-table
work of ``compare`` once per segment; an attribute with many values (a tenure in months: 60
segments) then costs far more than its users. Here:

* each metric of each pair of models is paired once over every user
  (:func:`metrics_core.analysis.stats.align_pairs`: users with a finite value in both), and the paired
  users are grouped by segment;
* every segment's statistics come from :class:`metrics_core.analysis.stats.PairedGroups` at once (the
  formulas written once for Compare, the segments, the brief and the gate: each sum one
  ``numpy.add.reduceat`` over the users ordered by segment; the Wilcoxon signed-rank and
  randomization tests, whose statistics are not sums, segment by segment).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.metrics import registry
from metrics_core.analysis import stats
from metrics_core.analysis.compare import COMPARE_COLUMNS, _normalise_tests, _pairs, metric_columns, paired_rows
from metrics_core.errors import MetricsError
from metrics_core.formats import plural
from metrics_core.per_user import per_user_table
from metrics_core.progress import stage
from metrics_core.analysis.segments import label_coder, unique_labels

__all__ = ["compare_segments", "attribute_labels", "segment_rows", "family_keys", "family_sizes", "check_family",
           "MISSING", "FAMILIES", "DEFAULT_FAMILY"]

#: the segment of users the attributes table does not list, or lists without a value
MISSING = "(missing)"
#: The family of segment tests whose p-values are adjusted together, a setting of the analysis:
#: each scope with the columns of a segment row that name its family (rows equal in these columns
#: are one family; no column: every row of the analysis is one family).
FAMILIES = {
    "analysis": (),  # every segment of every attribute x metric x challenger
    "attribute": ("attribute",),  # each attribute apart: its segments x metric x challenger
    "attribute_metric": ("attribute", "metric"),  # each attribute and metric apart: its segments x challenger
    "segment": ("attribute", "segment"),  # each segment apart: metric x challenger
}
DEFAULT_FAMILY = "analysis"


def check_family(family: str) -> str:
    """``family`` when it is one of :data:`FAMILIES` (a one-line error otherwise)."""
    name = str(family).lower()
    if name not in FAMILIES:
        raise MetricsError(f"unknown family of tests {family!r}; use one of: {', '.join(FAMILIES)}")
    return name


def family_keys(rows: pd.DataFrame, family: str) -> list[tuple]:
    """Each segment row's family under the scope ``family`` (:data:`FAMILIES`): a tuple of its
    values in the scope's columns (``()`` for every row when the whole analysis is one family)."""
    columns = FAMILIES[check_family(family)]
    if not columns:
        return [()] * len(rows)
    return list(zip(*(rows[c].astype(str) for c in columns)))


def family_sizes(rows: pd.DataFrame, family: str) -> list[int]:
    """The number of tests in each family of ``rows`` (segment rows), largest first."""
    return sorted(pd.Series(family_keys(rows, family), dtype=object).value_counts().tolist(), reverse=True)


def compare_segments(tables: Mapping[str, Any], labels: pd.Series, *, baseline: str | None = None,
                     metrics: Sequence[str] | None = None, test: str = "t", alpha: float = 0.05,
                     confidence: float = 0.95, n_permutations: int = 10000, seed: int = 0,
                     values: Sequence[Hashable] | None = None,
                     min_users: int = 2) -> dict[Hashable, pd.DataFrame]:
    """``{segment: table}``: for each value of ``labels`` (user id as text -> segment), the table
    ``compare(parts, baseline=baseline, metrics=metrics, test=test, correction="none", alpha=alpha,
    confidence=confidence, n_resamples=0, n_permutations=n_permutations, seed=seed)`` gives on
    the rows of ``tables`` (``{model: per-user table or Evaluation}``) whose user has that value.

    ``values``: the segments, in the order wanted (default: every label value, sorted, by text when
    the values do not compare); a segment in which some model has fewer than ``min_users`` rows is
    left out. Users without a label, or whose label is missing (NaN, None), belong to no segment.
    The p-values are not corrected: ``p_adjusted`` is ``p_value``.

    Parameters
    ----------
    tables : dict
        ``{model: Evaluation or per-user DataFrame}``.
    labels : Series
        Each user's segment, indexed by user id as text.
    baseline, metrics, test, alpha, confidence, n_permutations, seed
        As :func:`metrics_core.analysis.compare.compare`.
    values : sequence, optional
        The segments wanted, in order.
    min_users : int
        A segment where a model has fewer users is left out.

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
    >>> evaluations = {"base": mc.evaluate(run([]), qrels, ["mrr@2"]),
    ...                "new": mc.evaluate(run(users[:5]), qrels, ["mrr@2"])}  # 1 for five users, else 0.5
    >>> labels = pd.Series({"u0": "de", "u1": "de", "u2": "de", "u3": "fr", "u4": "fr", "u5": "fr"})
    >>> tables = mc.compare_segments(evaluations, labels, baseline="base")
    >>> {segment: round(float(t.iloc[0]["diff"]), 4) for segment, t in tables.items()}  # de: 1 - 0.5 for each user; fr: 0.5, 0.5, 0
    {'de': 0.5, 'fr': 0.3333}
    """
    return _compare_segments(tables, labels, baseline=baseline, metrics=metrics, test=test, alpha=alpha,
                             confidence=confidence, n_permutations=n_permutations, seed=seed, values=values,
                             min_users=min_users)


def _compare_segments(tables: Mapping[str, Any], labels: pd.Series, *, baseline: str | None, metrics, test: str,
                      alpha: float, confidence: float, n_permutations: int, seed: int,
                      values: Sequence[Hashable] | None, min_users: int,
                      done: Callable[[int], None] | None = None) -> dict[Hashable, pd.DataFrame]:
    """:func:`compare_segments`. Its progress: one segment test per segment (left out or not) x
    metric x pair of models, told to ``done(k)`` when given (the caller's stage), else shown as a
    stage of its own (:mod:`metrics_core.progress`)."""
    if not isinstance(tables, Mapping) or len(tables) < 2:
        raise MetricsError("compare_segments needs at least two models")
    if not 0 < alpha < 1:
        raise MetricsError(f"alpha must be between 0 and 1, got {alpha}")
    test = _normalise_tests(test, None)[0]
    tables = {str(k): per_user_table(v) for k, v in tables.items()}
    names = list(tables)
    metric_names, resolved = metric_columns(tables, metrics)
    pairs = _pairs(names, baseline)
    labels = unique_labels(labels)
    values = _sorted_values(labels) if values is None else list(values)
    label_codes = label_coder(labels, values)
    sizes = np.min([np.bincount(c[c >= 0], minlength=len(values)) if len(values) else np.zeros(0, int)
                    for c in map(label_codes, (t.index for t in tables.values()))], axis=0)
    kept = np.flatnonzero(sizes >= min_users)
    slot = np.full(len(values) + 1, -1, dtype=np.int64)  # segment -> its position in kept (-1: left out)
    slot[kept] = np.arange(kept.size)

    rows: list[list[dict]] = [[] for _ in kept]  # per kept segment, in compare's row order
    with contextlib.ExitStack() as shown:
        if done is None:
            done = shown.enter_context(stage(
                f"comparing {plural(len(values), 'segment')} ({test}): {plural(len(metric_names), 'metric')} x "
                f"{plural(len(pairs), 'pair')} of models", total=len(values) * len(metric_names) * len(pairs),
                unit="segment test")).update
        for m in metric_names:
            higher = registry.higher_is_better(m)
            for base, other in pairs:
                a, b, users = stats.align_pairs(tables[base][resolved[m][base]], tables[other][resolved[m][other]])
                groups = stats.PairedGroups.by_codes(a, b, slot[label_codes(users)], kept.size)  # -1 reads slot -1
                for seg_rows, row in zip(rows, paired_rows(groups, [test], alpha=alpha, confidence=confidence,
                                                          n_permutations=n_permutations, seed=seed,
                                                          higher_is_better=higher, done=done)):
                    seg_rows.append({"metric": m, "baseline": base, "model": other, **row})
                if len(values) > kept.size:
                    done(len(values) - kept.size)  # the segments left out: nothing to test
    return _tables([values[i] for i in kept], rows, test, alpha, confidence)


def _pair_metric_count(tables: Mapping[str, pd.DataFrame], baseline: str | None, metrics) -> int:
    """How many (metric, pair of models) each segment is tested for (0 when there is nothing to compare)."""
    if len(tables) < 2:
        return 0
    return len(metric_columns(tables, metrics)[0]) * len(_pairs(list(tables), baseline))


def _sorted_values(labels: pd.Series) -> list:
    """The label values, missing ones (NaN, None) left out, sorted; by their text when they do not
    compare with each other (numbers beside text)."""
    present = labels[labels.notna()].unique()
    try:
        return sorted(present)
    except TypeError:
        return sorted(present, key=str)


def _tables(segments: list, rows: list[list[dict]], test: str, alpha: float, confidence: float
            ) -> dict[Hashable, pd.DataFrame]:
    """Each segment's rows as :func:`metrics_core.analysis.compare.compare` gives them with ``correction="none"``
    (one frame built for every segment, then cut: each segment has as many rows as the others)."""
    if not segments:
        return {}
    per_segment = len(rows[0])
    frame = _adjusted(pd.DataFrame([row for seg_rows in rows for row in seg_rows]), test, "none", alpha)
    frame = frame[COMPARE_COLUMNS + [f"p_{test}", f"p_{test}_adjusted"]]
    out = {}
    for i, segment in enumerate(segments):
        table = frame.iloc[i * per_segment:(i + 1) * per_segment].reset_index(drop=True)
        table.attrs = {"correction": "none", "alpha": alpha, "tests": [test], "confidence": confidence,
                       "population": None, "users": "all"}
        out[segment] = table
    return out


def _adjusted(frame: pd.DataFrame, test: str, correction: str, alpha: float, family: str | None = None
              ) -> pd.DataFrame:
    """``frame`` (changed in place) with its p-values (``p_<test>``, the same as ``p_value``)
    adjusted by ``correction`` (together, or within each family of ``family``, :data:`FAMILIES`)
    and ``significant`` at ``alpha``, as ``compare`` names them."""
    p = frame[f"p_{test}"].to_numpy()
    frame[f"p_{test}_adjusted"] = (stats.adjust_pvalues(p, correction) if family is None
                                   else stats.adjust_within(p, family_keys(frame, family), correction))
    frame["p_adjusted"] = frame[f"p_{test}_adjusted"]
    frame["significant"] = (frame["p_adjusted"] < alpha).fillna(False).astype(bool)
    return frame


def attribute_labels(attributes: pd.DataFrame | None, columns: Sequence[str] | None = None) -> list[pd.Series]:
    """One Series per attribute column of ``attributes`` (``user_id`` and one column per attribute;
    ``columns``: these only, in this order): each user's value as text (:data:`MISSING` when
    empty), indexed by user id as text, named by the column; a user id given twice keeps its first
    row."""
    if attributes is None or not len(attributes):
        return []
    ids = attributes["user_id"] if "user_id" in attributes.columns else attributes.index.to_series()
    index = pd.Index(pd.Series(ids).astype(str).to_numpy())
    wanted = [c for c in attributes.columns if c != "user_id"] if columns is None else list(columns)
    absent = [c for c in wanted if c not in attributes.columns or c == "user_id"]
    if absent:
        listed = ", ".join(map(str, (c for c in attributes.columns if c != "user_id"))) or "none"
        raise MetricsError(f"no user attribute {absent[0]!r}; the attributes are: {listed}")
    out = []
    for column in wanted:
        values = attributes[column].astype("string").fillna(MISSING).to_numpy(dtype=object)
        labels = pd.Series(values, index=index, name=str(column))
        out.append(labels[~labels.index.duplicated()])
    return out


def segment_rows(tables: Mapping[str, Any], labels: Sequence[pd.Series], *, baseline: str | None = None,
                 metrics: Sequence[str] | None = None, test: str = "t", correction: str = "holm",
                 alpha: float = 0.05, n_permutations: int = 10000, seed: int = 0,
                 max_segments: int | None = None, min_users: int = 2,
                 family: str = DEFAULT_FAMILY) -> pd.DataFrame:
    """Every segment of every attribute in one table: :func:`compare_segments` of each of ``labels``
    (:func:`attribute_labels`) with the columns ``attribute`` and ``segment`` (as text) in front,
    the p-values then corrected by ``correction`` within each family of tests (``family``, one of
    :data:`FAMILIES`; by default every row is one family: every attribute x segment x metric x
    pair) and ``significant`` at ``alpha``.

    A user of ``tables`` the labels do not name is in the segment :data:`MISSING`. Each attribute's
    segments come largest first (then by name); ``max_segments`` keeps that many of them."""
    tables = {str(k): per_user_table(v) for k, v in tables.items()}
    users = pd.Index(pd.Series(np.concatenate([t.index.astype(str).to_numpy(dtype=object)
                                               for t in tables.values()])).drop_duplicates().to_numpy())
    segments = []  # per attribute: (its labels over the users, its segments in order)
    for attribute in labels:
        found = attribute.reindex(users).fillna(MISSING)
        sizes = found.value_counts()
        segments.append((found, sorted(sizes.index, key=lambda s: (-int(sizes[s]), str(s)))[:max_segments]))
    frames = []
    front = ["attribute", "segment"]
    family = check_family(family)
    if not segments:
        return pd.DataFrame(columns=front + COMPARE_COLUMNS + [f"p_{test}", f"p_{test}_adjusted"])
    tests = sum(len(order) for _, order in segments) * _pair_metric_count(tables, baseline, metrics)
    with stage(f"comparing {plural(sum(len(order) for _, order in segments), 'segment')} of "
               f"{plural(len(segments), 'user attribute')} ({test})", total=tests, unit="segment test") as bar:
        for (found, order), attribute in zip(segments, labels):
            by_segment = _compare_segments(tables, found, baseline=baseline, metrics=metrics, test=test, alpha=alpha,
                                           confidence=0.95, n_permutations=n_permutations, seed=seed, values=order,
                                           min_users=min_users, done=bar.update)
            frames += [rows.assign(attribute=attribute.name, segment=str(segment))
                       for segment, rows in by_segment.items()]
    if not frames:
        return pd.DataFrame(columns=front + COMPARE_COLUMNS + [f"p_{test}", f"p_{test}_adjusted"])
    rows = _adjusted(pd.concat(frames, ignore_index=True), test, correction, alpha, family)
    return rows[front + [c for c in rows.columns if c not in front]]
