"""How the suite's tests are handed to pytest-xdist's workers (``scripts/test.py``, ``tests/_xdist_groups.py``):
a module at a time, the Spark modules first."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from types import SimpleNamespace

import _xdist_groups as groups

ROOT = Path(__file__).resolve().parents[1]


def test_a_module_runs_whole_on_one_worker():
    spec = importlib.util.spec_from_file_location("scripts_test", ROOT / "scripts" / "test.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.XDIST_ARGS == ("--dist", "loadfile")


def test_this_module_ran_on_one_worker_when_spread(request, tmp_path_factory):
    """Under pytest-xdist (the full suite), every test of this module ran on the worker running this one:
    each test of the module writes its worker's name, the last one reads them all."""
    workerinput = getattr(request.config, "workerinput", None)  # set only in a pytest-xdist worker
    worker = workerinput["workerid"] if workerinput else "main"
    # the run's own folder: the workers' temporary folders share a parent made for this run; a run
    # without workers (also one started inside a test, which inherits that worker's environment)
    # has its own temporary folder, whose parent is shared by every run of the machine
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if workerinput else base) / "xdist-groups-check"
    folder.mkdir(exist_ok=True)
    (folder / f"{worker}-{os.getpid()}").write_text(request.node.nodeid)
    workers = {path.name.split("-")[0] for path in folder.iterdir()}
    assert workers == {worker}, workers


def test_spark_tests_go_first_and_the_rest_keep_their_order():
    def marked(name: str, spark: bool):
        marker = object() if spark else None
        return SimpleNamespace(name=name, nodeid=f"tests/test_{name}.py::test_it",
                               get_closest_marker=lambda wanted: marker if wanted == "spark" else None)

    items = [marked("browser_a", False), marked("store", False), marked("spark_1", True), marked("stats", False),
             marked("spark_2", True), marked("fusion", False)]
    assert [i.name for i in groups.longest_first(items)] == ["spark_1", "spark_2", "fusion", "browser_a", "store",
                                                              "stats"]


def test_the_modules_calling_ranx_are_one_unit_of_work_and_the_others_one_each():
    """Every module importing ranx is in the ``ranx`` unit (one worker pays its per-process compile once),
    and the scheduler made for ``--dist loadfile`` splits the tests by that unit, the others by module."""
    importing = re.compile(r"^\s*(from|import) ranx\b", re.MULTILINE)
    calling = sorted(f"tests/{path.name}" for path in (ROOT / "tests").glob("test_*.py")
                     if importing.search(path.read_text()))
    assert "tests/test_fusion.py" in calling
    assert set(calling) <= set(groups.TOGETHER["ranx"]), calling
    scheduler = object.__new__(groups.GroupedFileScheduling)  # _split_scope reads nothing of the instance
    scopes = {scheduler._split_scope(f"{module}::test_x[a-b]") for module in groups.TOGETHER["ranx"]}
    assert scopes == {"together:ranx"}
    assert scheduler._split_scope("tests/test_layout.py::test_y") == "tests/test_layout.py"
    assert scheduler._split_scope("tests/test_store.py::Store::test_z") == "tests/test_store.py"
    options = {"dist": "loadfile"}
    config = SimpleNamespace(getoption=lambda name, default=None: options.get(name, default))
    assert groups.make_scheduler(SimpleNamespace(getoption=lambda name, default=None: default), None) is None
    options["dist"] = "load"
    assert groups.make_scheduler(config, None) is None


def test_this_module_ran_on_one_worker_at_the_end(request, tmp_path_factory):
    test_this_module_ran_on_one_worker_when_spread(request, tmp_path_factory)
