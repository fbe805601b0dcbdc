"""Compare models on per-user metrics: one table of paired tests with corrected p-values.

:func:`compare` works from the per-user tables of evaluations (``Evaluation.per_user``:
one row per user, indexed by user id, one column per per-user metric). For every pair of
models (each challenger against ``baseline``, or every pair in the given order when no
baseline is named) and every metric, it pairs the users evaluated for both models and
reports the mean difference (challenger - baseline) with a bootstrap CI, the chosen
test(s), Cohen's d and win/tie/loss counts (see :mod:`metrics_core.analysis.stats` for formulas).
p-values are corrected over the whole family of pairs x metrics, separately for each test.

:func:`summary_table` gives each model's mean of every metric with a bootstrap CI.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.metrics import registry
from metrics_core.analysis import stats
from metrics_core.errors import MetricsError
from metrics_core.analysis.paper_table import Comparison, show_whole
from metrics_core.progress import stage
from metrics_core.per_user import per_user_table
from metrics_core.analysis.population import check_users, population

__all__ = ["compare", "summary_table", "per_user_table", "COMPARE_COLUMNS"]

#: power at which the minimum detectable effect (``mde``) is computed
POWER = stats.POWER
#: Columns of :func:`compare`'s result, in order (``p_<test>``/``p_<test>_adjusted`` follow).
COMPARE_COLUMNS = [
    "metric", "baseline", "model", "n", "baseline_mean", "model_mean", "diff",
    "ci_low", "ci_high", "test", "statistic", "p_value", "p_adjusted", "significant",
    "effect_size", "wins", "ties", "losses", "lift", "lift_ci_low", "lift_ci_high", "mde", "mde_relative",
]


def paired_rows(groups: "stats.PairedGroups", tests: Sequence[str], *, alpha: float, confidence: float,
               n_permutations: int, seed: int, higher_is_better: bool, done=None) -> list[dict]:
    """One row of :func:`compare`'s columns per group of ``groups`` (:class:`metrics_core.analysis.stats.PairedGroups`):
    its statistics, ``test``/``statistic``/``p_value`` from the first of the paired ``tests`` and
    ``p_<test>`` of each; ``ci_low``/``ci_high`` NaN (the bootstrap is drawn for every row at once).
    ``done(k)``: told as groups are tested (:meth:`metrics_core.analysis.stats.PairedGroups.test`)."""
    table = groups.table(tests, alpha=alpha, confidence=confidence, n_permutations=n_permutations, seed=seed,
                         higher_is_better=higher_is_better, power=POWER, done=done)
    primary = tests[0]
    rows = []
    for i in range(groups.n.size):
        count = int(table["n"][i])
        row = {"n": count, "baseline_mean": float(table["baseline_mean"][i]),
               "model_mean": float(table["model_mean"][i]), "diff": float(table["diff"][i]),
               "ci_low": math.nan, "ci_high": math.nan, "test": primary,
               "statistic": float(table[f"statistic_{primary}"][i]), "p_value": float(table[f"p_{primary}"][i]),
               "effect_size": float(table["effect_size"][i]), "wins": int(table["wins"][i]),
               "ties": int(table["ties"][i]), "losses": int(table["losses"][i]),
               **{k: float(table[k][i]) for k in ("lift", "lift_ci_low", "lift_ci_high", "mde", "mde_relative")}}
        for t in tests:
            row[f"p_{t}"] = float(table[f"p_{t}"][i])
        rows.append(row)
    return rows


def _resolve_metric(name: str, columns: Sequence[str]) -> str | None:
    if name in columns:
        return name
    lowered = {str(c).lower(): c for c in columns}
    return lowered.get(str(name).lower())


def metric_columns(tables: Mapping[str, pd.DataFrame], metrics: Sequence[str] | None
                   ) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The metrics to compare (default: every column all ``tables`` share) and, for each, the
    column of each table holding it (matched exactly, else ignoring case). A metric some table
    lacks is an error naming the table's per-user metrics."""
    first = next(iter(tables.values()))
    if metrics is None:
        metric_names = [c for c in first.columns
                        if all(_resolve_metric(c, list(t.columns)) is not None for t in tables.values())]
        if not metric_names:
            raise MetricsError("the models share no per-user metric to compare; ask for a ranking metric such as ndcg@10")
    else:
        metric_names = list(metrics)
    resolved: dict[str, dict[str, str]] = {}
    for m in metric_names:
        resolved[m] = {}
        for name, table in tables.items():
            col = _resolve_metric(m, list(table.columns))
            if col is None:
                available = ", ".join(map(str, table.columns)) or "none"
                raise MetricsError(
                    f"metric {m!r} has no per-user values for model {name!r} (per-user metrics: {available}); "
                    "only per-user metrics (e.g. ndcg@10, map, recall@20) can be compared")
            resolved[m][name] = col
    return metric_names, resolved


def _pairs(names: list[str], baseline: str | None) -> list[tuple[str, str]]:
    if baseline is None:
        return [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    if baseline not in names:
        raise MetricsError(
            f"baseline {baseline!r} is not one of the models: {', '.join(map(str, names))}")
    return [(baseline, other) for other in names if other != baseline]


#: every test compare runs: the paired ones, then those over every model at once
ALL_TESTS = (*stats.TESTS, *stats.JOINT_TESTS)


def _normalise_tests(test: str, tests: str | Iterable[str] | None) -> list[str]:
    primary = str(test).lower()
    if primary not in ALL_TESTS:
        raise MetricsError(f"unknown test {test!r}; use one of: {', '.join(ALL_TESTS)}")
    if tests is None:
        extra: list[str] = []
    elif isinstance(tests, str):
        extra = list(ALL_TESTS) if tests.lower() == "all" else [tests.lower()]
    else:
        extra = [str(t).lower() for t in tests]
    for t in extra:
        if t not in ALL_TESTS:
            raise MetricsError(f"unknown test {t!r}; use one of: {', '.join(ALL_TESTS)}")
    ordered = [primary] + [t for t in ALL_TESTS if t in extra and t != primary]
    return ordered


def _tukey(tables: Mapping[str, pd.DataFrame], columns: Mapping[str, str]) -> tuple[dict, dict, int]:
    """Tukey's HSD of one metric over every model (:func:`metrics_core.analysis.stats.tukey_hsd`) on the users with a
    finite value for every model: ``({(a, b): q}, {(a, b): p}, users)``."""
    names = list(tables)
    values = pd.concat([pd.to_numeric(tables[n][columns[n]], errors="coerce").rename(n) for n in names],
                       axis=1, join="inner").dropna()
    q, p = stats.tukey_hsd([values[n].to_numpy() for n in names])
    pairs = [(a, b) for a in range(len(names)) for b in range(len(names))]
    return ({(names[a], names[b]): float(q[a, b]) for a, b in pairs},
            {(names[a], names[b]): float(p[a, b]) for a, b in pairs}, len(values))


def compare(evaluations: Mapping[str, Any], baseline: str | None = None,
            metrics: Sequence[str] | None = None, test: str = "t", correction: str = "holm",
            alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = 1000,
            n_permutations: int = 10000, seed: int = 0,
            tests: str | Iterable[str] | None = None, users: str = "all",
            served: Mapping[str, Iterable] | None = None) -> pd.DataFrame:
    """Paired comparison of models on per-user metrics.

    Parameters
    ----------
    evaluations: ``{model name: Evaluation or per-user DataFrame}`` (at least two models).
    baseline: compare every other model against this one; ``None`` compares every pair
        ``(first, second)`` in the order given.
    metrics: per-user metric columns to compare (default: every column all models share).
    test: the primary test, ``"t"`` (paired t-test), ``"wilcoxon"``, ``"randomization"`` or ``"tukey"``
        (Tukey's HSD over every model at once, as ranx: the users with a value for every model; its
        ``statistic`` is the studentized range ``q``); it fills ``statistic``, ``p_value``,
        ``p_adjusted`` and ``significant``.
    tests: further tests to report as ``p_<test>`` / ``p_<test>_adjusted`` (``"all"`` for every one).
    correction: ``"holm"`` (Holm-Bonferroni), ``"bh"`` (Benjamini-Hochberg) or ``"none"``,
        applied over all rows (pairs x metrics) of the result, separately for each paired test.
        Tukey's p-values are already adjusted for every pair of models of a metric: ``p_tukey_adjusted``
        is ``p_tukey`` (as ranx reports them), whatever ``correction``.
    alpha: significance level for ``significant`` (``p_adjusted < alpha``).
    n_resamples: bootstrap resamples of the CI of ``diff``, the percentile bootstrap of the mean
        paired difference (:func:`metrics_core.analysis.stats.bootstrap_ci_many`; ``0``: no bootstrap,
        ``ci_low`` and ``ci_high`` are NaN; the lift's interval is the delta method's either way).
    users: which users are paired (:mod:`metrics_core.analysis.population`): ``"all"`` every evaluated
        user (a model's missing list scores 0), ``"served"`` only the users every model in
        ``evaluations`` served. ``served``: ``{model: user ids it served}`` when the evaluations
        are per-user DataFrames (Evaluations carry it); needed for ``"served"`` only.

    Returns one row per (metric, pair) with :data:`COMPARE_COLUMNS` plus, for each test run,
    ``p_<test>`` and ``p_<test>_adjusted``. ``diff = model_mean - baseline_mean`` over the ``n``
    users evaluated for both models; ``wins`` counts users where ``model`` is better.
    ``attrs["population"]`` is the :class:`metrics_core.analysis.population.Population` (users counted
    and each model's coverage) and ``attrs["users"]`` its one-line description; ``attrs["values"]``
    holds each model's value of each metric (``{model: {metric: value}}``: its summary value when the
    evaluation has one, else the mean of its per-user column, over the users counted).

    The result is a :class:`metrics_core.analysis.paper_table.Comparison` (a DataFrame): its ``to_latex()`` and
    ``to_markdown()`` give ranx's report, each model's values with superscript letters of the models it
    is significantly better than, ready to paste into a paper.


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
    >>> table = mc.compare(evaluations, baseline="base")
    >>> row = table.iloc[0]
    >>> row["model"], row["metric"], round(float(row["diff"]), 4), int(row["wins"]), int(row["losses"])
    ('new', 'mrr@2', 0.4167, 5, 0)
    """
    if not isinstance(evaluations, Mapping) or len(evaluations) < 2:
        raise MetricsError("compare needs at least two models (e.g. --run A --run B)")
    correction = str(correction).lower()
    if correction not in stats.CORRECTIONS and correction not in ("fdr", "benjamini-hochberg"):
        raise MetricsError(f"unknown correction {correction!r}; use one of: {', '.join(stats.CORRECTIONS)}")
    if not 0 < alpha < 1:
        raise MetricsError(f"alpha must be between 0 and 1, got {alpha}")
    run_tests = _normalise_tests(test, tests)
    names = [str(k) for k in evaluations]
    users = check_users(users)
    counted = (population(evaluations, users, served) if users == "served" or served is not None
               or all(hasattr(v, "ranked") for v in evaluations.values()) else None)
    tables = {str(k): per_user_table(v) for k, v in evaluations.items()}
    if counted is not None:
        tables = {name: counted.table(table) for name, table in tables.items()}
    metric_names, resolved = metric_columns(tables, metrics)
    pairs = _pairs(names, baseline)
    paired_tests = [t for t in run_tests if t in stats.TESTS] or ["t"]
    tukey = {m: _tukey(tables, resolved[m]) for m in metric_names} if "tukey" in run_tests else {}

    rows = []
    differences: list[np.ndarray] = []  # challenger - baseline of each row's paired users
    tested = ", ".join(run_tests)
    n_rows = len(metric_names) * len(pairs)
    with stage(f"testing {n_rows} comparison(s) ({tested})", total=n_rows, unit="comparison") as bar:
        for m in metric_names:
            higher = registry.higher_is_better(m)
            for base, other in pairs:
                # paired once: the test is given the aligned values (finite in both, in the baseline's order)
                av, bv, _ = stats.align_pairs(tables[base][resolved[m][base]], tables[other][resolved[m][other]])
                row = {"metric": m, "baseline": base, "model": other,
                       **paired_rows(stats.PairedGroups.one(av, bv), paired_tests, alpha=alpha,
                                    confidence=confidence, n_permutations=n_permutations, seed=seed,
                                    higher_is_better=higher)[0]}
                if m in tukey:
                    row["p_tukey"] = tukey[m][1][(base, other)]
                    if run_tests[0] == "tukey":
                        row.update(test="tukey", statistic=tukey[m][0][(base, other)], p_value=row["p_tukey"])
                differences.append(bv - av)
                rows.append(row)
                bar.update(1)
    with stage(f"resampling: {int(n_resamples):,} bootstrap resamples of {len(differences)} difference(s)"):
        if int(n_resamples) > 0:  # every row's interval in one pass per number of paired users
            bounds = stats.bootstrap_ci_many(differences, n_resamples=n_resamples, confidence=confidence, seed=seed)
            for row, (low, high) in zip(rows, bounds):
                row["ci_low"], row["ci_high"] = low, high
    result = pd.DataFrame(rows)
    for t in run_tests:  # Tukey's p-values are adjusted for the pairs already
        result[f"p_{t}_adjusted"] = (result[f"p_{t}"].to_numpy() if t in stats.JOINT_TESTS
                                     else stats.adjust_pvalues(result[f"p_{t}"].to_numpy(), correction))
    result["p_adjusted"] = result[f"p_{run_tests[0]}_adjusted"]
    result["significant"] = (result["p_adjusted"] < alpha).fillna(False).astype(bool)
    extra = []
    for t in run_tests:
        extra += [f"p_{t}", f"p_{t}_adjusted"]
    result.attrs.update({"correction": correction, "alpha": alpha, "tests": run_tests,
                         "confidence": confidence, "population": counted,
                         "users": counted.describe() if counted is not None else users,
                         "values": _model_values(evaluations, tables, metric_names, resolved, counted),
                         "tukey_users": {m: t[2] for m, t in tukey.items()}})
    out = Comparison(result[COMPARE_COLUMNS + extra])
    out.attrs = dict(result.attrs)
    return show_whole(out)


def _model_values(evaluations, tables, metric_names, resolved, counted) -> dict:
    """``{model: {metric: value}}``: the evaluation's summary value (over the users counted), else the mean
    of the model's per-user column."""
    out = {}
    for name, ev in evaluations.items():
        name = str(name)
        if counted is not None and hasattr(ev, "per_user"):
            ev = counted.restrict(ev)
        summary = dict(getattr(ev, "summary", {}) or {})
        values = {}
        for m in metric_names:
            column = resolved[m][name]
            value = summary.get(m, summary.get(column))
            if value is None:
                value = pd.to_numeric(tables[name][column], errors="coerce").mean()
            values[m] = float(value)
        out[name] = values
    return out


def summary_table(evaluations: Mapping[str, Any], metrics: Sequence[str] | None = None,
                  n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
                  users: str = "all", served: Mapping[str, Iterable] | None = None) -> pd.DataFrame:
    """Each model's value of every metric, with a bootstrap CI for per-user metrics.

    Returns long-format rows ``model, metric, value, ci_low, ci_high, n``. ``value`` is the
    evaluation's summary value when it has one (``Evaluation.summary``), else the mean of
    the per-user column; ``ci_low``/``ci_high`` are the percentile bootstrap CI of the mean
    over users (NaN for global metrics such as AUC that have no per-user values); ``n`` is the
    number of users with a per-user value (0 for global metrics). The intervals come from
    :func:`metrics_core.analysis.stats.bootstrap_ci_many`: columns with as many users share one pass over
    the resamples, each keeping its own interval. ``users`` (and ``served``) choose the users
    counted, as in :func:`compare`: under ``"served"`` the per-user means and intervals are
    over the users every model served.
    """
    if check_users(users) == "served":
        counted = population(evaluations, users, served)
        evaluations = {name: counted.restrict(ev) if hasattr(ev, "per_user") else counted.table(ev)
                       for name, ev in evaluations.items()}
    rows = []
    samples: list[np.ndarray] = []
    for name, ev in evaluations.items():
        summary = dict(getattr(ev, "summary", {}) or {})
        table = getattr(ev, "per_user", ev if isinstance(ev, pd.DataFrame) else None)
        if table is None:
            table = pd.DataFrame()
        names = list(metrics) if metrics is not None else list(dict.fromkeys([*summary, *table.columns]))
        for m in names:
            col = _resolve_metric(m, list(table.columns))
            if col is not None:
                values = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
                values = values[np.isfinite(values)]
                mean = float(values.mean()) if values.size else math.nan
                n = int(values.size)
            else:
                values = np.empty(0)
                mean = math.nan
                n = 0
            value = summary.get(m, mean)
            value = math.nan if value is None else float(value)
            rows.append({"model": str(name), "metric": m, "value": value, "n": n})
            samples.append(values)
    bounds = stats.bootstrap_ci_many(samples, n_resamples=n_resamples, confidence=confidence, seed=seed)
    for row, (low, high) in zip(rows, bounds):
        row["ci_low"], row["ci_high"] = low, high
    return pd.DataFrame(rows, columns=["model", "metric", "value", "ci_low", "ci_high", "n"])
