"""The bundled demo is the same data on every machine.

The dashboard ships the engine's results of the demo's first page (``dashboard/demo_first_page.pkl.gz``),
filed under the demo's parameters: they are right only if every machine builds the same demo. NumPy
picks its kernels by the CPU's vector instructions (``np.argpartition`` among them, whose AVX-512 kernel
leaves each side of the split in another order), so the demo is built here in processes that NumPy
runs with each instruction level this CPU has switched off in turn (``NPY_DISABLE_CPU_FEATURES``), and
with OpenBLAS on its oldest kernels, and every table must come out identical.
"""

from __future__ import annotations

import _deadlines as deadlines
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _quick_cases import chosen
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

ROOT = Path(__file__).resolve().parents[1]
DIGEST = """
import hashlib
import pandas as pd
from dashboard import demo
d = demo.make_demo()
h = hashlib.sha256()
for table in (d.qrels, d.users, d.item_features, *d.runs.values()):
    h.update(repr(list(table.dtypes.items())).encode())
    h.update(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes())
print(h.hexdigest())
"""


def demo_digest(**env: str) -> str:
    done = subprocess.run([sys.executable, "-c", DIGEST], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


#: NumPy's instruction levels above its baseline that this CPU has, lowest first
FOUND = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
#: each instruction level switched off in turn, the highest first, down to NumPy's baseline alone, then
#: OpenBLAS on its oldest kernels too
LEVELS = {f"without {','.join(FOUND[i:])}": {"NPY_DISABLE_CPU_FEATURES": ",".join(FOUND[i:])}
          for i in reversed(range(len(FOUND)))}
LEVELS["OpenBLAS on its oldest kernels, NumPy's baseline alone"] = {
    "OPENBLAS_CORETYPE": "Prescott", **({"NPY_DISABLE_CPU_FEATURES": ",".join(FOUND)} if FOUND else {})}
#: the quick tier: the highest level off, the baseline alone, and the oldest OpenBLAS kernels
QUICK_LEVELS = list(dict.fromkeys([*list(LEVELS)[:1], *list(LEVELS)[-2:]]))


@pytest.fixture(scope="module")
def default_digest() -> str:
    """The demo as NumPy and OpenBLAS build it on this CPU, every instruction level on."""
    return demo_digest()


@pytest.mark.parametrize("level", chosen(list(LEVELS), QUICK_LEVELS))
def test_the_demo_is_the_same_whatever_vector_instructions_numpy_uses(level, default_digest):
    assert demo_digest(**LEVELS[level]) == default_digest, f"the demo differs {level}"
