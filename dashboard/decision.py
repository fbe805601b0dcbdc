"""The analysis' decision: Compare's baseline, challengers, primary metrics, test, correction, family
of segment tests and significance level, with the sidebar's users counted, as one :class:`metrics_core.brief.build.Decision`.

Compare draws these choices; the Brief page and the Share page's report read them here (from
the session, the URL or the saved view), so every place tells the same decision."""

from __future__ import annotations

from metrics_core.brief.build import Decision
from metrics_core.outputs.publish import ALPHAS as _ALPHAS
from metrics_core.analysis.segment_compare import DEFAULT_FAMILY, FAMILIES  # noqa: F401 - Compare offers these
from metrics_core.analysis.stats import CORRECTIONS, TESTS  # noqa: F401 - Compare offers these

from . import metric_lists, url
from .controls import controls, unit, users

#: The significance levels offered (metrics-core publish accepts the same).
ALPHAS = list(_ALPHAS)


def current(names: list[str]) -> Decision:
    """The decision over the models ``names`` (in the analysis' order)."""
    options = metric_lists.labels(metric_lists.PER_USER, controls()["k"])
    baseline = url.remembered("compare_baseline", names[0], options=names)
    others = [n for n in names if n != baseline]
    return Decision(
        baseline=baseline,
        challengers=tuple(url.remembered("compare_challengers", others, kind=list, options=others)),
        metrics=tuple(url.remembered("compare_metrics", options[:1], kind=list, options=options)),
        users=users(),
        test=url.remembered("compare_test", TESTS[0], options=TESTS),
        correction=url.remembered("compare_correction", CORRECTIONS[0], options=CORRECTIONS),
        alpha=url.remembered("compare_alpha", 0.05, kind=float, options=ALPHAS),
        family=url.remembered("compare_family", DEFAULT_FAMILY, options=list(FAMILIES)),
        unit=unit(),
    )
