"""numba and the compiled kernels load on the first kernel call only: importing the package, the
statistics, the registry's declarations, the command line's ``--help`` and an argument error leave
numba out of the process (a fresh process each: this one has loaded numba long ago)."""

from __future__ import annotations

import _deadlines as deadlines
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

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
