"""A regression gate: conditions on evaluations, each passed or failed, for CI and pytest.

``check(candidate, ["ndcg@10 >= 0.3", "ndcg@10 not worse than baseline by more than 1%"],
baseline=old)`` returns a :class:`CheckReport`; ``report.passed`` is True when every condition
holds and ``report.assert_passed()`` raises ``AssertionError`` listing the failures.

A threshold (``ndcg@10 >= 0.3``) compares the evaluation's summary value (a NaN value fails).

A baseline condition (``METRIC not worse than baseline by more than M``) is decided by the
paired test of :func:`metrics_core.analysis.compare.compare` over the users both models were evaluated
on, one-sided, with the correction Compare applies. With ``d`` the mean per-user difference
candidate - baseline, oriented so that ``d < 0`` is worse (its sign flipped for lower-is-better
metrics), and ``m`` the margin (``1%``: 0.01 x |baseline mean over those users|; a number: as
given; none: 0):

* null hypothesis: the candidate is worse by at most the margin (``d >= -m``);
* the test runs on the candidate against the baseline's values moved by the margin, and its
  two-sided p becomes one-sided: ``p/2`` when the moved difference points to "worse" (its mean
  for the t and randomization tests, its signed-rank sum for Wilcoxon), else ``1 - p/2``;
* the one-sided p-values of every baseline condition of the call (all candidates) are
  corrected together (``correction``: Holm by default, Benjamini-Hochberg or none);
* the condition **fails when the corrected p is below ``alpha``**: the data show a drop larger
  than the margin. A difference within the noise cannot reject the null, so it passes; a real
  drop beyond the margin on enough users fails. Fewer than two paired users fail (no test).

A condition with a segment clause (``... in every locale``, ``... in locale = de``; ``attributes``
gives the users' attributes, :mod:`metrics_core.analysis.conditions`) gives one result per segment of
users, as :func:`metrics_core.compare_segments` forms them (users the attributes do not list, or
list without a value, in ``(missing)``): a threshold compares the mean of the per-user values
of the segment's users; a baseline condition is decided as Compare decides a segment row, so
that a segment has one verdict on Compare, the brief, ``metrics-core compare`` and here: the
paired test of the candidate against the baseline's values moved by the margin (the margin a
share of the baseline's mean in the segment), two-sided, its p-values corrected within the
family of tests ``family`` names (:data:`metrics_core.analysis.segment_compare.FAMILIES`: by default
every segment condition x segment x candidate together; ``attribute``: each attribute apart;
``attribute_metric``: each attribute and metric apart; ``segment``: each segment apart), apart
from the conditions over all users, as Compare corrects its segment rows apart from its overall
table; the row **fails when the corrected p is below ``alpha`` and the mean moved difference
points to worse** (with no margin: exactly where Compare marks the segment ▼ worse, when the
check names the same metrics, attributes and candidates as Compare's family).

Each result carries ``seconds``: the time spent deciding it (its paired test, its share of the
correction), which the JUnit XML reports per test case.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import stats
from .conditions import Condition, parse_conditions
from ..errors import MetricsError
from ..frames import per_user_frame
from ..metrics.registry import parse_metric
from ..units import noun

#: names of the tests, as the lines say them
TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
              "randomization": "Fisher randomization test"}


@dataclass
class ConditionResult:
    """The outcome of one condition for one model. ``value``: the model's summary value
    (threshold) or mean over the paired users (baseline); the baseline fields are NaN for a
    threshold. ``p_value`` is one-sided, ``p_adjusted`` after the correction."""

    condition: str
    model: str
    metric: str
    kind: str
    passed: bool
    value: float
    line: str = ""
    op: str = ""
    threshold: float = math.nan
    baseline_value: float = math.nan
    diff: float = math.nan
    relative_diff: float = math.nan
    margin: float = math.nan
    n: int = 0
    p_value: float = math.nan
    p_adjusted: float = math.nan
    #: the segment of a condition with a segment clause (``"locale=de"``), else ""
    segment: str = ""
    #: seconds spent deciding this result
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class CheckReport:
    """Every condition's result; ``settings`` holds the test, correction and alpha used."""

    results: list[ConditionResult]
    settings: dict = field(default_factory=dict)
    #: seconds the whole check took
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> list[ConditionResult]:
        return [r for r in self.results if not r.passed]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def lines(self) -> list[str]:
        """One line per condition, ``PASS ...`` or ``FAIL ...``."""
        return [r.line for r in self.results]

    def assert_passed(self) -> None:
        """Raise AssertionError listing every failed condition (for pytest suites)."""
        if not self.passed:
            failed = self.failures
            raise AssertionError(f"{len(failed)} of {len(self.results)} condition(s) failed:\n"
                                 + "\n".join(r.line for r in failed))

    def to_dict(self) -> dict:
        return {"passed": self.passed, "conditions": [r.to_dict() for r in self.results],
                "settings": dict(self.settings)}


def _summary_value(evaluation: Any, cond: Condition, model: str) -> float:
    """The evaluation's value of the condition's metric (its label, or the same metric written otherwise)."""
    summary = getattr(evaluation, "summary", None)
    if not isinstance(summary, Mapping):
        raise MetricsError(f"model {model!r}: expected an Evaluation (with .summary and .per_user), "
                           f"got {type(evaluation).__name__}")
    key = _find(list(summary), cond)
    if key is None:
        raise MetricsError(f"condition {cond.text!r}: model {model!r} has no value of {cond.metric} "
                           f"(evaluated: {', '.join(map(str, summary)) or 'none'}); evaluate it first")
    value = summary[key]
    return math.nan if value is None else float(value)


def _find(labels: list, cond: Condition):
    """The label among ``labels`` naming the condition's metric: as written, else the same metric and cutoff."""
    if cond.metric in labels:
        return cond.metric
    for label in labels:
        try:
            spec = parse_metric(str(label))
        except MetricsError:
            continue
        if (spec.name, spec.k) == (cond.spec.name, cond.spec.k):
            return label
    return None


def _per_user(evaluation: Any, cond: Condition, model: str) -> pd.Series:
    table = per_user_frame(getattr(evaluation, "per_user", None), f"{model} per-user table")
    if not isinstance(table, pd.DataFrame):
        raise MetricsError(f"model {model!r}: expected an Evaluation (with .summary and .per_user), "
                           f"got {type(evaluation).__name__}")
    column = _find(list(table.columns), cond)
    if column is None:
        raise MetricsError(f"condition {cond.text!r}: model {model!r} has no per-user values of {cond.metric}; "
                           "evaluate it first")
    return table[column]


def _fmt(x: float) -> str:
    return "NaN" if x != x else f"{x:.4f}"


def _fmt_p(p: float) -> str:
    return "NaN" if p != p else (f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}")


_OPERATORS = {">=": np.greater_equal, ">": np.greater, "<=": np.less_equal, "<": np.less}


def _threshold(cond: Condition, model: str, evaluation: Any) -> ConditionResult:
    value = _summary_value(evaluation, cond, model)
    passed = bool(value == value and _OPERATORS[cond.op](value, cond.value))
    return ConditionResult(cond.text, model, cond.metric, cond.kind, passed, value, op=cond.op,
                           threshold=cond.value)


def _worse_direction(moved: np.ndarray, test: str) -> float:
    """Sign of the moved differences' statistic: the mean (t, randomization) or the signed-rank
    sum (Wilcoxon, zero differences dropped as its test drops them)."""
    if test != "wilcoxon":
        return float(np.sign(moved.mean())) if moved.size else 0.0
    nonzero = moved[moved != 0]
    if nonzero.size == 0:
        return 0.0
    from scipy.stats import rankdata

    return float(np.sign(np.sum(np.sign(nonzero) * rankdata(np.abs(nonzero)))))


def _baseline_test(cond: Condition, model: str, base: pd.Series, cand: pd.Series, test: str,
                   n_permutations: int, seed: int) -> tuple[ConditionResult, float, float, bool]:
    """The result before correction, with its one-sided p-value, its two-sided p-value and whether
    the mean moved difference points to "worse", from the per-user values of the baseline and the
    candidate (all users, or a segment's)."""
    from .compare import compare  # scipy: imported only for baseline conditions

    label = cond.spec.label
    base_values, cand_values, users = stats.align_pairs(base, cand)
    orient = 1.0 if cond.spec.entry.higher_is_better else -1.0
    n = int(users.size)
    base_mean = float(base_values.mean()) if n else math.nan
    cand_mean = float(cand_values.mean()) if n else math.nan
    margin = cond.margin * abs(base_mean) if cond.relative else cond.margin
    result = ConditionResult(cond.text, model, cond.metric, cond.kind, False, cand_mean, baseline_value=base_mean,
                             diff=cand_mean - base_mean, margin=margin, n=n,
                             relative_diff=(cand_mean - base_mean) / abs(base_mean) if base_mean else math.nan)
    if n < 2:
        return result, math.nan, math.nan, False
    # the baseline moved by the margin toward "worse": the candidate's drop beyond the margin is below 0
    moved = pd.Series(base_values - orient * margin, index=users, name=label)
    table = compare({"baseline": moved.to_frame(), "candidate": pd.Series(cand_values, index=users, name=label)
                     .to_frame()}, baseline="baseline", metrics=[label], test=test, correction="none",
                    n_resamples=0, n_permutations=n_permutations, seed=seed)
    p_two = float(table["p_value"].iloc[0])
    moved_diff = orient * (cand_values - moved.to_numpy())
    direction = _worse_direction(moved_diff, test)
    p_one = p_two / 2 if direction < 0 else 1 - p_two / 2
    return (result, (math.nan if p_two != p_two else min(max(p_one, 0.0), 1.0)), p_two,
            bool(moved_diff.mean() < 0))


def _family_of(family: str, cond: Condition, segment: str) -> tuple:
    """The family of a segment row under the scope ``family``, as
    :func:`metrics_core.analysis.segment_compare.family_keys` names Compare's (attribute, metric, segment)."""
    from .segment_compare import FAMILIES

    parts = {"attribute": cond.segment_column, "metric": cond.spec.label, "segment": segment}
    return tuple(parts[c] for c in FAMILIES[family])


def _decide(rows: list[tuple[ConditionResult, float]], correction: str, passes) -> None:
    """Correct the p-values of ``rows`` together by ``correction`` (NaN left out) and set each
    result's ``p_value``, ``p_adjusted``, ``passed = passes(result, adjusted)`` and its share of the
    time spent."""
    if not rows:
        return
    clock = time.perf_counter()
    p = np.array([q for _, q in rows], dtype=float)
    known = ~np.isnan(p)
    adjusted = np.full(p.shape, np.nan)
    adjusted[known] = stats.adjust_pvalues(p[known], correction)
    share = (time.perf_counter() - clock) / len(rows)
    for (result, raw), adj in zip(rows, adjusted):
        result.p_value, result.p_adjusted = raw, float(adj)
        result.passed = bool(passes(result, float(adj)))
        result.seconds += share


def _baseline_line(r: ConditionResult, alpha: float, correction: str, test: str, two_sided: bool = False,
                   unit: str = "users") -> str:
    if r.n < 2:
        return f"{r.n} {noun(unit, r.n)} evaluated for both models: no paired test possible"
    change = f"{r.relative_diff * 100:+.2f}%" if r.relative_diff == r.relative_diff else f"{r.diff:+.4f}"
    margin = f"margin {_fmt(r.margin)}" if r.margin else "no margin"
    corrected = "" if correction == "none" else f", {correction}-adjusted {_fmt_p(r.p_adjusted)}"
    verdict = "a drop beyond the margin" if not r.passed else "no significant drop beyond the margin"
    if two_sided:  # decided as Compare decides a segment row
        significant = r.p_adjusted == r.p_adjusted and r.p_adjusted < alpha
        return (f"{_fmt(r.value)} vs baseline {_fmt(r.baseline_value)} ({change}, {margin}) over {r.n} {unit}; "
                f"{verdict}: two-sided {TEST_NAMES[test]} p {_fmt_p(r.p_value)}{corrected} "
                f"{'<' if significant else '>='} {alpha:g}")
    sign = "<" if not r.passed else ">="
    return (f"{_fmt(r.value)} vs baseline {_fmt(r.baseline_value)} ({change}, {margin}) over {r.n} {unit}; "
            f"{verdict}: one-sided {TEST_NAMES[test]} p {_fmt_p(r.p_value)}{corrected} {sign} {alpha:g}")


def _segment_threshold(cond: Condition, model: str, values: pd.Series) -> ConditionResult:
    """A threshold on the mean of a segment's per-user values (NaN values left out; none: fails)."""
    finite = values.to_numpy(dtype=float)
    finite = finite[np.isfinite(finite)]
    value = float(finite.mean()) if finite.size else math.nan
    passed = bool(value == value and _OPERATORS[cond.op](value, cond.value))
    return ConditionResult(cond.text, model, cond.metric, cond.kind, passed, value, op=cond.op,
                           threshold=cond.value, n=int(finite.size))


def _segments(cond: Condition, labels: pd.Series, users: pd.Index) -> list[tuple[str, pd.Index]]:
    """``[(segment, its users among users)]``: every value of the attribute (largest first, then by
    name) or the one value the condition names (a value no user has: one-line MetricsError)."""
    from .segment_compare import MISSING

    found = pd.Series(labels.reindex(users.astype(str)).fillna(MISSING).to_numpy(dtype=object), index=users)
    if cond.segment_value is not None:
        chosen = found.index[found.to_numpy() == cond.segment_value]
        if not len(chosen):
            shown = ", ".join(sorted(map(str, found.unique()))[:10])
            raise MetricsError(f"condition {cond.text!r}: no user has {cond.segment_column} = "
                               f"{cond.segment_value!r} (values: {shown})")
        return [(cond.segment_value, chosen)]
    sizes = found.value_counts()
    order = sorted(sizes.index, key=lambda s: (-int(sizes[s]), str(s)))
    groups = found.groupby(found.to_numpy(), sort=False).groups
    return [(str(v), pd.Index(groups[v])) for v in order]


def _attribute(attributes, column: str) -> pd.Series:
    from ..frames import as_pandas
    from .segment_compare import attribute_labels

    table = as_pandas(attributes, "user attributes")
    if not isinstance(table, pd.DataFrame):
        raise MetricsError(f"user attributes: expected a table with user_id and {column!r}, "
                           f"got {type(table).__name__}")
    if "user_id" not in table.columns:
        raise MetricsError("user attributes: the table has no user_id column; give user_id and one column "
                           "per attribute")
    return attribute_labels(table, [column])[0]


def _candidates(candidate) -> dict:
    if isinstance(candidate, Mapping):
        if not candidate:
            raise MetricsError("no evaluation to check")
        return {str(k): v for k, v in candidate.items()}
    return {"model": candidate}


def check(candidate, conditions, baseline=None, *, attributes=None, test: str = "t", correction: str = "holm",
          alpha: float = 0.05, n_permutations: int = 10000, seed: int = 0, family: str = "analysis",
          unit: str = "users") -> CheckReport:
    """Check conditions on one evaluation (or ``{model name: evaluation}``); see the module docstring.

    ``candidate`` and ``baseline`` are :class:`~metrics_core.Evaluation` results (anything with
    ``.summary`` and ``.per_user``) evaluated with the conditions' metrics; ``baseline`` may also be
    the name of one model of the mapping, which is then not checked itself. ``attributes``: the
    users' attributes (a table of any kind with ``user_id`` and one column per attribute), needed
    by conditions with a segment clause. ``test``: ``"t"``,
    ``"wilcoxon"`` or ``"randomization"`` (``n_permutations`` sign flips, ``seed``);
    ``correction``: one of :data:`metrics_core.analysis.stats.CORRECTIONS`; ``family``: which segment rows
    are corrected together (:data:`metrics_core.analysis.segment_compare.FAMILIES`, as Compare's). Bad
    conditions or inputs raise a one-line :class:`MetricsError`; a condition that does not hold is a
    failed result, not an error.

    Parameters
    ----------
    candidate : Evaluation or dict of Evaluation
        The model(s) checked.
    conditions : sequence of str
        ``"METRIC OP NUMBER"`` or ``"METRIC not worse than baseline [by more than N% | by more than N]"``,
        optionally ending in ``in every COLUMN`` / ``in COLUMN = VALUE``.
    baseline : Evaluation or str, optional
        What "baseline" means in the conditions.
    attributes : DataFrame, optional
        ``user_id`` and one column per user attribute, for segment clauses.
    test, correction, alpha, n_permutations, seed, family
        The paired test of baseline conditions, its correction over them, its level, and which segment
        rows are corrected together.
    unit : str
        What a row is (``"users"``, ``"queries"``, ``"sessions"``): the word the lines use.

    Returns
    -------
    CheckReport
        ``.results`` (one per condition, model and segment), ``.passed``, ``.lines()``,
        ``.assert_passed()``.

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
    >>> report = mc.check(evaluations["new"], ["mrr@2 >= 0.9", "mrr@2 not worse than baseline by more than 1%"],
    ...                   baseline=evaluations["base"])
    >>> [(r.condition, r.passed) for r in report.results]
    [('mrr@2 >= 0.9', True), ('mrr@2 not worse than baseline by more than 1%', True)]
    """
    from .segment_compare import check_family
    from ..units import check_unit

    started = time.perf_counter()
    parsed = parse_conditions(conditions)
    test, correction = str(test).lower(), str(correction).lower()
    if test not in stats.TESTS:
        raise MetricsError(f"unknown test {test!r}; use one of: {', '.join(stats.TESTS)}")
    if correction not in stats.CORRECTIONS:
        raise MetricsError(f"unknown correction {correction!r}; use one of: {', '.join(stats.CORRECTIONS)}")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise MetricsError(f"alpha must be between 0 and 1, got {alpha!r}")
    family, unit = check_family(family), check_unit(unit)
    models = _candidates(candidate)
    baseline_name = None
    if isinstance(baseline, str):
        if baseline not in models:
            raise MetricsError(f"baseline {baseline!r} is not one of the models: {', '.join(models)}")
        baseline_name, baseline = baseline, models.pop(baseline)
        if not models:
            raise MetricsError("the baseline is the only model: give at least one model to check against it")
    needs_baseline = [c for c in parsed if c.kind == "baseline"]
    if needs_baseline and baseline is None:
        raise MetricsError(f"condition {needs_baseline[0].text!r} needs a baseline evaluation (baseline=...)")
    labels = {}
    for cond in parsed:
        if cond.per_segment and cond.segment_column not in labels:
            if attributes is None:
                raise MetricsError(f"condition {cond.text!r} needs the users' attributes (attributes=..., "
                                   f"with user_id and {cond.segment_column!r})")
            labels[cond.segment_column] = _attribute(attributes, cond.segment_column)
    results: list[ConditionResult] = []
    # the one-sided p-values of the conditions over all users, corrected together
    overall: list[tuple[ConditionResult, float]] = []
    # the segment rows' two-sided p-values (and whether each points to worse), by family
    families: dict[tuple, list[tuple[ConditionResult, float, bool]]] = {}
    for model, evaluation in models.items():
        for cond in parsed:
            if not cond.per_segment:
                clock = time.perf_counter()
                if cond.kind == "threshold":
                    results.append(_threshold(cond, model, evaluation))
                else:
                    result, p, _, _ = _baseline_test(cond, model, _per_user(baseline, cond, "baseline"),
                                                     _per_user(evaluation, cond, model), test, n_permutations, seed)
                    results.append(result)
                    overall.append((result, p))
                results[-1].seconds = time.perf_counter() - clock
                continue
            cand = _per_user(evaluation, cond, model)
            base = _per_user(baseline, cond, "baseline") if cond.kind == "baseline" else None
            users = cand.index if base is None else cand.index.union(base.index)
            for segment, members in _segments(cond, labels[cond.segment_column], users):
                clock = time.perf_counter()
                if cond.kind == "threshold":
                    result = _segment_threshold(cond, model, cand.reindex(members))
                else:
                    result, _, p_two, worse = _baseline_test(cond, model, base[base.index.isin(members)],
                                                             cand[cand.index.isin(members)], test, n_permutations,
                                                             seed)
                    families.setdefault(_family_of(family, cond, segment), []).append((result, p_two, worse))
                result.segment = f"{cond.segment_column}={segment}"
                result.seconds = time.perf_counter() - clock
                results.append(result)
    _decide(overall, correction, lambda result, adj: bool(adj == adj and adj >= alpha))
    for rows in families.values():
        worse = {id(result): w for result, _, w in rows}
        _decide([(result, p) for result, p, _ in rows], correction,
                lambda result, adj: not (adj == adj and adj < alpha and worse[id(result)]))
    for r in results:
        if r.kind == "threshold":
            detail = f"{_fmt(r.value)} {'' if r.passed else 'not '}{r.op} {r.threshold:g}"
            if r.segment:
                detail += f" (mean over {r.n} {unit})"
        else:
            detail = _baseline_line(r, alpha, correction, test, two_sided=bool(r.segment), unit=unit)
        who = f"{r.model}: " if len(models) > 1 else ""
        where = f" [{r.segment}]" if r.segment else ""
        r.line = f"{'PASS' if r.passed else 'FAIL'} {who}{r.condition}{where}: {detail}"
    settings = {"test": test, "correction": correction, "family": family, "unit": unit, "alpha": alpha,
                "baseline": baseline_name,
                "n_permutations": n_permutations, "seed": seed}
    return CheckReport(results, settings, seconds=time.perf_counter() - started)
