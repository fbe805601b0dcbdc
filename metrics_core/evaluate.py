"""evaluate(): a prepared (or raw) run + the metric registry -> summary, per-user table, diagnostics.

Every metric name is parsed by :mod:`metrics_core.registry`, whose table says how it is
computed: a column of the ranking kernel (ranking and pooled metrics), a
reduction of :mod:`metrics_core.reductions` (scored rows: partial sums of this
one partition, finalized), or the diversity code below. Every convention
keyword (``gain``, ``ideal``, ``ap_norm``, ``precision_norm``, ``ties``,
``relevance_threshold``, ``empty_users``, ``missing_users``, ``run_only_users``, ``unjudged_rows``,
``novelty_popularity``, ``novelty_average``, ``beyond_users``, ``short_lists``,
``threshold``, ``gauc_weight``, ``beta``) is declared, with its choices, default
and meaning, in :data:`metrics_core.conventions.CONVENTIONS`; a ``preset`` of
:mod:`metrics_core.presets` sets them as one library computes, and explicit
keywords override it.

- users: evaluated users have at least one relevant item in the ground truth;
  a user missing from the run scores 0 (or is left out with
  ``missing_users="exclude"``); users without relevant items
  (``empty_users="exclude"``, or scored 0 with ``"zero"``) and users only in
  the run are excluded and counted in the diagnostics.
- scored-row metrics use the rows of users present in the ground truth; the
  label is relevance >= relevance_threshold (unjudged rows are 0, or left out
  with ``unjudged_rows="exclude"``); a row is predicted positive when
  score >= ``threshold``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import conventions, popularity, reductions, registry
from .diagnostics import Diagnostics, diagnose
from .errors import MetricsError
from .features import align_features
from .frames import ACCEPTED, as_pandas
from .kernels import diversity as div
from .kernels import topk_confusion as topk
from .kernels.partial_auc import PAP, PAUC, partial_auc_values
from .kernels.ranking import (AP_MIN_K, AP_RELEVANT, AP_RETRIEVED, DERIVED_FAMILIES, FAMILY_INDEX, FAMILIES,
                              AP_K, GAIN_EXPONENTIAL, GAIN_LINEAR, IDEAL_JUDGED, IDEAL_K, IDEAL_RETRIEVED,
                              KERNEL_FAMILIES,
                              RankedLists, RankingOptions, discount_table, ranking_curve, ranking_families)
from .kernels._jit import kernel_guard, n_threads
from .layout import Ranked, prepare, segment_sums
from .presets import metric_names as preset_metric_names, parse_metrics as preset_parse_metrics
from .presets import settings as preset_settings, settings_groups

# "binary" gain is the linear gain of relevances mapped to 0/1 (see _lists)
GAINS = {"linear": GAIN_LINEAR, "exponential": GAIN_EXPONENTIAL, "binary": GAIN_LINEAR}
IDEALS = {"judged": IDEAL_JUDGED, "retrieved": IDEAL_RETRIEVED, "k": IDEAL_K}
AP_NORMS = {"relevant": AP_RELEVANT, "min_k": AP_MIN_K, "retrieved": AP_RETRIEVED, "k": AP_K}
GAIN_FAMILIES = ("cg", "dcg", "ndcg")  # the families the gain convention changes
MAX_CURVE_K = 100_000  # metric_curve returns one row per cutoff 1..k_max
MAX_DERIVED_CURVE_K = 1_000  # families outside the curve kernel (fbeta, mcc, accuracy, pauc, pap): one pass per k


def check_conventions(**values):
    """Validate convention keywords (one-line MetricsError); returns the two thresholds as floats."""
    checked = conventions.validate(**values)
    return checked["relevance_threshold"], checked["threshold"]


def check_frame(df, what: str) -> None:
    """A run or ground truth must be a DataFrame whose column names are unique."""
    if not isinstance(df, pd.DataFrame):
        raise MetricsError(f"{what} must be {ACCEPTED} (or a prepared run), got {type(df).__name__}")
    dup = df.columns[df.columns.duplicated()]
    if len(dup):
        raise MetricsError(f"{what}: column {str(dup[0])[:80]!r} appears more than once; rename or drop the repeats")


@dataclass
class Evaluation:
    """Result of :func:`evaluate`.

    ``summary``: metric label -> float; ``per_user``: DataFrame indexed by
    ``user_id`` with one column per per-user metric; ``diagnostics``;
    ``conventions``: the settings used.
    """

    summary: dict
    per_user: pd.DataFrame
    diagnostics: Diagnostics
    n_users: int
    ranked: Ranked
    conventions: dict = field(default_factory=dict)

    def _repr_html_(self) -> str:
        """Jupyter's view: each metric with its 95% bootstrap interval and the settings
        (:func:`metrics_core.notebook.evaluation_html`)."""
        from .notebook import evaluation_html

        return evaluation_html(self)


def _discounts(ranked: Ranked, k: int) -> np.ndarray:
    """Discount table long enough for the longest list and ideal list (a larger cutoff reads no further)."""
    longest = max(int(ranked.list_lengths.max(initial=0)), int(np.diff(ranked.q_offsets).max(initial=0)))
    size = min(max(longest, int(k)), longest) + 1  # ranks beyond the longest list are never read
    key = ("disc", size)
    if key not in ranked._cache:
        ranked._cache[key] = discount_table(size)
    return ranked._cache[key]


def _lists(ranked: Ranked, ties: str, relevance_threshold: float, gain: str = "linear") -> RankedLists:
    """The ranking kernels' view of ``ranked`` under a tie rule (relevances as 0/1 for the binary gain)."""
    rel_values, ideal_rel = ranked.rel_values, ranked.ideal_rel
    if gain == "binary":
        rel_values = (rel_values >= relevance_threshold).astype(np.float64)
        ideal_rel = (ideal_rel >= relevance_threshold).astype(np.float64)
    return RankedLists(ranked.offsets, ranked.codes_in_order(ties), rel_values, ranked.tie_key,
                       ranked.n_relevant(relevance_threshold), ranked.q_offsets, ideal_rel)


def _options(ranked: Ranked, k: int, gain: str, ideal: str, ap_norm: str, ties: str,
             relevance_threshold: float) -> RankingOptions:
    """The conventions as the ranking kernels' codes, with a discount table long enough for ``k``
    (the binary gain's relevances are 0/1 already, see :func:`_lists`: relevant is 1)."""
    threshold = 1.0 if gain == "binary" else float(relevance_threshold)
    return RankingOptions(GAINS[gain], IDEALS[ideal], AP_NORMS[ap_norm], threshold,
                          ties == "average", _discounts(ranked, k))


def ranking_table(ranked: Ranked, k: int, *, gain="linear", ideal="judged", ap_norm="relevant",
                  ties="average", relevance_threshold=1.0, families=None, beta=1.0, catalogue=None) -> np.ndarray:
    """Ranking families at cutoff ``k`` for every user code: array (n_users, len(families)).

    ``families`` names the columns (default: all of ``FAMILIES``, in that order);
    asking only for what is needed keeps the table small. The derived families
    (F-beta, MCC, accuracy from hits@k with ``beta`` and a ``catalogue`` of N
    items, default the items seen; pAUC and pAp from their own kernel) are
    filled after the ranking kernel.
    """
    names = FAMILIES if families is None else tuple(families)
    kernel_names = [n for n in names if n in KERNEL_FAMILIES]
    if any(n in ("fbeta", "mcc", "accuracy") for n in names) and "hits" not in kernel_names:
        kernel_names.append("hits")
    columns = np.full(len(FAMILIES), -1, dtype=np.int64)
    for position, name in enumerate(kernel_names):
        columns[FAMILY_INDEX[name]] = position
    if gain == "exponential" and any(n in GAIN_FAMILIES for n in kernel_names):
        conventions.check_exponential_relevance(ranked.rel_values)
    table = np.empty((ranked.n_users, len(kernel_names)), dtype=np.float64)
    lists = _lists(ranked, ties, relevance_threshold, gain)
    ranking_families(lists, k, _options(ranked, k, gain, ideal, ap_norm, ties, relevance_threshold), columns, table)
    out = np.empty((ranked.n_users, len(names)), dtype=np.float64)
    for position, name in enumerate(names):
        if name in KERNEL_FAMILIES:
            out[:, position] = table[:, kernel_names.index(name)]
        elif name in ("pauc", "pap"):
            out[:, position] = partial_auc_values(lists, k, relevance_threshold, ties == "average",
                                                  PAUC if name == "pauc" else PAP)
        else:
            hits = table[:, kernel_names.index("hits")]
            n_rel = lists.n_rel
            if name == "fbeta":
                out[:, position] = topk.fbeta(hits, n_rel, k, beta)
                continue
            # MCC and accuracy need the catalogue size: every distinct item id, counted only for them
            n_items = ranked.n_items_seen if catalogue is None else int(catalogue)
            out[:, position] = (topk.mcc(hits, n_rel, k, n_items) if name == "mcc" else
                                topk.accuracy(hits, n_rel, k, n_items))
    return out


def metric_curve_compiled() -> bool:
    """Whether :func:`metric_curve`'s kernel for small inputs is in numba's on-disk cache
    (False on a fresh install until it is first compiled, a few seconds)."""
    from .kernels._jit import SERIAL
    from .kernels.ranking import _ranking_curve

    return _ranking_curve.cached_on_disk(SERIAL)


def metric_curve(ranked: Ranked, metrics, k_max: int = 50, *, preset=None, gain=None, ideal=None, ap_norm=None,
                 precision_norm=None, ties=None, relevance_threshold=None, empty_users=None, missing_users=None,
                 run_only_users=None, beta=None) -> pd.DataFrame:
    """Mean of ranking metrics at every cutoff k = 1..k_max, one pass per user.

    ``metrics`` are base names (``"ndcg"``, ``"map"``, ``"hit_ratio"``, ...). Returns
    a DataFrame with a ``k`` column and one column per metric, equal to
    ``evaluate(ranked, [f"{m}@{k}"], **same conventions).summary`` at each k. The
    conventions that shape ranking metrics (and a ``preset`` setting them) are the
    keywords of :func:`evaluate`, resolved the same way.
    """
    with kernel_guard():
        explicit = dict(gain=gain, ideal=ideal, ap_norm=ap_norm, precision_norm=precision_norm, ties=ties,
                        relevance_threshold=relevance_threshold, empty_users=empty_users,
                        missing_users=missing_users, run_only_users=run_only_users, beta=beta)
        conv = conventions.resolve(explicit, preset_settings(preset))
        gain, ideal, ap_norm, ties = conv["gain"], conv["ideal"], conv["ap_norm"], conv["ties"]
        beta = check_beta(conv["beta"])
        if not isinstance(k_max, (int, np.integer)) or isinstance(k_max, bool) or not 1 <= k_max <= MAX_CURVE_K:
            raise MetricsError(f"k_max must be a whole number from 1 to {MAX_CURVE_K:,} (one row per cutoff), "
                               f"got {k_max!r}")
        specs = []
        for m in preset_metric_names(metrics, preset):
            base = registry.parse_metric(m)
            spec = base if base.name == "r_precision" or base.k else registry.parse_metric(f"{m}@1")
            if spec.kind not in ("ranking", "pooled") or base.k:
                raise MetricsError(f"metric curves take ranking metric names without @k; got {m}")
            specs.append(registry.MetricSpec(name=spec.name, k=0, label=m, kind=spec.kind))
        threshold = float(conv["relevance_threshold"])
        users = np.flatnonzero(evaluated_users(ranked, threshold, conv["empty_users"], conv["missing_users"],
                                               conv["run_only_users"]))
        if len(users) == 0:
            raise MetricsError(f"no user has a relevant item (relevance >= {threshold:g})")
        if gain == "exponential" and any(s.entry.family in GAIN_FAMILIES for s in specs):
            conventions.check_exponential_relevance(ranked.rel_values)
        n_rel = ranked.n_relevant(threshold)
        kernel_conv = dict(gain=gain, ideal=ideal, ap_norm=ap_norm, ties=ties, relevance_threshold=threshold)
        sums = ranking_curve(_lists(ranked, ties, threshold, gain), users, k_max,
                             _options(ranked, k_max, gain, ideal, ap_norm, ties, threshold), n_threads())
        out = {"k": np.arange(1, int(k_max) + 1)}
        for s in specs:
            family = s.entry.family
            min_k_precision = family == "precision" and conv["precision_norm"] == "min_k"
            if s.kind == "pooled":
                out[s.label] = sums[:, FAMILY_INDEX["hits"]] / n_rel[users].sum()
            elif s.name == "r_precision":
                full = ranking_table(ranked, 0, **kernel_conv)
                out[s.label] = np.full(int(k_max), full[users, FAMILY_INDEX["r_precision"]].mean())
            elif family in DERIVED_FAMILIES or min_k_precision:  # one table per cutoff
                if int(k_max) > MAX_DERIVED_CURVE_K:
                    raise MetricsError(f"the curve of {s.label} is computed one cutoff at a time: k_max must be "
                                       f"at most {MAX_DERIVED_CURVE_K:,} for it, got {k_max!r}")
                values = []
                for k in range(1, int(k_max) + 1):
                    if min_k_precision:
                        hits = ranking_table(ranked, k, families=("hits",), **kernel_conv)[:, 0]
                        values.append(_precision_min_k(hits, n_rel, k)[users].mean())
                    else:
                        values.append(ranking_table(ranked, k, families=(family,), beta=beta,
                                                    **kernel_conv)[users, 0].mean())
                out[s.label] = np.array(values)
            else:
                out[s.label] = sums[:, FAMILY_INDEX[family]] / len(users)
        return pd.DataFrame(out)


def check_needs(specs, *, item_features, interactions=None) -> None:
    """Refuse metrics whose required side table is missing (the registry's ``needs``), before any work."""
    for s in specs:
        if "item_features" in s.entry.needs and item_features is None:
            raise MetricsError(f"{s.name} needs an item-features table (item_id + feature columns or tags)")
        if "history" in s.entry.needs and interactions is None:
            raise MetricsError(f"{s.name} needs an interactions table (user_id, item_id: the users' history)")


def check_beta(beta) -> float:
    """The F-beta weight as a float within its bounds (one-line MetricsError otherwise)."""
    return conventions.check("beta", beta)


def catalogue_size(ranked: Ranked, item_features=None) -> int:
    """N, the catalogue of coverage, gini, MCC@k, accuracy@k and serendipity_pop: the distinct items of
    ``item_features`` when given, else every item seen in the run or the ground truth."""
    if item_features is not None:
        return int(len(pd.unique(item_features["item_id"])))
    return ranked.n_items_seen


def evaluated_users(ranked: Ranked, relevance_threshold=1.0, empty_users="exclude",
                    missing_users="zero", run_only_users="exclude") -> np.ndarray:
    """Mask of evaluated user codes: in the ground truth with >= 1 relevant item
    (or any user of the ground truth with ``empty_users="zero"``), and in the run
    too with ``missing_users="exclude"``; with ``run_only_users="zero"`` also every
    user of the run without judgments (no relevant item: every ranking metric is 0)."""
    mask = ranked.in_truth.copy()
    if empty_users != "zero":
        mask &= ranked.n_relevant(relevance_threshold) > 0
    if missing_users == "exclude":
        mask &= ranked.in_run
    if run_only_users == "zero":
        mask |= ranked.in_run & ~ranked.in_truth
    return mask


def evaluate(run, qrels=None, metrics=("ndcg@10",), *, preset=None, gain=None, ideal=None, ap_norm=None,
             precision_norm=None, ties=None, relevance_threshold=None, empty_users=None, missing_users=None,
             run_only_users=None, unjudged_rows=None, novelty_popularity=None, novelty_average=None,
             beyond_users=None, short_lists=None, threshold=None, gauc_weight=None, beta=None, item_features=None,
             interactions=None) -> Evaluation:
    """Evaluate a run (a DataFrame, or a :class:`Ranked` from :func:`prepare`).

    ``run``, ``qrels``, ``item_features`` and ``interactions`` may be pandas or polars
    DataFrames, pyarrow Tables or any Arrow PyCapsule table (:mod:`metrics_core.frames`).

    Every convention keyword is described in :mod:`metrics_core.conventions` (also
    ``python -m metrics_core evaluate --help``); a keyword left at None takes the
    ``preset``'s value (:func:`metrics_core.presets.presets`), else its default.
    Under a preset, ``metrics`` may use that library's names (``ndcg_cut_10``).
    Returns an :class:`Evaluation`.
    """
    with kernel_guard():
        explicit = dict(gain=gain, ideal=ideal, ap_norm=ap_norm, precision_norm=precision_norm, ties=ties,
                        relevance_threshold=relevance_threshold, empty_users=empty_users,
                        missing_users=missing_users, run_only_users=run_only_users, unjudged_rows=unjudged_rows,
                        novelty_popularity=novelty_popularity, novelty_average=novelty_average,
                        beyond_users=beyond_users, short_lists=short_lists, threshold=threshold,
                        gauc_weight=gauc_weight, beta=beta)
        conv = conventions.resolve(explicit, preset_settings(preset))
        specs = preset_parse_metrics(metrics, preset)
        groups = settings_groups(specs, preset, explicit)
        if len(groups) == 1:
            return _evaluate(run, qrels, specs, conventions.validate(**{**conv, **groups[0][0]}),
                             item_features=item_features, interactions=interactions)
        return _evaluate_groups(run, qrels, specs, conv, groups, item_features=item_features,
                                interactions=interactions)


def _evaluate_groups(run, qrels, specs, conv: dict, groups, *, item_features, interactions) -> Evaluation:
    """One evaluation of metrics whose library names fix different conventions (Microsoft Recommenders'
    ``map`` and ``map_at_k``): the data is prepared once, each group evaluated under its conventions,
    and the results joined in the order the metrics were asked (diagnostics and conventions are the
    first group's: the one without name-specific settings when there is one)."""
    if not isinstance(run, Ranked):
        check_frame(run, "run")
        if qrels is not None:
            check_frame(qrels, "qrels")
        run = prepare(run, qrels)
    parts = [_evaluate(run, None, group, conventions.validate(**{**conv, **fixed}), item_features=item_features,
                       interactions=interactions) for fixed, group in groups]
    summary = {}
    for part in parts:
        summary.update(part.summary)
    per_user = pd.concat([part.per_user for part in parts], axis=1, join="outer")
    per_user = per_user[[s.label for s in specs if s.label in per_user.columns]]
    first = parts[0]
    return Evaluation(summary={s.label: summary[s.label] for s in specs}, per_user=per_user,
                      diagnostics=first.diagnostics, n_users=first.n_users, ranked=first.ranked,
                      conventions=first.conventions)


def _evaluate(run, qrels, metrics, conv: dict, *, item_features, interactions) -> Evaluation:
    relevance_threshold, threshold = conv["relevance_threshold"], conv["threshold"]
    beta = check_beta(conv["beta"])
    specs = metrics if metrics and isinstance(metrics[0], registry.MetricSpec) else registry.parse_metrics(metrics)
    run, qrels = as_pandas(run, "run"), as_pandas(qrels, "qrels")
    item_features, interactions = as_pandas(item_features, "item features"), as_pandas(interactions, "interactions")
    if not isinstance(run, Ranked):
        check_frame(run, "run")
        if qrels is not None:
            check_frame(qrels, "qrels")
    elif isinstance(qrels, (list, tuple, str)):  # metrics given positionally after a prepared run
        raise MetricsError("run is a prepared Ranked (joined with its ground truth by mc.prepare); pass no "
                           "qrels, and the metrics as metrics=[...]")
    check_needs(specs, item_features=item_features, interactions=interactions)
    ranked = run if isinstance(run, Ranked) else prepare(run, qrels)

    n_rel = ranked.n_relevant(relevance_threshold)
    common = ranked.in_run & ranked.in_truth
    if not common.any():
        raise MetricsError("the run and the ground truth have no user in common; check the user id column")
    evaluated = evaluated_users(ranked, relevance_threshold, conv["empty_users"], conv["missing_users"],
                                conv["run_only_users"])
    ev_codes = np.flatnonzero(evaluated)
    needs_users = any(not s.entry.on_scored_rows for s in specs)
    if needs_users and len(ev_codes) == 0:
        raise MetricsError(
            f"no user has a relevant item (relevance >= {relevance_threshold:g}); "
            "check the relevance column or lower the relevance threshold"
        )

    summary: dict = {}
    per_user: dict = {}
    kernel_conv = {name: conv[name] for name in ("gain", "ideal", "ap_norm", "ties", "relevance_threshold")}
    min_k_precision = conv["precision_norm"] == "min_k"
    needed: dict[int, list] = {}  # cutoff -> families, so each cutoff is one kernel pass
    for s in specs:
        if s.kind in ("ranking", "pooled"):
            families = needed.setdefault(s.k, [])
            wanted = ["hits"] if s.entry.family == "precision" and min_k_precision else [s.entry.family]
            families.extend(f for f in wanted if f not in families)
    # the catalogue size reads every item id: computed only when MCC or accuracy@k is asked for
    catalogue = (catalogue_size(ranked, item_features)
                 if any(f in ("mcc", "accuracy") for fams in needed.values() for f in fams) else None)
    tables = {k: ranking_table(ranked, k, families=fams, beta=beta, catalogue=catalogue, **kernel_conv)
              for k, fams in needed.items()}
    every_user = len(ev_codes) == ranked.n_users
    for s in specs:
        if s.kind in ("ranking", "pooled"):
            family = s.entry.family
            if family == "precision" and min_k_precision:
                values = _precision_min_k(tables[s.k][:, needed[s.k].index("hits")], n_rel, s.k)
            else:
                values = tables[s.k][:, needed[s.k].index(family)]
            values = values if every_user else values[ev_codes]
            if s.kind == "ranking":
                per_user[s.label] = values
                summary[s.label] = float(values.mean())
            else:
                total = n_rel[ev_codes].sum()
                summary[s.label] = float(values.sum() / total) if total > 0 else 0.0

    diag_k = max([s.k for s in specs if s.k > 0], default=10)
    diagnostics = diagnose(ranked, evaluated, n_rel, diag_k)

    scored = [s for s in specs if s.entry.on_scored_rows]
    if scored:
        _scored_metrics(ranked, scored, summary, per_user, ev_codes, diagnostics, relevance_threshold,
                        threshold, conv["gauc_weight"], conv["unjudged_rows"])
    diversity = [s for s in specs if s.kind == "diversity"]
    if diversity:
        users = ev_codes if conv["beyond_users"] == "evaluated" else np.flatnonzero(ranked.list_lengths > 0)
        _diversity_metrics(ranked, diversity, summary, per_user if users is ev_codes else {}, users, diagnostics,
                           conv["ties"], relevance_threshold, item_features, interactions, conv)

    index = pd.Index(ranked.user_ids[ev_codes], name="user_id")
    per_user_df = pd.DataFrame(per_user, index=index)
    ordered = {s.label: summary[s.label] for s in specs}
    return Evaluation(summary=ordered, per_user=per_user_df, diagnostics=diagnostics,
                      n_users=len(ev_codes), ranked=ranked, conventions=dict(conv))


def _precision_min_k(hits: np.ndarray, n_rel: np.ndarray, k: int) -> np.ndarray:
    """precision@k divided by min(k, R) (0 when R = 0)."""
    den = np.minimum(float(k), n_rel.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, hits / den, 0.0)


def _scored_metrics(ranked, specs, summary, per_user, ev_codes, diagnostics, relevance_threshold,
                    threshold, gauc_weight, unjudged_rows="negative"):
    """Scored-row metrics: one partition's partial sums, finalized (see :mod:`metrics_core.reductions`)."""
    rows = reductions.scored_rows(ranked, relevance_threshold, threshold, gauc_weight,
                                  judged_only=unjudged_rows == "exclude")
    totals = reductions.scored_partials([s.name for s in specs], rows)
    for s in specs:
        if s.name in reductions.RANK_STATISTICS:
            summary[s.label] = reductions.rank_statistic(s.name, rows)
        else:
            summary[s.label] = reductions.finalize_scored(s.name, totals)
        if s.name == "gauc":
            diagnostics.gauc_users_skipped = int(totals["gauc_skipped"])
            per_user[s.label] = rows.auc_per_user()[0][ev_codes]


def _positions(ranked: Ranked, ties: str) -> np.ndarray:
    """Item codes in ranked order under the tie rule (the layout's order for 'average')."""
    return ranked.item[ranked.positions_in_order(ties)] if ties in ("input", "trec") else ranked.item


def _diversity_metrics(ranked, specs, summary, per_user, ev_codes, diagnostics, ties,
                       relevance_threshold, item_features, interactions, conv=None):
    """The diversity metrics of ``specs`` (ILS, novelty, coverage, entropy, Gini, ARP, APLT, the
    serendipity metrics, personalization) over the top-k lists of the users ``ev_codes``
    (evaluated users, or every user with a list with ``beyond_users="listed"``).

    Each ranked row enters the top k with probability ``top_k_inclusion`` (0 or
    1, or c/m for a tie group cut by k under ``ties="average"``), which makes
    every value below the exact expectation over the orders of tied scores.
    """
    conv = conventions.resolve(conv or {})
    items = _positions(ranked, ties)
    average = ties == "average"
    ev_mask = np.zeros(ranked.n_users, dtype=bool)
    ev_mask[ev_codes] = True
    ev_rows = np.repeat(ev_mask, ranked.list_lengths)
    n_items = len(ranked.item_ids)
    features = None
    by_k: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # k -> (incl, weight), shared by the metrics at k
    for s in specs:
        k = s.k
        if k not in by_k:
            incl = div.top_k_inclusion(ranked.offsets, ranked.tie_key, k, average)
            by_k[k] = incl, np.where(ev_rows, incl, 0.0)
            for shared in by_k[k]:
                shared.flags.writeable = False
        incl, weight = by_k[k]
        if s.name in ("ils", "ild"):
            if features is None:
                features = align_features(item_features, ranked.item_ids)
                rec = np.unique(items[weight > 0])
                diagnostics.items_missing_features = int((~features.known[rec]).sum())
            values = ils_values if s.name == "ils" else ild_values
            v = values(ranked, items, k, average, features)[ev_codes]
            if conv["short_lists"] == "zero":  # a list of one item scores 0; users without a list stay out
                lengths = ranked.list_lengths[ev_codes]
                # ILD (RecTools): only a top k of one item has no pair; ILS: also lists with < 2 featured items
                short = ((np.minimum(lengths, k) if k else lengths) < 2) if s.name == "ild" else np.isnan(v)
                v = np.where(short & (lengths > 0), 0.0, v)
            per_user[s.label] = v
            summary[s.label] = reductions.finalize_mean(reductions.mean_partial(v))
        elif s.name == "novelty":
            info = _self_information(ranked, relevance_threshold, interactions, conv["novelty_popularity"])
            if conv["novelty_average"] == "rows":
                summary[s.label] = novelty_over_rows(ranked, items, incl, info, k, ev_codes)
                continue
            v = novelty_values(ranked, items, incl, info, k)[ev_codes]
            per_user[s.label] = v
            summary[s.label] = reductions.finalize_mean(reductions.mean_partial(v))
        elif s.name == "coverage":
            expected = reductions.coverage_expected_items(*reductions.coverage_partial(items, weight, n_items))
            summary[s.label] = reductions.finalize_coverage(expected, catalogue_size(ranked, item_features))
        elif s.name in ("entropy", "gini"):
            slots = reductions.exposure_partial(items, weight, n_items)
            summary[s.label] = (reductions.finalize_entropy(slots) if s.name == "entropy" else
                                reductions.finalize_gini(slots, catalogue_size(ranked, item_features)))
        elif s.name in ("arp", "aplt", "serendipity_pop", "serendipity_sim"):
            v = popularity.per_user_values(s.name, ranked, items, incl, k, ties=ties,
                                           relevance_threshold=relevance_threshold, interactions=interactions,
                                           catalogue=catalogue_size(ranked, item_features))[ev_codes]
            per_user[s.label] = v
            summary[s.label] = reductions.finalize_mean(reductions.mean_partial(v))
        elif s.name == "personalization":
            users = personalization_users(ranked, ev_codes)
            shared = reductions.personalization_shared_pairs(*reductions.personalization_partial(items, weight, n_items))
            summary[s.label] = reductions.finalize_personalization(shared, len(users),
                                                                   personalization_k(ranked, users, k))


def ils_values(ranked: Ranked, items: np.ndarray, k: int, average: bool, features) -> np.ndarray:
    """ILS@k of every user code (NaN for lists with fewer than two items with features)."""
    return div.ils(ranked.offsets, items, ranked.tie_key, k, average, features.known, *_similarity_args(features))


def ild_values(ranked: Ranked, items: np.ndarray, k: int, average: bool, features) -> np.ndarray:
    """ILD@k of every user code: mean pairwise Hamming distance (NaN for lists with fewer than two
    items with features)."""
    return div.ils(ranked.offsets, items, ranked.tie_key, k, average, features.known,
                   *_similarity_args(features, distance=True))


def novelty_values(ranked: Ranked, items: np.ndarray, incl: np.ndarray, info: np.ndarray, k: int) -> np.ndarray:
    """novelty@k of every user code: sum of P(row in top k) * info(item) over min(k, n) (NaN for empty lists)."""
    lengths = ranked.list_lengths if k == 0 else np.minimum(ranked.list_lengths, k)
    sums = segment_sums(incl * info[items], ranked.offsets)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lengths > 0, sums / lengths, np.nan)


def novelty_over_rows(ranked: Ranked, items: np.ndarray, incl: np.ndarray, info: np.ndarray, k: int,
                      codes: np.ndarray) -> float:
    """novelty@k averaged over every recommended row of the users ``codes`` (not per user first)."""
    lengths = ranked.list_lengths if k == 0 else np.minimum(ranked.list_lengths, k)
    sums = segment_sums(incl * info[items], ranked.offsets)
    rows = float(lengths[codes].sum())
    return float(sums[codes].sum() / rows) if rows > 0 else float("nan")


def personalization_users(ranked: Ranked, codes: np.ndarray) -> np.ndarray:
    """The users personalization compares: evaluated users with a non-empty list."""
    return codes[ranked.list_lengths[codes] > 0]


def personalization_k(ranked: Ranked, users: np.ndarray, k: int) -> int:
    """The list size of personalization: k, or the longest list without a cutoff."""
    return k if k > 0 else int(ranked.list_lengths[users].max(initial=0))


def _similarity_args(features, distance: bool = False):
    """(mode, feat_row, matrix, tag_start, tag_end, tags) for the ILS kernel (dummies for the unused mode):
    similarities, or with ``distance`` the Hamming distances of ILD (raw feature rows, or tag sets)."""
    none_i, none_f = np.zeros(1, dtype=np.int64), np.zeros((1, 1))
    if features.kind == "cosine":
        if distance:
            return 2, features.feat_row, features.raw, none_i, none_i, none_i
        return 0, features.feat_row, features.matrix, none_i, none_i, none_i
    return 3 if distance else 1, none_i, none_f, features.tag_start, features.tag_end, features.tags


def _self_information(ranked: Ranked, relevance_threshold: float, interactions,
                      popularity: str = "users") -> np.ndarray:
    """-log2 of each item's popularity: share of users who interacted with it (``"users"``), or share of
    all interactions (``"interactions"``); from ``interactions``, else the relevant ground truth."""
    if interactions is None:
        positive = ranked.q_rel >= relevance_threshold
        users = np.repeat(np.arange(ranked.n_users), np.diff(ranked.q_offsets))[positive]
        items = ranked.q_item[positive]
        if popularity == "interactions":
            return div.self_information(np.bincount(items, minlength=len(ranked.item_ids)), len(items))
        n_users = len(np.unique(users))
        pairs = np.unique(users.astype(np.int64) * len(ranked.item_ids) + items)
        counts = np.bincount(pairs % len(ranked.item_ids), minlength=len(ranked.item_ids))
        return div.self_information(counts, n_users)
    if not isinstance(interactions, pd.DataFrame) or not {"user_id", "item_id"} <= set(interactions.columns):
        raise MetricsError("interactions must be a DataFrame with user_id and item_id columns")
    inter = interactions[["user_id", "item_id"]]
    if popularity == "users":
        inter = inter.drop_duplicates()
    ids = inter["item_id"]
    index = ranked.item_ids
    if pd.api.types.is_integer_dtype(ids.dtype) != pd.api.types.is_integer_dtype(index.dtype):
        ids, index = ids.astype(str), pd.Index(index.astype(str))
    code = index.get_indexer(ids)
    counts = np.bincount(code[code >= 0], minlength=len(ranked.item_ids))
    total = len(inter) if popularity == "interactions" else inter["user_id"].nunique()
    return div.self_information(counts, total)
