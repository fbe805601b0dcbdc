"""The demo's first page shipped with the dashboard (``dashboard/demo_first_page.pkl.gz``): the same
results the engine computes now, and an Overview on a fresh install (empty kernel cache) that
compiles no metric kernel."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import _deadlines as deadlines
import numpy as np
import pytest

from dashboard import demo_bundle, demo_cache

ROOT = Path(__file__).resolve().parents[1]
REMAKE = "the shipped demo results differ from the engine's: run python -m dashboard.demo_bundle"


def test_the_shipped_results_are_the_engines_now(tmp_path):
    """Every result the Overview of the demo reads at the default settings, computed again by the
    engine in a process of its own (nothing read from a cache), equals the shipped one; and the
    shipped file holds no result the page no longer asks for."""
    made = tmp_path / "bundle.pkl.gz"
    done = subprocess.run([sys.executable, "-m", "dashboard.demo_bundle", "--output", str(made)], cwd=ROOT,
                          capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    computed, shipped = demo_bundle.read(made), demo_bundle.read(demo_cache.BUNDLE)
    assert sorted(shipped) == sorted(computed), REMAKE
    # the page's ranking, scored-row and beyond-accuracy evaluations, intervals and curves of 3 models
    assert len(shipped) >= 12
    different = [d for kind in shipped for d in demo_bundle.differences(shipped[kind], computed[kind], kind)]
    assert different == [], f"{REMAKE}; {different[:5]}"


def test_the_comparison_sees_one_changed_number():
    shipped = demo_bundle.read(demo_cache.BUNDLE)
    kind, ev = next((k, v) for k, v in shipped.items() if hasattr(v, "per_user") and len(v.per_user.columns))
    per_user = ev.per_user.copy()
    column = per_user.columns[0]
    per_user.iloc[7, 0] = per_user.iloc[7, 0] + 1e-12
    assert demo_bundle.differences(ev, replace(ev, per_user=per_user), kind) != []
    summary = dict(ev.summary, **{column: ev.summary[column] + 1e-12})
    assert demo_bundle.differences(ev, replace(ev, summary=summary), kind) != []
    assert demo_bundle.differences(ev, ev, kind) == []


def test_an_interval_may_differ_in_its_last_bits_only():
    """The bootstrap's intervals (arrays) pass within two units in the last place, as another CPU's BLAS
    sums them, and fail one part in a billion away; a NaN matches only a NaN."""
    shipped = demo_bundle.read(demo_cache.BUNDLE)
    kind, (lows, highs) = next((k, v) for k, v in shipped.items() if isinstance(v, tuple)
                               and all(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in v))
    last_bits = np.nextafter(np.nextafter(lows, np.inf), np.inf)
    assert demo_bundle.differences((lows, highs), (last_bits, highs), kind) == []
    assert demo_bundle.differences((lows, highs), (lows * (1 + 1e-9), highs), kind) != []
    with_nan = lows.copy()
    with_nan[0] = np.nan
    assert demo_bundle.differences((lows, highs), (with_nan, highs), kind) != []
    assert demo_bundle.differences((with_nan, highs), (with_nan.copy(), highs), kind) == []


# the metrics_core modules whose kernels the demo's preparation runs (the layout pass itself is plain
# Python on a fresh install): every other kernel is a metric's, which the shipped results stand for
PREPARATION = {"metrics_core.layout.kernels", "metrics_core.kernels.group_rows", "metrics_core.kernels.input_checks"}

OVERVIEW_ON_AN_EMPTY_CACHE = """
from numba.core import event
compiled = set()
class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data['dispatcher'].py_func
        compiled.add((f.__module__, f.__qualname__))
    def on_end(self, ev):
        pass
event.register('numba:compile', Listener())
from dashboard import kernel_warmup
kernel_warmup.start_once = lambda: None
from streamlit.testing.v1 import AppTest
at = AppTest.from_file('dashboard/app.py', default_timeout=600)  # inside a subprocess bounded by deadlines.SUBPROCESS
at.run()
assert not at.exception, at.exception
assert [s.value for s in at.subheader][:2] == ['Ranking metrics', 'Scored-row metrics'], at.subheader
assert not [c for c in at.caption if 'being built' in c.value], 'the curves waited for the compiler'
print(' '.join(sorted(f'{m}:{q}' for m, q in compiled if m.startswith('metrics_core'))))
"""


@pytest.mark.long  # an empty kernel cache: the demo's preparation compiles its few kernels
def test_a_fresh_install_draws_the_overview_without_compiling_a_metric_kernel(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", OVERVIEW_ON_AN_EMPTY_CACHE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    compiled = done.stdout.split()
    metric_kernels = [name for name in compiled if name.split(":")[0] not in PREPARATION]
    assert metric_kernels == [], metric_kernels
