"""Pure table helpers of the pages (no Streamlit): tested directly."""

from __future__ import annotations

from typing import Sequence

import pandas as pd


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
        rows.append({"file": blob.name, "role": "model", "model": model, "size": _size(len(blob.data)),
                     "status": status})
    for role, kind in ROLE_KINDS.items():
        blob = getattr(src, kind)
        if blob is None:
            continue
        bad = any(p.role == kind for p in report.problems)
        status = "problem: see below" if bad else ("ready" if src.runs or kind != "qrels"
                                                   else "ready, waiting for models")
        rows.append({"file": blob.name, "role": role, "model": "", "size": _size(len(blob.data)),
                     "status": status})
    return pd.DataFrame(rows, columns=["file", "role", "model", "size", "status"])


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
            f"fewer than {d.k} items": _count_share(d.users_short_lists, evaluated),
            f"unjudged in the top {d.k}": ("-" if d.share_unjudged_in_top_k is None
                                           else f"{d.share_unjudged_in_top_k:.1%} of items"),
        }
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "model"
    return out


#: Above these shares a diagnostic is a warning rather than a fact.
MISSING_USERS_WARN = 0.05
ONLY_IN_RUN_WARN = 0.5


def diagnostics_problems(diags: dict) -> list[str]:
    """Sentences for what probably distorts the results: ids that do not match, users
    that score 0 because the run misses them. Ties, short lists and unjudged items are
    usual in ranking data and stay facts in the table."""
    out = []
    for name, d in diags.items():
        if d.n_users_evaluated == 0:
            out.append(f"{name}: no user of the run is in the ground truth; check that the user ids match.")
            continue
        if d.n_users_truth and d.users_only_in_truth / d.n_users_truth >= MISSING_USERS_WARN:
            out.append(f"{name}: {_count_share(d.users_only_in_truth, d.n_users_truth)} users of the ground "
                       "truth are missing from the run; they score 0 when they have relevant items.")
        if d.n_users_run and d.users_only_in_run / d.n_users_run >= ONLY_IN_RUN_WARN:
            out.append(f"{name}: {_count_share(d.users_only_in_run, d.n_users_run)} users of the run have no "
                       "ground truth and are left out; check that the user ids match.")
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
    else the declared default of ``metrics_core.conventions``."""
    from metrics_core.conventions import BY_NAME

    return float(conventions.get("relevance_threshold", BY_NAME["relevance_threshold"].default))


def hit_or_miss(relevance: pd.Series, threshold: float) -> pd.Series:
    """``"hit"`` where ``relevance >= threshold`` (relevant), else ``"miss"``."""
    return (relevance >= threshold).map({True: "hit", False: "miss"})
