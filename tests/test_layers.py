"""The package's folders are its layers, and every import runs downwards: a module imports only modules
of its own layer or of the layers below it (imports inside functions included), and no two modules
import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "metrics_core"

#: the layers, from the ground up: a module's layer is that of the longest prefix of its name listed here
LAYERS: tuple[tuple[str, ...], ...] = (
    # ground: no metrics_core import above it
    ("errors", "version", "launch", "terminal", "formats", "colors", "units", "kernels"),
    # reading, coding and laying out the data; the analysis store
    ("frames", "encode", "grouping", "progress", "per_user", "naming", "diagnostics", "io", "store", "layout"),
    # what is measured: registry, conventions, presets, each metric family
    ("metrics",),
    # the evaluation and what runs it on other inputs
    ("evaluation", "single", "fusion"),
    # statistics over evaluations; off-policy estimates with their intervals
    ("analysis", "ope"),
    # the decision brief
    ("brief",),
    # what leaves the library
    ("outputs",),
    # entry points: the package's face, the command line, Spark, the warm-up, the documentation's tables
    ("__init__", "__main__", "cli", "commands", "spark", "warmup", "docs_tables"),
)


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts)


def layer_of(module: str) -> int:
    """The layer of ``metrics_core.<...>`` (ValueError for a module no layer names)."""
    rest = module.split(".")[1:] or ["__init__"]
    for depth in range(len(rest), 0, -1):
        prefix = ".".join(rest[:depth])
        for i, names in enumerate(LAYERS):
            if prefix in names:
                return i
    raise ValueError(f"metrics_core.{'.'.join(rest)} is in no layer: add it to LAYERS in {__file__}")


def imports(path: Path) -> set[str]:
    """The metrics_core modules (or packages) ``path`` imports, anywhere in the file."""
    module = _module(path)
    package = module.removesuffix(".__init__") if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                is_module = (PACKAGE.parent / Path(*candidate.split("."))).with_suffix(".py").exists() or \
                    (PACKAGE.parent / Path(*candidate.split(".")) / "__init__.py").exists()
                found.add(candidate if is_module else target)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {m for m in found if m == "metrics_core" or m.startswith("metrics_core.")}


FILES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_has_a_layer():
    for path in FILES:
        layer_of(_module(path).removesuffix(".__init__"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_imports_only_its_layer_and_below(path):
    own = layer_of(_module(path).removesuffix(".__init__"))
    upward = sorted(m for m in imports(path) if layer_of(m) > own)
    assert not upward, (f"metrics_core/{path.relative_to(PACKAGE)} (layer {own}: {LAYERS[own]}) imports "
                        f"{upward} from a layer above it")


def test_no_two_modules_import_each_other():
    graph = {_module(p).removesuffix(".__init__"): imports(p) for p in FILES}
    circles = sorted({tuple(sorted((a, b))) for a, deps in graph.items() for b in deps
                      if b != a and a in graph.get(b, ())})
    assert not circles, f"modules importing each other: {circles}"


def test_the_rule_sees_an_upward_import(tmp_path):
    """The check itself: an import of the outputs from the metrics layer is found, also inside a function."""
    fake = PACKAGE / "metrics" / "_upward_probe.py"
    source = "def f():\n    from ..outputs import report\n"
    tree_imports = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            tree_imports.add(node.module)
    assert tree_imports == {"outputs"}
    assert layer_of("metrics_core.outputs.report") > layer_of(_module(fake))
