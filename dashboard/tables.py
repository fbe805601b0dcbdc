"""Pure table builders of the pages (no Streamlit): they reshape metrics_core's results
and are tested directly."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from metrics_core.formats import plural
from metrics_core.outputs.plot.distribution_tables import per_user_long, segment_table  # noqa: F401 - shared with mc.plot


def selected_value(table: pd.DataFrame, column: str, rows: Sequence[int]) -> str | None:
    """``table[column]`` at the first selected row, as a string; None when nothing
    is selected or the selection points past the end of the table (a selection
    made on a longer table survives the table shrinking)."""
    if not rows:
        return None
    row = rows[0]
    if not isinstance(row, int) or row < 0 or row >= len(table):
        return None
    return str(table[column].iloc[row])


def has_user(ranked, user_id: str) -> bool:
    """True when ``user_id`` (compared as a string) is one of the ranked users."""
    return bool((ranked.user_ids.astype(str) == str(user_id)).any())


#: Role shown in the file list -> attribute of ``Sources``.
ROLE_KINDS = {"ground truth": "qrels", "item features": "item_features", "user attributes": "user_attributes"}


#: the longest file or model name shown whole (in a tooltip or a table cell); the store keeps names of
#: up to 1,000 characters, and a name the browser sends may be longer (it is then refused by the store)
MAX_NAME_SHOWN = 4_000


def loaded_files(src, report) -> pd.DataFrame:
    """One row per loaded file: ``file, role, model, size, status`` where status is
    "ready", "waiting for a ground truth" or the file's problem."""
    problems = {(p.role, p.model): p.message for p in report.problems}
    ready = {e.name for e in report.entries}
    rows = []
    for model, blob in src.runs.items():
        if ("run", model) in problems:
            status = "problem: see below"
        elif model in report.waiting:
            status = "waiting for a ground truth"
        else:
            status = "ready" if model in ready else "not used"
        rows.append({"file": blob.name, "role": "model", "model": model, "size": _size(blob.size),
                     "status": status})
    for role, kind in ROLE_KINDS.items():
        blob = getattr(src, kind)
        if blob is None:
            continue
        bad = any(p.role == kind for p in report.problems)
        status = "problem: see below" if bad else ("ready" if src.runs or kind != "qrels"
                                                   else "ready, waiting for models")
        rows.append({"file": blob.name, "role": role, "model": "", "size": _size(blob.size),
                     "status": status})
    return pd.DataFrame(rows, columns=["file", "role", "model", "size", "status"])


def loaded_without_models(src) -> str:
    """What the Data page says while files are loaded but no model's results: which files
    (by role and name) and what comes next."""
    loaded = [f"{role} ({getattr(src, kind).name})" for role, kind in ROLE_KINDS.items()
              if getattr(src, kind) is not None]
    return (f"Loaded: {', '.join(loaded)}. No model's results yet: upload one ranked-results file per model "
            "with Add files in the sidebar; until then the other pages show the demo data.")


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


def _count_share(count: int, total: int) -> str:
    return f"{count:,} ({count / total:.1%})" if total else f"{count:,}"


def diagnostics_table(diags: dict) -> pd.DataFrame:
    """One row per model, one column per check: counts with their shares."""
    rows = {}
    for name, d in diags.items():
        evaluated = d.n_users_evaluated
        rows[name] = {
            "users evaluated": f"{evaluated:,}",
            "only in the run": _count_share(d.users_only_in_run, d.n_users_run),
            "in the truth, missing from the run": _count_share(d.users_only_in_truth, d.n_users_truth),
            "without a relevant item": _count_share(d.users_without_relevant, d.n_users_truth),
            f"ties in the top {d.k}": f"{d.share_users_ties_in_top_k:.1%} of users",
            f"fewer than {plural(d.k, 'item')}": _count_share(d.users_short_lists, evaluated),
            f"unjudged in the top {d.k}": ("-" if d.share_unjudged_in_top_k is None
                                           else f"{d.share_unjudged_in_top_k:.1%} of items"),
        }
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "model"
    return out


#: Above this share of the run's users without ground truth a diagnostic is a warning.
ONLY_IN_RUN_WARN = 0.5


def diagnostics_problems(diags: dict, users: str = "all") -> list[str]:
    """Sentences for what probably distorts the results: ids that do not match, and any user
    of the ground truth missing from a model's run (one is enough: it scores 0 for that model
    under ``users="all"``, or leaves every model's numbers under ``users="served"``). Ties,
    short lists and unjudged items are usual in ranking data and stay facts in the table."""
    out = []
    for name, d in diags.items():
        if d.n_users_evaluated == 0:
            out.append(f"{name}: no user of the run is in the ground truth; check that the user ids match.")
            continue
        missing = d.users_only_in_truth
        if missing:
            one = missing == 1
            fate = ((f"{'it scores' if one else 'they score'} 0 for it when {'it has' if one else 'they have'} "
                     "relevant items (Users counted: all)") if users == "all"
                    else f"{'it is' if one else 'they are'} left out of every model's numbers (Users counted: served)")
            out.append(f"{name}: {_count_share(missing, d.n_users_truth)} {'user' if one else 'users'} of the "
                       f"ground truth {'is' if one else 'are'} missing from the run; {fate}.")
        extra = d.users_only_in_run
        if d.n_users_run and extra / d.n_users_run >= ONLY_IN_RUN_WARN:
            one = extra == 1
            out.append(f"{name}: {_count_share(extra, d.n_users_run)} {'user' if one else 'users'} of the run "
                       f"{'has' if one else 'have'} no ground truth and {'is' if one else 'are'} left out; check "
                       "that the user ids match.")
    return out


def diagnostics_facts(diags: dict) -> list[str]:
    """Notes from metrics_core worth reading, each once (the same note for several models
    is said once, naming them)."""
    by_note: dict[str, list[str]] = {}
    for name, d in diags.items():
        for note in d.notes:
            by_note.setdefault(note, []).append(name)
    return [f"{', '.join(names)}: {note}" if len(names) < len(diags) else note
            for note, names in by_note.items()]


def relevance_threshold(conventions: dict) -> float:
    """The relevance threshold an evaluation used (its resolved conventions),
    else the declared default of ``metrics_core.metrics.conventions``."""
    from metrics_core.metrics.conventions import BY_NAME

    return float(conventions.get("relevance_threshold", BY_NAME["relevance_threshold"].default))


def hit_or_miss(relevance: pd.Series, threshold: float) -> pd.Series:
    """``"hit"`` where ``relevance >= threshold`` (relevant), else ``"miss"``."""
    return (relevance >= threshold).map({True: "hit", False: "miss"})


# ----------------------------------------------------------------------------- per-user tables

def summary_table(evals: dict[str, Any], metrics: Sequence[str]) -> pd.DataFrame:
    """Wide table: one row per model (column ``model``), one column per metric
    (named as given); NaN where a metric did not apply to a model."""
    rows = [{"model": name, **{m: ev.summary.get(m, float("nan")) for m in metrics}}
            for name, ev in evals.items()]
    return pd.DataFrame(rows, columns=["model", *metrics])




def summary_download(shown: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The Overview's summary file: the tables shown (each indexed by model), side by side in the
    order shown, one row per model with a leading ``model`` column."""
    columns = [column for table in shown for column in table.columns]
    joined = pd.concat(list(shown), axis=1)
    joined.index.name = "model"
    return joined.reset_index()[["model", *columns]]


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


#: The name of the segments of users by their number of relevant items (:func:`relevant_bucket_labels`).
RELEVANT_ITEMS = "relevant items"


def relevant_bucket_labels(models: dict[str, Any], user_ids: pd.Index,
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
                     name=RELEVANT_ITEMS)




def user_segments(user_ids: pd.Index, models: dict, attributes: pd.DataFrame | None = None,
                  column: str | None = None, relevance_threshold: float = 1) -> tuple[pd.Series, str]:
    """The segment of each user id (as strings) and the segment's name: the ``column`` of the
    user-attributes table when one is loaded, else the bucket of the user's number of relevant
    items (:func:`relevant_bucket_labels`). Users without an attribute are "(missing)"."""
    ids = pd.Index(pd.Series(user_ids).astype(str).drop_duplicates())
    if _has_column(attributes, column):
        labels = pd.Series(attributes[column].astype(str).to_numpy(), index=attributes["user_id"].astype(str))
        labels = labels[~labels.index.duplicated()]
        return labels.reindex(ids).fillna("(missing)").rename(column), column
    buckets = relevant_bucket_labels(models, ids, relevance_threshold)
    buckets.index = buckets.index.astype(str)
    return buckets, RELEVANT_ITEMS


def segment_name(attributes: pd.DataFrame | None, column: str | None) -> str:
    """The name of the segments :func:`user_segments` gives: ``column`` when the user-attributes
    table has it, else :data:`RELEVANT_ITEMS`."""
    return column if _has_column(attributes, column) else RELEVANT_ITEMS


def _has_column(attributes: pd.DataFrame | None, column: str | None) -> bool:
    return attributes is not None and column is not None and column in attributes.columns


#: The K notice appears when K is longer than this share of the lists.
K_NOTICE_SHARE = 0.5


def k_exceeds_lists(list_lengths, k: int) -> str | None:
    """A notice when K is longer than most lists (``K_NOTICE_SHARE``), else None.

    ``list_lengths`` are the lengths of the served lists (users with an empty list are
    left out: they are reported as missing from the run elsewhere).
    """
    lengths = pd.Series(list_lengths, dtype=float)
    lengths = lengths[lengths > 0]
    if lengths.empty:
        return None
    shorter = float((lengths < k).mean())
    if shorter <= K_NOTICE_SHARE:
        return None
    return (f"K = {k:,} is longer than {shorter:.0%} of the lists (median length {lengths.median():,.0f}): "
            "@K metrics count the missing positions as misses, and precision@K divides by K.")


def needs_probabilities_view(wide: pd.DataFrame, probabilistic: dict, needs: Sequence[str]
                             ) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Scored-row table with the metrics that read scores as probabilities blanked for
    models whose scores are outside [0, 1] (never shown as numbers), and dropped when no
    model has probabilities. Returns (table, dropped metrics, models with raw scores).

    ``wide`` is indexed by model; ``probabilistic`` maps model -> scores in [0, 1].
    """
    out = wide.copy()
    raw = [m for m in out.index if not probabilistic.get(m, False)]
    cols = [c for c in needs if c in out.columns]
    if raw and cols:
        out.loc[raw, cols] = float("nan")
    dropped = [c for c in cols if out[c].isna().all()]
    return out.drop(columns=dropped), dropped, raw


def scores_on_relevance_scale(scores, relevances) -> bool:
    """Whether the scores can be read as predicted relevance grades: every score lies within the
    range of the grades (0 to 1 for binary labels), and scores of graded relevance (grades above
    1) use that scale (some score above 1; scores within [0, 1] are then probabilities or
    similarities, not grades). Only then do RMSE, MSE, MAE, R² and explained variance measure how
    well scores predict relevance."""
    import numpy as np

    s = np.asarray(scores, dtype=float)
    r = np.asarray(relevances, dtype=float)
    s, r = s[np.isfinite(s)], r[np.isfinite(r)]
    if s.size == 0:
        return False
    low = min(float(r.min()), 0.0) if r.size else 0.0
    high = max(float(r.max()), 1.0) if r.size else 1.0
    return bool(low <= s.min() and s.max() <= high and (high <= 1.0 or s.max() > 1.0))


#: The Overview's choice of when the error metrics (RMSE, MSE, MAE, R², explained variance) are
#: shown: the first reads each model's scores (:func:`scores_on_relevance_scale`).
ERROR_METRICS_WHEN = ("when the scores lie on the relevance scale", "always: the scores predict the grade",
                      "never: the scores only rank")


def error_metrics_shown(on_scale: dict[str, bool], when: str) -> dict[str, bool]:
    """Model -> whether its error metrics are shown, for a choice of :data:`ERROR_METRICS_WHEN`."""
    if when == ERROR_METRICS_WHEN[1]:
        return {name: True for name in on_scale}
    if when == ERROR_METRICS_WHEN[2]:
        return {name: False for name in on_scale}
    return dict(on_scale)
