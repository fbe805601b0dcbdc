"""How the suite's tests are grouped on pytest-xdist workers (``tests/_xdist_groups.py``): a module runs
whole on one worker, a Spark module as one group per master, a spread module anywhere."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import _xdist_groups as groups
from _spark_cluster import CLUSTER, LOCAL


def item(module: str, **params):
    callspec = SimpleNamespace(params=params) if params else None
    return SimpleNamespace(path=Path("tests") / module, callspec=callspec)


def test_a_module_is_one_group():
    assert groups.xdist_group_of(item("test_store.py")) == "test_store.py"
    assert groups.xdist_group_of(item("test_store.py", backend="postgresql")) == "test_store.py"


def test_a_spark_module_is_one_group_per_master():
    local = groups.xdist_group_of(item("test_spark.py", spark=LOCAL, conv=1))
    cluster = groups.xdist_group_of(item("test_spark.py", spark=CLUSTER, conv=1))
    assert local != cluster
    assert local == groups.xdist_group_of(item("test_spark.py", spark=LOCAL, conv=2))
    assert local.startswith("test_spark.py") and cluster.startswith("test_spark.py")
    assert groups.xdist_group_of(item("test_spark_ship.py", spark=LOCAL)) != local


def test_a_spread_module_has_no_group():
    for module in groups.SPREAD_MODULES:
        assert groups.xdist_group_of(item(module)) is None
