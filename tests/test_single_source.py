"""Every metric is named in one place: metrics_core/metrics/registry.py.

A metric name or alias written as a string literal elsewhere in ``metrics_core/``
(a whole string ``"ndcg"``, or ``"ndcg@10"``, ``"ndcg@k"``, ``f"ndcg@{k}"``) is
code that dispatches on a metric's name instead of reading its registry entry.
Read with ``ast``: docstrings and longer text do not count, only whole strings
and f-strings. A literal that is legitimately not such dispatch is listed in
``ALLOWED`` with its reason, by file and enclosing definition (the function,
class or module-level name it sits in).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from metrics_core.metrics import registry

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "metrics_core"
NAMES = frozenset(registry.METRIC_NAMES) | frozenset(registry.ALIASES)
WITH_CUTOFF = re.compile(r"^([A-Za-z_0-9]+)@(?:[0-9]+|k|\{\})$")

#: (file, enclosing definition) -> why its metric-name literals are not dispatch on a name
ALLOWED: dict[tuple[str, str], str] = {
    ("metrics_core/__init__.py", "_PUBLIC"):
        "exported function names that happen to equal metric names (mc.hit_ratio)",
    ("metrics_core/__init__.py", "_DEPRECATED"):
        "the former name of mc.average_precision_at_k, deprecated because it equals a metric name",
    ("metrics_core/evaluation.py", "evaluate"): "the documented default of evaluate's metrics argument",
    ("metrics_core/analysis/explain.py", "explain"): "the documented default metric of explain",
    ("metrics_core/outputs/publish.py", "publish"): "the documented default primary metric of publish",
    ("metrics_core/commands/explain.py", "register"): "the command line's default --metric",
    ("metrics_core/commands/publish.py", "register"): "the command line's default --primary",
    ("metrics_core/commands/compare.py", "comparison_rows"): "a table column for a p-value, not a metric",
    ("metrics_core/commands/compare.py", "population_doc"): "help text: the word coverage for users' data",
    ("metrics_core/metrics/derived.py", "BY_FAMILY"):
        "the computation bound to each derived family the registry declares (test_registry checks both sides agree)",
    ("metrics_core/metrics/reductions.py", "BY_METRIC"):
        "the computation bound to each scored-row entry the registry declares (test_registry checks both sides agree)",
    ("metrics_core/metrics/diversity.py", "BY_METRIC"):
        "the computation bound to each diversity entry the registry declares (test_registry checks both sides agree)",
    ("metrics_core/metrics/conventions.py", "CONVENTIONS"):
        "applies_to: the metrics a convention changes, as data the registry resolves (entries_of)",
    ("metrics_core/metrics/curves.py", "pr_curve"): "column names of a precision-recall curve table",
    ("metrics_core/outputs/plot/figures.py", "pr"): "axis columns of a precision-recall curve figure",
    ("metrics_core/outputs/report.py", "_curve_figures"): "axis columns of a precision-recall curve figure",
    ("metrics_core/outputs/plot/__init__.py", "calibration"): "the metric shown in the calibration figure's title",
    ("metrics_core/outputs/plot/__init__.py", "pr"): "the metric shown in the precision-recall figure's title",
    ("metrics_core/outputs/plot/__init__.py", "roc"): "the metric shown in the ROC figure's title",
    ("metrics_core/spark/__init__.py", "evaluate_files"): "the documented default of the metrics argument (as mc.evaluate)",
    ("metrics_core/spark/_evaluate.py", "evaluate"): "the documented default of the metrics argument (as mc.evaluate)",
    ("metrics_core/spark/_files.py", "evaluate_files"): "the documented default of the metrics argument (as mc.evaluate)",
    ("metrics_core/spark/_bucket.py", "_diversity_parts"): "the kind of an output row (\"p\": an item's personalization part)",
    ("metrics_core/spark/_evaluate.py", "_item_total_requests"):
        "the kind of an output row (\"p\": an item's personalization part)",
    ("metrics_core/brief/record.py", "to_record"): "the brief's field of coverage lines (Brief.coverage), not the metric",
    ("metrics_core/brief/record.py", "from_record"): "the brief's field of coverage lines (Brief.coverage), not the metric",
    ("metrics_core/kernels/classification.py", "_log_loss_sum"): "a local variable name in numba code",
    ("metrics_core/kernels/ranking.py", "KERNEL_FAMILIES"):
        "the ranking kernel's own columns, compile-time constants of the numba kernels",
    ("metrics_core/metrics/presets.py", "PRESETS"): "each library's metric names mapped to ours (the library's vocabulary)",
    ("metrics_core/metrics/presets.py", "_TREC_NAMES"): "trec_eval's metric names mapped to ours (its vocabulary)",
    ("metrics_core/metrics/presets.py", "ALL_TREC"): "trec_eval's measure names of -m all_trec (its vocabulary)",
    ("metrics_core/metrics/presets.py", "_TREC"): "the convention value ideal=\"judged\", not the metric judged@k",
    ("metrics_core/metrics/kernel_settings.py", "IDEALS"): "the convention value ideal=\"judged\", not the metric judged@k",
    ("metrics_core/layout/ranked.py", "Ranked.user_list"): "a column saying whether an item is judged, not the metric",
    ("metrics_core/single.py", "_one_list"): "a column saying whether an item is judged, not the metric",
    ("metrics_core/metrics/sampled.py", "METRICS"):
        "the metrics whose single-target closed form the 1+N correction needs at every full rank",
    ("metrics_core/metrics/sampled.py", "full_metric"):
        "the single-target closed forms (one relevant item at full rank r), checked against mc.evaluate",
    ("metrics_core/single.py", "average_precision_at_k"): "a kernel column read by the single-list helper",
    ("metrics_core/single.py", "dcg_at_k"): "a kernel column read by the single-list helper",
    ("metrics_core/single.py", "ndcg_at_k"): "a kernel column read by the single-list helper",
    ("metrics_core/single.py", "precision_at_k"): "a kernel column read by the single-list helper",
    ("metrics_core/single.py", "recall_at_k"): "a kernel column read by the single-list helper",
    ("metrics_core/single.py", "reciprocal_rank"): "a kernel column read by the single-list helper",
}


def is_metric_name(text: str) -> bool:
    """A whole metric name or alias, or one with a cutoff (``@10``, ``@k``, an f-string's ``@{k}``)."""
    match = WITH_CUTOFF.match(text)
    return text in NAMES or bool(match and match.group(1) in NAMES)


def literals(source: str) -> list[tuple[str, str]]:
    """(enclosing definition, text) of every string constant and f-string (its pieces joined with ``{}``
    for each placeholder); the definition is the innermost function or class, or the module-level
    name assigned, dotted (``Class.method``), else ``<module>``."""
    found = []

    def visit(node, scope):
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
            elif isinstance(child, (ast.Assign, ast.AnnAssign)) and not scope:
                target = child.targets[0] if isinstance(child, ast.Assign) else child.target
                inner = getattr(target, "id", "")
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                found.append((scope or "<module>", child.value))
            elif isinstance(child, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in child.values)
                found.append((scope or "<module>", text))
            visit(child, inner)

    visit(ast.parse(source), "")
    return found


def hits() -> dict[tuple[str, str], set[str]]:
    """(file, enclosing definition) -> the metric names written there, over metrics_core/ but registry.py."""
    out: dict[tuple[str, str], set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "metrics_core/metrics/registry.py":
            continue
        for scope, text in literals(path.read_text(encoding="utf-8")):
            if is_metric_name(text):
                out.setdefault((rel, scope), set()).add(text)
    return out


def test_metric_names_are_written_only_in_the_registry():
    unexpected = {f"{path}:{scope}": sorted(names) for (path, scope), names in hits().items()
                  if (path, scope) not in ALLOWED}
    assert not unexpected, ("metric names written outside metrics_core/metrics/registry.py (read the registry entry "
                            f"instead, or allow the literal with its reason): {unexpected}")


def test_every_allowance_is_still_needed():
    found = hits()
    stale = [key for key in list(ALLOWED) if key not in found]
    assert not stale, f"allowed literals no longer there (remove them from the lists): {stale}"
    assert all(reason.strip() for reason in ALLOWED.values())


@pytest.mark.parametrize("code, found", [
    ('x = "ndcg"', True), ('x = "NDCG@10"', False), ('x = "map@10"', True), ('x = f"mrr@{k}"', True),
    ('x = "recall@k"', True), ('x = "the ndcg of a list"', False), ('"""ndcg"""', True),
    ('x = "hits"', False), ('x = f"{name}@{k}"', False), ('def f():\n    return s.name == "gauc"', True),
])
def test_the_scan_finds_whole_names_and_cutoff_forms(code, found):
    # an independent list of cases: whole strings and name@k forms count, text that contains a name does not
    assert any(is_metric_name(text) for _, text in literals(code)) == found
