"""The pages talk to the dashboard's layers only: ``dashboard/app.py`` and ``dashboard/views/*.py``
import no ``metrics_core`` module, and ``dashboard/state.py`` re-exports exactly names the pages use."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "dashboard"
PAGES = sorted([DASHBOARD / "app.py", *(DASHBOARD / "views").glob("*.py")])


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_metrics_core(module: str) -> bool:
    return module == "metrics_core" or module.startswith("metrics_core.")


def metrics_core_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a ``metrics_core`` module: ``import``, ``from ... import``
    and ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if _is_metrics_core(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_metrics_core(node.module or ""):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            name = node.args[0].value
            if called in ("import_module", "__import__") and isinstance(name, str) and _is_metrics_core(name):
                found.append((node.lineno, name))
    return found


def test_the_import_check_sees_every_form_of_import():
    source = ("import metrics_core as mc\nfrom metrics_core.io import X\nimport importlib\n"
              "importlib.import_module('metrics_core.analysis.stats')\nfrom dashboard import state\nimport metrics_corex\n")
    assert [line for line, _ in metrics_core_imports(ast.parse(source))] == [1, 2, 4]


def test_pages_are_all_found():
    names = {p.name for p in PAGES}
    assert {"app.py", "overview.py", "compare.py", "explain.py", "brief.py", "data.py"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_imports_no_metrics_core_module(page):
    found = metrics_core_imports(_tree(page))
    assert not found, (f"{page.relative_to(ROOT)} imports {found}: route it through dashboard/state.py or "
                       "a dashboard module")


def _state_exports() -> dict[str, ast.alias]:
    exports = {}
    for node in _tree(DASHBOARD / "state.py").body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            exports.update({(a.asname or a.name): a for a in node.names})
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign)):
            pytest.fail(f"dashboard/state.py line {node.lineno} defines something: it only re-exports")
    return exports


def _state_uses() -> dict[str, set[str]]:
    """Page file -> the names it reads from ``dashboard.state`` (``state.x`` or ``from dashboard.state import x``)."""
    uses = {}
    for page in PAGES:
        names = set()
        for node in ast.walk(_tree(page)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "state":
                names.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and node.module == "dashboard.state":
                names.update(a.name for a in node.names)
        uses[page.name] = names
    return uses


def test_state_exports_only_names_a_page_uses():
    exports = _state_exports()
    used = set().union(*_state_uses().values())
    assert exports, "dashboard/state.py re-exports nothing"
    unused = sorted(set(exports) - used)
    assert not unused, f"dashboard/state.py re-exports names no page uses: {unused}"
    private = sorted(n for n in exports if n.startswith("_"))
    assert not private, f"dashboard/state.py re-exports private names: {private}"
    aliased = sorted(f"{a.name} as {a.asname}" for a in exports.values() if a.asname)
    assert not aliased, f"dashboard/state.py renames what it re-exports: {aliased}"


def test_pages_read_from_state_only_what_it_exports():
    exports = set(_state_exports())
    for page, names in _state_uses().items():
        assert names <= exports, f"{page} reads {sorted(names - exports)} from dashboard.state"
