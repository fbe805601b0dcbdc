"""evaluate(): a prepared (or raw) run + the metric registry -> summary, per-user table, diagnostics.

This module validates the inputs and dispatches each metric as its registry
entry (:mod:`metrics_core.metrics.registry`) says: a column of the ranking kernel or a
derived family (:mod:`metrics_core.metrics.derived`) for ranking and pooled metrics, a
reduction of :mod:`metrics_core.metrics.reductions` for scored rows (partial sums of
this one partition, finalized), a function of :mod:`metrics_core.metrics.diversity`
for diversity metrics. The convention keywords are declared, with their
choices, defaults and meanings, in :data:`metrics_core.metrics.conventions.CONVENTIONS`
and resolved once into a :class:`metrics_core.metrics.conventions.Settings` (a
``preset`` of :mod:`metrics_core.metrics.presets` sets them as one library computes,
explicit keywords override it), which every layer below reads.

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

from .metrics import conventions, derived, diversity, reductions, registry
from .metrics.conventions import Settings, takes_conventions
from .metrics.derived import Inputs
from .metrics.kernel_settings import RelevanceViews, check_relevance, kernel_options, relevance_views
from .diagnostics import Diagnostics, diagnose
from .metrics.diversity import Lists, catalogue_size
from .encode import whole_number_twins
from .errors import MetricsError
from .frames import ACCEPTED, as_pandas
from .io.quote import quoted
from .kernels.ranking import (FAMILY_INDEX, GAIN_FAMILIES, KERNEL_FAMILIES, RankedLists, RankingOptions, cutoff_order,
                              discount_table, ranking_curve, ranking_families)
from .kernels._jit import kernel_guard, n_threads
from .layout import Ranked, prepare
from .metrics.presets import metric_names as preset_metric_names, parse_metrics as preset_parse_metrics
from .metrics.presets import settings_groups

RANKED_KINDS = ("ranking", "pooled")  # the kinds computed as columns of ranking_table
MAX_CURVE_K = 100_000  # metric_curve returns one row per cutoff 1..k_max
MAX_DERIVED_CURVE_K = 1_000  # families outside the curve kernel (derived.BY_FAMILY): one pass per k


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
    ``conventions``: the settings used. In a notebook it shows each metric with its 95% bootstrap
    interval and the settings (:func:`metrics_core.outputs.notebook.evaluation_html`).
    """

    summary: dict
    per_user: pd.DataFrame
    diagnostics: Diagnostics
    n_users: int
    ranked: Ranked
    conventions: dict = field(default_factory=dict)


def _discounts(ranked: Ranked, k: int) -> np.ndarray:
    """Discount table long enough for the longest list and ideal list (a larger cutoff reads no further)."""
    longest = max(int(ranked.list_lengths.max(initial=0)), int(np.diff(ranked.q_offsets).max(initial=0)))
    size = min(max(longest, int(k)), longest) + 1  # ranks beyond the longest list are never read
    key = ("disc", size)
    if key not in ranked._cache:
        ranked._cache[key] = discount_table(size)
    return ranked._cache[key]


def _views(ranked: Ranked, settings: Settings) -> RelevanceViews:
    """The ranking kernels' view of ``ranked`` under the tie rule, with the relevances the gain reads and
    as given (:func:`metrics_core.metrics.kernel_settings.relevance_views`)."""
    threshold = settings.relevance_threshold
    return relevance_views(RankedLists(ranked.offsets, ranked.codes_in_order(settings.ties), ranked.rel_values,
                                       ranked.tie_key, ranked.n_relevant(threshold), ranked.q_offsets,
                                       ranked.ideal_rel), settings)


def _options(ranked: Ranked, k: int, settings: Settings) -> RankingOptions:
    """The conventions as the ranking kernels' codes, with a discount table long enough for ``k``."""
    return kernel_options(settings, _discounts(ranked, k))


def ranking_table(ranked: Ranked, k: int, settings: Settings, families=None, catalogue=None,
                  level: float | None = None) -> np.ndarray:
    """Ranking families at cutoff ``k`` for every user code: array (n_users, len(families)).

    ``families`` names the columns (default: every kernel column, then every
    derived family); asking only for what is needed keeps the table small. A
    family with a derivation (:data:`metrics_core.metrics.derived.BY_FAMILY`) that applies under ``settings``
    is filled after the ranking kernel from the kernel columns it reads
    (:mod:`metrics_core.metrics.derived`; ``catalogue`` is N, default the items seen; ``level`` the x of the
    families written ``name@x``). Each column is contiguous (the array is in Fortran order).
    """
    if families is None:
        families = tuple(KERNEL_FAMILIES) + tuple(derived.BY_FAMILY)
    columns = ranking_tables(ranked, {(int(k), level): families}, settings, catalogue)[(int(k), level)]
    out = np.empty((len(families), ranked.n_users), dtype=np.float64)  # one row per family, returned transposed
    for position, name in enumerate(families):
        out[position] = columns[name]
    return out.T


def ranking_tables(ranked: Ranked, wanted: dict, settings: Settings, catalogue=None) -> dict:
    """The families of several cutoffs at once: ``wanted`` maps ``(k, level)`` to the families of that cutoff
    (and level); returns ``(k, level) -> {family: one value per user code}`` (contiguous arrays, shared with
    the kernel's table: read them, never write). The kernel columns of every cutoff come from one walk over
    each user's list (:func:`ranking_families` with all the cutoffs), the derived families of each cutoff
    after it."""
    derivations = derived.BY_FAMILY
    plans = {}
    for key, families in wanted.items():
        names = tuple(families)
        filled = {n: derivations[n] for n in names if n in derivations and derivations[n].applies(settings)}
        kernel_names = list(dict.fromkeys([n for n in names if n not in filled] +
                                          [c for d in filled.values() for c in d.columns]))
        plans[key] = (names, filled, kernel_names)
    kernel_names = list(dict.fromkeys(n for _, _, names in plans.values() for n in names))
    ks = cutoff_order(key[0] for key, (_, _, names) in plans.items() if names)
    if any(n in GAIN_FAMILIES for n in kernel_names):
        check_relevance(settings, ranked.rel_values)
    views = _views(ranked, settings)
    kernel_rows = np.empty((len(ks) * len(kernel_names), ranked.n_users), dtype=np.float64)  # row: (cutoff, family)
    if kernel_names:
        columns = np.full(len(KERNEL_FAMILIES), -1, dtype=np.int64)
        for position, name in enumerate(kernel_names):
            columns[FAMILY_INDEX[name]] = position
        ranking_families(views.gain, ks, _options(ranked, int(ks.max()), settings), columns, kernel_rows)
    at = {int(k): i * len(kernel_names) for i, k in enumerate(ks)}
    tables = {}
    for (k, level), (names, filled, needed) in plans.items():
        given = {n: kernel_rows[at[int(k)] + kernel_names.index(n)] for n in needed}
        inputs = Inputs(ranked, views, int(k), given, settings,
                        # the catalogue size reads every item id: counted only when a derived family asks for it
                        lambda: ranked.n_items_seen if catalogue is None else int(catalogue), level)
        tables[(k, level)] = {name: filled[name].compute(inputs) if name in filled else inputs.columns[name]
                              for name in names}
    return tables


def metric_curve_compiled() -> bool:
    """Whether :func:`metric_curve`'s kernel for small inputs is in numba's on-disk cache
    (False on a fresh install until it is first compiled, a few seconds)."""
    from .kernels._jit import SERIAL
    from .kernels.ranking import _ranking_curve

    return _ranking_curve.cached_on_disk(SERIAL)


def _curve_spec(name) -> registry.MetricSpec:
    """The ranking entry of a base name given to :func:`metric_curve` (``precision`` is precision@k)."""
    base = registry.parse_metric(name)
    spec = base
    if not base.k and base.kind not in RANKED_KINDS:
        try:
            spec = registry.parse_metric(f"{name}@1")
        except MetricsError:
            pass
    if spec.kind not in RANKED_KINDS or base.k:
        raise MetricsError(f"metric curves take ranking metric names without @k; got {name}")
    return registry.MetricSpec(name=spec.name, k=0, label=name, kind=spec.kind, metric=spec.entry)


def _writing_hint(ranked: Ranked) -> str:
    """When the run's users and the ground truth's differ only in how whole numbers are written
    (``7.0`` against ``7``), the clause that says so (ids are compared as exact text)."""
    twins = whole_number_twins(ranked.user_ids[ranked.in_run], ranked.user_ids[ranked.in_truth])
    if twins is None:
        return ""
    count, mine, theirs = twins
    return (f" ({count:,} user id(s) of the run write the same whole number as one of the ground truth, e.g. "
            f"{quoted(mine, 40)} against {quoted(theirs, 40)}; ids are kept as written, read both the same way, "
            f"with read_run(..., whole_number_ids=True) or --whole-number-ids)")


@takes_conventions
def metric_curve(ranked: Ranked, metrics, k_max: int = 50, *, preset=None, settings: Settings | None = None,
                 **conventions_given) -> pd.DataFrame:
    """Mean of ranking metrics at every cutoff k = 1..k_max, one pass per user.

    ``metrics`` are base names (``"ndcg"``, ``"map"``, ``"hit_ratio"``, ...). Returns
    a DataFrame with a ``k`` column and one column per metric, equal to
    ``evaluate(ranked, [f"{m}@{k}"], **same conventions).summary`` at each k. The
    conventions (and a ``preset`` setting them) are the keywords of
    :func:`evaluate`, resolved the same way; those of other kinds of metrics are ignored.

    Parameters
    ----------
    ranked : Ranked
        What :func:`prepare` returned.
    metrics : sequence of str
        Base names of ranking metrics (``registry.curve_metrics()`` lists them).
    k_max : int
        The largest cutoff; the table has one row per k = 1..k_max.
    preset, settings, gain, ideal, ... : optional
        As :func:`evaluate`.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"], "item_id": ["a", "b", "c", "a", "c"],
    ...                     "score": [0.9, 0.8, 0.1, 0.7, 0.6]})
    >>> qrels = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["b", "c"], "relevance": [1, 2]})
    >>> curve = mc.metric_curve(mc.prepare(run, qrels), ["precision", "mrr"], k_max=3)
    >>> curve.round(4).to_dict("list")  # both relevant items at rank 2
    {'k': [1, 2, 3], 'precision': [0.0, 0.5, 0.3333], 'mrr': [0.0, 0.5, 0.5]}
    """
    with kernel_guard():
        settings = conventions.settings_of(settings, preset, conventions_given)
        preset = settings.preset
        if not isinstance(k_max, (int, np.integer)) or isinstance(k_max, bool) or not 1 <= k_max <= MAX_CURVE_K:
            raise MetricsError(f"k_max must be a whole number from 1 to {MAX_CURVE_K:,} (one row per cutoff), "
                               f"got {k_max!r}")
        specs = [_curve_spec(m) for m in preset_metric_names(metrics, preset)]
        threshold = float(settings.relevance_threshold)
        users = np.flatnonzero(evaluated_users(ranked, threshold, settings.empty_users, settings.missing_users,
                                               settings.run_only_users))
        if len(users) == 0:
            raise MetricsError(f"no user has a relevant item (relevance >= {threshold:g})")
        if any(s.entry.family in GAIN_FAMILIES for s in specs):
            check_relevance(settings, ranked.rel_values)
        check_one_order(specs, ranked, settings)
        n_rel = ranked.n_relevant(threshold)
        sums = ranking_curve(_views(ranked, settings).gain, users, k_max, _options(ranked, k_max, settings), n_threads())
        out = {"k": np.arange(1, int(k_max) + 1)}
        for s in specs:
            entry = s.entry
            if s.kind == "pooled":
                out[s.label] = sums[:, FAMILY_INDEX[entry.family]] / n_rel[users].sum()
            elif entry.cutoff == registry.CUTOFF_NONE:  # one value for every cutoff
                full = ranking_table(ranked, 0, settings, families=(entry.family,))
                out[s.label] = np.full(int(k_max), full[users, 0].mean())
            elif entry.family in derived.BY_FAMILY and derived.BY_FAMILY[entry.family].applies(settings):
                # one table per cutoff
                if int(k_max) > MAX_DERIVED_CURVE_K:
                    raise MetricsError(f"the curve of {s.label} is computed one cutoff at a time: k_max must be "
                                       f"at most {MAX_DERIVED_CURVE_K:,} for it, got {k_max!r}")
                out[s.label] = np.array([ranking_table(ranked, k, settings, families=(entry.family,))[users, 0].mean()
                                         for k in range(1, int(k_max) + 1)])
            else:
                out[s.label] = sums[:, FAMILY_INDEX[entry.family]] / len(users)
        return pd.DataFrame(out)


def aggregate(values: np.ndarray, how: str) -> float:
    """The summary of per-user values as ``how`` (:data:`metrics_core.metrics.registry.AGGREGATES`) says: their mean,
    their sum, or the exp of their mean (the values being logarithms: a geometric mean)."""
    if how == "sum":
        return float(values.sum())
    if how == "geometric":
        return float(np.exp(values.mean()))
    return float(values.mean())


def check_one_order(specs, ranked: Ranked, settings: Settings) -> None:
    """Refuse, under ``ties="average"`` on a run with tied scores, the metrics read over one order of each
    list (the registry's ``one_order``): their expectation over tie orders is not computed."""
    if settings.ties != "average":
        return
    for s in specs:
        if s.entry.one_order and ranked.has_ties:
            raise MetricsError(f"{s.label[:80]} reads one order of each list and the run has tied scores: its "
                               f"average over tie orders is not computed; pass ties='trec' (trec_eval's order), "
                               f"'score_id' or 'input'")


def check_needs(specs, *, item_features, interactions=None) -> None:
    """Refuse metrics whose required side table is missing (the registry's ``needs``), before any work."""
    for s in specs:
        if "item_features" in s.entry.needs and item_features is None:
            raise MetricsError(f"{s.name} needs an item-features table (item_id + feature columns or tags)")
        if "history" in s.entry.needs and interactions is None:
            raise MetricsError(f"{s.name} needs an interactions table (user_id, item_id: the users' history)")
        if "reference" in s.entry.needs:
            raise MetricsError(f"{s.name} compares two runs; evaluate takes one run (see mc.intersection)")


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


@takes_conventions
def evaluate(run, qrels=None, metrics=("ndcg@10",), *, preset=None, settings: Settings | None = None,
             item_features=None, interactions=None, progress: bool = False, **conventions_given) -> Evaluation:
    """Evaluate a run (a DataFrame, or a :class:`Ranked` from :func:`prepare`).

    ``run``, ``qrels``, ``item_features`` and ``interactions`` may be pandas or polars
    DataFrames, pyarrow Tables or any Arrow PyCapsule table (:mod:`metrics_core.frames`).

    Every convention keyword is described in :mod:`metrics_core.metrics.conventions` (also
    ``python -m metrics_core evaluate --help``); a keyword left at None takes the
    ``preset``'s value (:func:`metrics_core.metrics.conventions.presets`), else its default.
    Under a preset, ``metrics`` may use that library's names (``ndcg_cut_10``).
    ``progress=True`` shows the stages (preparing, evaluating) and a first compile of the kernels
    on ``sys.stderr`` (under the cell in a notebook) once a stage runs over 2 s
    (:mod:`metrics_core.progress`). Returns an :class:`Evaluation`.

    Parameters
    ----------
    run : DataFrame or Ranked
        ``user_id, item_id, score`` (one row per recommended item), or what :func:`prepare` returned.
    qrels : DataFrame, optional
        ``user_id, item_id, relevance`` (or ``label``); None when ``run`` carries the relevance, or is a
        :class:`Ranked`.
    metrics : sequence of str
        Metric names (``docs/metrics.md``; ``@k`` optional), e.g. ``["ndcg@10", "map@100", "auc"]``.
    preset : str, optional
        A library whose conventions and metric names to take (``"trec_eval"``, ``"rectools"``, ...).
    settings : Settings, optional
        Every convention resolved and checked once (``mc.Settings(preset=..., gain=..., ...)``), instead of
        ``preset`` and the keywords; keywords given beside it change it (only they are checked).
    item_features, interactions : DataFrame, optional
        Item features (diversity metrics) and the users' history (novelty, popularity, serendipity).
    progress : bool
        Show the stages of a long evaluation on ``sys.stderr``.
    gain, ideal, ap_norm, ... : str or float, optional
        The conventions listed below; None takes the preset's value, else the default.

    Returns
    -------
    Evaluation
        ``.summary`` (metric -> value), ``.per_user`` (a DataFrame indexed by ``user_id``),
        ``.diagnostics``, ``.conventions``.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"], "item_id": ["a", "b", "c", "a", "c"],
    ...                     "score": [0.9, 0.8, 0.1, 0.7, 0.6]})
    >>> qrels = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["b", "c"], "relevance": [1, 2]})
    >>> ev = mc.evaluate(run, qrels, ["ndcg@2", "mrr@2", "precision@2"])
    >>> {name: round(value, 4) for name, value in ev.summary.items()}  # each user's relevant item at rank 2
    {'ndcg@2': 0.6309, 'mrr@2': 0.5, 'precision@2': 0.5}
    >>> ev.per_user["mrr@2"].to_dict()
    {'u1': 0.5, 'u2': 0.5}
    >>> round(mc.evaluate(run, qrels, ["dcg@2"], gain="exponential").summary["dcg@2"], 6)  # mean of 1 and 2^2 - 1, / log2(3)
    1.26186
    """
    from . import progress as reporting

    settings = conventions.settings_of(settings, preset, conventions_given)  # checked here, once
    if progress:
        with reporting.active(reporting.in_notebook()):
            return evaluate(run, qrels, metrics, settings=settings, item_features=item_features,
                            interactions=interactions)
    preset = settings.preset
    with kernel_guard():
        specs = preset_parse_metrics(metrics, preset)
        with reporting.stage("evaluating " + ", ".join(s.label for s in specs)[:80]):
            groups = settings_groups(specs, preset, settings.explicit())
            if len(groups) == 1:
                return _evaluate(run, qrels, specs, settings.replace(**groups[0][0]),
                                 item_features=item_features, interactions=interactions)
            return _evaluate_groups(run, qrels, specs, settings, groups, item_features=item_features,
                                    interactions=interactions)


def _evaluate_groups(run, qrels, specs, settings: Settings, groups, *, item_features, interactions) -> Evaluation:
    """One evaluation of metrics whose library names fix different conventions (Microsoft Recommenders'
    ``map`` and ``map_at_k``): the data is prepared once, each group evaluated under its conventions,
    and the results joined in the order the metrics were asked (diagnostics and conventions are the
    first group's: the one without name-specific settings when there is one)."""
    if not isinstance(run, Ranked):
        check_frame(run, "run")
        if qrels is not None:
            check_frame(qrels, "qrels")
        run = prepare(run, qrels)
    parts = [_evaluate(run, None, group, settings.replace(**fixed), item_features=item_features,
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


def _evaluate(run, qrels, metrics, settings: Settings, *, item_features, interactions) -> Evaluation:
    relevance_threshold = settings.relevance_threshold
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
        raise MetricsError("the run and the ground truth have no user in common; check the user id column"
                           f"{_writing_hint(ranked)}")
    evaluated = evaluated_users(ranked, relevance_threshold, settings.empty_users, settings.missing_users,
                                settings.run_only_users)
    ev_codes = np.flatnonzero(evaluated)
    needs_users = any(not s.entry.on_scored_rows for s in specs)
    if needs_users and len(ev_codes) == 0:
        raise MetricsError(
            f"no user has a relevant item (relevance >= {relevance_threshold:g}); "
            "check the relevance column or lower the relevance threshold"
        )

    summary: dict = {}
    per_user: dict = {}
    ranked_specs = [s for s in specs if s.kind in RANKED_KINDS]
    check_one_order(ranked_specs, ranked, settings)
    needed: dict[tuple, list] = {}  # (cutoff, level) -> families, so each cutoff is one kernel pass
    for s in ranked_specs:
        families = needed.setdefault((s.k, s.level), [])
        if s.entry.family not in families:
            families.append(s.entry.family)
    # the catalogue size reads every item id: computed only when a metric needs it
    catalogue = (catalogue_size(ranked, item_features)
                 if any("catalogue" in s.entry.needs for s in ranked_specs) else None)
    tables = ranking_tables(ranked, needed, settings, catalogue) if needed else {}
    every_user = len(ev_codes) == ranked.n_users
    for s in ranked_specs:
        key = (s.k, s.level)
        values = tables[key][s.entry.family]
        values = values if every_user else values[ev_codes]
        if s.kind == "pooled":
            total = n_rel[ev_codes].sum()
            summary[s.label] = float(values.sum() / total) if total > 0 else 0.0
        else:
            per_user[s.label] = values
            summary[s.label] = aggregate(values, s.entry.aggregate)

    diag_k = max([s.k for s in specs if s.k > 0], default=10)
    diagnostics = diagnose(ranked, evaluated, n_rel, diag_k)

    scored = [s for s in specs if s.entry.on_scored_rows]
    if scored:
        _scored_metrics(ranked, scored, summary, per_user, ev_codes, diagnostics, settings)
    beyond = [s for s in specs if s.kind == "diversity"]
    if beyond:
        listed = settings.beyond_users == "listed"
        users = np.flatnonzero(ranked.list_lengths > 0) if listed else ev_codes
        lists = Lists(ranked, users, settings, item_features, interactions, diagnostics)
        for s in beyond:
            summary[s.label], values = diversity.BY_METRIC[s.name](lists, s.k)
            if values is not None:  # per-user columns are those of the evaluated users
                per_user[s.label] = values if not listed else _on_evaluated(values, users, ev_codes, ranked.n_users)

    index = pd.Index(ranked.user_ids[ev_codes], name="user_id")
    per_user_df = pd.DataFrame(per_user, index=index)
    ordered = {s.label: summary[s.label] for s in specs}
    return Evaluation(summary=ordered, per_user=per_user_df, diagnostics=diagnostics,
                      n_users=len(ev_codes), ranked=ranked, conventions=dict(settings))


def _on_evaluated(values: np.ndarray, users: np.ndarray, ev_codes: np.ndarray, n_users: int) -> np.ndarray:
    """Per-user values computed over the users ``users`` (``beyond_users="listed"``: every user with a list)
    taken at the evaluated users ``ev_codes``: NaN for an evaluated user without a list. The summary stays
    the mean over ``users``, so it may differ from the mean of this column."""
    full = np.full(n_users, np.nan)
    full[users] = values
    return full[ev_codes]


def _scored_metrics(ranked, specs, summary, per_user, ev_codes, diagnostics, settings: Settings):
    """Scored-row metrics: one partition's partial sums, finalized (see :mod:`metrics_core.metrics.reductions`)."""
    rows = reductions.scored_rows(ranked, settings.relevance_threshold, settings.threshold, settings.gauc_weight,
                                  judged_only=settings.unjudged_rows == "exclude")
    totals = reductions.scored_partials([reductions.of(s.entry) for s in specs], rows,
                                        probabilities=any("probabilities" in s.entry.needs for s in specs))
    for s in specs:
        reduction = reductions.of(s.entry)
        reductions.check_needs(s.label, s.entry.needs, totals)
        summary[s.label] = reduction.value(rows, totals)
        if reduction.per_user is not None:
            per_user[s.label] = reduction.per_user(rows)[ev_codes]
    if "gauc_skipped" in totals:  # users of the per-user AUC with a single class
        diagnostics.gauc_users_skipped = int(totals["gauc_skipped"])
