"""What the loaded files give: prepared models, side tables and the problems of each file.

Every file is read by :mod:`metrics_core.io` (its formats, checks, limits and one-line
errors apply) and prepared once by ``mc.prepare``; both are cached in the server's
byte-bounded cache (:mod:`dashboard.cache`) by the SHA-256 of the file's bytes, so a
page change or a rerun never reads or sorts again. While nothing is uploaded the
bundled demo is shown. Cached objects are shared between sessions: never mutate a
returned frame or Ranked.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

import metrics_core as mc
from metrics_core import progress as reporting
from metrics_core.errors import MetricsError
from metrics_core.io.checks import check_run_duplicates

from . import cache, demo_cache, progress_bar, text
from . import demo as demo_mod
from .sources import Blob, Sources, sources

# ----------------------------------------------------------------------------
# Cached reading and preparation (keyed by content hash, never by DataFrame)
# ----------------------------------------------------------------------------

#: how the content key of a demo model starts (:func:`load_report`)
DEMO_KEY = "demo:"


def showing_demo() -> bool:
    """Whether the models shown are the bundled demo's (nothing uploaded)."""
    return not sources().runs


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
    """The bundled demo dataset (deterministic; built once per server, read back from the disk
    cache of :mod:`dashboard.demo_cache` by a restarted one)."""
    return demo_cache.cached("data", demo_mod.make_demo)


def _whole(whole: bool | None) -> bool:
    """``whole``, or the sidebar's choice of reading whole-number ids when not given."""
    if whole is None:
        from .controls import whole_number_ids

        return whole_number_ids()
    return bool(whole)


def ids_tag(whole: bool | None = None) -> str:
    """What a content key adds for how ids were read: ``""`` when exactly as written, ``"|whole"`` when ids
    writing a whole number were read as that number (:data:`dashboard.controls.WHOLE_IDS_KEY`), so every
    cache keyed on a file's content (reading, preparing, every metric) tells the two readings apart."""
    return "|whole" if _whole(whole) else ""


def _read_key(blob: Blob, kind: str, whole: bool) -> str:
    return f"read|{kind}|{blob.key}|{blob.name}{ids_tag(whole)}"


def read_blob(blob: Blob, kind: str, whole: bool | None = None) -> tuple[pd.DataFrame, Any]:
    """Parse an uploaded file with metrics_core's reader (cached by content hash,
    failures included, in the server's byte-bounded cache).

    ``kind`` "qrels" reads a ground truth; "results" a model's result file, the same
    way whether a ground truth is loaded yet or not (so a file uploaded before the
    ground truth is read once): user, item and a score, rank or relevance column.
    A result file's repeated (user, item) pairs are left to ``mc.prepare`` (see
    :func:`_prepare`), as the command line does. ``whole``: read ids writing a whole number as
    that number (default: the sidebar's choice, :func:`dashboard.controls.whole_number_ids`).
    """
    whole = _whole(whole)
    key = _read_key(blob, kind, whole)
    with st.spinner(text.md(f"Reading {blob.name}...")) if _spin(key) else contextlib.nullcontext():
        return cache.SHARED.get_or_compute(key, lambda: _read(blob, kind, whole))


def _spin(key: str) -> bool:
    """Whether to show a spinner while ``key`` is computed: when it is not cached and a page's
    script runs this thread (:func:`warm` runs on the server's worker thread, with no page), and no
    loading bar (:class:`_LoadProgress`) says already what is being done."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    shown = reporting.current()
    if isinstance(shown, _LoadProgress) and shown.bar is not None:
        return False
    return key not in cache.SHARED and get_script_run_ctx(suppress_warning=True) is not None


def load_step_text(done: int, total: int, action: str, name: str) -> str:
    """The progress line of loading the uploaded files: ``Step 2 of 5: reading run.csv`` (the file
    name as the user gave it; the caller shows it as text)."""
    return f"Step {done + 1} of {total}: {action} {name}"


class _LoadProgress:
    """How far the loading of the uploaded files is: a progress bar with the step and the file,
    shown from the first step that is not cached (cached steps take no time) on a page's script
    thread, and removed when every file is read and prepared.

    It is also the :mod:`metrics_core.progress` reporter while the files load, so the stages
    metrics_core reports inside a step are drawn with their count: ``Step 2 of 5: reading run.csv:
    parsing run.csv, 12.0 of 48.0 MiB``, then ``checking run.csv: the ids and numbers of 2,000,000
    rows``, ``preparing ...`` (:func:`dashboard.progress_bar.stage_text`); the bar moves within the
    step as the bytes are parsed."""

    def __init__(self, total: int):
        self.total, self.done, self.bar = total, 0, None
        self.current = ""
        self._drawn = self._high = 0.0

    def step(self, key: str, action: str, name: str) -> None:
        """Before a step: show it when ``key`` is not cached (:func:`_spin`)."""
        if self.bar is None and _spin(key):
            self.bar = st.empty()
        self.current = load_step_text(self.done, self.total, action, name)
        self.done += 1
        self.draw(force=True)

    def draw(self, stage: str = "", n: int = 0, total: int | None = None, unit: str = "",
             force: bool = False) -> None:
        """The bar at the current step (counted from its start) and ``stage`` within it, if any; at most
        every :data:`~dashboard.progress_bar.REDRAW_SECONDS` unless ``force``."""
        now = time.monotonic()
        if self.bar is None or (not force and now - self._drawn < progress_bar.REDRAW_SECONDS):
            return
        self._drawn = now
        fraction, label = self.shown(stage, n, total, unit)
        self.bar.progress(fraction, text=text.md(label, limit=300))

    def shown(self, stage: str = "", n: int = 0, total: int | None = None, unit: str = "") -> tuple[float, str]:
        """``(fraction, text)`` of the bar: the steps done and the stage's share of the current one, never
        less than drawn before."""
        label = self.current + (f": {progress_bar.stage_text(stage, n, total, unit)}" if stage else "")
        fraction = (self.done - 1 + progress_bar.stage_share(n, total)) / self.total
        # a stage without a count after one with (checking after parsing) keeps the bar where it was
        self._high = max(self._high, min(max(fraction, 0.0), 1.0))
        return self._high, label

    @contextlib.contextmanager
    def stage(self, stage: str, total: int | None = None, unit: str = "it"):
        """What metrics_core calls for each stage it reports (:func:`metrics_core.progress.stage`)."""
        self.draw(stage, 0, total, unit, force=True)
        yield progress_bar.StageCount(self, stage, total, unit)

    def say(self, note: str) -> None:
        """A note metrics_core gives between stages (the first compile of the kernels)."""
        self.draw(note, force=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.empty()


def _first_line(exc: Exception) -> str:
    """The first line of an unexpected exception's message (at most 200 characters)."""
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _read(blob: Blob, kind: str, whole: bool) -> tuple[pd.DataFrame, Any]:
    from metrics_core.io import read_table
    columns = dict(blob.mapping) or None
    try:
        if kind == "qrels":
            return read_table(blob.data, name=blob.name, kind="qrels", columns=columns, whole_number_ids=whole)
        return read_table(blob.data, name=blob.name, kind="auto", columns=columns, check_run_pairs=False,
                          whole_number_ids=whole)
    except MetricsError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure is a message about this file
        detail = _first_line(exc)
        raise MetricsError(f"{blob.name}: cannot read this file ({detail}); check its format "
                           "and line endings, or remove it") from None


def _prepare(blob: Blob, qrels_key: str, name: str, run: pd.DataFrame, mapping: Any,
             qrels: pd.DataFrame | None, tag: str = "") -> mc.Ranked:
    """``mc.prepare`` of a model, cached by the content keys of its run and ground truth.

    ``mc.prepare`` refuses a repeated (user, item) pair; the message then comes from
    the reader's check, which names both lines of the file."""
    def compute() -> mc.Ranked:
        try:
            return mc.prepare(run, qrels, name=name)
        except MetricsError:
            check_run_duplicates(run, blob.name, mapping.lines)
            raise
        except Exception as exc:  # noqa: BLE001 - reported as this model's problem
            detail = _first_line(exc)
            raise MetricsError(f"cannot prepare this model ({detail})") from None
    key = f"prepare|{blob.key}{tag}|{qrels_key}|{name}"
    with st.spinner("Sorting each user's list...") if _spin(key) else contextlib.nullcontext():
        return cache.SHARED.get_or_compute(key, compute)


def _require_scores(blob: Blob) -> None:
    """Raise the reader's one-line message for a result file that has a relevance column
    but no score or rank, once a ground truth is loaded (it cannot rank the items)."""
    from metrics_core.io.columns import detect

    detect(file_columns(blob), "run", blob.name, dict(blob.mapping) or None)
    raise MetricsError(f"{blob.name}: no score or rank column; add one or map it explicitly")


@st.cache_resource(show_spinner=False)
def _demo_ranked(name: str) -> mc.Ranked:
    """A demo model, prepared once per server. On a fresh install (the layout kernel not
    compiled yet) the layout pass runs in plain Python, a third of a second per demo model,
    same result: the first page does not wait about 3 s for the compile, which the background
    warm-up (:mod:`dashboard.kernel_warmup`) does for later uploads. A restarted server reads
    it back from :mod:`dashboard.demo_cache`."""
    from metrics_core.layout.build import layout_kernel_cached, prepare_plain

    def compute() -> mc.Ranked:
        d = demo_data()
        prepare = mc.prepare if layout_kernel_cached() else prepare_plain
        ranked = prepare(d.runs[name], d.qrels, name=name)
        # the parts a Ranked gathers on first use (a kernel) that the Overview reads, gathered here so
        # that the copy on disk has them: a restarted server draws the Overview without loading a kernel
        ranked.score, ranked.q_rel  # noqa: B018
        return ranked
    return demo_cache.cached(f"ranked-{name}", compute)


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


def load_report(src: Sources | None = None, whole: bool | None = None) -> LoadReport:
    """Read and prepare every loaded file (cached): see :class:`LoadReport`. ``src``: the
    session's sources unless given (:func:`warm` gives them, off the page's thread); ``whole``: how
    ids are read (:func:`read_blob`; default: the sidebar's choice)."""
    src = sources() if src is None else src
    whole = _whole(whole)
    if not src.runs:
        params = demo_data().params
        pkey = DEMO_KEY + ",".join(f"{k}={v}" for k, v in sorted(params.items()))
        entries = [ModelEntry(n, f"{pkey}:{n}", _demo_ranked(n)) for n in demo_data().runs]
        problems = []
        if src.qrels is not None:
            try:
                read_blob(src.qrels, "qrels", whole)
            except MetricsError as exc:
                problems.append(Problem("qrels", None, src.qrels.name, f"Ground truth: {exc}"))
        return LoadReport(entries, problems + _side_problems(src, whole), [])
    problems: list[Problem] = []
    shown = _LoadProgress((src.qrels is not None) + 2 * len(src.runs))
    try:
        with reporting.active(shown):
            return _load_uploaded(src, problems, shown, whole)
    finally:
        shown.close()


def _load_uploaded(src: Sources, problems: list, shown: _LoadProgress, whole: bool) -> LoadReport:
    """:func:`load_report` of uploaded files, each step shown on ``shown``; ``whole``: :func:`read_blob`."""
    qrels_df = None
    qrels_key = ""
    tag = ids_tag(whole)
    if src.qrels is not None:
        shown.step(_read_key(src.qrels, "qrels", whole), "reading", src.qrels.name)
        try:
            qrels_df = read_blob(src.qrels, "qrels", whole)[0]
            qrels_key = src.qrels.key + tag
        except MetricsError as exc:
            problems.append(Problem("qrels", None, src.qrels.name, f"Ground truth: {exc}"))
    out, waiting = [], []
    for name, blob in src.runs.items():
        shown.step(_read_key(blob, "results", whole), "reading", blob.name)
        try:
            run_df, mapping = read_blob(blob, "results", whole)
            if src.qrels is not None and qrels_df is None:
                waiting.append(name)  # the ground truth itself has a problem (reported above)
                continue
            if qrels_df is None and getattr(mapping, "relevance", None) is None:
                waiting.append(name)
                continue
            if qrels_df is not None and mapping.score is None and mapping.rank is None:
                _require_scores(blob)
            shown.step(f"prepare|{blob.key}{tag}|{qrels_key}|{name}", "sorting each user's list of", name)
            ranked = _prepare(blob, qrels_key, name, run_df, mapping, qrels_df, tag)
        except MetricsError as exc:
            problems.append(Problem("run", name, blob.name, f"Model {name}: {exc}"))
            continue
        out.append(ModelEntry(name, f"{blob.key}{tag}#{qrels_key}", ranked))
    return LoadReport(out, problems + _side_problems(src, whole), waiting)


def warm(src: Sources, whole: bool = False) -> int:
    """Read and prepare every file of ``src`` into the server cache, without a page (on the
    server's worker thread: a snapshot whose brief was kept opens at once while its data
    loads here), ids read as ``whole`` says (:func:`read_blob`); the number of models prepared."""
    return len(load_report(src, whole).entries)


def load_errors() -> list[str]:
    """One-line messages for result or ground-truth files that could not be read or prepared."""
    return [msg for _, msg in _entries()[1]]


def read_mapping(model: str | None):
    """metrics_core's ColumnMapping of a model's file (None: the ground truth), or None."""
    src = sources()
    blob = src.qrels if model is None else src.runs.get(model)
    if blob is None:
        return None
    try:
        return read_blob(blob, "qrels" if model is None else "results")[1]
    except MetricsError:
        return None


def get_models() -> dict[str, mc.Ranked]:
    """Model name -> prepared :class:`mc.Ranked` (demo models when nothing is uploaded)."""
    return {e.name: e.ranked for e in _entries()[0]}


def model_keys() -> dict[str, str]:
    """Model name -> content-hash key (stable while the data is unchanged)."""
    return {e.name: e.key for e in _entries()[0]}


def _read_side(blob: Blob, id_column: str, whole: bool | None = None) -> pd.DataFrame:
    """Read an item-features or user-attributes table (cached by content hash).

    Read by ``metrics_core.io.read_item_features`` (``id_column`` ``item_id``)
    or ``read_user_attributes`` (``user_id``), so the library's formats, checks,
    limits and messages apply, ids read as ``whole`` says (:func:`read_blob`). Raises MetricsError
    with a one-line message.
    """
    whole = _whole(whole)

    def compute() -> pd.DataFrame:
        try:
            return _parse_side(blob.name, id_column, blob.data, whole)
        except MetricsError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reader failure is a message about this file
            detail = _first_line(exc)
            raise MetricsError(f"{blob.name}: cannot read this file ({detail}); remove it or fix it") from None
    return cache.SHARED.get_or_compute(f"side|{id_column}|{blob.sha256}|{blob.name}{ids_tag(whole)}", compute)


def _parse_side(name: str, id_column: str, _data: bytes, whole: bool = False) -> pd.DataFrame:
    """The checked readers of metrics_core.io (their limits and one-line errors apply)."""
    from metrics_core.io import read_item_features, read_user_attributes

    reader = read_item_features if id_column == "item_id" else read_user_attributes
    df, _mapping = reader(_data, name=name, whole_number_ids=whole)
    return df


def file_columns(blob: Blob) -> list[str]:
    """The column names of a file's header (to let the user map them)."""

    from metrics_core.io.delimited import first_line, header_names
    from metrics_core.io.jsonl import object_keys
    from metrics_core.io.parquet import parquet_names
    from metrics_core.io.source import load_source

    src = load_source(blob.data, blob.name)
    if src.fmt == "parquet":
        return parquet_names(src.data, None, blob.name)
    line = first_line(src.data)[0]
    if line.lstrip()[:1] == "{":
        try:
            return object_keys(line, blob.name)
        except MetricsError:  # too deep, not JSON or not an object: the read error says why
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


def _side_problems(src: Sources | None = None, whole: bool | None = None) -> list[Problem]:
    """Problems of the item-features and user-attributes files (ids read as ``whole`` says)."""
    src = sources() if src is None else src
    out = []
    for role, col in (("item_features", "item_id"), ("user_attributes", "user_id")):
        blob = getattr(src, role)
        if blob is not None:
            try:
                _read_side(blob, col, whole)
            except MetricsError as exc:
                out.append(Problem(role, None, blob.name, str(exc)))
    return out


def _features_key() -> str:
    src = sources()
    if not src.runs:
        return "demo"
    return src.item_features.key + ids_tag() if src.item_features is not None else ""


def attributes_key() -> str:
    """Identifies the user attributes :func:`user_attributes` reads (the demo's, none, or a file's
    content and column mapping), for cache keys."""
    src = sources()
    if not src.runs:
        return "demo"
    return src.user_attributes.key + ids_tag() if src.user_attributes is not None else ""


LARGE_ROWS = 200_000


def is_large() -> bool:
    """True when a model has more than ``LARGE_ROWS`` scored rows: the Overview
    then leaves its slow extras (bootstrap CIs, beyond-accuracy metrics,
    metric-versus-K curves) off until the user switches them on, so that a
    change of K or gain refreshes it in about a second."""
    return any(r.n_rows > LARGE_ROWS for r in get_models().values())


def scores_are_probabilities(ranked: mc.Ranked) -> bool:
    """True when every score is in [0, 1] (logloss and calibration apply); read once per prepared model."""
    def compute() -> bool:
        s = ranked.score
        return bool(s.size) and float(s.min()) >= 0.0 and float(s.max()) <= 1.0
    return cache.derived(ranked, "scores_are_probabilities", compute)


def scores_on_relevance_scale(ranked: mc.Ranked) -> bool:
    """:func:`dashboard.tables.scores_on_relevance_scale` of the model's scores and grades, read once
    per prepared model."""
    from .tables import scores_on_relevance_scale as on_scale

    return cache.derived(ranked, "scores_on_relevance_scale", lambda: on_scale(ranked.score, ranked.q_rel))
