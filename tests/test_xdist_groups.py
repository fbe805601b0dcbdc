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


def test_the_modules_calling_ranx_share_one_group():
    tests = Path(__file__).parent
    calling = {path.name for path in tests.rglob("test_*.py") if path.name != Path(__file__).name
               and any(words in path.read_text(encoding="utf-8")
                      for words in ("from ranx", "import ranx", "from test_presets_matrix import"))}
    assert "test_fusion.py" in calling and "test_explain_matrix.py" in calling  # the search finds them
    assert calling == groups.REFERENCE_LIBRARY_MODULES
    assert {groups.xdist_group_of(item(module)) for module in calling} == {groups.REFERENCE_LIBRARY_GROUP}
    assert groups.xdist_group_of(item("test_store.py")) != groups.REFERENCE_LIBRARY_GROUP


def test_a_spread_module_has_no_group():
    for module in groups.SPREAD_MODULES:
        assert groups.xdist_group_of(item(module)) is None


def test_spark_tests_go_first_and_the_rest_keep_their_order():
    def marked(name: str, spark: bool):
        marker = object() if spark else None
        return SimpleNamespace(name=name, get_closest_marker=lambda wanted: marker if wanted == "spark" else None)

    items = [marked("browser_a", False), marked("store", False), marked("spark_1", True), marked("stats", False),
             marked("spark_2", True)]
    assert [i.name for i in groups.longest_first(items)] == ["spark_1", "spark_2", "browser_a", "store", "stats"]
