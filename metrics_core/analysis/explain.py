"""Why do these numbers differ: one metric as every library would report it, and the path between two.

:func:`explain` evaluates one metric on the user's data under each preset of
:mod:`metrics_core.metrics.presets` (side by side), and walks from one preset to
another one convention at a time (in the order of
:data:`metrics_core.metrics.conventions.CONVENTIONS`), recording the change each step
makes. The last step's conventions are the second preset's, so the steps add
up to the difference between the two presets' values. Named sets of conventions
of one's own (``settings={"this dashboard": {...}}``) sit beside the presets: a
row of the values and a possible end of the path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..metrics.conventions import CONVENTIONS, Settings, validate
from ..errors import MetricsError
from ..evaluation import _evaluate
from ..kernels._jit import kernel_guard
from ..layout import Ranked, prepare
from ..metrics.presets import BY_NAME, PRESETS, get
from ..progress import stage
from ..metrics.registry import parse_metric


@dataclass
class Explanation:
    """Result of :func:`explain`.

    ``values``: one row per preset (index ``preset``): ``library``, ``library_metric`` (the
    library's function the row reproduces, where it has one), ``conventions`` (those that function's
    name fixes apart from the preset's), ``value``. A library with two functions for one metric under
    different conventions has a row for each: ``ms_recommenders`` is ``map_at_k`` (divided by
    ``min(k, R)``), ``ms_recommenders:map`` is ``map`` (divided by R); either may start or end the path. ``steps``: the path from
    ``source`` to ``target``, one row per convention that differs: ``convention``, ``from``,
    ``to``, ``value`` after the step, ``change``; ``start`` / ``end`` are the two presets' values.
    ``settings``: the named convention sets given to :func:`explain` (name -> conventions). In a
    notebook it shows both tables (:func:`metrics_core.outputs.notebook.explanation_html`).
    """

    metric: str
    values: pd.DataFrame
    source: str
    target: str
    start: float
    end: float
    steps: pd.DataFrame
    ranked: Ranked
    settings: dict = field(default_factory=dict)
    computed: dict = field(default_factory=dict, repr=False, compare=False)

    def path(self, source: str, target: str) -> "Explanation":
        """The same explanation with the path between two other presets (or named settings); a step
        whose conventions an earlier row or path of this explanation already evaluated is not
        evaluated again (:func:`_value`)."""
        start, end, steps = _path(self.ranked, self.metric, source, target, self.settings, self.computed)
        return Explanation(self.metric, self.values, source, target, start, end, steps, self.ranked,
                           self.settings, self.computed)

    def describe(self) -> list[str]:
        """The path as sentences: ``ideal: judged -> k: -0.054``."""
        lines = [f"{self.source}: {self.start:.6g}"]
        for r in self.steps.to_dict("records"):
            lines.append(f"{r['convention']}: {r['from']} -> {r['to']}: {r['change']:+.6g} (now {r['value']:.6g})")
        lines.append(f"{self.target}: {self.end:.6g}")
        return lines


def _value(ranked: Ranked, metric: str, settings: Settings, computed: dict | None = None) -> float:
    """``metric`` on ``ranked`` under ``settings``. With ``computed`` (a dict kept with one
    :class:`Explanation`, hence one ``ranked``), a value is looked up by the metric and every
    convention's value (all an evaluation reads of ``settings``) and stored there when it is new."""
    key = (metric, tuple(settings.items()))
    if computed is not None and key in computed:
        return computed[key]
    value = float(_evaluate(ranked, None, [metric], settings, item_features=None,
                            interactions=None).summary[metric])
    if computed is not None:
        computed[key] = value
    return value


#: separates a preset from one of its library's names in a row of :func:`explain` (``ms_recommenders:map``)
VARIANT = ":"


def _library_name(preset: str, base: str) -> str:
    """The preset's own name for our base metric name (first match without name-specific conventions),
    or empty."""
    p = get(preset)
    return next((name for name, ours in p.names.items() if ours == base and name not in p.name_settings), "")


def variants(preset: str, base: str) -> list[tuple[str, str]]:
    """(row, library name) of each function of the preset's library that computes our base metric under
    conventions of its own (Microsoft Recommenders' ``map``, which divides by R, beside ``map_at_k``, by
    ``min(k, R)``): the row is ``preset:name``."""
    p = get(preset)
    return [(f"{preset}{VARIANT}{name}", name) for name, ours in p.names.items()
            if ours == base and name in p.name_settings]


def _split(row: str) -> tuple[str, str | None]:
    """(preset, library name or None) of a row of :func:`explain`."""
    preset, _, name = row.partition(VARIANT)
    return preset, (name or None)


def _conventions(row: str, metric: str, named: dict | None = None) -> Settings:
    """Every convention of a row: a preset's settings (the library's function reported under our name,
    such as Microsoft Recommenders' ``map_at_k`` for ``map@k``), or with ``preset:name`` those the
    library's name fixes too (its ``map``, divided by R); a name of ``named`` gives its own conventions
    (the others at their defaults; checked once by :func:`_named`)."""
    if named and row in named:
        return Settings.checked(named[row], named[row], None)
    preset, name = _split(row)
    fixed = {}
    if name is not None:
        if name not in get(preset).name_settings:
            raise MetricsError(f"{row!r}: {name!r} is not a name of {preset} with conventions of its own; "
                               f"use {preset!r}")
        fixed = get(preset).name_settings[name]
    return Settings(preset).replace(**fixed)


def _named(settings) -> dict:
    """Named convention sets, validated: name -> conventions (one-line MetricsError otherwise); a set given
    as :class:`~metrics_core.metrics.conventions.Settings` was checked when it was built and is taken whole."""
    if settings is None:
        return {}
    if not isinstance(settings, dict) or not all(isinstance(v, (dict, Settings)) for v in settings.values()):
        raise MetricsError("settings must map a name to a dict of conventions, e.g. {'mine': {'gain': 'binary'}}")
    clash = [n for n in settings if n in BY_NAME]
    if clash:
        raise MetricsError(f"settings name {clash[0]!r} is a preset's name; choose another")
    return {str(name): dict(conv) if isinstance(conv, Settings) else dict(validate(**conv))
            for name, conv in settings.items()}


def _path(ranked: Ranked, metric: str, source: str, target: str, named: dict | None = None,
          computed: dict | None = None):
    """(source value, target value, steps) changing one convention at a time from source to target
    (values found in ``computed`` are reused, see :func:`_value`)."""
    for name in (source, target):
        if not (named and name in named):
            get(_split(name)[0])
    conv = _conventions(source, metric, named)
    goal = _conventions(target, metric, named)
    start = value = _value(ranked, metric, conv, computed)
    rows = []
    for c in CONVENTIONS:
        if conv[c.name] == goal[c.name]:
            continue
        before = conv[c.name]
        # the target's value, checked when the target's settings were built
        conv = Settings.checked({**conv, c.name: goal[c.name]}, conv.given | {c.name}, conv.preset)
        new = _value(ranked, metric, conv, computed)
        rows.append({"convention": c.name, "from": before, "to": goal[c.name], "value": new, "change": new - value})
        value = new
    steps = pd.DataFrame(rows, columns=["convention", "from", "to", "value", "change"])
    return start, value, steps


def explain(run, qrels=None, metric: str = "ndcg@10", presets=None, source: str | None = None,
            target: str | None = None, settings: dict | None = None, debias: dict | None = None) -> Explanation:
    """``metric`` on this data under every preset in ``presets`` (default: all), and the path from
    ``source`` to ``target`` (default: the first two rows). ``run`` may be a :class:`Ranked`.

    ``settings`` names convention sets of one's own (``{"this dashboard": {"gain": "exponential"}}``;
    conventions not given keep their defaults; a set may be an ``mc.Settings``, taken as built): each is a
    row before the presets (``library`` is its name) and may be ``source`` or ``target``.

    ``debias`` (``{"iqr_coef": 1.5, "seed": 0}``) first down-samples the ground truth's popular items as
    RecTools' ``DebiasConfig`` (:func:`metrics_core.metrics.debias.debias`), so every row reads the debiased
    metric (RecTools' ``NDCG(k, debias_config=...)`` under the rectools preset).

    Parameters
    ----------
    run, qrels : DataFrame
        As :func:`metrics_core.evaluate` (``run`` may be a prepared ``Ranked``).
    metric : str
        One metric name.
    presets : sequence of str, optional
        The presets to show (default: every one).
    source, target : str, optional
        The two rows to walk between, one convention at a time.
    settings : dict, optional
        Named convention sets of one's own.
    debias : dict, optional
        RecTools' debiasing of the ground truth first.

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
    >>> ex = mc.explain(run(users[:3]), qrels, "ndcg@2", presets=["trec_eval", "rectools"])
    >>> ex.values["value"].round(4).to_dict()  # rectools divides by the DCG of k relevant items
    {'trec_eval': 0.8155, 'rectools': 0.5}
    >>> ex.steps.loc[ex.steps["change"] != 0, ["convention", "from", "to"]].to_dict("records")
    [{'convention': 'ideal', 'from': 'judged', 'to': 'k'}]
    """
    named = _named(settings)
    if debias is not None:
        from ..metrics.debias import debias as debias_qrels

        if isinstance(run, Ranked) or qrels is None:
            raise MetricsError("debias needs the ground truth as a DataFrame (qrels), not a prepared Ranked")
        if not isinstance(debias, dict):
            raise MetricsError("debias must be a dict such as {'iqr_coef': 1.5, 'seed': 0}")
        qrels = debias_qrels(qrels, **debias)
    presets_list = [p.name for p in PRESETS] if presets is None else list(presets)
    for n in presets_list:
        get(n)
    names = [*named, *presets_list]
    if len(names) < 2 and (source is None or target is None):
        raise MetricsError("explain needs at least two presets to compare")
    source = names[0] if source is None else source
    target = names[1] if target is None else target
    with kernel_guard():
        ranked = run if isinstance(run, Ranked) else prepare(run, qrels)
        label = metric
        base = parse_metric(metric).name
        rows = []
        computed: dict = {}
        with stage(f"{label} as each library computes it", total=len(names) + 1, unit="preset") as shown:
            for n in names:
                if n in named:
                    rows.append({"preset": n, "library": n, "library_metric": "", "conventions": "",
                                 "value": _value(ranked, label, _conventions(n, label, named), computed)})
                    shown.update(1)
                    continue
                for row, library_name in [(n, _library_name(n, base)), *variants(n, base)]:
                    fixed = get(n).name_settings.get(library_name, {}) if row != n else {}
                    rows.append({"preset": row, "library": get(n).library, "library_metric": library_name,
                                 "conventions": ", ".join(f"{c}={v}" for c, v in fixed.items()),
                                 "value": _value(ranked, label, _conventions(row, label, named), computed)})
                shown.update(1)
            values = pd.DataFrame(rows).set_index("preset")
            start, end, steps = _path(ranked, label, source, target, named, computed)  # the last count: the path
            shown.update(1)
    return Explanation(label, values, source, target, start, end, steps, ranked, named, computed)
