"""Cached computation for the pages: evaluations, metric-versus-K curves, bootstrap
intervals and score curves of every loaded model.

Everything is keyed by the model's content key (:func:`dashboard.loading.model_keys`)
and the options, never by a DataFrame, and computed by ``metrics_core``. The sidebar's
K-independent settings (gain, tie rule and every other convention, from
:func:`dashboard.controls.evaluation_settings`, one frozen ``mc.Settings`` checked once) apply to
every call; a page may add or override any ``mc.evaluate`` keyword.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import replace
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

import metrics_core as mc
from metrics_core.errors import MetricsError

from metrics_core.metrics.reductions import scored_rows

from . import cache, curve_tables, demo_cache, metric_lists
from .controls import controls, evaluation_options, evaluation_settings, users
from .loading import (DEMO_KEY, _entries, _features_key, item_features, model_keys, scores_are_probabilities,
                      showing_demo)



def evaluation_size(ev) -> int:
    """Bytes an evaluation holds of its own: its per-user table and summary (the prepared
    model it refers to is cached, and counted, under its own key)."""
    return cache.nbytes(ev.per_user) + cache.nbytes(ev.summary) + 1024


def _options_key(settings: mc.Settings) -> tuple:
    """The conventions of ``settings`` as a cache key: ``(name, value)`` pairs sorted by name."""
    return tuple(sorted(settings.items()))


def _evaluation(model_key: str, metrics: tuple[str, ...], settings: mc.Settings, features_key: str,
                _ranked: mc.Ranked, _features: pd.DataFrame | None) -> tuple[str, Any, Any]:
    """``(cache key, compute, size)`` of one model's evaluation under ``settings`` (checked once, by the
    sidebar or the page): what :func:`_evaluate_cached` reads or computes, and what
    :func:`prefetch_evaluations` computes on the server thread."""
    def compute():
        features = None
        if any(mc.parse_metric(m).name in metric_lists.NEEDS_FEATURES for m in metrics):
            features = _features
        return mc.evaluate(_ranked, metrics=list(metrics), settings=settings, item_features=features)
    key = f"evaluate|{model_key}|{metrics!r}|{_options_key(settings)!r}|{features_key}"
    if model_key.startswith(DEMO_KEY):
        # a demo model's evaluation, kept on disk for a restarted server (without the prepared model,
        # which is cached on its own: this process's copy is attached again)
        def kept():
            ev = demo_cache.result(key, lambda: replace(compute(), ranked=None))
            return replace(ev, ranked=_ranked)
        return key, kept, evaluation_size
    return key, compute, evaluation_size


def _evaluate_cached(model_key: str, metrics: tuple[str, ...], settings: mc.Settings,
                     features_key: str, _ranked: mc.Ranked, _features: pd.DataFrame | None):
    key, compute, size = _evaluation(model_key, metrics, settings, features_key, _ranked, _features)
    return cache.SHARED.get_or_compute(key, compute, size=size)


def applicable(metrics: Sequence[str], ranked: mc.Ranked) -> tuple[str, ...]:
    """``metrics`` without those that cannot apply to this model's data: the metrics that
    read scores as probabilities (logloss, Brier, ECE, PCOPC) need scores in [0, 1];
    ``ils`` and ``ild`` need an item-features table."""
    out = []
    for m in metrics:
        base = mc.parse_metric(m).name
        if base in metric_lists.NEEDS_PROBABILITIES and not scores_are_probabilities(ranked):
            continue
        if base in metric_lists.NEEDS_FEATURES and item_features() is None:
            continue
        out.append(m)
    return tuple(out)


def _curve_table_key(model_key: str, metrics: tuple[str, ...], k_max: int, options: tuple) -> str:
    return f"metric_curve|{model_key}|{metrics!r}|{k_max}|{options!r}"


def _curve_table_cached(model_key: str, metrics: tuple[str, ...], k_max: int, settings: mc.Settings,
                        _ranked: mc.Ranked) -> pd.DataFrame:
    key = _curve_table_key(model_key, metrics, k_max, _options_key(settings))

    def compute() -> pd.DataFrame:
        return mc.metric_curve(_ranked, list(metrics), k_max=k_max, settings=settings)
    if model_key.startswith(DEMO_KEY):  # a demo model's curves: kept on disk for a restarted server
        return cache.SHARED.get_or_compute(key, lambda: demo_cache.result(key, compute))
    return cache.SHARED.get_or_compute(key, compute)


def metric_curves(metrics: Sequence[str] = metric_lists.CURVES, k_max: int = 50) -> pd.DataFrame:
    """Long table (model, metric, k, value) of ranking metrics at K = 1..k_max for every
    model, from ``mc.metric_curve`` (one pass per user, cached per model and options;
    the sidebar's conventions that ``metric_curve`` takes apply)."""
    settings = evaluation_settings()
    frames = []
    for e in _entries()[0]:
        try:
            wide = _curve_table_cached(e.key, tuple(metrics), int(k_max), settings, _ranked=e.ranked)
        except MetricsError as exc:
            raise MetricsError(f"{e.name}: {exc}") from None
        long = wide.melt(id_vars="k", var_name="metric", value_name="value")
        frames.append(long.assign(model=e.name)[["model", "metric", "k", "value"]])
    return pd.concat(frames, ignore_index=True)


def metric_curves_unless_compiling(metrics: Sequence[str] = metric_lists.CURVES,
                                   k_max: int = 50) -> tuple[pd.DataFrame | None, str | None]:
    """``(metric_curves(...), None)``; on a fresh install, while the curves' kernel is not
    compiled yet (and the demo's curves are not shipped, :data:`dashboard.demo_cache.BUNDLE`),
    ``(None, key)`` instead: the tables are computed on the server's worker
    thread (:mod:`dashboard.background`), which waits for the warm-up process to compile
    the kernel and loads it, so that the first page is not held up by it. The page then
    refreshes itself once ``key`` is ready."""
    from metrics_core.evaluation import metric_curve_compiled

    from . import background

    settings = evaluation_settings()
    opt_key = _options_key(settings)
    jobs = [(e.key, e.ranked) for e in _entries()[0]]
    if metric_curve_compiled() or all(  # the demo's first page: the curves are shipped, no kernel needed
            model_key.startswith(DEMO_KEY) and demo_cache.shipped(_curve_table_key(model_key, tuple(metrics),
                                                                                   int(k_max), opt_key))
            for model_key, _ in jobs):
        return metric_curves(metrics, k_max), None
    key = f"metric_curves_all|{tuple(k for k, _ in jobs)!r}|{tuple(metrics)!r}|{k_max}|{opt_key!r}"

    def compute_all() -> int:
        for model_key, ranked in jobs:
            _curve_table_cached(model_key, tuple(metrics), int(k_max), settings, _ranked=ranked)
        return len(jobs)
    if key in cache.SHARED:  # computed meanwhile: the tables are cached
        return metric_curves(metrics, k_max), None
    background.start(key, compute_all)
    return None, key


def _shared_request(metrics: Sequence[str]) -> tuple[list[str], dict[str, Any]] | None:
    """The evaluation every page shares that holds ``metrics``, as ``(metrics, options)``:
    the Overview's whole ranking table at their cutoff, or its scored-row table (computed
    with the linear gain and average ties, which scored-row metrics do not read). None when
    ``metrics`` mix kinds or cutoffs."""
    wanted = list(metrics)
    scored = metric_lists.scored_labels()
    if wanted and set(wanted) <= set(scored):
        return scored, {"gain": "linear", "ties": "average"}
    cutoffs = {mc.parse_metric(m).k for m in wanted if "@" in m}
    if len(cutoffs) == 1:
        table = metric_lists.labels(metric_lists.RANKING, cutoffs.pop())
        if set(wanted) <= set(table):
            return table, {}
    return None


def _view(ev: Any, metrics: Sequence[str]) -> Any:
    """``ev`` restricted to ``metrics`` (in that order): what ``mc.evaluate`` gives for them alone."""
    return replace(ev, summary={m: ev.summary[m] for m in metrics if m in ev.summary},
                   per_user=ev.per_user[[m for m in metrics if m in ev.per_user.columns]])


def population() -> Any:
    """The users the analysis counts under the sidebar's ``users`` setting, with each model's
    coverage (:func:`metrics_core.analysis.population.population` of every loaded model; cached by the
    models, the conventions and the setting)."""
    return _keyed_population()[1]


def _keyed_population() -> tuple[str, Any]:
    """``(cache key, population)`` of :func:`population`."""
    from metrics_core.analysis.population import population as build

    ranking = metric_lists.labels(metric_lists.RANKING, controls()["k"])
    evals = evaluate_all(ranking, counted=False)
    key = (f"population|{tuple(model_keys().get(n, n) for n in evals)!r}|"
           f"{sorted(evaluation_options().items())!r}|{users()}")
    return key, cache.SHARED.get_or_compute(key, lambda: build(evals, users()))


def coverage_lines() -> list[str]:
    """``population().coverage(user_attributes())``: one sentence per model that did not serve every
    user, in which segments; cached by the population and the attributes' content (every page says
    it on every rerun)."""
    from .controls import unit
    from .loading import attributes_key, user_attributes

    key, counted = _keyed_population()
    rows = unit()
    return cache.SHARED.get_or_compute(f"coverage|{key}|{attributes_key()}|{rows}",
                                       lambda: counted.coverage(user_attributes(), unit=rows))


def coverage_by_model() -> dict[str, str]:
    """Model -> its sentence of :func:`coverage_lines` (how many evaluated users it did not serve, and
    in which segments), for the models that did not serve every user; from the cached lines."""
    return dict(zip(population().incomplete, coverage_lines()))


def evaluate_all(metrics: Sequence[str], *, skip_inapplicable: bool = True, counted: bool = True,
                 **options: Any) -> dict[str, Any]:
    """``mc.evaluate`` of every model on ``metrics`` (cached).

    Defaults come from the sidebar (gain, ties and every other convention);
    ``options`` may add or override any ``mc.evaluate`` keyword (hashable values only). With
    ``skip_inapplicable`` (default) a metric that cannot apply to a model
    (see :func:`applicable`) is left out of that model's evaluation, so its
    ``summary`` lacks the key. Raises :class:`MetricsError` naming the model
    when one fails.

    Ranking metrics at one cutoff, or scored-row metrics, asked without ``options`` are
    read from the one evaluation all pages share (:func:`_shared_request`), so a page
    opened after the Overview computes nothing new.

    With ``counted`` (default) each evaluation holds the users the analysis counts
    (:func:`population`): under ``users="served"`` its per-user table keeps only the users
    every model served and its per-user means are over them.
    """
    if counted and users() != "all":
        counted_by = population()
        return {name: counted_by.restrict(ev) for name, ev in
                evaluate_all(metrics, skip_inapplicable=skip_inapplicable, counted=False, **options).items()}
    shared = _shared_request(metrics) if not options and skip_inapplicable else None
    if shared is not None and list(metrics) != shared[0]:
        full = evaluate_all(shared[0], counted=False, **shared[1])
        return {name: _view(ev, metrics) for name, ev in full.items()}
    settings = evaluation_settings(**options)  # a page's own keywords checked here, once
    feats = item_features()
    fkey = _features_key()
    out = {}
    for e in _entries()[0]:
        try:
            wanted = applicable(metrics, e.ranked) if skip_inapplicable else tuple(metrics)
            out[e.name] = _evaluate_cached(e.key, wanted, settings, fkey,
                                           _ranked=e.ranked, _features=feats)
        except MetricsError as exc:
            raise MetricsError(f"{e.name}: {exc}") from None
    return out


def prefetch_evaluations() -> None:
    """Start, on the server thread, the evaluations every page shares (:func:`_shared_request`:
    the Overview's ranking table at the sidebar's K and its scored-row table) of every loaded model
    that has none cached yet, under the keys :func:`evaluate_all` reads. Called by a page that does
    not draw them itself (the Data page, where files are uploaded): they start at once, beside the
    page, on the server's thread for the next page's work (the kernels run outside the interpreter
    lock), and the Overview opened next reads them (or waits for the one still being computed, never computing it
    twice)."""
    from . import background

    requests = [(metric_lists.labels(metric_lists.RANKING, controls()["k"]), {}),
                (metric_lists.scored_labels(), {"gain": "linear", "ties": "average"})]
    feats = item_features()
    fkey = _features_key()
    for metrics, options in requests:
        settings = evaluation_settings(**options)
        for e in _entries()[0]:
            key, compute, size = _evaluation(e.key, applicable(metrics, e.ranked), settings, fkey,
                                             _ranked=e.ranked, _features=feats)
            background.start(key, compute, size=size, wait_for_pages=False)


def ci_table(evals: dict[str, Any], metrics: Sequence[str]) -> pd.DataFrame:
    """Long table ``model, metric, value, ci_low, ci_high, users``.

    The 95% interval is the percentile bootstrap over users
    (``metrics_core.analysis.stats.bootstrap_ci_columns``, 1,000 resamples shared by the metrics of a
    model, seed 0) of the per-user values; it is given for the metrics whose summary is
    the mean of the per-user column (ranking metrics), NaN for global ones (AUC, ...).
    Intervals are cached by the SHA-256 of the per-user values themselves. For a model of more
    than ``background.FOREGROUND_USERS`` users whose bootstrap is not cached yet, the t interval
    is given while :mod:`dashboard.background` computes the bootstrap; ``attrs["pending"]``
    lists the cache keys still running.
    """
    from metrics_core.analysis.stats import bootstrap_ci_columns, t_interval_columns

    from . import background

    rows, pending = [], []
    demo = showing_demo()
    for name, ev in evals.items():
        pu = ev.per_user
        with_ci = [m for m in metrics if m in pu.columns and len(pu) and abs(
            float(pu[m].mean()) - ev.summary.get(m, np.nan)) <= 1e-9 * max(1.0, abs(ev.summary.get(m, np.nan)))]
        bounds = {}
        if with_ci:
            matrix = np.ascontiguousarray(pu[with_ci].to_numpy(dtype=float))
            key = f"bootstrap|{hashlib.sha256(matrix.tobytes()).hexdigest()}{matrix.shape}"
            exact = partial(bootstrap_ci_columns, matrix, n_resamples=1000, confidence=0.95, seed=0)
            if demo:  # the demo's intervals: kept on disk for a restarted server
                exact = partial(demo_cache.result, f"{key}|n_resamples=1000,confidence=0.95,seed=0", exact)
            (lows, highs), waiting = background.now_or_later(
                key, exact, partial(t_interval_columns, matrix, confidence=0.95), len(matrix))
            pending += [waiting] if waiting else []
            bounds = {m: (float(lo), float(hi)) for m, lo, hi in zip(with_ci, lows, highs)}
        for m in metrics:
            low, high = bounds.get(m, (float("nan"), float("nan")))
            rows.append({"model": name, "metric": m, "value": ev.summary.get(m, float("nan")),
                         "ci_low": low, "ci_high": high, "users": len(pu) if m in bounds else ev.n_users})
    table = pd.DataFrame(rows, columns=["model", "metric", "value", "ci_low", "ci_high", "users"])
    table.attrs["pending"] = pending
    return table


def _opening_threshold(ranked: mc.Ranked, relevance_threshold: float, probabilistic: bool) -> tuple[float, str]:
    """The confusion matrix's first threshold over the rows it counts, and why
    (:func:`dashboard.curve_tables.opening_threshold`)."""
    rows = scored_rows(ranked, relevance_threshold)
    return curve_tables.opening_threshold(rows.score, rows.label, probabilistic)


_CURVES = {
    "roc": mc.roc_curve,
    "pr": mc.pr_curve,
    "calibration": mc.calibration_curve,
    "confusion": mc.confusion_matrix,
    "opening_threshold": _opening_threshold,
}


def _curve_cached(kind: str, model_key: str, options: tuple, _ranked: mc.Ranked) -> pd.DataFrame:
    return cache.SHARED.get_or_compute(f"curve|{kind}|{model_key}|{options!r}",
                                       lambda: _CURVES[kind](_ranked, **dict(options)))


def prefetch_curves(models: dict, relevance_threshold: float, calibration_bins: int = 10) -> None:
    """Start, on the server thread, the score curves the Curves page opens with (ROC, precision-recall
    over all relevant items, and for scores in [0, 1] the calibration and the confusion matrix's
    opening threshold) of every model of more than ``background.FOREGROUND_USERS`` users, under the
    keys :func:`curve` reads, and its precision and recall at every K (the keys :func:`metric_curves`
    reads): computed once per upload and settings, before the page is opened."""
    from . import background

    keys = model_keys()
    settings = evaluation_settings()
    at_k = (tuple(metric_lists.CURVES_K), metric_lists.CURVES_K_MAX, _options_key(settings))
    for e in _entries()[0]:
        if e.ranked.n_users > background.FOREGROUND_USERS:
            background.start(_curve_table_key(e.key, *at_k),
                             lambda r=e.ranked: mc.metric_curve(r, list(at_k[0]), k_max=at_k[1], settings=settings))
    for name, ranked in models.items():
        if ranked.n_users <= background.FOREGROUND_USERS:
            continue
        probabilistic = scores_are_probabilities(ranked)
        wanted = [("roc", {}), ("pr", {"recall_over": "all_relevant"}),
                  ("opening_threshold", {"probabilistic": probabilistic})]
        if probabilistic:
            wanted.append(("calibration", {"n_bins": calibration_bins}))
        for kind, extra in wanted:
            options = tuple(sorted({**extra, "relevance_threshold": relevance_threshold}.items()))
            background.start(f"curve|{kind}|{keys.get(name, name)}|{options!r}",
                             lambda k=kind, r=ranked, o=options: _CURVES[k](r, **dict(o)))


def curve(kind: str, model: str, ranked: mc.Ranked, **options: Any) -> pd.DataFrame:
    """metrics_core's ``roc`` / ``pr`` / ``calibration`` curve or ``confusion``
    matrix of a model, or the confusion matrix's ``opening_threshold`` (cached by the model's content key and the options)."""
    key = model_keys().get(model, model)
    return _curve_cached(kind, key, tuple(sorted(options.items())), _ranked=ranked)


def content_digest(data: pd.DataFrame) -> str:
    """A digest of a table's content: its column names and types, then each row's values in
    order (two tables holding the same rows in another order, which a line or a ranking draws
    differently, have different digests)."""
    digest = hashlib.sha256(repr([(str(c), str(t)) for c, t in data.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(data, index=False).to_numpy().tobytes())
    return digest.hexdigest()[:32]


def cached_figure(name: str, data: pd.DataFrame, build, *args) -> Any:
    """A chart built once per content of ``data`` (plotly figures take tenths of a second to
    build): ``build(data, *args)``, cached by ``name``, a hash of ``data`` and ``args``.
    The figure is shared between sessions: draw it, never change it. Its size in the cache is
    estimated from ``data`` (a figure holds at most a copy of the columns it draws, plus its
    layout): walking a plotly figure's objects to count them takes longer than building it.
    A figure of the demo is also kept on disk with the demo's results (:func:`demo_cache.result`:
    read back in a hundredth of a second, where building the first figures of a new server takes
    tenths), so that a restarted server draws the demo's Overview without building its charts."""
    key = f"figure|{name}|{content_digest(data)}|{len(data)}|{args!r}"

    def compute():
        return build(data, *args)

    def estimate(_figure) -> int:  # counted when the figure is stored, not on every run that finds it
        return 2 * cache.nbytes(data) + FIGURE_OVERHEAD_BYTES
    if showing_demo():
        return cache.SHARED.get_or_compute(key, lambda: demo_cache.result(key, compute), size=estimate)
    return cache.SHARED.get_or_compute(key, compute, size=estimate)


FIGURE_OVERHEAD_BYTES = 256 * 1024  # layout, template and trace objects of one plotly figure


def keyed_figure(name: str, key: str, build, *args, data_bytes: int = 0, drawn: Any = None) -> Any:
    """A chart built once per ``key``, a string naming everything it draws (the models' content
    keys and every option), for charts of several tables or of large ones, where hashing the data would
    cost more than the key: ``build(*args)``, shared between sessions (draw it, never change it). Its
    size in the cache is estimated as :func:`cached_figure`'s from ``data_bytes`` plus the bytes of
    ``drawn`` (what it draws, counted only when the figure is stored)."""
    def estimate(_figure) -> int:
        return 2 * (data_bytes + (cache.nbytes(drawn) if drawn is not None else 0)) + FIGURE_OVERHEAD_BYTES
    return cache.SHARED.get_or_compute(f"figure|{name}|{key}", lambda: build(*args), size=estimate)


def counted_key() -> tuple:
    """What a model's per-user values over the users counted depend on besides its own file, for the
    cache keys of anything computed from them: the sidebar's "Users counted", the conventions and every
    loaded model's name and content key (under "served" the users counted are those every loaded model
    served, so loading or removing any model changes them)."""
    return users(), tuple(sorted(evaluation_options().items())), tuple(model_keys().items())


def paired_values(metric: str, baseline: str, challenger: str, baseline_values: pd.Series,
                  challenger_values: pd.Series) -> tuple[str, pd.DataFrame]:
    """``(key, pairs)``: the users both models have a finite ``metric`` for
    (:func:`dashboard.comparisons.paired`) as a table ``user_id`` (as text), ``baseline``, ``challenger``,
    cached under ``key``, which names everything those values depend on: :func:`counted_key`, the two
    models and the metric (a label holding its cutoff). ``baseline_values`` and ``challenger_values`` are
    the two models' per-user ``metric`` under those settings (:func:`evaluate_all`). A chart of the pairs
    keyed by ``key`` (:func:`keyed_figure`) needs no digest of them. The table is shared between
    sessions: read it, never change it."""
    from .comparisons import paired

    key = f"paired|{counted_key()!r}|{baseline!r}|{challenger!r}|{metric!r}"

    def compute() -> pd.DataFrame:
        a_vals, b_vals, user_ids = paired(baseline_values, challenger_values)
        return pd.DataFrame({"user_id": user_ids.astype(str), "baseline": a_vals, "challenger": b_vals})
    return key, cache.SHARED.get_or_compute(key, compute)


def report_html(evals: dict[str, Any], baseline: str, settings: dict, brief: Any = None) -> bytes:
    """``metrics_core.outputs.report.build_report`` of ``evals`` (evaluated over every user:
    ``evaluate_all(..., counted=False)``, in the analysis' order so each model keeps its colour)
    against ``baseline``, over the users the sidebar counts, opening on ``brief`` (the Brief page's),
    as UTF-8 bytes, built once per models, metrics, settings, conventions and decision (server cache)."""
    from metrics_core.outputs.report import build_report

    metrics = tuple(dict.fromkeys(m for e in evals.values() for m in e.summary))
    described = None if brief is None else (brief.decision, brief.title, brief.notes)
    key = (f"report|{tuple(model_keys().get(n, n) for n in evals)!r}|{metrics!r}|{baseline}|"
           f"{sorted(settings.items())!r}|{sorted(evaluation_options().items())!r}|{users()}|{described!r}")
    return cache.SHARED.get_or_compute(key, lambda: build_report(
        evals, title="metrics-core report", settings=settings, baseline=baseline,
        users=users(), brief=brief).encode("utf-8"))


def decision_brief(decision: Any, title: str = "", notes: str = "", progressive: bool = False) -> Any:
    """The decision brief (:func:`metrics_core.brief.build.build_brief`) of every loaded model under
    ``decision``, over the analysis' users counted. Its verdicts are the Compare page's rows
    (``dashboard.comparisons``, the same cache entries): the two pages show the same numbers and
    opening one after the other computes nothing new. Cached by the models, the decision, the
    conventions and the attributes; while resampled statistics run on a server thread, the brief is
    built from the quick rows and again when they are done (``attrs["pending"]``).

    The segment rows (every attribute's segments compared, the slow part) are cached on their own,
    keyed without the pending statistics, so they are computed once per decision. ``progressive``:
    on more than ``background.FOREGROUND_USERS`` users they are computed on the server thread and
    the brief comes at once without them: ``verdicts.attrs["segments_pending"]`` is then True and
    their cache key (``verdicts.attrs["segments_key"]``, whose job reports how far it is:
    ``background.progress_of``) is among the pending keys."""
    return _assemble_brief(_brief_inputs(decision), decision, title, notes, progressive)


def _segments_key(models_key: tuple, decision: Any, opt_key: tuple, attr_key: Any) -> str:
    """The cache key of a decision's segment rows (:func:`metrics_core.brief.build.brief_segments`)."""
    return f"brief_segments|{models_key!r}|{decision!r}|{opt_key!r}|{attr_key}"


def prefetch_brief_segments(decision: Any, tests: Sequence[str]) -> None:
    """On many users, the segment rows of ``decision`` under each test of ``tests`` (every attribute's
    segments, the analysis' family of tests) computed on the server thread, so that choosing another
    test on Compare finds them in the cache."""
    from dataclasses import replace

    from metrics_core.brief.build import brief_segments

    from . import background

    inputs = _brief_inputs(decision)
    evals, keys, opt_key, attributes = inputs["evals"], inputs["keys"], inputs["opt_key"], inputs["attributes"]
    if attributes is None or max(len(e.per_user) for e in evals.values()) <= background.FOREGROUND_USERS:
        return
    attr_key = inputs["attributes_key"]
    models_key = tuple(keys.get(n, n) for n in evals)
    for test in tests:
        other = replace(decision, test=test)
        key = _segments_key(models_key, other, opt_key, attr_key)
        if key not in cache.SHARED:
            background.start(key, lambda other=other: brief_segments(evals, other, attributes=attributes))


def complete_brief_later(decision: Any, title: str = "", notes: str = ""):
    """A function of no argument, callable on any thread, that waits for every pending result of
    :func:`decision_brief` and returns the complete brief (the same numbers the page shows once
    nothing is pending). The session's part (which models, conventions, attributes) is read now."""
    from . import background

    inputs = _brief_inputs(decision)

    def complete() -> Any:
        while True:
            built = _assemble_brief(inputs, decision, title, notes, progressive=True)
            pending = list(built.verdicts.attrs.get("pending", []))
            if not pending:
                return built
            if not background.wait(pending):  # a job failed or was dropped: no complete brief
                return None
    return complete


def _brief_inputs(decision: Any) -> dict[str, Any]:
    """What the brief reads from the session: the evaluations, the users counted, the content keys,
    the conventions and the attributes with their content key (:func:`dashboard.loading.attributes_key`:
    the file's, never a digest of the table on every run), each cached; the rest needs no session."""
    from .loading import attributes_key, user_attributes

    metrics = list(decision.metrics)
    evals = evaluate_all(metrics, counted=False)
    return {"evals": evals, "counted": population(), "keys": model_keys(),
            "opt_key": counted_key(), "attributes": user_attributes(),
            "attributes_key": attributes_key()}


def _segment_part(inputs: dict[str, Any], decision: Any, users: Callable[[], int],
                  progressive: bool) -> tuple[pd.DataFrame | None, str, bool]:
    """The brief's segment rows (:func:`metrics_core.brief.build.brief_segments` of every model, the
    decision and the attributes), cached on their own: ``(rows, their cache key, started)``. ``rows``
    is None without attributes, or, with ``progressive``, while the server thread computes them
    (``started``: a job was started now because they were not cached and ``users()``, the most users
    a chosen model pairs, is over ``background.FOREGROUND_USERS``)."""
    from metrics_core.brief.build import brief_segments

    from . import background

    evals, keys, opt_key, attributes = inputs["evals"], inputs["keys"], inputs["opt_key"], inputs["attributes"]
    models_key = tuple(keys.get(n, n) for n in evals)
    segments_key = _segments_key(models_key, decision, opt_key, inputs["attributes_key"])
    if attributes is None:
        return None, segments_key, False
    compute_segments = (lambda: brief_segments(evals, decision, attributes=attributes))
    if progressive and segments_key not in cache.SHARED and users() > background.FOREGROUND_USERS:
        background.start(segments_key, compute_segments)
        return None, segments_key, True
    return cache.SHARED.get_or_compute(segments_key, compute_segments), segments_key, False


@dataclasses.dataclass(frozen=True)
class DecisionSegments:
    """The segment rows of a decision's brief alone (:func:`decision_segments`): ``rows``
    (``Brief.segments``; None while ``pending`` names cache keys the server thread computes),
    ``attributes`` (the attributes compared, ``Brief.attributes``) and ``key``, the rows' cache key
    (its job reports how far it is: ``background.progress_of``)."""

    rows: pd.DataFrame | None
    attributes: list[str]
    key: str
    pending: list[str]


def decision_segments(decision: Any, comparison_pending: Sequence[str] = (),
                      progressive: bool = False) -> DecisionSegments:
    """The segment rows :func:`decision_brief` holds (``Brief.segments``: the same cache entry, so a
    segment has one verdict on the Compare page, the Brief, the report and a shared link), without
    building the rest of the brief (its verdict sentences, coverage and failure groups, built again
    whenever a pending statistic of the comparison arrives). ``progressive`` as in
    :func:`decision_brief`; ``pending`` then lists ``comparison_pending`` (the keys the caller's
    comparison table waits for, as the brief's verdicts list them) and the rows' key while they are
    computed. Without user attributes the rows are None and nothing is pending of them."""
    inputs = _brief_inputs(decision)
    counted, evals, metrics = inputs["counted"], inputs["evals"], list(decision.metrics)

    def users() -> int:
        return max(len(counted.table(evals[n].per_user[metrics])) for n in (decision.baseline, *decision.challengers))
    rows, key, started = _segment_part(inputs, decision, users, progressive)
    attributes = inputs["attributes"]
    names = [] if attributes is None or not len(attributes) else [str(c) for c in attributes.columns
                                                                   if c != "user_id"]
    return DecisionSegments(rows=rows, attributes=names if rows is not None else [], key=key,
                            pending=[*comparison_pending, key] if started else list(comparison_pending))


def _assemble_brief(inputs: dict[str, Any], decision: Any, title: str, notes: str, progressive: bool) -> Any:
    from metrics_core.brief.build import build_brief

    from . import comparisons

    metrics = list(decision.metrics)
    evals, counted, keys, opt_key = inputs["evals"], inputs["counted"], inputs["keys"], inputs["opt_key"]
    chosen = [decision.baseline, *decision.challengers]
    per_user = {n: counted.table(evals[n].per_user[metrics]) for n in chosen}
    table = comparisons.comparison(tuple(keys.get(n, n) for n in chosen), per_user, tuple(metrics),
                                   decision.baseline, decision.test, decision.correction, float(decision.alpha),
                                   opt_key)
    attributes = inputs["attributes"]
    attr_key = inputs["attributes_key"]
    models_key = tuple(keys.get(n, n) for n in evals)
    segments, segments_key, started = _segment_part(inputs, decision, lambda: max(map(len, per_user.values())),
                                                    progressive)
    pending = list(table.attrs["pending"]) + ([segments_key] if started else [])
    waiting = attributes is not None and segments is None
    key = (f"brief|{models_key!r}|{decision!r}|{opt_key!r}|{attr_key}|"
           f"{title!r}|{notes!r}|{tuple(table.attrs['pending'])!r}|{waiting}")
    built = cache.SHARED.get_or_compute(key, lambda: build_brief(
        evals, decision, attributes=None if waiting else attributes, title=title, notes=notes, comparison=table,
        segments=segments))
    built.verdicts.attrs["pending"] = pending
    built.verdicts.attrs["segments_pending"] = waiting
    built.verdicts.attrs["segments_key"] = segments_key  # the server thread's job while they are pending
    return built


def overlap_with_baseline(baseline: str, challengers: Sequence[str], k: int,
                          pending: list[str] | None = None) -> tuple[dict[str, float | None], str]:
    """Each challenger's mean share of its top ``k`` found in ``baseline``'s top ``k`` of the same
    user (:func:`metrics_core.intersection`, RecTools' ``Intersection``), over the users the
    challenger served, and the tie rule used: the sidebar's when it gives one order per list,
    else ``input`` (the files' row order). Cached by the models, K and the tie rule.

    With a ``pending`` list, a model of more than ``background.FOREGROUND_USERS`` users whose
    overlap is not cached yet is computed on the server thread: its value is None and its cache
    key is appended to ``pending`` (the page shows the rest and updates itself)."""
    from metrics_core.metrics.intersection import TIES, intersection

    from . import background
    from .loading import get_models

    models = get_models()
    ties = evaluation_options().get("ties", "average")
    ties = ties if ties in TIES else "input"
    keys = model_keys()
    out = {}
    for name in challengers:
        key = f"overlap|{keys.get(name, name)}|{keys.get(baseline, baseline)}|{int(k)}|{ties}"
        compute = (lambda n=name: intersection(models[n], models[baseline], int(k), ties=ties))
        if pending is not None and key not in cache.SHARED and models[name].n_users > background.FOREGROUND_USERS:
            background.start(key, compute)
            pending.append(key)
            out[name] = None
        else:
            out[name] = cache.SHARED.get_or_compute(key, compute)
    return out, ties


def presets() -> pd.DataFrame:
    """Every library preset, one row each (:func:`metrics_core.presets`)."""
    return mc.presets()


def explanation(model: str, metric: str, ranked: mc.Ranked, settings: dict[str, Any]) -> Any:
    """``metric`` of ``model`` as every library would report it, and the path between two
    (:func:`metrics_core.explain`), with the named convention sets ``settings`` beside the presets.
    Cached by the model's content, the metric and those conventions."""
    keyed = {name: sorted(values.items()) for name, values in settings.items()}
    key = f"explain|{model_keys().get(model, model)}|{metric}|{sorted(keyed.items())!r}"
    return cache.SHARED.get_or_compute(key, lambda: mc.explain(ranked, metric=metric, settings=settings),
                                       size=lambda e: cache.nbytes(e.values) + cache.nbytes(e.steps))
