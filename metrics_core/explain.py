"""Why do these numbers differ: one metric as every library would report it, and the path between two.

:func:`explain` evaluates one metric on the user's data under each preset of
:mod:`metrics_core.presets` (side by side), and walks from one preset to
another one convention at a time (in the order of
:data:`metrics_core.conventions.CONVENTIONS`), recording the change each step
makes. The last step's conventions are the second preset's, so the steps add
up to the difference between the two presets' values.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .conventions import CONVENTIONS, resolve
from .errors import MetricsError
from .evaluate import _evaluate
from .kernels._jit import kernel_guard
from .layout import Ranked, prepare
from .presets import PRESETS, get, metric_settings
from .registry import parse_metric


@dataclass
class Explanation:
    """Result of :func:`explain`.

    ``values``: one row per preset (index ``preset``): ``library``, ``library_metric`` (the
    library's name for the metric, where it has one), ``value``. ``steps``: the path from
    ``source`` to ``target``, one row per convention that differs: ``convention``, ``from``,
    ``to``, ``value`` after the step, ``change``; ``start`` / ``end`` are the two presets' values.
    """

    metric: str
    values: pd.DataFrame
    source: str
    target: str
    start: float
    end: float
    steps: pd.DataFrame
    ranked: Ranked

    def path(self, source: str, target: str) -> "Explanation":
        """The same explanation with the path between two other presets."""
        start, end, steps = _path(self.ranked, self.metric, source, target)
        return Explanation(self.metric, self.values, source, target, start, end, steps, self.ranked)

    def _repr_html_(self) -> str:
        """Jupyter's view: the values per preset and the path (:func:`metrics_core.notebook.explanation_html`)."""
        from .notebook import explanation_html

        return explanation_html(self)

    def describe(self) -> list[str]:
        """The path as sentences: ``ideal: judged -> k: -0.054``."""
        lines = [f"{self.source}: {self.start:.6g}"]
        for r in self.steps.to_dict("records"):
            lines.append(f"{r['convention']}: {r['from']} -> {r['to']}: {r['change']:+.6g} (now {r['value']:.6g})")
        lines.append(f"{self.target}: {self.end:.6g}")
        return lines


def _value(ranked: Ranked, metric: str, conv: dict) -> float:
    return float(_evaluate(ranked, None, [metric], conv, item_features=None, interactions=None).summary[metric])


def _library_name(preset: str, base: str) -> str:
    """The preset's own name for our base metric name (first match without name-specific conventions),
    or empty."""
    p = get(preset)
    return next((name for name, ours in p.names.items() if ours == base and name not in p.name_settings), "")


def _conventions(preset: str, metric: str) -> dict:
    """Every convention under ``preset`` for ``metric``, with those its name fixes there
    (Microsoft Recommenders' ``map@k`` is its ``map``, divided by R)."""
    return resolve({}, {**get(preset).settings, **metric_settings(metric, preset)})


def _path(ranked: Ranked, metric: str, source: str, target: str):
    """(source value, target value, steps) changing one convention at a time from source to target."""
    conv = _conventions(source, metric)
    goal = _conventions(target, metric)
    start = value = _value(ranked, metric, conv)
    rows = []
    for c in CONVENTIONS:
        if conv[c.name] == goal[c.name]:
            continue
        before = conv[c.name]
        conv = dict(conv, **{c.name: goal[c.name]})
        new = _value(ranked, metric, conv)
        rows.append({"convention": c.name, "from": before, "to": goal[c.name], "value": new, "change": new - value})
        value = new
    steps = pd.DataFrame(rows, columns=["convention", "from", "to", "value", "change"])
    return start, value, steps


def explain(run, qrels=None, metric: str = "ndcg@10", presets=None, source: str | None = None,
            target: str | None = None) -> Explanation:
    """``metric`` on this data under every preset in ``presets`` (default: all), and the path from
    ``source`` to ``target`` (default: the first two of ``presets``). ``run`` may be a :class:`Ranked`."""
    names = [p.name for p in PRESETS] if presets is None else list(presets)
    for n in names:
        get(n)
    if len(names) < 2 and (source is None or target is None):
        raise MetricsError("explain needs at least two presets to compare")
    source = names[0] if source is None else source
    target = names[1] if target is None else target
    with kernel_guard():
        ranked = run if isinstance(run, Ranked) else prepare(run, qrels)
        label = metric
        base = parse_metric(metric).name
        rows = []
        for n in names:
            rows.append({"preset": n, "library": get(n).library, "library_metric": _library_name(n, base),
                         "value": _value(ranked, label, _conventions(n, label))})
        values = pd.DataFrame(rows).set_index("preset")
        start, end, steps = _path(ranked, label, source, target)
    return Explanation(label, values, source, target, start, end, steps, ranked)
