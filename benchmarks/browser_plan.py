"""What the browser benchmark does in one round (``benchmarks/dashboard_browser.py``).

Two plans: :func:`path_steps` (the default, ``--plan path``) is the reviewer's path through
a comparison, Compare first on a fresh server, every control of it, each user attribute in
turn, the users counted, Failures opened from a regression row, the Brief, Distributions,
Curves and Explain, then K, gain, ties and a library preset; :func:`round_steps`
(``--plan full``) opens every page twice, then changes each page's controls to a new value
and back.

A step names its action (the row of the results table), the page it runs on, the
value it sets, how to reach the trigger (:class:`benchmarks.browser_actions.Driver`
methods, found by widget key as the pages in ``dashboard/views`` define them) and
what answers it. The new values differ from round to round (K, gain, ties), so a
later round is not only a replay of cached results; the way back to the defaults is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from benchmarks.browser_actions import PLOT, TABLE, Driver, Ready

PRESET_NEW = ("trec_eval", "ranx")
PAGE_ORDER = ["Data", "Curves", "Distributions", "Failures", "Compare", "Explain", "Share", "Overview"]
K_DEFAULT = 10
K_NEW = (20, 5, 50, 30, 15, 40)
GAIN_NEW = ("exponential", "binary")
TIES_NEW = ("trec", "input")


@dataclass
class Step:
    action: str
    page: str
    value: str
    prepare: Callable[[Driver], Callable[[], None]]
    ready: Ready | None = None  # default: the page's own answer
    needed: Callable[[Driver], bool] | None = None  # the step runs only when this says so

    def answer(self) -> Ready:
        return self.ready or Ready.page(self.page)


def _open(title: str) -> Step:
    def prepare(d: Driver):
        return d.nav(title).click
    return Step(f"open {title}", title, title, prepare)


def _sidebar(page: str, round_: int, slot: int, ready: Ready | None = None) -> list[Step]:
    """K, gain and ties changed on ``page``, each to a new value and back to the default."""
    k = K_NEW[(3 * round_ + slot) % len(K_NEW)]
    gain, ties = GAIN_NEW[round_ % 2], TIES_NEW[round_ % 2]
    steps = []
    for value in (k, K_DEFAULT):
        steps.append(Step(f"{page}: K", page, str(value), lambda d, v=value: d.number("k", v), ready))
    for value in (gain, "linear"):
        steps.append(Step(f"{page}: gain", page, value, lambda d, v=value: d.select("gain", v), ready))
    for value in (ties, "average"):
        steps.append(Step(f"{page}: ties", page, value, lambda d, v=value: d.select("ties", v), ready))
    return steps


def _pair(action: str, page: str, values: list[tuple[str, Callable]], ready: list[Ready | None] | None = None):
    ready = ready or [None] * len(values)
    return [Step(action, page, value, prepare, r) for (value, prepare), r in zip(values, ready)]


def _compare_choices(page: str, names: list[str], metric_step: str) -> list:
    """Compare's main choices, each changed and changed back: the baseline, a challenger removed and
    added back, a per-user metric added and removed (steps named ``metric_step``), each test in turn."""
    return (_pair("Compare: baseline", page, [(names[1], lambda d: d.select("compare_baseline", names[1])),
                                              (names[0], lambda d: d.select("compare_baseline", names[0]))])
            + _pair("Compare: challengers", page, [
                ("remove the last", lambda d: d.multiselect_remove_last("compare_challengers")),
                ("add it back", lambda d: d.multiselect_first_option("compare_challengers"))])
            + _pair(metric_step, page, [
                ("add map@10", lambda d: d.multiselect_add("compare_metrics", "map@10")),
                ("remove map@10", lambda d: d.multiselect_remove("compare_metrics", "map@10"))])
            + _pair("Compare: test", page, [
                (label, lambda d, v=label: d.select("compare_test", v))
                for label in ("Wilcoxon signed-rank", "Fisher randomization", "paired t-test")]))


def _overview(round_: int) -> list[Step]:
    steps = _sidebar("Overview", round_, 0)
    extras = [("bootstrap CIs", "overview_ci_on", Ready("Overview", "Ranking metrics", PLOT)),
              ("beyond-accuracy", "overview_diversity", Ready("Overview", "Beyond accuracy", TABLE)),
              ("metrics against K", "overview_curves_on", Ready("Overview", "Metrics against K", PLOT))]
    for name, key, shown in extras:
        steps += _pair(f"Overview: {name}", "Overview",
                       [("on", lambda d, k=key: d.toggle(k, True)), ("off", lambda d, k=key: d.toggle(k, False))],
                       [shown, None])
    return steps


def _distributions(round_: int) -> list[Step]:
    return _sidebar("Distributions", round_, 2) + _pair("Distributions: metric", "Distributions", [
        ("map@10", lambda d: d.select("dist_metric", "map@10")),
        ("ndcg@10", lambda d: d.select("dist_metric", "ndcg@10"))])


def _compare(round_: int, names: list[str]) -> list[Step]:
    page = "Compare"
    segment = Ready(page, "By segment", TABLE)
    # A new K drops the chosen metric (its label changes, ndcg@10 -> ndcg@5), so the page may answer
    # with "Pick at least one challenger and one metric." instead of a verdict; the metric is then
    # picked again (a step that is skipped when the choice survives).
    repick = Step("Compare: metric picked again after K", page, "add ndcg@10",
                  lambda d: d.multiselect_add("compare_metrics", "ndcg@10"),
                  needed=lambda d: not d.shows(Ready.page(page)))
    return (_sidebar(page, round_, 1, Ready(page))[:2] + [repick] + _sidebar(page, round_, 1)[2:]
            + _compare_choices(page, names, "Compare: metrics")
            + _pair("Compare: correction", page, [
                ("Benjamini-Hochberg (FDR)", lambda d: d.select("compare_correction", "Benjamini-Hochberg (FDR)")),
                ("Holm-Bonferroni", lambda d: d.select("compare_correction", "Holm-Bonferroni"))])
            + _pair("Compare: alpha", page, [("0.01", lambda d: d.slider_key("compare_alpha", "ArrowLeft")),
                                             ("0.05", lambda d: d.slider_key("compare_alpha", "ArrowRight"))])
            + _pair("Compare: users counted", page, [
                ("served", lambda d: d.select("users", "served")),
                ("all", lambda d: d.select("users", "all"))])
            + _pair("Compare: segment view", page, [
                ("activity", lambda d: d.select("compare_segment", "activity")),
                ("segment", lambda d: d.select("compare_segment", "segment"))], [segment, segment]))


def _failures(names: list[str]) -> list[Step]:
    page = "Failures"
    user = Ready(page, "User ", TABLE)
    return (_pair("Failures: model", page, [(names[1], lambda d: d.select("failures_model", names[1])),
                                            (names[0], lambda d: d.select("failures_model", names[0]))])
            + _pair("Failures: metric", page, [("map@10", lambda d: d.select("failures_metric", "map@10")),
                                               ("ndcg@10", lambda d: d.select("failures_metric", "ndcg@10"))])
            + _pair("Failures: group", page, [
                ("no hit in the top K", lambda d: d.select("failures_group", "no hit in the top K")),
                ("all", lambda d: d.select("failures_group", "all"))])
            + _pair("Failures: select a user", page, [("row 1", lambda d: d.table_row("failures_worst", 0)),
                                                      ("row 2", lambda d: d.table_row("failures_worst", 1))],
                    [user, user]))


def round_steps(round_: int, names: list[str]) -> list[Step]:
    """Every step of one round, in order, for models ``names`` (at least two)."""
    steps = [_open(title) for _ in range(2) for title in PAGE_ORDER]
    steps += _overview(round_)
    steps += _distributions(round_)
    steps += _compare(round_, names)
    steps += _failures(names)
    steps += _pair("Curves: threshold", "Curves", [("one step down", lambda d: d.slider_key("curves_threshold", "ArrowLeft")),
                                                   ("one step up", lambda d: d.slider_key("curves_threshold", "ArrowRight"))])
    steps += _pair("Explain: metric", "Explain", [("map@10", lambda d: d.select("explain_metric", "map@10")),
                                                  ("ndcg@10", lambda d: d.select("explain_metric", "ndcg@10"))])
    report = Ready("Share", "HTML report", ".st-key-share_report_download")
    steps += _pair("Share: build report", "Share",
                   [("build", lambda d: d.key("share_build_report", "button").click)] * 2, [report, report])
    return steps


def _repick(page: str) -> Step:
    """A new K (or a preset's) drops Compare's chosen metric when its label changes (ndcg@10 ->
    ndcg@5): the page then asks for a metric and it is picked again (skipped when it survived)."""
    return Step("Compare: metric picked again after K", page, "add ndcg@10",
                lambda d: d.multiselect_add("compare_metrics", "ndcg@10"),
                needed=lambda d: not d.shows(Ready.page(page)))


def path_steps(round_: int, names: list[str], attributes: list[str]) -> list[Step]:
    """The reviewer's path for models ``names`` (at least two) and user-attribute columns
    ``attributes``, in order; every step is one click or key press timed to its answer."""
    page = "Compare"
    segment = Ready(page, "By segment", TABLE)
    failures = Ready.page("Failures")
    k = K_NEW[round_ % len(K_NEW)]
    gain, ties, preset = GAIN_NEW[round_ % 2], TIES_NEW[round_ % 2], PRESET_NEW[round_ % 2]
    # the attribute shown first is the first column; each other one in turn, then back to it
    order = [*attributes[1:], *attributes[:1]] if len(attributes) > 1 else []

    def preset_pick(value: str):
        def prepare(d: Driver):
            d.open_expander("Conventions")
            return d.select("preset", value)
        return prepare

    return ([_open(page)]
            + _compare_choices(page, names, "Compare: per-user metric")
            + _pair("Compare: segment attribute", page, [
                (attr, lambda d, v=attr: d.select("compare_segment", v)) for attr in order], [segment] * len(order))
            + _pair("Compare: users counted", page, [("served", lambda d: d.select("users", "served")),
                                                      ("all", lambda d: d.select("users", "all"))])
            + [Step("Compare: open Failures from a regression row", page, "row 1",
                    lambda d: d.table_row("compare_regressions", 0), failures)]
            + [_open(title) for title in ("Brief", "Distributions", "Curves", "Explain", page)]
            + [Step("Compare: K", page, str(k), lambda d: d.number("k", k), Ready(page)), _repick(page),
               Step("Compare: K", page, str(K_DEFAULT), lambda d: d.number("k", K_DEFAULT), Ready(page)),
               _repick(page)]
            + _pair("Compare: gain", page, [(v, lambda d, v=v: d.select("gain", v)) for v in (gain, "linear")])
            + _pair("Compare: ties", page, [(v, lambda d, v=v: d.select("ties", v)) for v in (ties, "average")])
            + [Step("Compare: preset", page, preset, preset_pick(preset), Ready(page)), _repick(page),
               Step("Compare: preset", page, "none", preset_pick("none"), Ready(page)), _repick(page)])
