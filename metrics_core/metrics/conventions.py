"""Every convention of ``evaluate`` declared once: name, choices, default, help.

:class:`Settings` resolves the keywords of one call (and a preset) into one
frozen object, built and checked once at the entry point (``mc.evaluate``, the command
line, the dashboard) and read by every layer below. The keyword
validation of :func:`metrics_core.evaluate` (:func:`validate`), the keywords of
``evaluate`` and ``metric_curve`` (:func:`takes_conventions`),
the command line's options (:func:`add_arguments`, :func:`from_args`), the
dashboard's widgets (:func:`widget_specs`) and the conventions table of docs/conventions-and-presets.md
(:func:`markdown_table`) are generated from :data:`CONVENTIONS`.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from ..errors import MetricsError
from .presets import PRESETS, settings as preset_settings


@dataclass(frozen=True)
class Convention:
    """One keyword of ``evaluate``.

    ``choices`` lists the allowed values (default first) of a choice; it is
    empty for a number. ``applies_to`` names, as data, what it changes: kinds of the
    registry (``"ranking"``, ``"diversity"``, ``"scored"``...) and metrics as the registry
    reads them (``"ndcg"``; ``"precision@k"`` the ranking entry, ``"precision"`` the
    classification one); :meth:`entries` resolves them, :attr:`applies_text` writes them (docs
    and dashboard grouping); ``help`` is one sentence per choice or a
    sentence for a number.
    """

    name: str
    default: object
    help: str
    choices: tuple[str, ...] = ()
    applies_to: tuple[str, ...] = ()
    metavar: str | None = None
    #: a number's bounds: ``low < value`` (``low_open``) or ``low <= value``, and ``value <= high``
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    #: why the Spark engine (:mod:`metrics_core.spark`) takes only the default, whatever the metrics asked
    #: (empty: :meth:`spark_refusal` reads it from the registry)
    spark_default_only: str = ""

    def spark_refusal(self) -> str:
        """Why the Spark engine takes only the default of this convention, refusing another value with one
        line; empty when it computes every value. The declared :attr:`spark_default_only`, else, when every
        kind or metric of ``applies_to`` holds a metric Spark combines with code of its own
        (:data:`metrics_core.metrics.registry.SPARK_OWN_CODE`),
        :data:`~metrics_core.metrics.registry.SPARK_OWN_CODE_REFUSAL`. The Spark engine and docs/spark.md
        read it."""
        from .registry import SPARK_OWN_CODE, SPARK_OWN_CODE_REFUSAL

        if self.spark_default_only:
            return self.spark_default_only
        if self.applies_to and all(any(m.spark in SPARK_OWN_CODE for m in entries_of(item))
                                   for item in self.applies_to):
            return SPARK_OWN_CODE_REFUSAL
        return ""

    @property
    def applies_text(self) -> str:
        """``applies_to`` in words, for the docs' table and the dashboard's help: every kind is ``all``,
        the two scored-row kinds are ``scored rows``."""
        from .registry import KINDS

        items = list(self.applies_to)
        if set(KINDS) <= set(items):
            return "all"
        if {"scored", "scored_per_user"} <= set(items):
            at = items.index("scored")
            items = [x for x in items if x != "scored_per_user"]
            items[at] = "scored rows"
        return ", ".join(items)

    def entries(self) -> tuple:
        """The registry entries the convention changes (:class:`metrics_core.metrics.registry.Metric`), in table order."""
        from .registry import METRICS

        named = {id(m) for item in self.applies_to for m in entries_of(item)}
        return tuple(m for m in METRICS if id(m) in named)

    @property
    def is_number(self) -> bool:
        return not self.choices

    @property
    def option(self) -> str:
        """The command-line option: ``ap_norm`` -> ``--ap-norm``."""
        return "--" + self.name.replace("_", "-")

    @property
    def label(self) -> str:
        """A human label for a widget: ``ap_norm`` -> ``AP normalisation``."""
        return _LABELS.get(self.name, self.name.replace("_", " ").capitalize())

    @property
    def allowed(self) -> str:
        """The values a number takes, in words (no ``<=``: Streamlit's markdown shows it as a sign):
        ``a finite number greater than 0 and at most 1e+100``."""
        parts = []
        if self.low is not None:
            parts.append(f"{'greater than' if self.low_open else 'at least'} {self.low:g}")
        if self.high is not None:
            parts.append(f"at most {self.high:g}")
        return "a finite number" + (" " + " and ".join(parts) if parts else "")

    def check(self, value):
        """The value if allowed (numbers as finite floats within bounds); one-line MetricsError otherwise."""
        if self.is_number:
            try:
                number = float(value) if not isinstance(value, bool) else math.nan
            except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float64
                number = math.nan
            low_ok = self.low is None or (number > self.low if self.low_open else number >= self.low)
            if not (math.isfinite(number) and low_ok and (self.high is None or number <= self.high)):
                raise MetricsError(f"{self.name} must be {self.allowed}; got {_quoted(value)}")
            return number
        if value not in self.choices:
            raise MetricsError(f"{self.name} must be one of {', '.join(self.choices)}; got {value!r}")
        return value


def entries_of(item: str) -> tuple:
    """The registry entries one item of an ``applies_to`` names: every entry of a kind, or one metric."""
    from .registry import KINDS, METRICS, entry_named

    return tuple(m for m in METRICS if m.kind == item) if item in KINDS else (entry_named(item),)


def _quoted(value) -> str:
    """``repr(value)`` cut to 80 characters (a URL parameter or option can be long)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_LABELS = {"ap_norm": "AP normalisation", "gauc_weight": "GAUC weight", "empty_users": "Users without relevant items",
           "precision_norm": "Precision@k normalisation", "missing_users": "Users missing from the run",
           "run_only_users": "Users only in the run",
           "unjudged_rows": "Unjudged scored rows", "novelty_popularity": "Novelty popularity",
           "novelty_average": "Novelty average", "beyond_users": "Users of diversity metrics",
           "short_lists": "Lists shorter than 2 items (ILS, ILD)",
           "ild_distance": "ILD distance", "min_relevance": "SDCG lowest grade",
           "max_relevance": "SDCG highest grade"}

#: largest F-beta weight: beta^2 and (1 + beta^2) hits stay far inside float64 (beta^2 overflows near 1.3e154)
MAX_BETA = 1e100

CONVENTIONS: tuple[Convention, ...] = (
    Convention("gain", "linear", "`g = rel`, `g = 2^rel - 1` (negative relevance: 0), or `g = 1` when relevant "
               "(`rel >= relevance_threshold`) else 0; discount `1/log2(rank+1)`",
               choices=("linear", "exponential", "binary"), applies_to=("cg", "dcg", "ndcg")),
    Convention("ideal", "judged",
               "IDCG from every judged item of the user (trec_eval, ranx), from the retrieved list re-sorted, or "
               "from k items of gain 1 whatever R (RecTools `divide_by_achievable=False`)",
               choices=("judged", "retrieved", "k"), applies_to=("ndcg",)),
    Convention("ap_norm", "relevant",
               "AP@k divided by R (trec_eval), by `min(k, R)` (RecBole, Spark), by the relevant items in the "
               "top k (torchmetrics), or by k (RecTools `divide_by_k=True`)",
               choices=("relevant", "min_k", "retrieved", "k"), applies_to=("map",)),
    Convention("precision_norm", "k",
               "precision@k divided by k (trec_eval), or by `min(k, R)` (RecTools `r_precision=True`)",
               choices=("k", "min_k"), applies_to=("precision@k",)),
    Convention("ties", "average",
               "tied scores: exact expected value over all orders of tied scores (for NDCG = scikit-learn's "
               "`ndcg_score(ignore_ties=False)`); score desc then item id desc as strings, scores compared as "
               "32-bit floats as trec_eval stores them (trec_eval); score desc then input row order; score desc "
               "(64-bit) then item id desc as strings (trectools)", choices=("average", "trec", "input", "score_id"),
               applies_to=("ranking", "diversity")),
    Convention("relevance_threshold", 1.0,
               "relevance `>=` threshold is relevant for binary metrics and labels; gains stay graded",
               applies_to=("ranking", "pooled", "scored", "scored_per_user", "diversity"), metavar="N"),
    Convention("empty_users", "exclude",
               "users whose ground truth has no relevant item are excluded (counted), or scored 0",
               choices=("exclude", "zero"), applies_to=("ranking", "diversity")),
    Convention("missing_users", "zero",
               "users of the ground truth missing from the run score 0 (ranx, ir_measures, RecTools), or are left out "
               "(trec_eval without `-c`, trectools, Microsoft Recommenders)", choices=("zero", "exclude"), applies_to=("ranking", "diversity")),
    Convention("run_only_users", "exclude",
               "users of the run without any judgment are left out (trec_eval), or score 0 and count in the "
               "mean (trectools, which divides by the run's topics)", choices=("exclude", "zero"),
               applies_to=("ranking",),
               spark_default_only="the Spark engine chooses the users of each group of users itself, from the "
                                  "ground truth"),
    Convention("unjudged_rows", "negative",
               "scored rows without a judgment count as negatives, or are left out (only judged rows, as "
               "Microsoft Recommenders joins them)", choices=("negative", "exclude"), applies_to=("scored", "scored_per_user")),
    Convention("novelty_popularity", "users",
               "novelty's popularity of an item: share of users who interacted with it, or share of all "
               "interactions (Microsoft Recommenders)", choices=("users", "interactions"), applies_to=("novelty",)),
    Convention("novelty_average", "users",
               "novelty averaged per user then over users, or over every recommended row (Microsoft Recommenders)",
               choices=("users", "rows"), applies_to=("novelty",)),
    Convention("beyond_users", "evaluated",
               "diversity metrics over the evaluated users, or over every user with a list (RecTools, Microsoft "
               "Recommenders; the per-user column then holds the evaluated users' values, empty for one without "
               "a list)", choices=("evaluated", "listed"), applies_to=("diversity",)),
    Convention("short_lists", "exclude",
               "ILS of a list with one item: left out, or scored 0 (similarity 0); ILD of a top k of one item: "
               "left out, or scored 0 (no pair, as RecTools); users without a list stay out",
               choices=("exclude", "zero"), applies_to=("ils", "ild")),
    Convention("ild_distance", "hamming",
               "ILD's distance of two items: Hamming (feature columns whose values differ, or tags in one set "
               "only; RecTools `PairwiseHammingDistanceCalculator`), or cosine distance `1 - cos(x, y)` of the "
               "numeric feature vectors (a zero vector: cosine 0, distance 1)",
               choices=("hamming", "cosine"), applies_to=("ild",)),
    Convention("threshold", 0.5, "classification threshold on scores: predicted positive when `score >= threshold`",
               applies_to=("accuracy", "precision", "recall", "f1"), metavar="T"),
    Convention("gauc_weight", "rows", "weight of each user's AUC in GAUC: its scored rows, its positives, or 1",
               choices=("rows", "positives", "uniform"), applies_to=("gauc",)),
    Convention("beta", 1.0, "weight of recall in F-beta@k: `(1 + beta^2) P R / (beta^2 P + R)` (1 = F1)",
               applies_to=("fbeta",), metavar="B", low=0.0, high=MAX_BETA, low_open=True),
    Convention("rbp_persistence", 0.8, "persistence p of rank-biased precision: the chance that the user goes on "
               "to the next item (0.8 as ir_measures; trec_eval's rbp takes 0.9)",
               applies_to=("rbp", "rbp_residual"), metavar="P", low=0.0, high=1.0, low_open=True),
    Convention("min_relevance", 0.0, "the grade scaled to gain 0 by sdcg (ir_measures' `min_rel`): gains are "
               "`(min(max(rel, min), max) - min) / (max - min)`", applies_to=("sdcg",), metavar="N", low=0.0),
    Convention("max_relevance", 0.0, "the grade scaled to gain 1 by sdcg (ir_measures' `max_rel`); 0 takes the "
               "largest relevance of the ground truth", applies_to=("sdcg",), metavar="N", low=0.0),
    Convention("recall_level_count", "round",
               "the relevant items a recall level x stands for in iprec_at_recall and iprec_11pt: x R rounded to "
               "the nearest (trec_eval 10); `floor(x R + 0.9)` (earlier trec_eval, as pytrec_eval bundles it)",
               choices=("round", "add_0.9"), applies_to=("iprec_at_recall", "iprec_11pt")),
)
BY_NAME: dict[str, Convention] = {c.name: c for c in CONVENTIONS}


#: largest relevance the exponential gain takes: 2^1000 - 1 is about 1.07e301, so the sum of up to
#: 2^23 such gains (a user's DCG or IDCG) stays below float64's largest value, about 1.80e308
MAX_EXPONENTIAL_RELEVANCE = 1000.0


def check_exponential_relevance(relevance, column: str = "relevance") -> None:
    """Refuse relevance values whose exponential gain ``2^rel - 1`` would overflow (one-line MetricsError)."""
    import numpy as np

    values = np.asarray(relevance, dtype=np.float64)
    top = float(values.max(initial=-np.inf))
    if top > MAX_EXPONENTIAL_RELEVANCE:
        raise MetricsError(
            f"column {column} holds {top:g}; gain='exponential' (2^rel - 1) takes relevance up to "
            f"{MAX_EXPONENTIAL_RELEVANCE:g} (beyond that the gains overflow float64): use gain='linear' "
            f"or rescale the relevance")


def defaults() -> dict:
    """Every convention keyword with its default value."""
    return {c.name: c.default for c in CONVENTIONS}


def check(name: str, value):
    """Validate one convention (see :meth:`Convention.check`)."""
    return BY_NAME[name].check(value)


def _unknown(names, others=()) -> MetricsError:
    """One-line error for unknown convention keywords, with the closest known name (a convention,
    or one of ``others``: the other keywords of the function called)."""
    name = sorted(names)[0]
    close = difflib.get_close_matches(name, list(BY_NAME) + list(others), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(BY_NAME)}"
    return MetricsError(f"unknown convention {str(name)[:80]!r}{hint}")


def validate(**values) -> dict:
    """Validate convention keywords (any subset); returns them with numbers as floats."""
    unknown = set(values) - set(BY_NAME)
    if unknown:
        raise _unknown(unknown)
    return {name: BY_NAME[name].check(value) for name, value in values.items()}


@functools.lru_cache(maxsize=None)
def _base(preset: str | None) -> MappingProxyType:
    """Every convention's value before the keywords: the ``preset``'s (:mod:`metrics_core.metrics.presets`),
    else the default; validated on the first call for that preset and kept (declared data does not change),
    so an evaluation checks only the values its caller gave."""
    return MappingProxyType(validate(**{**defaults(), **preset_settings(preset)}))


@dataclass(frozen=True, init=False, eq=False, repr=False)
class Settings(Mapping):
    """Every convention of one evaluation, resolved and validated once: read as ``settings.gain`` or
    ``settings["gain"]`` (a read-only mapping in the order of :data:`CONVENTIONS`).

    ``Settings(preset=None, **conventions)`` takes each convention given (not None), else the
    ``preset``'s value, else the default; an unknown keyword is refused with the closest name, a bad
    value with one line naming it. Each value given is checked here and nowhere below:
    :func:`metrics_core.evaluate`, :func:`metrics_core.metric_curve`, the command line and the dashboard
    build one and pass this object down (``mc.evaluate(run, qrels, metrics, settings=s)``).

    Attributes
    ----------
    given : frozenset of str
        The conventions set by keyword (the others come from ``preset`` or the default).
    preset : str or None
        The library preset the other values come from.

    Examples
    --------
    >>> import metrics_core as mc
    >>> s = mc.Settings(preset="rectools", ap_norm="k")
    >>> s.ap_norm, s.gain, s.ideal  # the keyword, then two of RecTools' conventions
    ('k', 'binary', 'k')
    >>> s.explicit()
    {'ap_norm': 'k'}
    >>> s.replace() is s  # no change: the same object, nothing checked again
    True
    >>> s.replace(gain="linear").gain
    'linear'
    """

    values_by_name: Mapping[str, object]
    given: frozenset
    preset: str | None

    def __init__(self, preset: str | None = None, **conventions):
        unknown = set(conventions) - set(BY_NAME)
        if unknown:
            raise _unknown(unknown)
        given = {name: value for name, value in conventions.items() if value is not None}
        self._fill({**_base(preset), **validate(**given)}, given, preset)

    @classmethod
    def checked(cls, values: Mapping, given, preset: str | None) -> "Settings":
        """Settings over values already checked (with :meth:`Convention.check`): ``values`` holds the
        conventions given, the others come from ``preset`` or the default. For the builders of this module
        that check each value in their own words (:func:`from_args` names the option)."""
        settings = object.__new__(cls)
        settings._fill({**_base(preset), **values}, given, preset)
        return settings

    def _fill(self, values: dict, given, preset) -> None:
        object.__setattr__(self, "values_by_name", MappingProxyType(values))
        object.__setattr__(self, "given", frozenset(given))
        object.__setattr__(self, "preset", preset)

    def __getattr__(self, name):
        if name.startswith("_") or name == "values_by_name":  # not yet filled (copy, unpickling)
            raise AttributeError(name)
        try:
            return self.values_by_name[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name):
        return self.values_by_name[name]

    def __iter__(self):
        return iter(self.values_by_name)

    def __len__(self):
        return len(self.values_by_name)

    def __repr__(self):
        return f"Settings({dict(self.values_by_name)!r})"

    def __eq__(self, other):
        return isinstance(other, Mapping) and dict(self) == dict(other)

    def __hash__(self):
        return hash(tuple(self.values_by_name.items()))

    def __reduce__(self):
        values = dict(self.values_by_name)
        return (_rebuilt, (values, tuple(sorted(self.given)), self.preset))

    def explicit(self) -> dict:
        """The conventions set by keyword (what a user typed), as keywords of ``evaluate``."""
        return {name: self.values_by_name[name] for name in self.values_by_name if name in self.given}

    def replace(self, **changes) -> "Settings":
        """These settings with some conventions changed (only the changes are checked; they count as set by
        keyword). No change (nothing given, None, or the values already set by keyword) returns this very
        object."""
        unknown = set(changes) - set(BY_NAME)
        if unknown:
            raise _unknown(unknown)
        changes = {name: value for name, value in changes.items()
                   if value is not None and not (name in self.given and _same(self.values_by_name[name], value))}
        if not changes:
            return self
        settings = object.__new__(Settings)
        settings._fill({**self.values_by_name, **validate(**changes)}, self.given | set(changes), self.preset)
        return settings


def _same(value, other) -> bool:
    """Whether a value given again is the one held (``3`` and ``3.0`` are; ``True`` is not ``1``)."""
    return type(value) is type(other) and value == other or (
        isinstance(value, float) and isinstance(other, int) and not isinstance(other, bool) and value == other)


def _rebuilt(values: dict, given: tuple, preset) -> Settings:
    """A pickled :class:`Settings` again (its values were checked when it was built)."""
    settings = object.__new__(Settings)
    settings._fill(values, given, preset)
    return settings


def settle(preset: str | None = None, **keywords) -> Settings:
    """The conventions of one call: ``Settings(preset, **keywords)`` (each keyword given (not None), else the
    ``preset``'s value (:mod:`metrics_core.metrics.presets`), else the default; validated, with "did you mean"
    for an unknown keyword).

    ``settle(preset="rectools", ap_norm="k")`` -> ``Settings`` (``.ap_norm``, ``["ties"]``, ``dict(s)``).
    """
    return Settings(preset, **keywords)


def settings_of(settings: Settings | None, preset: str | None, keywords: dict) -> Settings:
    """The settings of one call of an entry point that takes both ``settings=`` and convention keywords
    (:func:`metrics_core.evaluate`, :func:`metrics_core.metric_curve`): ``settings`` with the keywords given
    over it (only those checked), or, without ``settings``, ``Settings(preset, **keywords)``."""
    if settings is None:
        return Settings(preset, **keywords)
    if not isinstance(settings, Settings):
        raise MetricsError(f"settings must be a metrics_core Settings (mc.Settings(gain=..., ...)), got "
                           f"{type(settings).__name__}; or pass the conventions as keywords")
    if preset is not None and preset != settings.preset:
        raise MetricsError(f"preset={str(preset)[:40]!r} differs from the settings' preset "
                           f"{settings.preset!r}; pass the preset in Settings(preset=...) only")
    return settings.replace(**keywords)


def takes_conventions(func):
    """Give ``func(..., **conventions)`` a signature listing every convention of :data:`CONVENTIONS`
    as a keyword (default None: the preset's value, else the convention's default) and a docstring
    section with each one's values and default, so ``help()`` and editors show them.
    A keyword that is neither a convention nor one of ``func``'s own is refused with one line
    suggesting the closest of both."""
    signature = inspect.signature(func)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    own = [p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL]

    @functools.wraps(func)
    def with_conventions(*args, **keywords):
        unknown = [name for name in keywords if name not in BY_NAME and name not in own]
        if unknown:
            raise _unknown(unknown, own)
        return func(*args, **keywords)

    with_conventions.__signature__ = signature.replace(
        parameters=params + [inspect.Parameter(c.name, inspect.Parameter.KEYWORD_ONLY, default=None)
                             for c in CONVENTIONS])
    with_conventions.__doc__ = (func.__doc__ or "").rstrip() + \
        "\n\n    Conventions (None: the preset's value, else the default):\n\n" + \
        "\n".join(f"    - ``{c.name}``: {_values(c)}; {_plain(c.help)}" for c in CONVENTIONS) + "\n"
    return with_conventions


def _values(c: Convention) -> str:
    """The values of a convention in words, default first: ``linear (default), exponential, binary``."""
    if c.is_number:
        return f"default {c.default:g}, {c.allowed}"
    return ", ".join(f"{v} (default)" if v == c.default else v for v in c.choices)


def _plain(text: str) -> str:
    return text.replace("`", "")


def add_arguments(parser) -> None:
    """One argparse option per convention (``--ap-norm``, ``--gauc-weight``, ...).

    Options default to None (not given): :func:`from_args` fills in a preset's
    value or the convention's default, so ``--preset`` works with every option.
    """
    for c in CONVENTIONS:
        default_text = f"default {c.default:g}" if c.is_number else f"default {c.default}"
        help_text = f"{_plain(c.help)} ({default_text}, or the preset's)".replace("%", "%%")
        if c.is_number:
            parser.add_argument(c.option, dest=c.name, type=float, default=None, metavar=c.metavar, help=help_text)
        else:
            parser.add_argument(c.option, dest=c.name, choices=c.choices, default=None, help=help_text)


def from_args(args) -> Settings:
    """The conventions of the command line: the options given, over ``--preset``'s values, over the
    defaults (:func:`settle`); an option's bad value is named by the option."""
    given = {c.name: getattr(args, c.name) for c in CONVENTIONS if getattr(args, c.name, None) is not None}
    checked = {}
    for name, value in given.items():  # checked once each, naming the option
        try:
            checked[name] = check(name, value)
        except MetricsError as e:
            raise MetricsError(f"{BY_NAME[name].option}: {e}") from None
    return Settings.checked(checked, given, getattr(args, "preset", None))


def widget_specs() -> list[dict]:
    """What a user interface needs to draw one control per convention.

    Each dict: ``name`` (the evaluate keyword), ``label``, ``widget``
    (``"select"`` for a choice, ``"number"`` for a number), ``options`` (the
    choices, default first; empty for a number), ``default``, ``help`` (plain
    text) and ``applies_to``.
    """
    return [
        {"name": c.name, "label": c.label, "widget": "number" if c.is_number else "select",
         "options": list(c.choices), "default": c.default, "help": _plain(c.help), "applies_to": c.applies_text}
        for c in CONVENTIONS
    ]


def markdown_table() -> str:
    """The conventions table of docs/conventions-and-presets.md."""
    lines = ["| keyword | option | values (default first) | applies to | meaning |", "| --- | --- | --- | --- | --- |"]
    for c in CONVENTIONS:
        values = f"`{c.default:g}` ({c.allowed})" if c.is_number else ", ".join(f"`{v}`" for v in c.choices)
        lines.append(f"| `{c.name}` | `{c.option}` | {values} | {c.applies_text} | {c.help.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


def spark_table() -> str:
    """The conventions the Spark engine takes at their default only, with why (:meth:`Convention.spark_refusal`):
    the table of docs/spark.md."""
    lines = ["| convention | why the Spark engine takes only its default |", "| --- | --- |"]
    lines += [f"| `{c.name}` | {c.spark_refusal()} |" for c in CONVENTIONS if c.spark_refusal()]
    return "\n".join(lines)


def presets():
    """Every preset (:mod:`metrics_core.metrics.presets`), one row each: ``preset``, ``library``, one column per
    convention (the preset's value, else the default), ``metric_names`` (library name -> ours), ``notes``
    (known bugs; the preset computes the documented definition), ``checked``.

    Parameters
    ----------
    None.

    Examples
    --------
    >>> import metrics_core as mc
    >>> mc.presets().loc[["trec_eval", "rectools"], ["ties", "gain", "ideal"]]
                ties    gain  ideal
    preset
    trec_eval   trec  linear  judged
    rectools   input  binary       k
    """
    rows = []
    for p in PRESETS:
        row = {"preset": p.name, "library": p.library}
        row.update({c.name: p.settings.get(c.name, c.default) for c in CONVENTIONS})
        row["metric_names"] = ", ".join(
            f"{k} -> {v}" + "".join(f" ({c}={x})" for c, x in p.name_settings.get(k, {}).items())
            for k, v in p.names.items())
        row["notes"] = " ".join(p.notes)
        row["checked"] = p.checked
        rows.append(row)
    return pd.DataFrame(rows).set_index("preset")
