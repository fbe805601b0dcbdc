"""A log and its runs coded once, so that every off-policy estimate afterwards is integer arithmetic.

``prepare_log(log, runs)`` codes contexts (``user_id``) and actions
(``item_id``) over the log and every run together, with one dictionary each:

* pandas ``Categorical`` columns sharing their categories: their codes, nothing hashed;
* integer columns on every side: the integers themselves when they are small and non-negative
  (at most 4 times the rows), else factorised as integers; shown as their decimal text;
* anything else as exact text, dictionary-encoded by pyarrow in order of first appearance, the log
  first (``"12"`` and ``"12.0"`` are two ids).

A dictionary may hold ids the log never shows (a run's, an unused category):
they have no logged round and count nowhere. :func:`metrics_core.ope.off_policy`
accepts the result in place of the log (``runs`` then left out) and spends no
time on ids: prepare once, estimate under many policies, estimators and
settings. Each run keeps its frame as given for the paths that read it
(probabilities given per position, the reward model of DM/DR, slates).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from ..io.logged import REQUIRED, check_propensities
from ..kernels.ope_lookup import probability_at_logged
from .codes import LogCodes
from .policy import contiguous_runs


@dataclass
class CodedRun:
    """One model's run as codes: ``context`` (None for a context-free run), ``action``, ``score``
    (None without a score column) and the frame as given."""

    context: np.ndarray | None
    action: np.ndarray
    score: np.ndarray | None
    frame: pd.DataFrame


@dataclass
class PreparedLog:
    """The checked log, its codes (:class:`LogCodes`, contexts and actions over log and runs) and the
    coded runs; ``seconds``: the time spent coding."""

    log: pd.DataFrame
    codes: LogCodes
    runs: dict[str, CodedRun]
    seconds: float = 0.0


def _small_integers(values: np.ndarray) -> bool:
    return len(values) > 0 and values.min() >= 0 and values.max() <= 4 * len(values)


def joint_codes(columns: list[pd.Series]) -> tuple[list[np.ndarray], pd.Index]:
    """Codes of several id columns over one dictionary, first appearance across the columns in order."""
    dtypes = [c.dtype for c in columns]
    if all(isinstance(d, pd.CategoricalDtype) for d in dtypes) and \
            all(d.categories.equals(dtypes[0].categories) for d in dtypes):
        codes = [c.cat.codes.to_numpy(np.int64) for c in columns]
        if any((c < 0).any() for c in codes):
            raise MetricsError("an id column has missing values; every row needs a context and an action id")
        return codes, pd.Index(dtypes[0].categories.astype(str))
    if all(pd.api.types.is_integer_dtype(d) and not isinstance(d, pd.CategoricalDtype) for d in dtypes):
        values = [c.to_numpy(np.int64) for c in columns]
        joined = np.concatenate(values)
        if _small_integers(joined):
            return values, pd.Index(np.arange(int(joined.max()) + 1).astype(str))
        codes, uniques = pd.factorize(joined)
        return _split(codes, values), pd.Index(pd.Index(uniques).astype(str))
    arrays = []
    for c in columns:
        text = c if (pd.api.types.is_string_dtype(c.dtype) or pd.api.types.is_object_dtype(c.dtype)) \
            else c.astype(str)
        try:
            arr = pa.array(text, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # Python objects of several kinds: their text
            arr = pa.array(text.astype(str), from_pandas=True)
        arrays += (arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr])
    chunked = pa.chunked_array([a.cast(pa.large_string()) for a in arrays], type=pa.large_string())
    if chunked.null_count:
        raise MetricsError("an id column has missing values; every row needs a context and an action id")
    encoded = pc.dictionary_encode(chunked)
    dictionary = encoded.chunks[0].dictionary if encoded.num_chunks else pa.array([], pa.large_string())
    codes = np.concatenate([ch.indices.to_numpy(zero_copy_only=False).astype(np.int64) for ch in encoded.chunks]) \
        if encoded.num_chunks else np.zeros(0, np.int64)
    return _split(codes, columns), pd.Index(dictionary.to_pandas())


def _split(codes: np.ndarray, columns) -> list[np.ndarray]:
    bounds = np.cumsum([0] + [len(c) for c in columns])
    return [codes[bounds[i]:bounds[i + 1]] for i in range(len(columns))]


def _check_log(log: pd.DataFrame) -> pd.DataFrame:
    """The log with ids as text and rewards and propensities as finite numbers; one-line MetricsError
    naming the row otherwise."""
    if not isinstance(log, pd.DataFrame):
        raise MetricsError("log must be a DataFrame (read a file with metrics_core.io.logged.read_log)")
    missing = [c for c in REQUIRED if c not in log.columns]
    if missing:
        raise MetricsError(f"the log has no {missing[0]!r} column; it needs {', '.join(REQUIRED)}")
    if not len(log):
        raise MetricsError("the log has no rows")
    log = log.reset_index(drop=True).copy()
    for c in ("user_id", "item_id"):
        if not (pd.api.types.is_object_dtype(log[c]) or pd.api.types.is_string_dtype(log[c])):
            log[c] = log[c].astype(str)
    for c in ("reward", "propensity"):
        values = pd.to_numeric(log[c], errors="coerce").to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise MetricsError(f"log row {int(bad[0]) + 1}: {c} {log[c].iloc[bad[0]]!r} is not a finite number; "
                               f"{len(bad)} row(s) are")
        log[c] = values
    for c in ("propensity", "propensity_cascade", "propensity_slate"):
        if c in log.columns:
            check_propensities(pd.to_numeric(log[c], errors="coerce").to_numpy(float),
                               "log" if c == "propensity" else f"log column {c}",
                               lambda i: f"row {i + 1}")
            log[c] = pd.to_numeric(log[c]).astype(float)
    return log


def _runs(runs, as_text: bool = True) -> dict[str, pd.DataFrame]:
    """``{model: run}`` from a DataFrame or a dict (ids as text unless ``as_text=False``); one-line
    MetricsError for anything else."""
    if isinstance(runs, pd.DataFrame):
        runs = {"model": runs}
    if not isinstance(runs, dict) or not runs:
        raise MetricsError("runs must be a DataFrame or a dict of model name -> DataFrame")
    out = {}
    for name, run in runs.items():
        if not isinstance(run, pd.DataFrame) or "item_id" not in run.columns:
            raise MetricsError(f"run {name!r} must be a DataFrame with item_id and score (or probability)")
        for c in ("user_id", "item_id") if as_text else ():
            if c in run.columns and not (pd.api.types.is_object_dtype(run[c]) or pd.api.types.is_string_dtype(run[c])):
                run = run.assign(**{c: run[c].astype(str)})
        out[str(name)] = run
    return out


def prepare_log(log: pd.DataFrame, runs) -> PreparedLog:
    """Check the log, code contexts and actions of the log and ``runs`` jointly, once (see the module
    docstring).

    Parameters
    ----------
    log : DataFrame
        the logged feedback: ``user_id``, ``item_id``, ``reward``, ``propensity`` (and the optional
        columns of :mod:`metrics_core.io.logged`).
    runs : DataFrame or dict
        one run or ``{model: run}``; each ``user_id``, ``item_id`` and ``score`` (or ``probability``).

    Returns a :class:`PreparedLog` to pass to :func:`metrics_core.off_policy` in place of the log.
    A non-finite score is refused with its run and row.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> log = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
    ...                     "reward": [1.0, 0.0, 0.0, 1.0], "propensity": 0.5})
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
    ...                     "score": [2.0, 1.0, 1.0, 2.0]})
    >>> prepared = mc.prepare_log(log, {"greedy": run})
    >>> list(prepared.codes.contexts), prepared.codes.context.tolist(), prepared.codes.action.tolist()
    (['u1', 'u2'], [0, 0, 1, 1], [0, 1, 0, 1])
    >>> for clip in (1.0, 10.0):  # prepared once, estimated under two settings
    ...     ope = mc.off_policy(prepared, policy="top1", estimators=["ips"], clip=clip, n_bootstrap=20)
    ...     print(clip, ope.estimates.loc[0, "value"])  # weights 1/0.5 = 2 on the two rounds the policy picks
    1.0 0.5
    10.0 1.0
    """
    t = time.perf_counter()
    if not isinstance(log, pd.DataFrame) or "user_id" not in log.columns or "item_id" not in log.columns:
        log = _check_log(log)  # the one-line error of a log without ids
    given_runs = _runs(runs, as_text=False)
    user_columns = [log["user_id"]] + [r["user_id"] for r in given_runs.values() if "user_id" in r.columns]
    (log_ctx, *run_ctx), contexts = joint_codes(user_columns)
    (log_act, *run_act), actions = joint_codes([log["item_id"]] + [r["item_id"] for r in given_runs.values()])
    log = _check_log(log)
    runs = _runs(runs)
    codes = LogCodes.from_codes(log_ctx, log_act, contexts, actions)
    coded = {}
    ctx_iter = iter(run_ctx)
    for (name, run), act in zip(runs.items(), run_act):
        ctx = next(ctx_iter) if "user_id" in run.columns else None
        score = None
        if "score" in run.columns:
            score = pd.to_numeric(run["score"], errors="coerce").to_numpy(float)
            bad = np.flatnonzero(~np.isfinite(score))
            if len(bad):
                raise MetricsError(f"run {name!r} row {int(bad[0]) + 1}: score {run['score'].iloc[bad[0]]!r} is not "
                                   f"a finite number; {len(bad)} row(s) are")
        coded[name] = CodedRun(ctx, act, score, run)
    return PreparedLog(log, codes, coded, time.perf_counter() - t)


def policy_at_logged(prepared: PreparedLog, run: CodedRun, p: np.ndarray) -> np.ndarray:
    """``pi_e(a_i | x_i)`` of every logged round from the run rows' probabilities ``p``."""
    codes = prepared.codes
    listed = p > 0
    if run.context is None:
        per_action = np.zeros(len(codes.actions))
        per_action[run.action[listed]] = p[listed]
        return per_action[codes.action]
    listed = np.flatnonzero(listed)
    ctx, act, prob = run.context[listed], run.action[listed], p[listed]
    n_contexts = len(codes.contexts)
    starts = contiguous_runs(ctx, n_contexts)
    if starts is None:  # a context's rows apart: sort them together
        order = np.argsort(ctx, kind="stable")
        ctx, act, prob = ctx[order], act[order], prob[order]
        starts = contiguous_runs(ctx, n_contexts)
    span = np.zeros((n_contexts, 2), np.int64)  # (first pair, pairs) of each context, side by side
    span[ctx[starts], 0] = starts
    span[ctx[starts], 1] = np.diff(np.r_[starts, len(ctx)])
    listed_pairs = np.empty((len(act), 2))
    listed_pairs[:, 0] = act
    listed_pairs[:, 1] = prob
    return probability_at_logged(codes.context, codes.action, span, listed_pairs, np.empty(len(codes.context)))


def unlogged_mass(prepared: PreparedLog, run: CodedRun, p: np.ndarray) -> float:
    """Mean over logged rounds of the policy's probability on actions the log never shows."""
    off = ~prepared.codes.logged_actions[run.action]
    if run.context is None:
        return float(p[off].sum())
    codes = prepared.codes
    mass = np.bincount(run.context[off], weights=p[off], minlength=len(codes.contexts))
    return float(np.dot(mass, codes.rounds) / len(codes.context))


def contexts_without_list(prepared: PreparedLog, run: CodedRun, p: np.ndarray) -> int:
    """Logged contexts where the policy gives no action a positive probability (0 when context-free)."""
    if run.context is None:
        return 0
    in_log = prepared.codes.rounds > 0
    listed = np.bincount(run.context[p > 0], minlength=len(prepared.codes.contexts)) > 0
    return int(np.count_nonzero(in_log & ~listed))


def probability_frame(prepared: PreparedLog, run: CodedRun, p: np.ndarray) -> pd.DataFrame:
    """The run's positive probabilities as ids (``user_id``, ``item_id``, ``probability``), for the paths
    that join frames (the reward model's candidates)."""
    keep = p > 0
    out = {}
    if run.context is not None:
        out["user_id"] = prepared.codes.contexts.to_numpy()[run.context[keep]]
    out["item_id"] = prepared.codes.actions.to_numpy()[run.action[keep]]
    out["probability"] = p[keep]
    return pd.DataFrame(out)


__all__ = ["CodedRun", "PreparedLog", "contexts_without_list", "joint_codes", "policy_at_logged",
           "prepare_log", "probability_frame", "unlogged_mass"]
