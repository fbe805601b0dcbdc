"""The Counterfactual page's data: the uploaded log with propensities, the models' runs as scored
lists, and ``mc.off_policy`` on them, each cached in the server's byte-bounded cache by content
(SHA-256 of the files, column mappings and the page's settings), so reruns and other sessions on
the same files compute nothing again. The tables come from :mod:`dashboard.counterfactual_tables`.
"""

from __future__ import annotations

import contextlib

import pandas as pd
import streamlit as st

import metrics_core as mc
from metrics_core.errors import MetricsError

from . import cache, counterfactual_tables as tables, text
from .loading import DEMO_KEY, demo_data, read_blob
from .sources import Blob, sources

POLICIES = ("softmax", "top1", "topk")
POLICY_HELP = ("How each model's scores become the probability of showing each item: softmax(score / T) over "
               "the user's items, top1 (the highest score; ties share), or topk (uniform over the top K of the "
               "sidebar; ties across the cut share)")


def has_log() -> bool:
    """Whether a logged-feedback file is loaded (the Counterfactual page is offered)."""
    return sources().logged is not None


def _read_log(blob: Blob) -> pd.DataFrame:
    from metrics_core.io.logged import read_log

    def compute() -> pd.DataFrame:
        try:
            return read_log(blob.data, name=blob.name, columns=dict(blob.mapping) or None)[0]
        except MetricsError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reader failure is a message about this file
            detail = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            raise MetricsError(f"{blob.name}: cannot read this log ({detail}); check its format") from None
    return cache.SHARED.get_or_compute(f"logged|{blob.key}|{blob.name}", compute)


def logged_feedback() -> tuple[pd.DataFrame | None, str | None]:
    """(the log, None), or (None, the one-line reason it cannot be used), or (None, None) without a log."""
    blob = sources().logged
    if blob is None:
        return None, None
    try:
        return _read_log(blob), None
    except MetricsError as exc:
        return None, str(exc)


def _scored(frame: pd.DataFrame) -> pd.DataFrame:
    """``user_id``, ``item_id``, ``score`` of a result file (a rank column counts as ``-rank``)."""
    if "score" in frame.columns:
        return frame[["user_id", "item_id", "score"]]
    if "rank" in frame.columns:
        return frame[["user_id", "item_id"]].assign(score=-pd.to_numeric(frame["rank"], errors="coerce"))
    raise MetricsError("no score or rank column: the policy needs each item's score")


def model_runs() -> tuple[dict[str, pd.DataFrame], dict[str, str], list[str]]:
    """(model -> scored run, model -> content key, problems): the uploaded result files, read as the
    other pages read them (no ground truth needed), or the demo's models."""
    src = sources()
    if not src.runs:
        data = demo_data()
        return ({n: r[["user_id", "item_id", "score"]] for n, r in data.runs.items()},
                {n: f"{DEMO_KEY}{n}" for n in data.runs}, [])
    runs, keys, problems = {}, {}, []
    for name, blob in src.runs.items():
        try:
            runs[name] = _scored(read_blob(blob, "results")[0])
            keys[name] = blob.key
        except MetricsError as exc:
            problems.append(f"Model {name}: {exc}")
    return runs, keys, problems


def estimate(log: pd.DataFrame, runs: dict[str, pd.DataFrame], keys: dict[str, str], policy: str, k: int,
             temperature: float, clip: float = 0.0):
    """``mc.off_policy`` of every model on the log (cached by the files' content and the settings): the
    estimators the log's size allows (:func:`counterfactual_tables.estimators_for`), DR as the verdict's
    estimator when fitted (else SNIPS), 500 seeded bootstrap resamples. ``clip``: the largest importance
    weight of IPS and DR (0 for none)."""
    blob = sources().logged
    estimators = tables.estimators_for(len(log))
    primary = "snips" if estimators is not None else None
    key = "|".join(["ope", blob.key if blob is not None else "", *(f"{n}={keys[n]}" for n in runs), policy,
                    str(int(k)), repr(float(temperature)), repr(float(clip))])

    def compute():
        return mc.off_policy(log, runs, policy=policy, k=int(k), temperature=float(temperature),
                             clip=float(clip) if clip > 0 else None,
                             estimators=estimators, primary=primary, n_bootstrap=tables.N_BOOTSTRAP, seed=0)
    spin = st.spinner("Estimating what each model would have earned on the logs...")
    with spin if key not in cache.SHARED else contextlib.nullcontext():
        return cache.SHARED.get_or_compute(key, compute, size=_size)


def _size(res) -> int:
    """Bytes an off-policy result holds (its frames; the rest is small)."""
    frames = (res.estimates, res.diagnostics, res.verdicts, res.per_context)
    return int(sum(f.memory_usage(deep=True).sum() for f in frames)) + 10_000


def chosen_settings(k: int) -> tuple[str, int, float, float]:
    """(policy, K, temperature, clip) the Counterfactual page shows: its widgets' values in this session, else
    the address's (a shared link), else the defaults; for pages that show its verdict without its widgets."""
    def pick(key, default):
        value = st.session_state.get(key)
        return value if value is not None else st.query_params.get(key, default)
    policy = str(pick("ope_policy", POLICIES[0]))
    policy = policy if policy in POLICIES else POLICIES[0]
    try:
        temperature = float(pick("ope_temperature", 1.0))
    except (TypeError, ValueError):
        temperature = 1.0
    temperature = temperature if 0.01 <= temperature <= 100.0 else 1.0
    try:
        clip = float(pick("ope_clip", 0.0))
    except (TypeError, ValueError):
        clip = 0.0
    clip = clip if 0.0 <= clip <= 1e6 else 0.0
    return policy, int(k), temperature, clip


def current_estimate(k: int):
    """The Counterfactual page's result for the other pages (the Brief's line, Failures' breakdown):
    None when no usable log or run is loaded (the Counterfactual page says why)."""
    log, problem = logged_feedback()
    if log is None:
        return None
    runs, keys, _ = model_runs()
    if not runs:
        return None
    return estimate(log, runs, keys, *chosen_settings(k))


def text_of(value: object, limit: int = 600) -> str:
    """A user string made inert for markdown (alerts, captions)."""
    return text.md(value, limit=limit)


__all__ = ["POLICIES", "POLICY_HELP", "chosen_settings", "current_estimate", "estimate", "has_log", "logged_feedback", "model_runs", "text_of"]
