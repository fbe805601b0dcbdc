"""numba and the compiled kernels load on the first kernel call only: importing the package, the
statistics, the registry's declarations, the command line's ``--help`` and an argument error leave
numba out of the process (a fresh process each: this one has loaded numba long ago). An evaluate on a
small file loads numba but none of the modules it has no use for (the dashboard's, plots, databases, and
what numba imports for features no kernel uses)."""

from __future__ import annotations

import _deadlines as deadlines
import json
import os
import pickle
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from metrics_core.kernels import _jit

REPO = Path(__file__).resolve().parents[1]


def _loaded_after(code: str) -> list[str]:
    """The numba and llvmlite modules a fresh Python holds after running ``code``."""
    probe = code + "\nimport sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO,
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])


def test_importing_the_package_and_its_command_line_loads_no_numba():
    code = textwrap.dedent("""
        import contextlib, io
        import metrics_core as mc
        from metrics_core.cli import main
        mc.parse_metrics(["ndcg@10", "auc", "novelty@5"])
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(["--help"]) == 0 and main(["evaluate", "--help"]) == 0
            assert main(["evaluate", "--no-such-option"]) == 2
    """)
    assert _loaded_after(code) == []


def test_the_statistics_load_no_numba():
    assert _loaded_after("import metrics_core.analysis.stats") == []


KERNELS = """
import numpy as np
from metrics_core.kernels._jit import nb, njit


@njit(inline="always")
def _square(x):
    return x * x


@njit
def sum_of_squares(values):
    total = 0.0
    for i in nb.prange(values.shape[0]):
        total += _square(values[i])
    return total
"""


def test_a_kernel_is_made_on_its_first_call_and_binds_what_it_calls(tmp_path, monkeypatch):
    (tmp_path / "lazy_kernels_probe.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazy_kernels_probe as probe

    assert isinstance(probe.sum_of_squares, _jit.LazyKernel) and probe.sum_of_squares._dispatcher is None
    assert isinstance(probe._square, _jit.LazyKernel) and probe._square._dispatcher is None
    values = np.array([0.5, -2.0, 3.0])
    assert probe.sum_of_squares(values) == sum(v * v for v in values.tolist())
    # the names the kernel reads are numba's module and the helper's dispatcher, as numba compiled them
    assert probe.nb is _jit.load_numba()
    assert isinstance(probe._square, _jit.load_numba().core.registry.CPUDispatcher)
    assert probe.sum_of_squares.py_func.__name__ == "sum_of_squares" and probe.sum_of_squares.signatures
    assert pickle.loads(pickle.dumps(probe.sum_of_squares)) is probe.sum_of_squares


# Modules the command line's evaluate on a small CSV file has no use for: the dashboard's, the database's,
# the plots', Spark's, Parquet's, and what numba imports for features no kernel uses (_jit.NOT_FOR_NUMBA;
# yaml reads numba's configuration file, which the repository's root does not hold)
NOT_FOR_A_SMALL_EVALUATE = ("streamlit", "plotly", "sqlalchemy", "pyspark", "matplotlib", "mlflow", "IPython",
                            "nbformat", "jinja2", "scipy.linalg", "scipy.stats", "scipy.sparse", "cffi",
                            "pycparser", "statsmodels", "sklearn", "ranx", "pytrec_eval", "ir_measures",
                            "pyarrow.parquet", "pyarrow.dataset", "yaml")


def test_a_small_evaluate_imports_no_module_it_does_not_need(tmp_path):
    code = textwrap.dedent("""
        import contextlib, io, json, sys
        from metrics_core.cli import main
        from metrics_core.kernels import _jit
        _jit.INTERPRET_CACHED_MAX_WORK = 0  # the cached kernels run compiled, as on an input of more rows
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(["evaluate", "--run", "tests/data/formats/run.csv", "--qrels", "tests/data/formats/qrels.csv",
                           "-m", "ndcg@10,map@100,recall@10"])
        loaded = sorted(sys.modules)
        from numba.np.linalg import ensure_blas
        ensure_blas()  # scipy.linalg was only hidden while numba loaded: a kernel using BLAS still finds it
        import cffi
        print(json.dumps([status, out.getvalue(), loaded, "scipy.linalg.cython_blas" in sys.modules]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    status, table, loaded, blas_found = json.loads(done.stdout.strip().splitlines()[-1])
    assert status == 0 and "ndcg@10" in table and "numba" in loaded  # the path ran its kernels
    unwanted = [m for m in loaded if any(m == name or m.startswith(name + ".") for name in NOT_FOR_A_SMALL_EVALUATE)]
    assert unwanted == []
    assert blas_found


def test_the_modules_numba_need_not_are_hidden_from_the_loading_thread_only(tmp_path, monkeypatch):
    (tmp_path / "hidden_probe_a.py").write_text("VALUE = 1\n")
    (tmp_path / "hidden_probe_b.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = {}

    def other_thread():
        import hidden_probe_b
        seen["other"] = hidden_probe_b.VALUE

    with _jit._unoffered(frozenset({"hidden_probe_a", "hidden_probe_b"})):
        with pytest.raises(ImportError):
            import hidden_probe_a  # noqa: F401
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    import hidden_probe_a

    assert hidden_probe_a.VALUE == 1 and seen == {"other": 2}
    assert not any(isinstance(f, _jit._Unoffered) for f in sys.meta_path)


def test_numba_still_reads_its_configuration_file_where_there_is_one(tmp_path):
    (tmp_path / _jit.NUMBA_CONFIG_FILE).write_text("debuginfo: 0\n")
    code = ("import sys; from metrics_core.kernels import _jit; numba = _jit.load_numba(); "
            "print(numba.core.config._HAVE_YAML, 'yaml' in sys.modules, numba.core.config.DEBUGINFO_DEFAULT)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True", "0"] and "YAML" not in done.stderr


# What the library holds that the command line's evaluate never runs: the other commands, the analyses, the
# brief, the outputs (plots, notebook views, publishing, MLflow), off-policy evaluation, fusion, the store, Spark
NOT_FOR_THE_EVALUATE_COMMAND = ("metrics_core.analysis", "metrics_core.brief", "metrics_core.outputs",
                                "metrics_core.ope", "metrics_core.fusion", "metrics_core.store", "metrics_core.spark",
                                "metrics_core.metrics.sampled", "metrics_core.metrics.curves",
                                "metrics_core.metrics.debias", "metrics_core.metrics.intersection",
                                "metrics_core.single", "scipy.stats", "scipy.sparse")


def test_the_evaluate_command_imports_the_modules_it_runs_only():
    """``metrics-core evaluate`` in the command line's process (told by the process' arguments, which the probe
    sets as ``python -m metrics_core evaluate ...`` would: the package's ``__init__`` then loads the library's
    names on first use, and the parser is the named command's only) imports none of the modules it never runs."""
    args = ["evaluate", "--run", "tests/data/formats/run.csv", "--qrels", "tests/data/formats/qrels.csv",
            "-m", "ndcg@10,map@100,recall@10"]
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        sys.orig_argv = [sys.executable, "-m", "metrics_core", *{args!r}]
        from metrics_core.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main({args!r})
        print(json.dumps([status, out.getvalue(), sorted(sys.modules)]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    status, table, imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert status == 0 and "ndcg@10" in table and "metrics_core.evaluation" in imported  # the path ran
    other_commands = {f"metrics_core.commands.{name}" for name in ("compare", "report", "explain", "check",
                                                                   "publish", "ope", "fuse", "warm")}
    unwanted = [m for m in imported if m in other_commands or any(
        m == name or m.startswith(name + ".") for name in NOT_FOR_THE_EVALUATE_COMMAND)]
    assert unwanted == []


def test_the_library_loads_every_public_name_and_the_notebook_views():
    """Outside the command line ``import metrics_core`` holds every public name at once (no name is loaded on a
    later attribute read) and the classes' notebook views."""
    code = textwrap.dedent("""
        import json, sys
        import metrics_core as mc
        held = [name for name in mc.__all__ if name not in vars(mc)]
        print(json.dumps([held, hasattr(mc.Evaluation, "_repr_html_"), "metrics_core.outputs.notebook" in sys.modules]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], True, True]
