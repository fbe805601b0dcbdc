"""What one Spark task computes for one group of whole users (plain pandas/numpy, no pyspark).

Spark hashes every user id to one of ``n_buckets`` groups, so each group holds
every row of its users, from the run and from the ground truth. For one group
:func:`evaluate_bucket` runs the single-machine code on it: ``mc.prepare``
(same validation, same id handling, same sort), ``mc.evaluate`` for the
per-user metric columns, and the same kernels for the parts that are summed
across groups afterwards:

- ``hits`` and relevant counts for pooled ``hit_ratio@k`` (ranking kernel);
- the partial sums of the scored-row metrics (:mod:`metrics_core.metrics.reductions`:
  ``logloss``, ``rmse``, ``mae``, ``pcopc``, the confusion counts at
  ``threshold``, GAUC's weighted sums) over the rows of users in the ground truth;
- for ``auc`` / ``pr_auc``: positive and negative counts per distinct score
  (ordered prefix sums over the whole data are done by Spark afterwards);
- the per-item partials of ``coverage@k`` and ``personalization@k``
  (:mod:`metrics_core.metrics.reductions`; exact expectations over tie orders),
  and items without features for ILS;
- the diagnostics counts (``mc.diagnostics.diagnose``).

Output: blocks of rows (turned into one Arrow table) with a ``kind`` column: ``"u"`` a user row (metric
columns ``m0..``), ``"s"`` a distinct score (``score``, ``a`` = positives,
``b`` = negatives), ``"c"`` / ``"p"`` an item's coverage / personalization
sums for spec ``spec`` (see :func:`_diversity_parts`), ``"f"`` an item
without features, ``"b"`` the group's sums as JSON in ``stats``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics import reductions
from ..metrics.conventions import Settings
from ..metrics.diversity import novelty_values, personalization_k, personalization_users, positions as _positions
from ..evaluation import evaluate, evaluated_users, ranking_table
from ..diagnostics import diagnose
from ..metrics.features import align_features
from ..kernels import diversity as div
from ..metrics.registry import MetricSpec
from ..layout import Ranked, prepare
from ..layout.build import prepare_unretrieved
from ._support import missing_features_diagnosed

USER, ITEM, SCORE = "user_id", "item_id", "score"
QUANTILE_POINTS = 32  # score quantiles each group reports for the exact-AUC ranges
OUT_FIXED = ["kind", USER, ITEM, SCORE, "a", "b", "x", "y", "spec", "stats"]


@dataclass(frozen=True)
class BucketPlan:
    """Everything a task needs, pickled once into the Spark closure."""

    specs: tuple[MetricSpec, ...]
    conventions: Settings  # every convention, resolved and checked once on the driver
    diag_k: int
    truth_in_run: bool
    rel_column: str  # relevance column name of the truth frame
    input_order: bool  # sort rows by "_row" first (ties="input")
    item_features: object = None  # pandas DataFrame (or a Spark broadcast of one)
    novelty_counts: object = None  # pandas Series item_id -> interacting users (or broadcast)
    novelty_users: int = 0
    #: the preset the metric names were written under (a library's names, ``11pt_avg``, are read as the driver
    #: read them); the conventions above are already resolved, the preset only names the metrics
    preset: str | None = None

    @property
    def per_user_specs(self) -> list[MetricSpec]:
        """Per-user columns in mc.evaluate's order: ranking, then gauc, then ILS / novelty."""
        order = {"ranking": 0, "scored_per_user": 1, "diversity": 2}
        chosen = [s for s in self.specs if s.per_user]
        return sorted(chosen, key=lambda s: order[s.kind])

    def output_columns(self) -> list[str]:
        return OUT_FIXED + [f"m{i}" for i in range(len(self.per_user_specs))]


def _value(obj):
    return obj.value if hasattr(obj, "value") and not isinstance(obj, (pd.DataFrame, pd.Series)) else obj


def _frame(kind: str, n: int, columns: list[str], **values) -> tuple:
    """One block of output rows: (kind, number of rows, {column: values}); other columns are null."""
    return kind, int(n), values


def parts_to_arrow(parts: list, schema):
    """Concatenate output blocks into one Arrow table of ``schema`` (nulls where a block has no value)."""
    import pyarrow as pa

    tables = []
    for kind, n, values in parts:
        arrays = []
        for f in schema:
            if f.name == "kind":
                arrays.append(pa.array([kind] * n, type=f.type))
            elif f.name in values:
                arrays.append(pa.array(values[f.name], type=f.type))
            else:
                arrays.append(pa.nulls(n, type=f.type))
        tables.append(pa.Table.from_arrays(arrays, schema=schema))
    return pa.concat_tables(tables)


def parts_to_pandas(parts: list, columns: list[str]) -> pd.DataFrame:
    """The same blocks as one pandas DataFrame (for Spark versions without applyInArrow)."""
    frames = []
    for kind, n, values in parts:
        data = {c: values.get(c, [None] * n) for c in columns}
        data["kind"] = [kind] * n
        frames.append(pd.DataFrame(data, columns=columns))
    return pd.concat(frames, ignore_index=True)


def _prepare_inputs(run: pd.DataFrame, truth: pd.DataFrame | None, plan: BucketPlan):
    if plan.input_order and "_row" in run.columns:
        run = run.sort_values("_row", kind="stable")
    run = run.drop(columns=[c for c in ("_row", "_bucket") if c in run.columns]).reset_index(drop=True)
    if truth is not None:
        truth = truth.drop(columns=[c for c in ("_bucket",) if c in truth.columns]).reset_index(drop=True)
    return run, truth


def evaluate_bucket(run: pd.DataFrame, truth: pd.DataFrame | None, plan: BucketPlan) -> list:
    """Evaluate one group of whole users: a list of output blocks (see the module docstring)."""
    run, truth = _prepare_inputs(run, truth, plan)
    columns = plan.output_columns()
    conv = plan.conventions
    thr = float(conv["relevance_threshold"])
    if plan.truth_in_run:
        truth = None
    if len(run) == 0 or (truth is not None and len(truth) == 0):
        return _bucket_without_common_users(run, truth, plan, columns)
    ranked = prepare(run, truth)
    if not (ranked.in_run & ranked.in_truth).any():
        return _bucket_without_common_users(run, truth, plan, columns)
    return _bucket_from_ranked(ranked, plan, columns, thr)


def _bucket_from_ranked(ranked: Ranked, plan: BucketPlan, columns: list[str], thr: float) -> list:
    conv = plan.conventions
    n_rel = ranked.n_relevant(thr)
    evaluated = evaluated_users(ranked, thr, conv["empty_users"], conv["missing_users"])
    ev_codes = np.flatnonzero(evaluated)
    stats: dict = {"common": 1}
    parts: list[pd.DataFrame] = []

    # diagnostics, with the weights needed to combine shares across groups
    diag = diagnose(ranked, evaluated, n_rel, plan.diag_k)
    stats["diag"] = diag.to_dict()
    ev_run = evaluated & ranked.in_run
    stats["top_rows"] = float(np.minimum(ranked.list_lengths, plan.diag_k)[ev_run].sum())

    # per-user metric columns from mc.evaluate itself, except those with popularity over the whole data
    per_user_specs = plan.per_user_specs
    if len(ev_codes) and per_user_specs:
        names = [s.label for s in per_user_specs if s.entry.spark != "popularity"]
        ev = None
        if names:
            ev = evaluate(ranked, metrics=names, settings=conv, item_features=_value(plan.item_features))
        data = {}
        for i, s in enumerate(per_user_specs):
            if s.entry.spark == "popularity":
                data[f"m{i}"] = _novelty(ranked, s.k, plan, ev_codes)
            else:
                data[f"m{i}"] = ev.per_user[s.label].to_numpy(dtype=np.float64)
        for key, values in data.items():
            part = reductions.mean_partial(values)
            stats["sum_" + key], stats["cnt_" + key] = part["sum"], part["count"]
        users = pd.Series(ranked.user_ids[ev_codes])
        parts.append(_frame("u", len(ev_codes), columns, user_id=users.to_numpy(dtype=object), **data))
    stats["n_evaluated"] = int(len(ev_codes))

    specs = plan.specs
    # pooled hit_ratio@k: sum of hits and of relevant counts over evaluated users
    for s in specs:
        if s.kind == "pooled":
            hits = ranking_table(ranked, s.k, conv, families=("hits",))[ev_codes, 0]
            stats[f"hits@{s.k}"] = float(hits.sum())
    stats["n_rel"] = float(n_rel[ev_codes].sum())

    scored = [s for s in specs if s.entry.on_scored_rows]
    if scored:
        _scored_sums(ranked, plan, thr, stats, parts, columns)
    _diversity_parts(ranked, plan, ev_codes, stats, parts, columns)

    parts.append(_frame("b", 1, columns, stats=[json.dumps(stats)]))
    return parts


def _scored_sums(ranked: Ranked, plan: BucketPlan, thr: float, stats: dict, parts: list, columns: list[str]):
    """Partial sums of the scored-row metrics over this group's scored rows (:mod:`metrics_core.metrics.reductions`)."""
    conv = plan.conventions
    rows = reductions.scored_rows(ranked, thr, float(conv["threshold"]), conv["gauc_weight"],
                                  judged_only=conv["unjudged_rows"] == "exclude")
    scored_specs = [s for s in plan.specs if s.entry.on_scored_rows]
    reduced = [reductions.of(s.entry) for s in scored_specs]
    stats["scored"] = reductions.scored_partials(reduced, rows,
                                                 probabilities=any("probabilities" in s.entry.needs for s in scored_specs))
    stats["scored_rows"] = rows.n
    stats["scored_positives"] = float(rows.label.sum())
    if any(r.whole is not None for r in reduced) and rows.n:
        values, positives, totals = reductions.score_counts(rows.score, rows.label)
        parts.append(_frame("s", len(values), columns, score=values, a=positives, b=totals - positives))
        # evenly spaced (by row count) scores: the driver merges them into score ranges of similar size
        cum = np.cumsum(totals)
        at = np.searchsorted(cum, np.linspace(0, cum[-1], QUANTILE_POINTS + 2)[1:-1], side="left")
        stats["score_points"] = values[np.minimum(at, len(values) - 1)].tolist()


def _inclusion(ranked: Ranked, k: int, ties: str) -> np.ndarray:
    """P(row in its user's top k): 0/1, or c/m for a tie group cut by k under ties="average" (as mc.evaluate)."""
    return div.top_k_inclusion(ranked.offsets, ranked.tie_key, k, ties == "average")


def _novelty(ranked: Ranked, k: int, plan: BucketPlan, ev_codes: np.ndarray) -> np.ndarray:
    """novelty@k of the group's evaluated users (mc.evaluate's per-user code), with item popularity
    counted over the whole data."""
    counts_by_id = _value(plan.novelty_counts)
    ids = ranked.item_ids
    index = counts_by_id.index
    if pd.api.types.is_integer_dtype(index.dtype) != pd.api.types.is_integer_dtype(ids.dtype):
        index, ids = pd.Index(index.astype(str)), pd.Index(ids.astype(str))
    loc = pd.Index(index).get_indexer(ids)
    counts = np.where(loc >= 0, counts_by_id.to_numpy(dtype=np.float64)[np.maximum(loc, 0)], 0.0)
    info = div.self_information(counts, plan.novelty_users)
    items = _positions(ranked, plan.conventions["ties"])
    incl = _inclusion(ranked, k, plan.conventions["ties"])
    return novelty_values(ranked, items, incl, info, k)[ev_codes]


def _diversity_parts(ranked: Ranked, plan: BucketPlan, ev_codes: np.ndarray, stats: dict, parts: list,
                     columns: list[str]):
    """Per-item sums that Spark adds across groups (mc.evaluate's expected-value formulas).

    coverage: per item, the number of certain top-k inclusions (``a``) and the
    sum of log(1 - p) over uncertain ones (``x``); E[covered] = 1 if any is
    certain, else 1 - exp(sum log(1 - p)). personalization: per item
    S1 = sum p (``x``) and S2 = sum p^2 (``y``); E[C(c_i, 2)] = (S1^2 - S2) / 2.
    """
    ties = plan.conventions["ties"]
    items = None
    ev_mask = np.zeros(ranked.n_users, dtype=bool)
    ev_mask[ev_codes] = True
    ev_rows = np.repeat(ev_mask, ranked.list_lengths)
    for j, s in enumerate(plan.specs):
        combine = s.entry.spark
        features_missing = missing_features_diagnosed(s)
        if combine not in ("item_coverage", "item_pairs") and not features_missing:
            continue
        if items is None:
            items = _positions(ranked, ties)
        weight = np.where(ev_rows, _inclusion(ranked, s.k, ties), 0.0)
        n_items = len(ranked.item_ids)
        if combine == "item_coverage":
            certain, log_miss = reductions.coverage_partial(items, weight, n_items)
            codes = np.flatnonzero((certain > 0) | (log_miss < 0))  # items in some top k with p > 0
            parts.append(_frame("c", len(codes), columns, item_id=np.asarray(ranked.item_ids[codes], dtype=object),
                                a=certain[codes].astype(np.int64), x=log_miss[codes], spec=[j] * len(codes)))
        elif combine == "item_pairs":
            users = personalization_users(ranked, ev_codes)
            s1, s2 = reductions.personalization_partial(items, weight, n_items)
            codes = np.flatnonzero(s1 > 0)
            parts.append(_frame("p", len(codes), columns, item_id=np.asarray(ranked.item_ids[codes], dtype=object),
                                x=s1[codes], y=s2[codes], spec=[j] * len(codes)))
            stats[f"pers_users@{j}"] = int(len(users))
            stats[f"pers_maxlen@{j}"] = personalization_k(ranked, users, 0)
        elif features_missing and plan.item_features is not None and "items_missing_features" not in stats:
            features = align_features(_value(plan.item_features), ranked.item_ids)
            rec = np.unique(items[weight > 0])
            missing = ranked.item_ids[rec[~features.known[rec]]]
            stats["items_missing_features"] = int(len(missing))
            parts.append(_frame("f", len(missing), columns, item_id=np.asarray(missing, dtype=object)))


def _unretrieved_values(spec: MetricSpec, ranked: Ranked, ev_codes: np.ndarray, plan: BucketPlan,
                        settings) -> np.ndarray:
    """A per-user metric of users missing from the run (empty lists, as mc.evaluate's kernels see
    them): NaN for the per-user metrics that are not ranking ones (GAUC, ILS, novelty: no rows to
    score); for a ranking metric, the ranking table's own value of an empty list (0 for most, R for
    num_rel, 1 for num_q, the floor's logarithm for gm_map, residual 1 for rbp's residual), the
    catalogue of ``spark_catalogue`` metrics (MCC@k, accuracy@k) being the item-features table, which
    the Spark backend requires for them."""
    entry = spec.entry
    if entry.kind != "ranking":
        return np.full(len(ev_codes), np.nan)
    catalogue = len(pd.unique(_value(plan.item_features)[ITEM])) if entry.spark_catalogue else None
    table = ranking_table(ranked, spec.k, settings, families=(entry.family,), catalogue=catalogue, level=spec.level)
    return table[ev_codes, 0]


def _bucket_without_common_users(run: pd.DataFrame, truth: pd.DataFrame | None, plan: BucketPlan,
                                 columns: list[str]) -> list:
    """A group in which no user is both in the run and in the ground truth.

    ``mc.evaluate`` refuses such data as a whole; inside one group of a larger
    data set it is normal. The group is prepared as a whole (the run may have no
    rows: :func:`~metrics_core.layout.build.prepare_unretrieved`), so its evaluated
    users, all missing from the run, get what the ranking table gives an empty list;
    scored rows are those of users in the ground truth: none here.
    """
    conv = plan.conventions
    thr = float(conv["relevance_threshold"])
    n_run_users = 0
    if len(run):
        only_run = prepare(run, run.assign(relevance=0.0)[[USER, ITEM, "relevance"]])
        n_run_users = only_run.n_users
    stats: dict = {"common": 0}
    parts = []
    n_ev = 0
    n_rel_total = 0.0
    n_truth = 0
    without_rel = 0
    if truth is not None and len(truth):
        t = truth.rename(columns={plan.rel_column: "relevance"})[[USER, ITEM, "relevance"]]
        ranked = prepare_unretrieved(run[[USER, ITEM, SCORE]], t)
        n_rel = ranked.n_relevant(thr)
        evaluated = evaluated_users(ranked, thr, conv["empty_users"], conv["missing_users"])
        ev_codes = np.flatnonzero(evaluated & ranked.in_truth)
        n_ev, n_truth = len(ev_codes), int(ranked.in_truth.sum())
        without_rel = int((ranked.in_truth & (n_rel == 0)).sum())
        n_rel_total = float(n_rel[ev_codes].sum())
        specs = plan.per_user_specs
        if n_ev and specs:
            data = {f"m{i}": _unretrieved_values(s, ranked, ev_codes, plan, conv) for i, s in enumerate(specs)}
            for key, values in data.items():
                part = reductions.mean_partial(values)
                stats["sum_" + key], stats["cnt_" + key] = part["sum"], part["count"]
            users = np.asarray(ranked.user_ids[ev_codes], dtype=object)
            parts.append(_frame("u", n_ev, columns, user_id=users, **data))
    stats["diag"] = {"k": plan.diag_k, "n_users_evaluated": n_ev, "n_users_run": n_run_users,
                     "n_users_truth": n_truth, "users_only_in_run": n_run_users, "users_only_in_truth": n_truth,
                     "users_without_relevant": without_rel, "share_users_ties_in_top_k": 0.0,
                     "users_short_lists": 0, "share_unjudged_in_top_k": 0.0,
                     "items_missing_features": None, "gauc_users_skipped": None, "notes": []}
    stats["top_rows"] = 0.0
    stats["n_evaluated"] = n_ev
    stats["n_rel"] = n_rel_total
    for s in plan.specs:
        if s.kind == "pooled":
            stats[f"hits@{s.k}"] = 0.0
    parts.append(_frame("b", 1, columns, stats=[json.dumps(stats)]))
    return parts
