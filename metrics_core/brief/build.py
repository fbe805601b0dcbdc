"""The decision brief: what a product team reads first about a comparison of models.

For a baseline, its challengers and the primary metrics, over the users the analysis counts
(:mod:`metrics_core.analysis.population`), the brief holds:

* one verdict per challenger x metric (:func:`metrics_core.analysis.compare.compare`): both means, the
  lift with its 95% interval, the adjusted p-value of the chosen test and correction, the
  smallest lift the users compared could detect, and one sentence;
* coverage: each model that did not serve every evaluated user, with how many and in which
  segments;
* the segments where a challenger loses although it does not lose overall: every segment of
  every user attribute is compared (without bootstrap), the p-values are corrected together
  over all segment tests, and the rows significantly worse after that correction are kept;
* why the ground truth's rows became the rows counted, step by step, each step with the convention
  that decides it (:func:`metrics_core.analysis.population.accounting`);
* the winner against the runner-up directly, for each primary metric whose best two models are
  both challengers (each is otherwise compared only with the baseline);
* the failure groups that explain the challenger's loss: every user where the challenger
  scores worse than the baseline falls in one group (not served by the challenger; nothing
  relevant found, a score of 0; relevant items found but ranked lower), and each group's
  share of the summed loss is given.

The dashboard's Brief page, the HTML report (``metrics-core report``) and ``mc.build_brief`` build it
with this one function, so they tell the same numbers; :mod:`metrics_core.brief.text` writes it as
sentences and readable tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from metrics_core.metrics import registry
from metrics_core.analysis import stats
from metrics_core.encode import ids_in
from metrics_core.errors import MetricsError
from metrics_core.analysis.segment_compare import DEFAULT_FAMILY, attribute_labels, check_family
from metrics_core.units import DEFAULT_UNIT, check_unit
from metrics_core.analysis.verdicts import WORSE, marker, sentence

__all__ = ["Decision", "Brief", "build_brief", "brief_segments", "failure_groups", "NOT_SERVED", "SCORES_ZERO", "RANKED_LOWER",
           "FAILURE_GROUPS"]

NOT_SERVED = "not served"
SCORES_ZERO = "nothing relevant found"
RANKED_LOWER = "relevant ranked lower"
FAILURE_GROUPS = (NOT_SERVED, SCORES_ZERO, RANKED_LOWER)
#: Segments of one attribute compared at most (the largest first): a brief is not a census.
MAX_SEGMENTS_PER_ATTRIBUTE = 30
#: Users a segment needs for its paired test.
MIN_SEGMENT_USERS = 2


@dataclass(frozen=True)
class Decision:
    """The choices a brief is made of, saved with an analysis.

    ``metrics``: the primary per-user metrics; ``users``: ``"all"`` or ``"served"``
    (:data:`metrics_core.analysis.population.USERS`); ``test``: ``"t"``, ``"wilcoxon"`` or
    ``"randomization"``; ``correction``: one of :data:`metrics_core.analysis.stats.CORRECTIONS` (``"holm"``,
    ``"bonferroni"``, ``"bh"``, ``"none"``); ``family``: the family of segment tests adjusted
    together, one of :data:`metrics_core.analysis.segment_compare.FAMILIES` (default: every segment of every
    attribute x metric x challenger); ``unit``: what a row is, ``"users"``, ``"queries"`` or
    ``"sessions"`` (:mod:`metrics_core.units`), the word every sentence and table uses.
    """

    baseline: str
    challengers: tuple[str, ...]
    metrics: tuple[str, ...]
    users: str = "all"
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    family: str = DEFAULT_FAMILY
    unit: str = DEFAULT_UNIT

    def checked(self, models: Sequence[str]) -> "Decision":
        """The decision with every choice validated against ``models`` (one-line errors)."""
        from metrics_core.analysis.population import check_users

        names = [str(m) for m in models]
        if self.baseline not in names:
            raise MetricsError(f"baseline {self.baseline!r} is not one of the models: {', '.join(names)}")
        challengers = tuple(c for c in dict.fromkeys(self.challengers) if c != self.baseline)
        unknown = [c for c in challengers if c not in names]
        if unknown:
            raise MetricsError(f"challenger {unknown[0]!r} is not one of the models: {', '.join(names)}")
        if not challengers:
            raise MetricsError("a brief needs at least one challenger besides the baseline")
        if not self.metrics:
            raise MetricsError("a brief needs at least one primary metric (e.g. ndcg@10)")
        if self.test not in stats.TESTS:
            raise MetricsError(f"unknown test {self.test!r}; use one of: {', '.join(stats.TESTS)}")
        if self.correction not in stats.CORRECTIONS:
            raise MetricsError(f"unknown correction {self.correction!r}; use one of: {', '.join(stats.CORRECTIONS)}")
        if not 0 < float(self.alpha) < 1:
            raise MetricsError(f"alpha must be between 0 and 1, got {self.alpha}")
        return replace(self, challengers=challengers, metrics=tuple(self.metrics), users=check_users(self.users),
                       alpha=float(self.alpha), family=check_family(self.family), unit=check_unit(self.unit))


@dataclass
class Brief:
    """A built brief (see the module's description). ``verdicts``: the rows of
    :func:`metrics_core.analysis.compare.compare` plus ``verdict`` and ``sentence``; ``segments``: every
    segment row (``attribute, segment`` and the compare columns, p-values adjusted over all of
    them); ``segment_losses``: the rows of ``segments`` where a challenger that does not lose
    overall is significantly worse; ``failures``: ``challenger, metric, group, users, loss,
    share`` (share of the summed loss), largest share first. In a notebook it shows the report's brief
    section (:func:`metrics_core.outputs.notebook.brief_html`)."""

    decision: Decision
    title: str
    notes: str
    population: str
    n_users: int
    coverage: list[str]
    verdicts: pd.DataFrame
    segments: pd.DataFrame
    segment_losses: pd.DataFrame
    failures: pd.DataFrame
    attributes: list[str] = field(default_factory=list)
    #: Evaluated users each model served (None: unknown), and how many users were evaluated.
    served: dict = field(default_factory=dict)
    n_evaluated: int = 0
    #: Why the ground truth's rows became the rows counted (:func:`metrics_core.analysis.population.accounting`).
    accounting: list[str] = field(default_factory=list)
    #: Per primary metric where the best two models are both challengers: the best (``model``) against
    #: the runner-up (``baseline``), the rows of :func:`metrics_core.analysis.compare.compare` plus ``verdict``
    #: and ``sentence``, corrected over these rows.
    head_to_head: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_segment_tests(self) -> int:
        return len(self.segments)


def _segment_rows(counted: Mapping[str, pd.DataFrame], decision: Decision, labels: list[pd.Series],
                  n_permutations: int, seed: int) -> pd.DataFrame:
    from metrics_core.analysis.segment_compare import segment_rows

    rows = segment_rows(counted, labels, baseline=decision.baseline, metrics=list(decision.metrics),
                        test=decision.test, correction=decision.correction, alpha=decision.alpha,
                        n_permutations=n_permutations, seed=seed, max_segments=MAX_SEGMENTS_PER_ATTRIBUTE,
                        min_users=MIN_SEGMENT_USERS, family=decision.family)
    rows["verdict"] = [marker(r) for _, r in rows.iterrows()]
    return rows


def failure_groups(baseline: pd.Series, challenger: pd.Series, metric: str, unserved=None) -> pd.DataFrame:
    """The users where ``challenger`` scores worse than ``baseline`` on ``metric`` (per-user
    Series by user id, paired over the users with a finite value in both), each with its failure
    group and its loss: a DataFrame indexed by user id with ``group`` and ``loss``.

    ``loss = max(0, s * (baseline - challenger))`` with ``s = +1`` when higher is better, else
    ``-1``; a user with ``loss > 0`` is in exactly one group: :data:`NOT_SERVED` when it is among
    ``unserved`` (the users the challenger's run has no list for), else :data:`SCORES_ZERO` when
    the challenger's value is 0, else :data:`RANKED_LOWER`. The brief's table counts these users
    and the Failures page lists them, so a brief row opens exactly its users."""
    a, b, users = stats.align_pairs(baseline, challenger)
    sign = 1.0 if registry.higher_is_better(metric) else -1.0
    loss = np.maximum(sign * (a - b), 0.0)
    missing = pd.Index([]) if unserved is None else pd.Index(unserved)
    not_served = ids_in(users, missing)
    zero = ~not_served & (b == 0)
    group = np.where(not_served, NOT_SERVED, np.where(zero, SCORES_ZERO, RANKED_LOWER))
    losing = loss > 0
    return pd.DataFrame({"group": group[losing], "loss": loss[losing]}, index=pd.Index(users)[losing])


def _failure_groups(counted: Mapping[str, pd.DataFrame], decision: Decision, unserved: Mapping[str, Any]
                    ) -> pd.DataFrame:
    rows = []
    base = counted[decision.baseline]
    for challenger in decision.challengers:
        for metric in decision.metrics:
            lost = failure_groups(base[metric], counted[challenger][metric], metric, unserved.get(challenger))
            total = float(lost["loss"].sum())
            if total <= 0:
                continue
            for name in FAILURE_GROUPS:
                pick = lost["group"].to_numpy() == name
                if pick.any():
                    rows.append({"challenger": challenger, "metric": metric, "group": name,
                                 "users": int(pick.sum()), "loss": float(lost["loss"].to_numpy()[pick].sum()),
                                 "share": float(lost["loss"].to_numpy()[pick].sum()) / total})
    out = pd.DataFrame(rows, columns=["challenger", "metric", "group", "users", "loss", "share"])
    return out.sort_values(["challenger", "metric", "share"], ascending=[True, True, False],
                           kind="stable").reset_index(drop=True)


def _head_to_head(counted: Mapping[str, pd.DataFrame], decision: Decision, n_resamples: int, n_permutations: int,
                  seed: int) -> pd.DataFrame:
    """For each primary metric whose best two models (by mean over the users counted) are both
    challengers, the winner compared with the runner-up directly (the runner-up as baseline), the
    p-values corrected by the decision's correction over these rows."""
    from metrics_core.analysis.compare import compare

    pairs = []
    for metric in decision.metrics:
        means = {name: float(np.nanmean(table[metric].to_numpy(dtype=float))) if len(table) else float("nan")
                 for name, table in counted.items()}
        ranked = sorted((n for n in means if means[n] == means[n]), key=means.get,
                        reverse=registry.higher_is_better(metric))
        if len(ranked) >= 2 and decision.baseline not in ranked[:2]:
            pairs.append((metric, ranked[0], ranked[1]))
    if not pairs:
        return pd.DataFrame()
    rows = [compare({runner: counted[runner][[metric]], winner: counted[winner][[metric]]}, baseline=runner,
                    metrics=[metric], test=decision.test, correction="none", alpha=decision.alpha,
                    n_resamples=n_resamples, n_permutations=n_permutations, seed=seed)
            for metric, winner, runner in pairs]
    table = pd.DataFrame(pd.concat(rows, ignore_index=True))
    table["p_adjusted"] = stats.adjust_pvalues(table["p_value"].to_numpy(), decision.correction)
    table["significant"] = (table["p_adjusted"] < decision.alpha).fillna(False).astype(bool)
    table = table.drop(columns=[c for c in table.columns if c.startswith("p_") and c != "p_value"
                                and c != "p_adjusted"])
    return table.assign(verdict=[marker(r) for _, r in table.iterrows()],
                        sentence=[sentence(r, len(table), decision.correction, decision.alpha, decision.unit)
                                  for _, r in table.iterrows()])


def _counted(evaluations: Mapping[str, Any], decision: Decision):
    """The checked decision, the population and each chosen model's per-user metrics over it."""
    from metrics_core.analysis.compare import per_user_table
    from metrics_core.analysis.population import population

    decision = decision.checked(list(evaluations))
    for name in (decision.baseline, *decision.challengers):
        columns = list(per_user_table(evaluations[name]).columns)
        absent = [m for m in decision.metrics if m not in columns]
        if absent:
            raise MetricsError(f"model {name!r} has no per-user values of {absent[0]!r}: evaluate it with that "
                               "metric (only per-user metrics, such as ndcg@10 or recall@20, make a brief)")
    pop = population(evaluations, decision.users)
    chosen = [decision.baseline, *decision.challengers]
    return decision, pop, {n: pop.table(per_user_table(evaluations[n]))[list(decision.metrics)] for n in chosen}


def brief_segments(evaluations: Mapping[str, Any], decision: Decision, *, attributes: pd.DataFrame | None = None,
                   n_permutations: int = 10000, seed: int = 0) -> pd.DataFrame:
    """The segment rows of :func:`build_brief` (``Brief.segments``) alone, for a caller that
    computes them apart (on another thread) and hands them to ``build_brief(..., segments=)``."""
    evaluations = {str(k): v for k, v in evaluations.items()}
    decision, _, counted = _counted(evaluations, decision)
    return _segment_rows(counted, decision, attribute_labels(attributes), n_permutations, seed)


def build_brief(evaluations: Mapping[str, Any], decision: Decision, *, attributes: pd.DataFrame | None = None,
                title: str = "", notes: str = "", n_resamples: int = 1000, n_permutations: int = 10000,
                seed: int = 0, comparison: pd.DataFrame | None = None,
                segments: pd.DataFrame | None = None) -> Brief:
    """The brief of ``decision`` over ``evaluations`` (``{model: Evaluation}``, every model of the
    analysis, each with its per-user metrics; see :func:`metrics_core.evaluate`).

    ``attributes``: a user-attributes table (``user_id`` and one column per attribute) whose
    segments are compared; ``title``/``notes``: the analysis' own words, kept as given.
    ``n_resamples``/``n_permutations``/``seed``: as :func:`metrics_core.analysis.compare.compare`.
    ``comparison``: the :func:`metrics_core.analysis.compare.compare` table of this decision over the users
    counted, when the caller already has it (the dashboard's Compare page does): its verdicts are
    then the caller's, row for row. ``segments``: :func:`brief_segments` of the same evaluations,
    decision and attributes, when the caller computed them apart.

    Parameters
    ----------
    evaluations : dict of Evaluation
        Every model of the analysis.
    decision : Decision
        The baseline, the challengers, the primary metrics, and the test, correction and level.
    attributes : DataFrame, optional
        ``user_id`` and one column per user attribute.
    title, notes : str
        The analysis' own words.
    n_resamples, n_permutations, seed, comparison, segments
        As above.

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
    >>> brief = mc.build_brief(evaluations, mc.Decision("base", ("new",), ("mrr@2",)), title="Ship new?")
    >>> brief.verdicts[["model", "metric", "verdict"]].to_dict("records")
    [{'model': 'new', 'metric': 'mrr@2', 'verdict': '▲ better'}]
    """
    from metrics_core.analysis.compare import compare
    from metrics_core.analysis.population import accounting

    evaluations = {str(k): v for k, v in evaluations.items()}
    decision, pop, counted = _counted(evaluations, decision)
    if comparison is None:
        table = compare(counted, baseline=decision.baseline, metrics=list(decision.metrics), test=decision.test,
                        correction=decision.correction, alpha=decision.alpha, n_resamples=n_resamples,
                        n_permutations=n_permutations, seed=seed)
    else:
        wanted = comparison["model"].isin(decision.challengers) & comparison["metric"].isin(decision.metrics)
        table = comparison[wanted & (comparison["baseline"] == decision.baseline)].reset_index(drop=True)
        if len(table) != len(decision.challengers) * len(decision.metrics):
            raise MetricsError("the comparison given does not hold every challenger x metric of the decision")
    verdicts = table.assign(verdict=[marker(r) for _, r in table.iterrows()],
                            sentence=[sentence(r, len(table), decision.correction, decision.alpha, decision.unit)
                                      for _, r in table.iterrows()])
    labels = attribute_labels(attributes)
    if segments is None:
        segments = _segment_rows(counted, decision, labels, n_permutations, seed)
    overall = {(r["model"], r["metric"]): r["verdict"] for _, r in verdicts.iterrows()}
    if len(segments):
        losing = [(m == WORSE) and overall.get((c, met)) != WORSE
                  for m, c, met in zip(segments["verdict"], segments["model"], segments["metric"])]
        segment_losses = segments[np.asarray(losing, dtype=bool)].sort_values("lift", kind="stable")
    else:
        segment_losses = segments
    coverage = pop.coverage(attributes[["user_id", *[s.name for s in labels]]]
                            if attributes is not None and "user_id" in attributes.columns and labels else None,
                            unit=decision.unit)
    return Brief(decision=decision, title=str(title or ""), notes=str(notes or ""),
                 population=pop.describe(decision.unit),
                 n_users=pop.n, coverage=coverage, verdicts=verdicts.reset_index(drop=True), segments=segments,
                 segment_losses=segment_losses.reset_index(drop=True),
                 failures=_failure_groups(counted, decision, pop.unserved), attributes=[s.name for s in labels],
                 served={n: pop.served(n) for n in evaluations}, n_evaluated=pop.n_evaluated,
                 accounting=accounting(evaluations, pop, decision.unit),
                 head_to_head=_head_to_head(counted, decision, n_resamples, n_permutations, seed))
