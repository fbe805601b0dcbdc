"""``mc.explain`` between every two presets on the awkward cases of tests/test_presets_matrix.py.

For each case, each library of the matrix computes its metrics on the case's data
(the matrix's own library functions); every ranking metric that two or more presets
map is then explained on that data. For every ordered pair of those presets the path's
start equals the first library's number and its end the second's (to 1e-9), the
steps' changes add up to the difference, and the value after the last step is the end.
"""

from __future__ import annotations

import itertools

import pytest

import metrics_core as mc
from metrics_core.analysis.explain import VARIANT
from metrics_core.metrics.presets import _library_parts, metric_name, metric_settings
from _quick_cases import chosen
from test_presets_matrix import CASES, LIBRARIES, TOL, UNSTABLE_SORT, make_case

#: the quick tier's cases (every preset is explained in each): tied scores (where Microsoft Recommenders
#: leaves the matrix), lists shorter than k, and unjudged scored rows
QUICK_CASES = ("short_lists", "ties", "unjudged")


def library_values(case: str) -> dict[str, dict[str, float]]:
    """row of ``mc.explain`` -> {our ranking metric label: the library's value}: the row is the preset for
    the library's name reported under ours, ``preset:name`` for a name fixing conventions of its own
    (Microsoft Recommenders' ``map``, beside its ``map_at_k``)."""
    run, qrels, inter = make_case(case)
    out = {}
    for preset, library in LIBRARIES.items():
        if preset in UNSTABLE_SORT and case == "ties":
            continue  # the library's order of tied scores is not defined (see the matrix)
        want, _ = library(run, qrels, inter)
        mine = {}
        for name, value in want.items():
            label = metric_name(name, preset)
            if mc.parse_metric(label).kind != "ranking":
                continue
            if metric_settings(name, preset):  # a name with conventions of its own: a row of its own
                library_name = _library_parts(name, preset)[0]
                out.setdefault(f"{preset}{VARIANT}{library_name}", {})[label] = value
                continue
            mine[label] = value
        out.setdefault(preset, {}).update(mine)
    return out


@pytest.mark.parametrize("case", chosen(CASES, QUICK_CASES))
def test_explain_paths_end_at_each_library(case):
    run, qrels, _ = make_case(case)
    ranked = mc.prepare(run, qrels)
    values = library_values(case)
    labels = sorted({label for mine in values.values() for label in mine})
    pairs_checked = 0
    for label in labels:
        having = [p for p in values if label in values[p]]
        if len(having) < 2:
            continue
        explanation = mc.explain(ranked, metric=label, presets=sorted({r.partition(VARIANT)[0] for r in having}))
        for preset in having:
            assert explanation.values.loc[preset, "value"] == pytest.approx(values[preset][label], abs=TOL), (
                case, label, preset)
        for source, target in itertools.permutations(having, 2):
            path = explanation.path(source, target)
            assert path.start == pytest.approx(values[source][label], abs=TOL), (case, label, source)
            assert path.end == pytest.approx(values[target][label], abs=TOL), (case, label, target)
            assert path.steps["change"].sum() == pytest.approx(path.end - path.start, abs=TOL)
            if len(path.steps):
                assert path.steps["value"].iloc[-1] == pytest.approx(path.end, abs=TOL)
            else:
                assert path.start == path.end
            pairs_checked += 1
    assert pairs_checked >= 20, (case, labels)  # the case compares many libraries, not a few
