"""The runnable examples of the public API's docstrings, run as doctests.

Every public name of ``metrics_core`` (``mc.__all__``) that is a function has an ``Examples``
section with at least one ``>>>`` line, and every example of the modules that define them runs
here and shows what it says it shows (``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``, so a wide table
such as ``mc.presets()`` may wrap). The example of :func:`metrics_core.log_mlflow` runs in
``tests/test_mlflow.py`` instead, beside the other MLflow tests: importing MLflow and creating its
SQLite store take tens of CPU seconds, far over this module's few seconds.
"""

from __future__ import annotations

import doctest
import inspect
import sys

import pytest

import metrics_core as mc

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: examples run by another test module (the reason is in this module's docstring)
ELSEWHERE = {"metrics_core.outputs.tracking.log_mlflow": "tests/test_mlflow.py"}


def public_functions() -> dict[str, object]:
    """``mc.__all__``'s functions, by public name."""
    return {name: getattr(mc, name) for name in mc.__all__
            if inspect.isfunction(getattr(mc, name)) or inspect.isbuiltin(getattr(mc, name))}


def public_modules() -> list[str]:
    """The package and every module defining a public name (the modules among the names included)."""
    names = {"metrics_core"}
    for name in mc.__all__:
        value = getattr(mc, name)
        names.add(value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", "metrics_core"))
    return sorted(n for n in names if n and n.startswith("metrics_core"))


def examples() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = []
    for module_name in public_modules():
        module = sys.modules[module_name]
        found += [t for t in finder.find(module, module_name) if t.examples and t.name not in ELSEWHERE]
    return sorted(found, key=lambda t: t.name)


EXAMPLES = examples()


def test_every_public_function_has_a_runnable_example():
    without = [name for name, fn in public_functions().items() if ">>>" not in (inspect.getdoc(fn) or "")]
    assert not without, f"public functions without an example: {without}"
    run_here = {t.name for t in EXAMPLES}
    for name, fn in public_functions().items():
        qualified = f"{fn.__module__}.{fn.__qualname__}"
        assert qualified in run_here or qualified in ELSEWHERE, f"mc.{name}'s example is not run ({qualified})"


@pytest.mark.parametrize("example", EXAMPLES, ids=[t.name for t in EXAMPLES])
def test_docstring_example(example: doctest.DocTest):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    runner.run(example, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.attempted == len(example.examples)
    assert result.failed == 0, "".join(report)
