"""Shared state of the dashboard: loaded data, sidebar controls and caches.

Every page imports this module and only arranges what it returns. The small
API below is what the pages (including Compare and Share) build on:

``controls() -> dict(k=int, gain=str, ties=str)``
    The sidebar controls, bound to the URL (``?k=20&gain=exponential&ties=trec``).
``get_models() -> dict[str, mc.Ranked]``
    Every loaded model, prepared once (read + join + sort) and cached by the
    SHA-256 of its file's bytes (or the demo parameters).
``model_keys() -> dict[str, str]``
    The content-hash cache key of each model (use it to key your own caches).
``evaluate_all(metrics, **options) -> dict[str, mc.Evaluation]``
    ``mc.evaluate`` for every model at the current gain and tie rule (any
    other ``mc.evaluate`` keyword may be passed); cached per model, metrics and
    options, so switching K back and forth or revisiting a page is instant.
``user_attributes() -> pd.DataFrame | None``
    ``user_id`` plus attribute columns (e.g. ``segment``), when available.
``item_features() -> pd.DataFrame | None``
    ``item_id`` plus feature columns (passed to ``mc.evaluate`` for ILS).
``is_demo() -> bool``
    True while the bundled demo dataset is shown.
``sources() -> Sources`` / ``load_sources(Sources)`` / ``reset_to_demo()``
    The raw bytes of everything loaded, kept in the analysis store as a
    working copy named in the URL (``dashboard/sources.py``).
``request_drilldown(model, user_id)``
    Ask the Failures page to open on this user (then ``st.switch_page``).
``guard()``
    Context manager: a :class:`metrics_core.MetricsError` becomes an
    ``st.error`` with its one-line message and the page stops (no traceback).

Cached objects are shared between sessions: never mutate a returned frame
or Ranked.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pandas as pd
import streamlit as st

import metrics_core as mc
from metrics_core.errors import MetricsError

from . import demo as demo_mod
from . import cache, text

# ----------------------------------------------------------------------------
# Controls
# ----------------------------------------------------------------------------

K_DEFAULT = 10
K_MAX = 1000
GAINS = ("linear", "exponential")
GAIN_LABELS = {"linear": "linear: rel", "exponential": "exponential: 2^rel - 1"}
TIES = ("average", "trec", "input")
TIE_LABELS = {
    "average": "average over tied orders",
    "trec": "trec_eval: score, then item id",
    "input": "input row order",
}



def _known(names: Sequence[str], suffix: str) -> tuple[str, ...]:
    """The names this metrics_core version accepts (``name + suffix`` parses)."""
    out = []
    for n in names:
        try:
            mc.parse_metric(n + suffix)
        except MetricsError:
            continue
        out.append(n)
    return tuple(out)


# Per-user ranking metrics shown on the Overview (with bootstrap CIs) and
# offered on the Distributions / Failures pages.
RANKING_METRICS = _known(("ndcg", "dcg", "cg", "map", "mrr", "precision", "recall", "f1",
                          "hit_rate", "hit_ratio"), "@10") + ("r_precision",)
PER_USER_METRICS = _known(("ndcg", "map", "recall", "precision", "f1", "mrr", "hit_rate",
                           "dcg", "cg"), "@10") + ("r_precision",)
SCORED_METRICS = _known(("auc", "gauc", "pr_auc", "logloss", "rmse", "mae", "accuracy",
                         "precision", "recall", "f1", "pcopc"), "")
DIVERSITY_METRICS = _known(("coverage", "novelty", "personalization", "ils"), "@10")
CURVE_METRICS = ("ndcg", "map", "recall", "precision", "hit_rate", "mrr")


def render_controls() -> None:
    """Draw the shared sidebar controls (called once by app.py on every page)."""
    st.sidebar.header("Settings")
    st.sidebar.number_input(
        "K (cutoff)", min_value=1, max_value=K_MAX, value=K_DEFAULT, step=1, key="k",
        bind="query-params", help="Cutoff of the @K metrics. Changing it never re-reads the files.")
    # No format_func: the URL holds the option text itself (?gain=exponential).
    st.sidebar.selectbox(
        "Gain", GAINS, key="gain", bind="query-params",
        help="Gain of a relevance grade in DCG/NDCG: linear = rel, exponential = 2^rel - 1.")
    st.sidebar.selectbox(
        "Ties", TIES, key="ties", bind="query-params",
        help="Tied scores: average = exact expectation over every order of the ties; "
             "trec = score, then item id descending (trec_eval); input = the file's row order.")


def apply_view(view: dict) -> None:
    """Seed the sidebar controls from a stored view (before they are drawn); values the
    URL already sets win, invalid ones are ignored."""
    try:
        k = int(view.get("k", K_DEFAULT))
    except (TypeError, ValueError):
        k = K_DEFAULT
    wanted = {"k": k if 1 <= k <= K_MAX else K_DEFAULT,
              "gain": view.get("gain") if view.get("gain") in GAINS else GAINS[0],
              "ties": view.get("ties") if view.get("ties") in TIES else TIES[0]}
    for key, value in wanted.items():
        if key not in st.query_params:
            st.session_state[key] = value


def controls() -> dict[str, Any]:
    """Current ``k``, ``gain`` and ``ties`` (defaults when not yet drawn)."""
    ss = st.session_state
    k = ss.get("k", K_DEFAULT)
    gain = ss.get("gain", GAINS[0])
    ties = ss.get("ties", TIES[0])
    return {"k": int(k if k is not None else K_DEFAULT),
            "gain": gain if gain in GAINS else GAINS[0],
            "ties": ties if ties in TIES else TIES[0]}


# ----------------------------------------------------------------------------
# Sources: what the user loaded (dashboard/sources.py, also the store access)
# ----------------------------------------------------------------------------

from .sources import (  # noqa: E402,F401 - re-exported for the pages
    Blob, Sources, add_run, ingest_uploads, is_demo, load_sources, model_name, remove_run,
    reset_to_demo, set_blob, set_mapping, sources, upload_generation)

_FOCUS = "mcd_focus"


# ----------------------------------------------------------------------------
# Cached reading and preparation (keyed by content hash, never by DataFrame)
# ----------------------------------------------------------------------------

@st.cache_resource(show_spinner=False)
def app_icon():
    """The browser tab icon: three bars of a leaderboard, drawn here (no request to any other host)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    for i, h in enumerate((14, 24, 18)):
        draw.rectangle((3 + 9 * i, 30 - h, 10 + 9 * i, 30), fill=(46, 94, 170, 255))
    return img


@st.cache_resource(show_spinner="Building the demo dataset...")
def demo_data() -> demo_mod.DemoData:
    """The bundled demo dataset (deterministic; built once per server)."""
    return demo_mod.make_demo()


def read_blob(blob: Blob, kind: str) -> tuple[pd.DataFrame, Any]:
    """Parse an uploaded file with metrics_core's reader (cached by content hash,
    failures included, in the server's byte-bounded cache)."""
    key = f"read|{kind}|{blob.key}|{blob.name}"
    with st.spinner(text.md(f"Reading {blob.name}...")) if key not in cache.SHARED else contextlib.nullcontext():
        return cache.SHARED.get_or_compute(key, lambda: _read(blob, kind))


def _first_line(exc: Exception) -> str:
    """The first line of an unexpected exception's message (at most 200 characters)."""
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _read(blob: Blob, kind: str) -> tuple[pd.DataFrame, Any]:
    from metrics_core.io import read_table
    try:
        return read_table(blob.data, name=blob.name, kind=kind, columns=dict(blob.mapping) or None)
    except MetricsError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure is a message about this file
        detail = _first_line(exc)
        raise MetricsError(f"{blob.name}: cannot read this file ({detail}); check its format "
                           "and line endings, or remove it") from None


def _prepare(run_key: str, qrels_key: str, name: str, run: pd.DataFrame,
             qrels: pd.DataFrame | None) -> mc.Ranked:
    """``mc.prepare`` of a model, cached by the content keys of its run and ground truth."""
    def compute() -> mc.Ranked:
        try:
            return mc.prepare(run, qrels, name=name)
        except MetricsError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported as this model's problem
            detail = _first_line(exc)
            raise MetricsError(f"cannot prepare this model ({detail})") from None
    key = f"prepare|{run_key}|{qrels_key}|{name}"
    with st.spinner("Sorting each user's list...") if key not in cache.SHARED else contextlib.nullcontext():
        return cache.SHARED.get_or_compute(key, compute)


@st.cache_resource(show_spinner=False)
def _demo_ranked(name: str) -> mc.Ranked:
    d = demo_data()
    return mc.prepare(d.runs[name], d.qrels, name=name)


@dataclass(frozen=True)
class ModelEntry:
    name: str
    key: str
    ranked: mc.Ranked


@dataclass(frozen=True)
class Problem:
    """A file that cannot be used: its role (``run``, ``qrels``, ``item_features``,
    ``user_attributes``), model name (runs only), file name and one-line message."""

    role: str
    model: str | None
    file: str
    message: str


@dataclass(frozen=True)
class LoadReport:
    """What the loaded files gave: prepared models, files that failed, and models
    waiting for a ground truth (no ground truth yet and no relevance column)."""

    entries: list[ModelEntry]
    problems: list[Problem]
    waiting: list[str]


def _entries() -> tuple[list[ModelEntry], list[tuple[str | None, str]]]:
    report = load_report()
    return report.entries, [(p.model, p.message) for p in report.problems if p.role in ("run", "qrels")]


def load_report() -> LoadReport:
    """Read and prepare every loaded file (cached): see :class:`LoadReport`."""
    src = sources()
    if not src.runs:
        params = demo_data().params
        pkey = "demo:" + ",".join(f"{k}={v}" for k, v in sorted(params.items()))
        entries = [ModelEntry(n, f"{pkey}:{n}", _demo_ranked(n)) for n in demo_data().runs]
        problems = []
        if src.qrels is not None:
            try:
                read_blob(src.qrels, "qrels")
            except MetricsError as exc:
                problems.append(Problem("qrels", None, src.qrels.name, f"Ground truth: {exc}"))
        return LoadReport(entries, problems + _side_problems(), [])
    problems: list[Problem] = []
    qrels_df = None
    qrels_key = ""
    if src.qrels is not None:
        try:
            qrels_df = read_blob(src.qrels, "qrels")[0]
            qrels_key = src.qrels.key
        except MetricsError as exc:
            problems.append(Problem("qrels", None, src.qrels.name, f"Ground truth: {exc}"))
    out, waiting = [], []
    for name, blob in src.runs.items():
        try:
            run_df, mapping = read_blob(blob, "run" if src.qrels is not None else "auto")
            if src.qrels is not None and qrels_df is None:
                waiting.append(name)  # the ground truth itself has a problem (reported above)
                continue
            if qrels_df is None and getattr(mapping, "relevance", None) is None:
                waiting.append(name)
                continue
            ranked = _prepare(blob.key, qrels_key, name, run_df, qrels_df)
        except MetricsError as exc:
            problems.append(Problem("run", name, blob.name, f"Model {name}: {exc}"))
            continue
        out.append(ModelEntry(name, f"{blob.key}#{qrels_key}", ranked))
    return LoadReport(out, problems + _side_problems(), waiting)


def load_errors() -> list[str]:
    """One-line messages for result or ground-truth files that could not be read or prepared."""
    return [msg for _, msg in _entries()[1]]


def load_problems() -> list[tuple[str | None, str]]:
    """``(model name, or None for the ground truth; message)`` per failed file."""
    return _entries()[1]


def read_mapping(model: str | None):
    """metrics_core's ColumnMapping of a model's file (None: the ground truth), or None."""
    src = sources()
    blob = src.qrels if model is None else src.runs.get(model)
    if blob is None:
        return None
    kind = "qrels" if model is None else ("run" if src.qrels is not None else "auto")
    try:
        return read_blob(blob, kind)[1]
    except MetricsError:
        return None


def get_models() -> dict[str, mc.Ranked]:
    """Model name -> prepared :class:`mc.Ranked` (demo models when nothing is uploaded)."""
    return {e.name: e.ranked for e in _entries()[0]}


def model_keys() -> dict[str, str]:
    """Model name -> content-hash key (stable while the data is unchanged)."""
    return {e.name: e.key for e in _entries()[0]}


def _read_side(blob: Blob, id_column: str) -> pd.DataFrame:
    """Read an item-features or user-attributes table (cached by content hash).

    Read by ``metrics_core.io.read_item_features`` (``id_column`` ``item_id``)
    or ``read_user_attributes`` (``user_id``), so the library's formats, checks,
    limits and messages apply. Raises MetricsError with a one-line message.
    """
    def compute() -> pd.DataFrame:
        try:
            return _parse_side(blob.name, id_column, blob.data)
        except MetricsError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reader failure is a message about this file
            detail = _first_line(exc)
            raise MetricsError(f"{blob.name}: cannot read this file ({detail}); remove it or fix it") from None
    return cache.SHARED.get_or_compute(f"side|{id_column}|{blob.sha256}|{blob.name}", compute)


def _parse_side(name: str, id_column: str, _data: bytes) -> pd.DataFrame:
    """The checked readers of metrics_core.io (their limits and one-line errors apply)."""
    from metrics_core.io import read_item_features, read_user_attributes

    reader = read_item_features if id_column == "item_id" else read_user_attributes
    df, _mapping = reader(_data, name=name)
    return df


def file_columns(blob: Blob) -> list[str]:
    """The column names of a file's header (to let the user map them)."""

    from metrics_core.io.delimited import first_line, header_names
    from metrics_core.io.parquet import parquet_names
    from metrics_core.io.source import load_source

    src = load_source(blob.data, blob.name)
    if src.fmt == "parquet":
        return parquet_names(src.data, None, blob.name)
    line = first_line(src.data)[0]
    if line.lstrip()[:1] == "{":
        import json
        try:
            return list(json.loads(line))
        except (ValueError, TypeError):
            return []
    for delim in ("\t", ","):
        if delim in line:
            return header_names(line, delim)
    return line.split()


def item_features() -> pd.DataFrame | None:
    """``item_id`` + feature columns, or None."""
    src = sources()
    if not src.runs:
        return demo_data().item_features
    if src.item_features is None:
        return None
    try:
        return _read_side(src.item_features, "item_id")
    except MetricsError:
        return None


def user_attributes() -> pd.DataFrame | None:
    """``user_id`` + attribute columns (e.g. ``segment``), or None."""
    src = sources()
    if not src.runs:
        return demo_data().users
    if src.user_attributes is None:
        return None
    try:
        return _read_side(src.user_attributes, "user_id")
    except MetricsError:
        return None


def _side_problems() -> list[Problem]:
    """Problems of the item-features and user-attributes files."""
    src = sources()
    out = []
    for role, col in (("item_features", "item_id"), ("user_attributes", "user_id")):
        blob = getattr(src, role)
        if blob is not None:
            try:
                _read_side(blob, col)
            except MetricsError as exc:
                out.append(Problem(role, None, blob.name, str(exc)))
    return out


def side_errors() -> list[str]:
    """Messages for an item-features or user-attributes file that cannot be read."""
    return [p.message for p in _side_problems()]


def _features_key() -> str:
    src = sources()
    if not src.runs:
        return "demo"
    return src.item_features.key if src.item_features is not None else ""


# ----------------------------------------------------------------------------
# Evaluation (cached per model x metrics x options)
# ----------------------------------------------------------------------------

@st.cache_resource(show_spinner=False, max_entries=64, ttl=cache.SHARED.ttl_seconds)
def _evaluate_cached(model_key: str, metrics: tuple[str, ...], options: tuple,
                     features_key: str, _ranked: mc.Ranked, _features: pd.DataFrame | None):
    kwargs = dict(options)
    if any(mc.parse_metric(m).name == "ils" for m in metrics):
        kwargs["item_features"] = _features
    return mc.evaluate(_ranked, metrics=list(metrics), **kwargs)


def applicable(metrics: Sequence[str], ranked: mc.Ranked) -> tuple[str, ...]:
    """``metrics`` without those that cannot apply to this model's data:
    ``logloss`` needs scores in [0, 1]; ``ils`` needs an item-features table."""
    out = []
    for m in metrics:
        base = mc.parse_metric(m).name
        if base == "logloss" and not scores_are_probabilities(ranked):
            continue
        if base == "ils" and item_features() is None:
            continue
        out.append(m)
    return tuple(out)


@st.cache_resource(show_spinner=False, max_entries=32, ttl=cache.SHARED.ttl_seconds)
def _curve_table_cached(model_key: str, metrics: tuple[str, ...], k_max: int, options: tuple,
                        _ranked: mc.Ranked) -> pd.DataFrame:
    return mc.metric_curve(_ranked, list(metrics), k_max=k_max, **dict(options))


def metric_curves(metrics: Sequence[str] = CURVE_METRICS, k_max: int = 50) -> pd.DataFrame:
    """Long table (model, metric, k, value) of ranking metrics at K = 1..k_max for every
    model, from ``mc.metric_curve`` (one pass per user, cached per model and options)."""
    c = controls()
    opt_key = tuple(sorted({"gain": c["gain"], "ties": c["ties"]}.items()))
    frames = []
    for e in _entries()[0]:
        try:
            wide = _curve_table_cached(e.key, tuple(metrics), int(k_max), opt_key, _ranked=e.ranked)
        except MetricsError as exc:
            raise MetricsError(f"{e.name}: {exc}") from None
        long = wide.melt(id_vars="k", var_name="metric", value_name="value")
        frames.append(long.assign(model=e.name)[["model", "metric", "k", "value"]])
    return pd.concat(frames, ignore_index=True)


def evaluate_all(metrics: Sequence[str], *, skip_inapplicable: bool = True,
                 **options: Any) -> dict[str, Any]:
    """``mc.evaluate`` of every model on ``metrics`` (cached).

    Defaults come from the sidebar (``gain``, ``ties``); ``options`` may add
    or override any ``mc.evaluate`` keyword (hashable values only). With
    ``skip_inapplicable`` (default) a metric that cannot apply to a model
    (see :func:`applicable`) is left out of that model's evaluation, so its
    ``summary`` lacks the key. Raises :class:`MetricsError` naming the model
    when one fails.
    """
    c = controls()
    opts = {"gain": c["gain"], "ties": c["ties"], **options}
    opt_key = tuple(sorted(opts.items()))
    feats = item_features()
    fkey = _features_key()
    out = {}
    for e in _entries()[0]:
        try:
            wanted = applicable(metrics, e.ranked) if skip_inapplicable else tuple(metrics)
            out[e.name] = _evaluate_cached(e.key, wanted, opt_key, fkey,
                                           _ranked=e.ranked, _features=feats)
        except MetricsError as exc:
            raise MetricsError(f"{e.name}: {exc}") from None
    return out


def summary_table(evals: dict[str, Any], metrics: Sequence[str]) -> pd.DataFrame:
    """Wide table: one row per model (column ``model``), one column per metric
    (named as given); NaN where a metric did not apply to a model."""
    rows = [{"model": name, **{m: ev.summary.get(m, float("nan")) for m in metrics}}
            for name, ev in evals.items()]
    return pd.DataFrame(rows, columns=["model", *metrics])


@st.cache_data(show_spinner=False, max_entries=2048, ttl=cache.SHARED.ttl_seconds)
def _bootstrap(model_key: str, metric: str, opt_key: tuple, _values) -> tuple[float, float]:
    from metrics_core.stats import bootstrap_ci
    low, high = bootstrap_ci(_values, n_resamples=1000, confidence=0.95, seed=0)
    return float(low), float(high)


def ci_table(evals: dict[str, Any], metrics: Sequence[str]) -> pd.DataFrame:
    """Long table ``model, metric, value, ci_low, ci_high, users``.

    The 95% interval is metrics_core's bootstrap over users
    (``metrics_core.stats.bootstrap_ci``, 1,000 resamples, seed 0) of the
    per-user values; it is given for the metrics whose summary is the mean of
    the per-user column (ranking metrics), NaN for global ones (AUC, ...).
    """
    c = controls()
    opt_key = (c["gain"], c["ties"])
    keys = model_keys()
    rows = []
    for name, ev in evals.items():
        pu = ev.per_user
        for m in metrics:
            value = ev.summary.get(m, float("nan"))
            low = high = float("nan")
            n = ev.n_users
            if m in pu.columns:
                col = pu[m].to_numpy(dtype=float)
                if col.size and abs(float(col.mean()) - value) <= 1e-9 * max(1.0, abs(value)):
                    low, high = _bootstrap(keys.get(name, name), m, opt_key, _values=col)
                    n = col.size
            rows.append({"model": name, "metric": m, "value": value, "ci_low": low,
                         "ci_high": high, "users": n})
    return pd.DataFrame(rows, columns=["model", "metric", "value", "ci_low", "ci_high", "users"])


# ----------------------------------------------------------------------------
# Per-user tables (reshaping metrics_core's per-user results for the charts)
# ----------------------------------------------------------------------------

def per_user_long(evals: dict[str, Any], metric: str) -> pd.DataFrame:
    """``model, user_id, value``: the per-user column ``metric`` of every model."""
    parts = []
    for name, ev in evals.items():
        if metric in ev.per_user.columns:
            col = ev.per_user[metric]
            parts.append(pd.DataFrame({"model": name, "user_id": col.index.astype(str),
                                       "value": col.to_numpy(dtype=float)}))
    if not parts:
        return pd.DataFrame(columns=["model", "user_id", "value"])
    return pd.concat(parts, ignore_index=True)


def distribution_summary(long: pd.DataFrame) -> pd.DataFrame:
    """Per model: users, mean, median, and the shares of users at exactly 0 and exactly 1."""
    g = long.groupby("model", sort=False)["value"]
    return pd.DataFrame({
        "users": g.size(),
        "mean": g.mean(),
        "median": g.median(),
        "share at 0": g.apply(lambda v: float((v == 0).mean())),
        "share at 1": g.apply(lambda v: float((v == 1).mean())),
    })


RELEVANT_BUCKETS = [(1, 1), (2, 3), (4, 7), (8, 15), (16, None)]


def relevant_bucket_labels(models: dict[str, mc.Ranked], user_ids: pd.Index,
                           relevance_threshold: float = 1) -> pd.Series:
    """Bucket of the number of relevant items (1, 2-3, 4-7, 8-15, 16+) per user id,
    from metrics_core's ``Ranked.n_relevant`` (the same ground truth for every model)."""
    ranked = next(iter(models.values()))
    codes = ranked.user_ids.astype(str).get_indexer(user_ids.astype(str))
    n_rel = ranked.n_relevant(relevance_threshold)
    counts = pd.Series(n_rel[codes], index=user_ids)
    labels = [f"{a}" if a == b else (f"{a}-{b}" if b else f"{a}+") for a, b in RELEVANT_BUCKETS]
    edges = [a - 0.5 for a, _ in RELEVANT_BUCKETS] + [float("inf")]
    return pd.Series(pd.cut(counts, bins=edges, labels=labels).astype(str), index=user_ids,
                     name="relevant items")


def segment_table(long: pd.DataFrame, segment: pd.Series) -> pd.DataFrame:
    """``model, segment, mean, users``: the mean per-user value within each segment.

    ``segment`` maps user id (string) -> segment label; users without a label
    are grouped as "(missing)".
    """
    seg = long["user_id"].map(segment).fillna("(missing)").astype(str)
    out = (long.assign(segment=seg).groupby(["model", "segment"], sort=False)["value"]
           .agg(mean="mean", users="size").reset_index())
    return out


def worst_users(ev: Any, metric: str, n: int) -> pd.DataFrame:
    """The ``n`` users with the lowest per-user ``metric`` (ties by user id),
    with their number of relevant items and list length."""
    col = ev.per_user[metric]
    order = pd.DataFrame({"user_id": col.index.astype(str), metric: col.to_numpy(dtype=float)})
    order = order.sort_values([metric, "user_id"], kind="stable").head(n).reset_index(drop=True)
    ranked = ev.ranked
    codes = ranked.user_ids.astype(str).get_indexer(order["user_id"])
    order["relevant items"] = ranked.n_relevant(ev.conventions.get("relevance_threshold", 1))[codes].astype(int)
    order["list length"] = ranked.list_lengths[codes].astype(int)
    return order


_CURVES = {
    "roc": mc.roc_curve,
    "pr": mc.pr_curve,
    "calibration": mc.calibration_curve,
    "confusion": mc.confusion_matrix,
}


@st.cache_resource(show_spinner=False, max_entries=32, ttl=cache.SHARED.ttl_seconds)
def _curve_cached(kind: str, model_key: str, options: tuple, _ranked: mc.Ranked) -> pd.DataFrame:
    return _CURVES[kind](_ranked, **dict(options))


def curve(kind: str, model: str, ranked: mc.Ranked, **options: Any) -> pd.DataFrame:
    """metrics_core's ``roc`` / ``pr`` / ``calibration`` curve or ``confusion``
    matrix of a model (cached by the model's content key and the options)."""
    key = model_keys().get(model, model)
    return _curve_cached(kind, key, tuple(sorted(options.items())), _ranked=ranked)


LARGE_ROWS = 200_000


def is_large() -> bool:
    """True when a model has more than ``LARGE_ROWS`` scored rows: the Overview
    then leaves its slow extras (bootstrap CIs, beyond-accuracy metrics,
    metric-versus-K curves) off until the user switches them on, so that a
    change of K or gain refreshes it in about a second."""
    return any(r.n_rows > LARGE_ROWS for r in get_models().values())


def scores_are_probabilities(ranked: mc.Ranked) -> bool:
    """True when every score is in [0, 1] (logloss and calibration apply)."""
    s = ranked.score
    return bool(s.size) and float(s.min()) >= 0.0 and float(s.max()) <= 1.0


# ----------------------------------------------------------------------------
# Navigation helpers
# ----------------------------------------------------------------------------

def request_drilldown(model: str, user_id: Any) -> None:
    """Make the Failures page open on ``user_id`` of ``model``."""
    st.session_state[_FOCUS] = (model, user_id)


def pop_drilldown() -> tuple[str, Any] | None:
    """The pending drill-down request, consumed (used by the Failures page)."""
    return st.session_state.pop(_FOCUS, None)


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Show a MetricsError as a one-line ``st.error`` and stop the page."""
    try:
        yield
    except MetricsError as exc:
        st.error(text.md(str(exc), limit=600))
        st.stop()


def require_models() -> dict[str, mc.Ranked]:
    """The loaded models; stops the page with a hint when there are none."""
    models = get_models()
    errs = load_errors()
    for msg in errs:
        st.error(text.md(msg, limit=600))
    if not models:
        st.info("No model could be loaded. Open the **Data** page to upload ranked results "
                "or return to the demo data.")
        st.stop()
    return models
