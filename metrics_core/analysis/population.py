"""Which users an analysis counts: one setting shared by every number of the analysis.

``users="all"`` (the default) counts every evaluated user of the ground truth; a user a
model did not serve (no list, or an empty one) scores 0 for that model, as trec_eval ``-c``
does. ``users="served"`` counts only the users that every model of the analysis served,
so that no model is judged on users it never saw.

:func:`population` computes, from the evaluations of every model of the analysis, the users
counted and each model's coverage (how many evaluated users it served, and which it did
not). :meth:`Population.restrict` gives an evaluation whose per-user table holds the users
counted and whose per-user means are taken over them; :func:`metrics_core.analysis.compare.compare`,
:func:`metrics_core.analysis.compare.summary_table` and the HTML report take the same setting, so
every page, table and file of one analysis tells the same numbers.

Metrics without per-user values (AUC, logloss and the other scored-row metrics, catalogue
coverage, personalization, ...) are computed over all scored rows or lists and are the same
under both settings: a model's rows exist only for the users it served.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from metrics_core.encode import ids_in
from metrics_core.errors import MetricsError
from metrics_core.per_user import per_user_table

__all__ = ["USERS", "DEFAULT_USERS", "USERS_HELP", "Population", "population", "check_users", "served_users",
           "accounting"]

#: The settings of ``users``, the default first.
USERS = ("all", "served")
DEFAULT_USERS = "all"
#: One line per setting, for option help and captions.
USERS_HELP = {
    "all": "every evaluated user of the ground truth; a model's missing list scores 0 (trec_eval -c)",
    "served": "only the users every model served; users a model did not serve are left out for all models",
}


def check_users(users: Any) -> str:
    """``users`` as one of :data:`USERS`, or a :class:`MetricsError` naming the choices."""
    value = str(users).strip().lower() if users is not None else DEFAULT_USERS
    if value not in USERS:
        raise MetricsError(f"users must be one of {', '.join(USERS)} (got {str(users)[:40]!r}): "
                           f"all = {USERS_HELP['all']}; served = {USERS_HELP['served']}")
    return value


def served_users(evaluation: Any) -> pd.Index:
    """The users a model served (a non-empty list), from the prepared run an evaluation
    keeps (``Evaluation.ranked``)."""
    ranked = getattr(evaluation, "ranked", None)
    if ranked is None:
        raise MetricsError("users='served' needs to know which users each model served: pass Evaluations "
                           "(from mc.evaluate) or served={model: user ids}")
    return pd.Index(ranked.user_ids[np.asarray(ranked.list_lengths) > 0])


def _count(n: int) -> str:
    return f"{int(n):,}"


@dataclass(frozen=True)
class Population:
    """The users an analysis counts and each model's coverage.

    ``users``: the setting; ``evaluated``: the evaluated users (the union of the models'
    per-user tables, as they are indexed); ``ids``: the users counted; ``unserved``: per
    model, the evaluated users it did not serve (in the order of ``evaluated``).
    """

    users: str
    evaluated: pd.Index
    ids: pd.Index
    unserved: dict

    @property
    def n(self) -> int:
        """Users counted."""
        return len(self.ids)

    @property
    def n_evaluated(self) -> int:
        return len(self.evaluated)

    def served(self, model: str) -> int | None:
        """Evaluated users ``model`` served (None when unknown)."""
        missing = self.unserved[model]
        return None if missing is None else self.n_evaluated - len(missing)

    @property
    def incomplete(self) -> list[str]:
        """Models that did not serve every evaluated user, in the analysis' order."""
        return [m for m, ids in self.unserved.items() if ids is not None and len(ids)]

    def describe(self, unit: str = "users") -> str:
        """Over whom the numbers are: ``19,743 users; two_tower served 19,043`` (``unit``: what a row
        is, :mod:`metrics_core.units`: ``5,778 queries (every evaluated query; ...)``)."""
        from metrics_core.units import noun

        one, many = noun(unit, 1), noun(unit)
        missing = self.incomplete
        if any(ids is None for ids in self.unserved.values()):  # coverage unknown: only the count
            return f"{_count(self.n)} {many} (every evaluated {one})"
        served = "; ".join(f"{m} served {_count(self.served(m))}" for m in missing)
        if self.users == "all":
            head = f"{_count(self.n)} {many} (every evaluated {one}; a missing list scores 0)"
            return f"{head}; {served}" if missing else f"{head}; every model served all of them"
        head = (f"{_count(self.n)} {many} (only those every model served, of {_count(self.n_evaluated)} "
                "evaluated)")
        return f"{head}; {served}" if missing else f"{head}; every model served all of them"

    def coverage(self, segments: pd.Series | pd.DataFrame | None = None, limit: int = 5,
                 unit: str = "users") -> list[str]:
        """One sentence per model that did not serve every evaluated user, with how many and, given
        ``segments``, in which segments (largest first, at most ``limit`` per attribute): a Series
        (a label per user id, named by the attribute) or a user-attributes table (``user_id`` and
        one column per attribute). Empty when every model served everyone."""
        if isinstance(segments, pd.DataFrame):
            ids = segments["user_id"] if "user_id" in segments.columns else segments.index
            columns = [pd.Series(segments[c].astype(str).to_numpy(), index=pd.Index(ids).astype(str), name=c)
                       for c in segments.columns if c != "user_id"]
        else:
            columns = [] if segments is None else [segments]
        out = []
        for model in self.incomplete:
            ids = self.unserved[model]
            parts = []
            for labels in columns:
                counts = self.unserved_segments(model, labels)
                named = ", ".join(f"{seg} {_count(c)}" for seg, c in counts.head(limit).items())
                more = f" and {len(counts) - limit} more" if len(counts) > limit else ""
                parts.append(f"{labels.name or 'segment'}: {named}{more}")
            where = f" ({'; '.join(parts)})" if parts else ""
            fate = ("they score 0 for it" if self.users == "all"
                    else "they are left out for every model")
            out.append(f"{model} did not serve {_count(len(ids))} of the {_count(self.n_evaluated)} evaluated "
                       f"{unit}{where}; {fate}.")
        return out

    def unserved_segments(self, model: str, segments: pd.Series) -> pd.Series:
        """Users ``model`` did not serve, counted per segment (``segments``: a label per user
        id, compared as strings; users without one are "(missing)"), largest first."""
        ids = pd.Index(self.unserved[model]).astype(str)
        labels = pd.Series(segments.to_numpy(), index=pd.Index(segments.index).astype(str))
        labels = labels[~labels.index.duplicated()]
        found = labels.reindex(ids).fillna("(missing)").astype(str)
        counts = found.value_counts()
        order = sorted(counts.index, key=lambda s: (-int(counts[s]), s))
        return counts.reindex(order).rename("users")

    def table(self, per_user: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``per_user`` (indexed by user id) that are counted."""
        if self.users == "all":
            return per_user
        return per_user[ids_in(per_user.index, self.ids)]

    def restrict(self, evaluation: Any) -> Any:
        """``evaluation`` over the users counted: its per-user table restricted, and each
        summary value that is the mean of a per-user column taken over those users (other
        summary values, over rows or lists, are kept). Unchanged under ``users="all"``."""
        if self.users == "all":
            return evaluation
        full = evaluation.per_user
        table = self.table(full)
        summary = dict(evaluation.summary)
        for column in table.columns:
            if column in summary and _is_mean(summary[column], full[column]):
                summary[column] = float(table[column].mean()) if len(table) else float("nan")
        return replace(evaluation, per_user=table, summary=summary, n_users=len(table))


def _is_mean(value: Any, column: pd.Series) -> bool:
    """Whether a summary value is the mean of its per-user column (ranking metrics are)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return False
    mean = float(pd.to_numeric(column, errors="coerce").mean()) if len(column) else float("nan")
    return bool(np.isfinite(value) and np.isfinite(mean) and abs(value - mean) <= 1e-9 * max(1.0, abs(value)))


def population(evaluations: Mapping[str, Any], users: str = DEFAULT_USERS,
               served: Mapping[str, Iterable] | None = None) -> Population:
    """The users counted by an analysis of ``evaluations`` (``{model: Evaluation or per-user
    DataFrame}``, every model of the analysis) under ``users`` (see :data:`USERS`).

    ``served``: ``{model: user ids it served}``; by default read from each Evaluation's
    prepared run. Evaluated users are those of the per-user tables (every user of the ground
    truth with a relevant item, unless conventions such as ``missing_users="exclude"`` left
    some out).
    """
    users = check_users(users)
    if not isinstance(evaluations, Mapping) or not evaluations:
        raise MetricsError("a population needs at least one evaluated model")
    tables = {str(name): per_user_table(ev) for name, ev in evaluations.items()}
    evaluated = None
    for table in tables.values():
        evaluated = table.index if evaluated is None else evaluated.union(table.index, sort=False)
    evaluated = pd.Index(evaluated).drop_duplicates()
    unserved = {}
    for name, ev in evaluations.items():
        got = served.get(name) if served is not None and name in served else None
        try:
            ids = pd.Index(got) if got is not None else served_users(ev)
        except MetricsError:
            if users == "served":
                raise
            unserved[str(name)] = None  # a bare per-user table: who was served is unknown
            continue
        unserved[str(name)] = evaluated[~ids_in(evaluated, ids)]
    if users == "all":
        counted = evaluated
    else:
        keep = np.ones(len(evaluated), dtype=bool)
        for ids in unserved.values():
            keep &= ~ids_in(evaluated, ids)
        counted = evaluated[keep]
    return Population(users, evaluated, counted, unserved)


def accounting(evaluations: Mapping[str, Any], counted: Population, unit: str = "users") -> list[str]:
    """Why the rows of the ground truth became the rows counted: one sentence per step that changed
    the count, each naming the convention that decides it and what the other choice would do.

    Reads each evaluation's ``diagnostics`` and ``conventions`` (:class:`metrics_core.Evaluation`);
    an evaluation without them (a bare per-user table) is left out, and with none of them the list
    is empty. The steps, in order: the ground truth's rows (``n_users_truth``); those without a
    relevant item (``empty_users``: left out, or scored 0); per model, the rows of its run without
    any judgment (``run_only_users``: left out, or scored 0 and counted); the rows a model did not
    serve (``missing_users``: scored 0, or left out); the rows counted (``users``: every evaluated
    one, or only those every model served). ``unit`` names a row (:mod:`metrics_core.units`)."""
    from metrics_core.units import count, noun

    known = {name: ev for name, ev in evaluations.items()
             if getattr(ev, "diagnostics", None) is not None and isinstance(getattr(ev, "conventions", None), dict)}
    if not known:
        return []
    first = next(iter(known.values()))
    diag, conv = first.diagnostics, first.conventions
    out = [f"The ground truth holds {count(diag.n_users_truth, unit)}."]
    if diag.users_without_relevant:
        threshold = conv.get("relevance_threshold", 1.0)
        what = f"{count(diag.users_without_relevant, unit)} have no relevant judgment (relevance >= {threshold:g})"
        if conv.get("empty_users", "exclude") == "exclude":
            out.append(f"{what}: left out (empty_users=exclude; empty_users=zero would count them with a score of 0).")
        else:
            out.append(f"{what}: counted with a score of 0 (empty_users=zero; empty_users=exclude would leave "
                       "them out).")
    for name, ev in known.items():
        extra = ev.diagnostics.users_only_in_run
        if extra:
            kept = ev.conventions.get("run_only_users", "exclude") == "zero"
            out.append(f"{name}'s run lists {count(extra, unit)} without any judgment: "
                       + ("counted with a score of 0 (run_only_users=zero; exclude would leave them out)." if kept
                          else "left out (run_only_users=exclude; zero would count them with a score of 0)."))
    scored = conv.get("missing_users", "zero") == "zero"
    missing = {name: (len(counted.unserved.get(name) if counted.unserved.get(name) is not None else ())
                      if scored else ev.diagnostics.users_only_in_truth) for name, ev in known.items()}
    missing = {name: n for name, n in missing.items() if n}
    if missing:
        listed = ", ".join(f"{name} {n:,}" for name, n in missing.items())
        if scored:
            out.append(f"Evaluated {noun(unit)} a run has no list for score 0 for it ({listed}; "
                       "missing_users=zero; exclude would leave them out).")
        else:
            out.append(f"{noun(unit).capitalize()} of the ground truth a run has no list for are left out of its "
                       f"evaluation ({listed}; missing_users=exclude; zero would score them 0).")
    out.append(f"{count(counted.n_evaluated, unit)} evaluated.")
    if counted.users == "served" and counted.n != counted.n_evaluated:
        out.append(f"Only the {count(counted.n, unit)} every model served are counted (users=served; users=all "
                   f"would count all {counted.n_evaluated:,}).")
    return out
