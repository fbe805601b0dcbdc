"""Conditions of a regression gate, as written in a CI file: parsing only.

Two forms (keywords case-insensitive, spaces free):

* a threshold on the evaluated value: ``METRIC OP NUMBER`` with OP one of ``>=``, ``>``, ``<=``,
  ``<`` (``ndcg@10 >= 0.30``, ``logloss < 0.4``, ``coverage@10 >= 0.5``); NUMBER in the metric's
  own units (``0.5``, not ``50%``);
* no regression against a baseline: ``METRIC not worse than baseline`` with an optional margin,
  ``by more than 1%`` (of the baseline's mean over the users both models were evaluated on) or
  ``by more than 0.005`` (in the metric's units). "Worse" follows the metric's direction
  (lower for ndcg, higher for logloss). The metric must have per-user values: the decision is a
  paired test over users (:mod:`metrics_core.analysis.gate`).

Either form may end with a segment clause, which decides it within segments of users given by
a user attribute (any column of the attributes table, ``user_id`` and one column per attribute):

* ``... in every COLUMN`` (or ``in each COLUMN``): within every value of the column, users the
  table does not list or lists without a value forming the segment ``(missing)``;
* ``... in COLUMN = VALUE``: within that one value (compared as text).

Within a segment a threshold compares the mean of the users' per-user values there, and a
baseline condition runs its paired test on the segment's users (:mod:`metrics_core.analysis.gate`).

Anything else is a :class:`MetricsError` naming the condition and the forms.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from ..errors import MetricsError
from ..metrics.registry import MetricSpec, parse_metric

#: a relative margin is a share of the baseline's mean: 0% to this
MAX_MARGIN_PERCENT = 100.0
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_THRESHOLD = re.compile(rf"^\s*(?P<metric>[^\s<>=]+)\s*(?P<op>>=|<=|>|<)\s*(?P<value>{_NUMBER})\s*(?P<pct>%)?\s*$")
_BASELINE = re.compile(
    rf"^\s*(?P<metric>\S+)\s+not\s+worse\s+than\s+(?:the\s+)?baseline"
    rf"(?:\s+by\s+more\s+than\s+(?P<margin>{_NUMBER})\s*(?P<pct>%)?)?\s*$", re.IGNORECASE)
_EVERY = re.compile(r"^(?P<rest>.*\S)\s+in\s+(?:every|each)\s+(?P<column>[^\s=]+)\s*$", re.IGNORECASE)
_ONE = re.compile(r"^(?P<rest>.*\S)\s+in\s+(?P<column>[^\s=]+)\s*=\s*(?P<value>\S(?:.*\S)?)\s*$", re.IGNORECASE)
FORMS = ("'METRIC >= NUMBER' (or >, <=, <), or 'METRIC not worse than baseline [by more than N% | by more "
         "than N]', either optionally followed by 'in every COLUMN' or 'in COLUMN = VALUE'")


@dataclass(frozen=True)
class Condition:
    """One parsed condition: ``kind`` is ``"threshold"`` (``op``, ``value``) or ``"baseline"``
    (``margin`` >= 0, a share of the baseline's mean when ``relative``, else in metric units)."""

    text: str
    metric: str
    spec: MetricSpec
    kind: str
    op: str = ""
    value: float = math.nan
    margin: float = 0.0
    relative: bool = False
    #: the user attribute of a segment clause ("" without one), and the one segment named
    #: (``None``: every segment of the attribute)
    segment_column: str = ""
    segment_value: str | None = None

    @property
    def per_segment(self) -> bool:
        return bool(self.segment_column)

    @property
    def margin_text(self) -> str:
        """The margin as written back: ``1%``, ``0.005``, or empty without one."""
        if self.margin == 0:
            return ""
        return f"{self.margin * 100:g}%" if self.relative else f"{self.margin:g}"


def _quoted(text: str) -> str:
    """The condition as messages show it: one line, at most 120 characters."""
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= 120 else flat[:117] + "...")


def parse_condition(text) -> Condition:
    """Parse one condition (module docstring); one-line MetricsError naming it otherwise."""
    if not isinstance(text, str):
        raise MetricsError(f"a condition must be text such as 'ndcg@10 >= 0.3', got {type(text).__name__}")
    shown = _quoted(text)
    clause = _EVERY.match(text) or _ONE.match(text)
    if clause is not None:
        try:
            inner = parse_condition(clause.group("rest"))
        except MetricsError:
            inner = None  # "in" was part of the condition itself: read the whole text below
        if inner is not None:
            if not inner.spec.per_user:
                raise MetricsError(f"condition {shown}: {inner.metric} has no per-user values, so it has no "
                                   "value within a segment of users; drop the 'in ...' clause")
            value = clause.groupdict().get("value")
            return replace(inner, text=" ".join(text.split()), segment_column=clause.group("column"),
                           segment_value=value)
    base = _BASELINE.match(text)
    threshold = None if base else _THRESHOLD.match(text)
    match = base or threshold
    if match is None:
        raise MetricsError(f"condition {shown}: cannot read it; write {FORMS}")
    metric = match.group("metric")
    try:
        spec = parse_metric(metric)
    except MetricsError as e:
        raise MetricsError(f"condition {shown}: {e}") from None
    clean = " ".join(text.split())
    if threshold:
        if match.group("pct"):
            raise MetricsError(f"condition {shown}: a threshold is in the metric's units; write "
                               f"{float(match.group('value')) / 100:g} rather than {match.group('value')}%")
        value = float(match.group("value"))
        if not math.isfinite(value):
            raise MetricsError(f"condition {shown}: the threshold must be a finite number")
        return Condition(clean, metric, spec, "threshold", op=match.group("op"), value=value)
    if not spec.per_user:
        raise MetricsError(f"condition {shown}: {metric} has no per-user values, so there is no paired test "
                           f"against the baseline; use a threshold such as "
                           f"'{metric} {'>=' if spec.entry.higher_is_better else '<='} NUMBER'")
    margin, relative = 0.0, False
    if match.group("margin") is not None:
        margin, relative = float(match.group("margin")), bool(match.group("pct"))
        limit = MAX_MARGIN_PERCENT if relative else math.inf
        if not (0 <= margin <= limit):
            raise MetricsError(f"condition {shown}: the margin must be from 0 to {MAX_MARGIN_PERCENT:g}% "
                               "or a non-negative number")
        if relative:
            margin /= 100.0
    return Condition(clean, metric, spec, "baseline", margin=margin, relative=relative)


def parse_conditions(texts) -> list[Condition]:
    """Parse every condition (a list of strings, or one string); at least one is needed."""
    if isinstance(texts, str):
        texts = [texts]
    try:
        items = list(texts)
    except TypeError:
        raise MetricsError("conditions must be a list of strings such as ['ndcg@10 >= 0.3']") from None
    if not items:
        raise MetricsError(f"no condition given; write {FORMS}")
    return [parse_condition(t) for t in items]
