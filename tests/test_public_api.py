"""The public API of ``import metrics_core as mc``: no public name hides a module, former names warn and
keep working."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

import metrics_core as mc

PACKAGE = Path(mc.__file__).resolve().parent


def _is_submodule(name: str) -> bool:
    """Whether the package's folder holds a module or package ``name``."""
    return (PACKAGE / f"{name}.py").exists() or (PACKAGE / name / "__init__.py").exists()


def test_no_public_name_hides_a_module():
    """``mc.X`` is never a function standing where ``import metrics_core.X`` would give a module."""
    for name in mc.__all__:
        if _is_submodule(name):
            assert getattr(mc, name) is importlib.import_module(f"metrics_core.{name}"), name
    evaluation = importlib.import_module("metrics_core.evaluation")
    assert mc.evaluate is evaluation.evaluate and callable(mc.evaluate)
    for module in ("evaluate", "compare", "explain", "publish", "presets", "intersection"):
        assert not _is_submodule(module), module


def test_the_single_list_average_precision_has_its_own_name():
    assert mc.average_precision_at_k([1, 0, 1, 0], n_relevant=3) == pytest.approx((1 + 2 / 3) / 3, abs=1e-15)
    with pytest.warns(DeprecationWarning, match="mc.average_precision_at_k.*pr_auc"):
        old = mc.average_precision
    assert old is mc.average_precision_at_k
    assert "average_precision" not in mc.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mc.average_precision_at_k([0, 1], k=1) == 0.0  # the new name warns nothing
    with pytest.raises(AttributeError, match="no attribute 'averageprecision'"):
        mc.averageprecision  # noqa: B018

