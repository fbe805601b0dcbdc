"""Fixtures and hooks for the metrics_core test suite.

Every file a test reads lives inside the repository: trec_eval's own fixtures are in
``tests/data/trec_eval/`` (see its README.md and LICENSE.md). When the environment
variable ``CI`` is set, a skipped test fails the run: CI must exercise every test.

The property tests (hypothesis) draw the same examples on every run: the ``fixed`` profile,
loaded below, seeds them from a hash of each test function (``derandomize``), so a failure
seen once is seen again on any machine with the same hypothesis release. The quick tier
(``scripts/test.py --quick``, see ``_quick_cases.py``) loads the ``quick`` profile instead: fewer
fixed examples. ``pytest --hypothesis-profile=explore`` draws new random
examples, more of them, to look for inputs the fixed ones miss.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import _deadlines as deadlines
import pytest
from hypothesis import settings as hypothesis_settings
from _spark_cluster import CLUSTER, LOCAL, module_session, use_test_jvm_options
from _trec import TREC_EVAL_DIR
from _quick_cases import QUICK, QUICK_EXAMPLES
from _xdist_groups import longest_first, make_scheduler

from metrics_core.spark._local_cluster import remove_private_spark_home, use_private_spark_home
from metrics_core.kernels.consistent_cache import use_everywhere

# The workers compile the reference libraries' numba functions (ranx's) side by side in one disk cache:
# numba's own saver can then leave one argument type's code under another's entry (ranx once scored
# queries against other queries' lists in one worker). Every numba cache of a test process saves and
# loads as the package's kernels do.
use_everywhere()

pytest_plugins = ["_ci_skips"]
# the kernel warm-up process the controller started, until the first test
KERNEL_WARMUP = pytest.StashKey[subprocess.Popen]()

# the examples of every property test: fixed (derived from the test), or random with --hypothesis-profile=explore
hypothesis_settings.register_profile("fixed", derandomize=True, database=None, max_examples=50, deadline=None)
hypothesis_settings.register_profile("explore", derandomize=False, max_examples=500, deadline=None)
# the quick tier (scripts/test.py --quick): fewer fixed examples, the same ones on every run
hypothesis_settings.register_profile("quick", derandomize=True, database=None, max_examples=QUICK_EXAMPLES,
                                     deadline=None)
hypothesis_settings.load_profile("quick" if QUICK else "fixed")


@pytest.fixture(scope="session")
def trec_dir() -> Path:
    """trec_eval's own test fixtures (qrels.test, results.test, out.test.aq, ...)."""
    return TREC_EVAL_DIR


def pytest_configure(config):
    """Spark's local-cluster executors get their working directories in a temporary Spark home
    (set before any test starts a JVM; see ``metrics_core/spark/_local_cluster.py``), and every JVM
    starts with the options of ``_spark_cluster.TEST_JVM_OPTIONS``."""
    use_private_spark_home()
    use_test_jvm_options()


def pytest_unconfigure(config):
    remove_private_spark_home()


def pytest_sessionstart(session):
    """Compile every kernel (or find them all in numba's disk cache) before any test runs, so the
    dashboard server started by the browser tests finds them cached instead of compiling them
    inside its first page load. The controller starts ``python -m metrics_core warm --jobs 2`` (the
    README's install step: the two variants on the two cores) and waits for it in :func:`pytest_runtestloop`: under
    pytest-xdist the workers start and collect the tests meanwhile, then load the kernels from
    the cache when they need them."""
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:  # collecting runs no kernel
        return
    from metrics_core.kernels import cache_stamp

    if not cache_stamp.is_current():
        session.config.stash[KERNEL_WARMUP] = subprocess.Popen(
            [sys.executable, "-m", "metrics_core", "warm", "--jobs", "2", "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """Before the first test: wait for the kernel warm-up started in :func:`pytest_sessionstart`;
    the run stops with its last line when it failed."""
    warming = session.config.stash.get(KERNEL_WARMUP, None)
    if warming is None:
        return
    del session.config.stash[KERNEL_WARMUP]
    try:
        _, err = warming.communicate(timeout=deadlines.SUBPROCESS)
    except subprocess.TimeoutExpired:
        warming.kill()
        warming.communicate()
        pytest.exit(f"python -m metrics_core warm did not finish within {deadlines.SUBPROCESS:.0f} s", returncode=3)
    if warming.returncode != 0:
        lines = [line for line in err.splitlines() if line.strip()] or [f"exit status {warming.returncode}"]
        pytest.exit(f"python -m metrics_core warm failed: {lines[-1]}", returncode=3)


def pytest_collection_modifyitems(config, items):
    for item in items:  # a test taking the Spark session is a Spark test (``-m "not spark"`` leaves it out)
        if "spark" in getattr(item, "fixturenames", ()) and item.get_closest_marker("spark") is None:
            item.add_marker(pytest.mark.spark)
    items[:] = longest_first(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` hands out the modules of ``_xdist_groups.TOGETHER`` as one unit."""
    return make_scheduler(config, log)


@pytest.fixture
def private_store(monkeypatch, tmp_path):
    """A dashboard test's uploads are saved as working copies: keep them in a temporary store."""
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


@pytest.fixture(scope="module", params=[LOCAL, CLUSTER])
def spark(request):
    """One SparkSession per test module and master: ``local[2]``, then ``local-cluster[2,1,1024]``
    (metrics_core shipped to its executors); every test taking it runs on both."""
    pytest.importorskip("pyspark", reason="pip install 'metrics-core[spark]'")
    session = module_session(request.param, "metrics-core-tests")
    yield session
    session.stop()
