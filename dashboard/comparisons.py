"""Paired comparisons for the Compare page, cached one metric at a time, never blocking a click.

``metrics_core.analysis.compare.compare`` adjusts p-values over every row of its table, so a
table cached whole would be recomputed when a metric is added or the correction
changes. Here each metric's rows are computed without a correction, at a reference
α, and cached by the models' content keys, the metric, the baseline, the test and
everything else that shapes them (the bootstrap interval of the difference, the same under
every test, is cached apart, once for all tests); :func:`comparison` then rescales the detectable
lift to the chosen α and adjusts the p-values of all rows together, exactly as
``compare`` does (same columns, same order, same values).

The two resampling steps grow with the users: the bootstrap interval of the difference
(``N_RESAMPLES`` resamples) and Fisher's randomization test (``N_PERMUTATIONS`` sign
flips). Up to ``background.FOREGROUND_USERS`` users per model they are computed at once. Above, a
metric whose resampled rows are not cached yet is shown from a quick computation (no
bootstrap interval; the randomization p-value by the normal approximation of its
sign-flip distribution) while :mod:`dashboard.background` computes the resampled rows;
the table's ``attrs["pending"]`` lists the cache keys the page waits for.
"""

from __future__ import annotations

import contextlib
import hashlib

import numpy as np
import pandas as pd

from metrics_core.analysis import paper_table, stats
from metrics_core.analysis.compare import POWER, compare

from . import background, cache

N_PERMUTATIONS = 10_000
N_RESAMPLES = 1_000
REFERENCE_ALPHA = 0.05


def _rows_key(keys: tuple, metric: str, baseline: str | None, test: str, resamples: int, permutations: int,
              opt_key: tuple) -> str:
    return f"compare|{keys!r}|{metric!r}|{baseline}|{test}|{resamples}|{permutations}|{opt_key!r}"


def _rows(per_user: dict, metric: str, baseline: str | None, test: str, resamples: int, permutations: int):
    return lambda: compare(per_user, baseline=baseline, metrics=[metric], test=test, correction="none",
                           alpha=REFERENCE_ALPHA, n_resamples=resamples, n_permutations=permutations, seed=0)


def _intervals_key(keys: tuple, metric: str, baseline: str | None, opt_key: tuple) -> str:
    return f"compare-ci|{keys!r}|{metric!r}|{baseline}|{N_RESAMPLES}|{opt_key!r}"


def _intervals(per_user: dict, metric: str, baseline: str | None):
    """The bootstrap interval of each row's difference (``ci_low``, ``ci_high``), in the rows' order.
    ``compare`` draws it from the paired differences alone, after the test: it is the same under
    every test, so it is computed once (here with the t-test, whose own cost is negligible)."""
    return lambda: _rows(per_user, metric, baseline, "t", N_RESAMPLES, 0)()[["ci_low", "ci_high"]]


def pending_parts(pending: list[str]) -> dict[str, bool]:
    """Which resampled parts the pending keys of :func:`comparison` are: ``interval`` (the bootstrap
    interval of the difference) and ``sign_flips`` (the randomization test's)."""
    intervals = [key.startswith("compare-ci|") for key in pending]
    return {"interval": any(intervals), "sign_flips": not all(intervals)}


def _metric_rows(keys: tuple, per_user: dict, metric: str, baseline: str | None, test: str, bootstrap: bool,
                 opt_key: tuple, pending: list[str], step=None) -> pd.DataFrame:
    """One metric's rows: the test's (cached by test) with, for ``bootstrap``, the difference's
    interval (cached once for every test: :func:`_intervals`). On many users a resampled part that
    is not cached yet is computed on the server thread (its key appended to ``pending``) while the
    rows show the quick statistics: the normal approximation of the sign flips, no interval."""
    step = step or (lambda name: contextlib.nullcontext())
    users = max(map(len, per_user.values()))
    permutations = N_PERMUTATIONS if test == "randomization" else 0
    tested = _rows(per_user, metric, baseline, test, 0, permutations)
    test_key = _rows_key(keys, metric, baseline, test, 0, permutations, opt_key)
    if permutations:
        quick_key = _rows_key(keys, metric, baseline, test, 0, 0, opt_key)
        with step(f"{metric}: the test"):
            rows, waiting = background.now_or_later(
                test_key, tested,
                lambda: cache.SHARED.get_or_compute(quick_key, _rows(per_user, metric, baseline, test, 0, 0)), users)
        if waiting:
            pending.append(waiting)
    else:
        with step(f"{metric}: the test"):
            rows = cache.SHARED.get_or_compute(test_key, tested)
    if not bootstrap:
        return rows
    with step(f"{metric}: interval of the difference"):
        bounds, waiting = background.now_or_later(_intervals_key(keys, metric, baseline, opt_key),
                                                  _intervals(per_user, metric, baseline), lambda: None, users)
    if waiting:
        pending.append(waiting)
    if bounds is None:
        return rows
    # a new frame: the cached rows are shared between sessions and never changed
    return rows.assign(ci_low=bounds["ci_low"].to_numpy(), ci_high=bounds["ci_high"].to_numpy())


def _rescale_detectable_lift(table: pd.DataFrame, alpha: float) -> None:
    """The detectable lift at ``alpha`` from the one computed at the reference α: the
    standardised effect depends only on the users paired and α, the rest is the sd of the
    differences (``stats.detectable_effect_size``)."""
    if alpha == REFERENCE_ALPHA:
        return
    factors = [stats.detectable_effect_size(int(n), alpha, POWER) / stats.detectable_effect_size(
        int(n), REFERENCE_ALPHA, POWER) if n >= 2 else np.nan for n in table["n"]]
    table["mde"] = table["mde"].to_numpy(dtype=float) * np.asarray(factors, dtype=float)
    table["mde_relative"] = table["mde_relative"].to_numpy(dtype=float) * np.asarray(factors, dtype=float)


def steps(metrics: tuple, bootstrap: bool = True) -> int:
    """How many steps :func:`comparison` takes (each shown on the page's progress bar): per metric,
    the test, and with ``bootstrap`` the interval of the difference."""
    return len(metrics) * (2 if bootstrap else 1)


def comparison(keys: tuple, per_user: dict, metrics: tuple, baseline: str | None, test: str,
               correction: str, alpha: float, opt_key: tuple, bootstrap: bool = True, step=None) -> pd.DataFrame:
    """``compare(per_user, baseline, metrics, test, correction, alpha)`` with the chosen test
    only, each metric's rows cached (``keys``: the models' content keys, in the order of
    ``per_user``; ``opt_key``: everything else that shapes the per-user values, such as the users
    counted, which may depend on every loaded model: ``dashboard.compute.counted_key``).
    Without ``bootstrap`` the CI of the difference is not computed (NaN). On many users the
    resampled statistics may still be running: see the module docstring. ``step(name)``: a context
    manager around each of the :func:`steps` (a page's progress bar, :mod:`dashboard.progress_bar`)."""
    pending: list[str] = []
    parts = [_metric_rows(keys, per_user, m, baseline, test, bootstrap, opt_key, pending, step) for m in metrics]
    return _corrected(pd.concat(parts, ignore_index=True), parts, test, correction, alpha, pending)


def _corrected(table: pd.DataFrame, parts: list, test: str, correction: str, alpha: float,
               pending: list[str]) -> pd.DataFrame:
    """``table`` (rows computed at the reference α, without a correction; changed in place) with
    the detectable lift at ``alpha``, the p-values adjusted together by ``correction`` and the
    attributes of ``compare``'s result (from the first of ``parts``) plus the ``pending`` keys."""
    _rescale_detectable_lift(table, alpha)
    for column in (f"p_{test}", "p_value"):
        adjusted = stats.adjust_pvalues(table[column].to_numpy(), correction)
        table[f"{column}_adjusted" if column != "p_value" else "p_adjusted"] = adjusted
    table["significant"] = (table["p_adjusted"] < alpha).fillna(False).astype(bool)
    values: dict = {}  # each model's value of every metric (each part holds one metric's)
    for part in parts:
        for model, by_metric in part.attrs.get("values", {}).items():
            values.setdefault(model, {}).update(by_metric)
    table.attrs.update({**parts[0].attrs, "correction": correction, "alpha": alpha, "pending": pending,
                        "values": values})
    return table


def paper_tables(table: pd.DataFrame, digits: int = 4) -> dict[str, bytes]:
    """ranx's report of a comparison shown on the page (:func:`comparison`'s table) as the files the page
    offers: ``{"latex": ..., "markdown": ...}`` (UTF-8), each model's value of each metric with the best in
    bold and superscript letters of the models it is significantly better than
    (:mod:`metrics_core.analysis.paper_table`, as ``metrics-core compare --format latex|markdown``)."""
    report = paper_table.paper_table(table, digits)
    return {"latex": paper_table.to_latex(report).encode("utf-8"),
            "markdown": paper_table.to_markdown(report).encode("utf-8")}


def labels_key(labels: pd.Series) -> str:
    """A digest of a segment labelling's content (user ids and their labels), for cache keys: two
    attribute tables with the same column name never share each other's segment results."""
    digest = hashlib.sha256(pd.util.hash_pandas_object(labels, index=True).to_numpy().tobytes())
    return digest.hexdigest()[:24]


def _tables_size(tables: dict) -> int:
    """Bytes of ``{segment: table}`` from the first table's: every table has the same columns and
    rows (one per metric and challenger), and measuring each deep took twice as long as computing
    them all (60 segments: 35 against 17 ms)."""
    return cache.nbytes(next(iter(tables.values()))) * len(tables) if tables else 0


def segment_comparisons(keys: tuple, per_user: dict, labels: pd.Series, seg_col: str, metrics: tuple,
                        baseline: str | None, test: str, alpha: float, opt_key: tuple) -> dict:
    """``{segment: comparison}`` of the users of each value of ``labels`` (user id as text -> value
    of the attribute ``seg_col``), without a correction (the caller corrects over every segment),
    segments with fewer than two users in a model left out; each table as :func:`comparison`
    gives it on the segment's users, without the bootstrap interval.

    Under the t and Wilcoxon tests every segment is compared at once
    (:func:`metrics_core.analysis.segment_compare.compare_segments`) and cached as one entry per attribute
    (``keys`` + the labels' content). Under the randomization test each segment's rows are cached
    like :func:`comparison`'s, so that on many users each segment's sign flips run on the server
    thread while its rows show the quick approximation. The tables may be shared with other
    sessions: read them, never change them."""
    from metrics_core.analysis.segment_compare import compare_segments
    from metrics_core.analysis.segments import split_by_label

    labelling = (seg_col, labels_key(labels))
    if test != "randomization":
        key = f"segments-all|{keys!r}|{labelling!r}|{metrics!r}|{baseline}|{test}|{opt_key!r}"
        rows = cache.SHARED.get_or_compute(key, lambda: compare_segments(
            per_user, labels, baseline=baseline, metrics=list(metrics), test=test, alpha=REFERENCE_ALPHA,
            n_permutations=0, min_users=2), size=_tables_size)
        # each table as comparison() gives it at alpha, kept too: the page draws them on every rerun
        # (shared between sessions: read them, never change them)
        return cache.SHARED.get_or_compute(
            f"{key}|alpha={alpha}",
            lambda: {seg: _corrected(table.copy(), [table], test, "none", alpha, []) for seg, table in rows.items()},
            size=_tables_size)
    out = {}
    for seg, part in split_by_label(per_user, labels).items():
        background.pause_for_pages()  # on the server thread: a click drawn meanwhile goes first
        if min(len(t) for t in part.values()) >= 2:
            out[seg] = comparison(keys + labelling + (seg,), part, metrics, baseline, test, "none", alpha, opt_key,
                                  bootstrap=False)
    return out


def prefetch_segments(keys: tuple, per_user: dict, attributes: dict, metrics: tuple, baseline: str | None,
                      test: str, alpha: float, opt_key: tuple) -> None:
    """Compute :func:`segment_comparisons` of every attribute of ``attributes`` (name -> a function
    giving its labels, called on the server thread) in the background, one job per attribute, so
    that choosing another attribute reads them from the cache. Only for the tests that need no
    resampling (the randomization test's sign flips would queue a job per segment)."""
    if test == "randomization":
        return
    for seg_col, labels in attributes.items():
        key = f"segments|{keys!r}|{seg_col}|{metrics!r}|{baseline}|{test}|{alpha}|{opt_key!r}"

        def job(col=seg_col, of=labels) -> bool:
            segment_comparisons(keys, per_user, of(), col, metrics, baseline, test, alpha, opt_key)
            return True
        background.start(key, job)


def prefetch_tests(tests: tuple, test: str, keys: tuple, per_user: dict, metrics: tuple, baseline: str | None,
                   all_keys: tuple, all_per_user: dict, matrix_metric: str, opt_key: tuple,
                   segments: tuple | None = None, sign_flips: bool = True) -> None:
    """On many users, compute what the page shows under each test of ``tests`` other than ``test``
    on the server thread, so choosing another test reads it from the cache: the rows of every
    metric without resampling (those the page shows while the resampled ones run: see the module
    docstring), the all-pairs matrix of ``matrix_metric`` over ``all_per_user`` (every model as
    baseline) and, with ``segments`` = ``(labels, attribute)``, the segment comparisons of that
    attribute; then, with ``sign_flips``, the randomization test's (:func:`_prefetch_sign_flips`)."""
    if max(map(len, per_user.values())) <= background.FOREGROUND_USERS:
        return  # computed at once when chosen
    for other in tests:
        if other == test:
            continue
        key = (f"prefetch-test|{other}|{keys!r}|{metrics!r}|{baseline}|{all_keys!r}|{matrix_metric!r}|{opt_key!r}|"
               f"{segments[1] if segments else ''}")

        def job(t=other) -> bool:
            for m in metrics:
                background.pause_for_pages()
                cache.SHARED.get_or_compute(_rows_key(keys, m, baseline, t, 0, 0, opt_key),
                                            _rows(per_user, m, baseline, t, 0, 0))
            for b in all_per_user:
                background.pause_for_pages()
                cache.SHARED.get_or_compute(_rows_key(all_keys, matrix_metric, b, t, 0, 0, opt_key),
                                            _rows(all_per_user, matrix_metric, b, t, 0, 0))
            if segments is not None and t != "randomization":
                segment_comparisons(keys, per_user, segments[0], segments[1], metrics, baseline, t,
                                    REFERENCE_ALPHA, opt_key)
            return True
        background.start(key, job)
    if sign_flips and "randomization" in tests and test != "randomization":
        _prefetch_sign_flips(keys, per_user, metrics, baseline, all_keys, all_per_user, matrix_metric, opt_key,
                             segments)


def _prefetch_sign_flips(keys: tuple, per_user: dict, metrics: tuple, baseline: str | None, all_keys: tuple,
                         all_per_user: dict, matrix_metric: str, opt_key: tuple, segments: tuple | None) -> None:
    """Queue, after the quick rows, the randomization test's sign flips of what the page shows under
    it: the table's metrics, the shown attribute's segments (``segments`` = ``(labels, attribute)``),
    then the matrix of every model as baseline. The bootstrap intervals are the other tests' (the same
    under every test), so choosing the randomization test then waits for nothing."""
    test = "randomization"
    for m in metrics:
        background.start(_rows_key(keys, m, baseline, test, 0, N_PERMUTATIONS, opt_key),
                         _rows(per_user, m, baseline, test, 0, N_PERMUTATIONS))
    if segments is not None:
        labels, attribute = segments

        def job() -> bool:
            # segments of many users queue their own sign flips (background.now_or_later); the others run here
            segment_comparisons(keys, per_user, labels, attribute, metrics, baseline, test, REFERENCE_ALPHA, opt_key)
            return True
        background.start(f"prefetch-sign-flips|{keys!r}|{metrics!r}|{baseline}|{attribute}|{opt_key!r}", job)
    for b in all_per_user:
        background.start(_rows_key(all_keys, matrix_metric, b, test, 0, N_PERMUTATIONS, opt_key),
                         _rows(all_per_user, matrix_metric, b, test, 0, N_PERMUTATIONS))


def paired(baseline: pd.Series, challenger: pd.Series) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """The two models' values on the users both have a finite value for
    (:func:`metrics_core.analysis.stats.align_pairs`): ``(baseline values, challenger values, user ids)``."""
    return stats.align_pairs(baseline, challenger)
