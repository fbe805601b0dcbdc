"""The registry is the one place that names metrics for the dashboard, the report's defaults and the
kernel warm-up: their code types no metric name or alias as a string (``"ndcg"``, ``"P@5"``,
``f"map@{k}"``); they read ``Metric.sections`` through ``metrics_core.metrics.registry``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from metrics_core.metrics import registry

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*(ROOT / "dashboard").rglob("*.py"), ROOT / "metrics_core" / "commands" / "report.py",
                ROOT / "metrics_core" / "warmup.py"])

#: Literals that spell a metric's name or alias but are not the metric, with the reason.
ALLOWED = {
    ("dashboard/tables.py", "hit"): "a ranked row's label (hit or miss at the relevance threshold), "
                                    "not the hit_rate metric",
    ("dashboard/triage.py", "judged"): "a ranked row's column (the item has a judgment), not the judged@k metric",
}

_WHOLE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_\-]*)\s*(?:@\s*(?:[0-9]+|[kK]))?\s*$")
_BEFORE_CUTOFF = re.compile(r"([A-Za-z][A-Za-z0-9_\-]*)\s*@\s*$")  # "ndcg@" before {k} in an f-string


def metric_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, text)`` of each string that names a metric: a whole string that is a metric name or
    alias, alone or with ``@k`` (any case), and an f-string part ``name@`` followed by a value."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _WHOLE.match(node.value)
            if m and registry.canonical(m.group(1)) is not None:
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            for part, after in zip(node.values, node.values[1:]):
                if isinstance(part, ast.Constant) and isinstance(after, ast.FormattedValue):
                    m = _BEFORE_CUTOFF.search(part.value)
                    if m and registry.canonical(m.group(1)) is not None:
                        found.append((node.lineno, m.group(0)))
    return sorted(found)


def _found(path: Path) -> list[tuple[int, str]]:
    return metric_literals(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))


def test_the_check_sees_every_form_of_a_typed_metric():
    source = ('A = ("ndcg", "NDCG@10", "P@5", "ap", "hit_rate@k", " map ")\n'
              'b = f"recall@{k}"\nc = f"{x} ils@{k} and more"\n'
              'd = ("model", "ndcg of the model", "ndcg@10 and map", f"{k}@ndcg", "user_id", "notametric@5")\n')
    assert metric_literals(ast.parse(source)) == sorted([
        (1, "ndcg"), (1, "NDCG@10"), (1, "P@5"), (1, "ap"), (1, "hit_rate@k"), (1, " map "),
        (2, "recall@"), (3, "ils@")])


def test_the_files_are_all_found():
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"dashboard/metric_lists.py", "dashboard/views/overview.py", "metrics_core/warmup.py",
            "metrics_core/commands/report.py"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_metric_is_typed_as_a_string(path):
    rel = path.relative_to(ROOT).as_posix()
    typed = [(line, text) for line, text in _found(path) if (rel, text) not in ALLOWED]
    assert not typed, (f"{rel} names metrics {typed}: read them from metrics_core.metrics.registry "
                       "(a Metric's sections), or add the literal to ALLOWED with the reason")


@pytest.mark.parametrize("entry", sorted(ALLOWED), ids=lambda e: f"{e[0]}:{e[1]}")
def test_every_allowed_literal_is_still_there(entry):
    rel, text = entry
    assert text in {t for _, t in _found(ROOT / rel)}, f"{rel} no longer holds {text!r}: remove it from ALLOWED"


# ------------------------------------------------------------------ what the sections promise

def test_every_section_is_used_and_every_metric_is_shown_somewhere():
    used = {s for m in registry.METRICS for s in m.sections}
    assert used == set(registry.SECTIONS)
    assert set(registry.KIND_SECTIONS) == set(registry.KINDS)


def test_an_unknown_section_is_refused():
    with pytest.raises(ValueError, match="unknown section"):
        registry.Metric("x", "scored", registry.HIGHER, "f", "m", sections=("overveiw",))
    with pytest.raises(registry.MetricsError, match="unknown metric section"):
        registry.metrics_in("overveiw")


def test_a_metric_without_sections_of_its_own_gets_its_kinds():
    for kind in registry.KINDS:
        metric = registry.Metric("x", kind, registry.HIGHER, "f", "m")
        assert metric.sections == registry.KIND_SECTIONS[kind]
    assert registry.Metric("x", "ranking", registry.HIGHER, "f", "m", sections=()).sections == ()


def test_the_dashboard_offers_no_metric_that_needs_a_history_table():
    # the dashboard takes no user history upload: such a metric could never be computed there
    shown = {m.name for m in registry.METRICS if m.sections}
    needing = {m.name for m in registry.METRICS if "history" in m.needs}
    assert needing and not shown & needing


def test_the_report_defaults_need_nothing_beyond_the_ranked_results():
    # the report runs on any run and ground truth: no probabilities, features or interactions
    from metrics_core.commands.report import DEFAULT_METRICS

    assert len(DEFAULT_METRICS) >= 8
    for label in DEFAULT_METRICS:
        assert registry.lookup(label).needs == ("relevance",), label


def _single_metric_sections() -> set[str]:
    """The sections the pages read with ``metric_lists.one("...")``."""
    sections = set()
    for path in (ROOT / "dashboard").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "one"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "metric_lists"):
                sections.add(node.args[0].value)
    return sections


def test_a_section_a_page_shows_as_one_value_holds_one_metric():
    sections = _single_metric_sections()
    assert {"roc", "pr_curve", "calibration", "triage"} <= sections
    for section in sections:
        assert len(registry.metrics_in(section)) == 1, section


def test_the_single_metric_sections_name_the_values_their_places_show():
    # explicit expectations: the ROC curve's area, the PR curve's average precision, calibration's
    # predicted / observed ratio, and the triage's hit in the top K
    from dashboard import metric_lists

    assert {s: metric_lists.one(s) for s in ("roc", "pr_curve", "calibration", "triage")} == {
        "roc": registry.canonical("roc_auc"), "pr_curve": registry.canonical("average_precision"),
        "calibration": registry.canonical("copc"), "triage": registry.canonical("success")}
