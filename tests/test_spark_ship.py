"""Shipping metrics_core to Spark executors: the zip, and numba's cache for kernels imported from it.

The local-cluster tests of ``test_spark.py`` prove that executors run the shipped
zip; these check what the zip holds and that a process importing metrics_core
from it loads the compiled kernels it carries instead of compiling them.
"""

from __future__ import annotations

import _deadlines as deadlines
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import metrics_core as mc
from metrics_core.kernels import _zip_cache
from metrics_core.spark import package_zip, ship_package

PACKAGE = Path(mc.__file__).resolve().parent


def test_package_zip_holds_the_sources_and_compiled_kernels():
    path = package_zip()
    assert package_zip() == path  # same sources: the same zip, so Spark is not given a second one
    names = set(zipfile.ZipFile(path).namelist())
    sources = {f"metrics_core/{p.relative_to(PACKAGE).as_posix()}" for p in PACKAGE.rglob("*.py")
               if "__pycache__" not in p.parts}
    assert sources and sources <= names
    assert not [n for n in names if n.endswith(".pyc")]
    indexes = [n for n in names if n.endswith(".nbi")]
    assert indexes, "the test session compiled the kernels first (conftest), so their cache files exist"
    for index in indexes:
        assert index.split("/")[-2] == "__pycache__"
    assert [n for n in names if n.endswith(".nbc")]


def test_kernels_imported_from_the_zip_load_the_shipped_cache(tmp_path):
    """A fresh process with the zip first on its path imports metrics_core from it and loads every kernel
    the warmup uses from the cache the zip carries: numba reports loads and no compilation saved."""
    code = (
        "import sys; sys.path.insert(1, sys.argv[1])\n"
        "import metrics_core, metrics_core.warmup\n"
        "assert '.zip' in metrics_core.__file__, metrics_core.__file__\n"
        "metrics_core.warmup.warmup()\n"
        "print('file', metrics_core.__file__)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k != "PYTHONPATH"}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1")
    out = subprocess.run([sys.executable, "-c", code, package_zip()], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[-1] == f"file {package_zip()}/metrics_core/__init__.py"
    loaded = [x for x in lines if x.startswith("[cache] data loaded from")]
    saved = [x for x in lines if x.startswith("[cache] data saved to")]
    shipped_root = str(tmp_path / "cache" / "metrics_core-shipped")
    assert loaded and all(shipped_root in x for x in loaded)
    assert saved == []


def _fake_zip(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return str(path)


def test_seeding_never_pairs_an_existing_index_with_shipped_data(tmp_path, monkeypatch):
    monkeypatch.setattr(_zip_cache.numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    cache = "metrics_core/kernels/__pycache__/"
    zip_path = _fake_zip(tmp_path / "metrics_core-abc.zip", {
        "metrics_core/kernels/ranking.py": b"# source",
        cache + "ranking.f-10.py311.nbi": b"shipped index f",
        cache + "ranking.f-10.py311.1.nbc": b"shipped data f",
        cache + "ranking.g-20.py311.nbi": b"shipped index g",
        cache + "ranking.g-20.py311.1.nbc": b"shipped data g",
        cache + "ranking.cpython-311.pyc": b"bytecode",
    })
    root = tmp_path / "cache" / "metrics_core-shipped" / "metrics_core-abc" / "metrics_core" / "kernels" / "__pycache__"
    root.mkdir(parents=True)
    (root / "ranking.f-10.py311.nbi").write_bytes(b"index numba wrote")  # its data file is still being written
    assert _zip_cache.seeded_cache_root(zip_path) == str(root.parents[2])
    assert (root / "ranking.f-10.py311.nbi").read_bytes() == b"index numba wrote"
    assert not (root / "ranking.f-10.py311.1.nbc").exists()
    assert (root / "ranking.g-20.py311.nbi").read_bytes() == b"shipped index g"
    assert (root / "ranking.g-20.py311.1.nbc").read_bytes() == b"shipped data g"
    assert sorted(p.name for p in root.iterdir()) == ["ranking.f-10.py311.nbi", "ranking.g-20.py311.1.nbc",
                                                      "ranking.g-20.py311.nbi"]


def test_only_metrics_core_modules_inside_a_zip_use_the_shipped_cache():
    assert _zip_cache.split_zip_path("/tmp/x/metrics_core-1.zip/metrics_core/kernels/ranking.py") == (
        "/tmp/x/metrics_core-1.zip", "metrics_core/kernels/ranking.py")
    assert _zip_cache.split_zip_path("/site-packages/metrics_core/kernels/ranking.py") is None

    def kernel():
        return 0

    assert _zip_cache.ShippedKernelLocator.from_function(kernel, "/tmp/other.zip/other/mod.py") is None
    assert _zip_cache.ShippedKernelLocator.from_function(kernel, str(PACKAGE / "kernels" / "ranking.py")) is None


def test_ship_package_refuses_what_is_not_a_spark_session():
    pytest.importorskip("pyspark", reason="pip install 'metrics-core[spark]'")
    with pytest.raises(mc.MetricsError, match="ship_package needs a SparkSession or SparkContext, got dict") as err:
        ship_package({})
    assert "\n" not in str(err.value)


def test_private_spark_home_links_pyspark_and_goes_away(monkeypatch):
    """A local cluster's executors need $SPARK_HOME/bin and jars; the private home links pyspark's own,
    keeps an existing SPARK_HOME, and is deleted with the executors' work directories."""
    pytest.importorskip("pyspark", reason="pip install 'metrics-core[spark]'")
    import pyspark

    from metrics_core.spark import _local_cluster

    monkeypatch.setenv("SPARK_HOME", "/opt/spark")
    assert _local_cluster.use_private_spark_home() == "/opt/spark"
    monkeypatch.delenv("SPARK_HOME")
    monkeypatch.setattr(_local_cluster, "_created", [])
    home = _local_cluster.use_private_spark_home()
    assert os.environ["SPARK_HOME"] == home and _local_cluster.is_private(home)
    for part in ("bin", "jars"):
        assert os.path.realpath(os.path.join(home, part)) == os.path.realpath(Path(pyspark.__file__).parent / part)
    assert os.path.isfile(os.path.join(home, "bin", "spark-submit"))
    _local_cluster.remove_private_spark_home()
    assert not os.path.exists(home) and "SPARK_HOME" not in os.environ
