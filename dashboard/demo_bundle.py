"""The demo's first page, shipped: the engine's results the Overview reads at the default settings.

On a fresh install numba's kernel cache is empty, and every kernel the Overview runs would be
compiled before the page could be drawn (10-20 s on two cores). The results it reads for the
bundled demo (each model's ranking, scored-row and beyond-accuracy evaluations, the bootstrap
intervals and the metric-versus-K curves) are shipped instead, in
:data:`dashboard.demo_cache.BUNDLE`, filed under the same cache keys the pages compute them
under (every metric, option and model is in the key, so a page asking for anything else computes
it). The kernels are then compiled behind the page by the background warm-up
(:mod:`dashboard.kernel_warmup`), in the order the pages need them.

The numbers are the engine's, never written by hand: :func:`build` runs the Overview of the demo
with Streamlit's AppTest (each result computed by ``metrics_core``, nothing read from a cache) and
keeps what the page asked :mod:`dashboard.demo_cache` for, charts excepted (they are drawn from
these tables without a kernel). ``tests/test_demo_bundle.py`` builds them again and requires the
shipped file to hold exactly the same keys and values, so a change of the engine, the demo or the
defaults that moves a number fails that test until the file is made again::

    python -m dashboard.demo_bundle          # writes dashboard/demo_first_page.pkl.gz
    python -m dashboard.demo_bundle --output FILE
"""

from __future__ import annotations

import argparse
import gzip
import math
import pickle
import sys
from dataclasses import fields, is_dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "dashboard" / "app.py"
#: the longest the Overview's run may take while the bundle is built (seconds)
RUN_TIMEOUT_S = 600


def build() -> dict:
    """``kind`` -> value of every engine result the demo's Overview reads at the default settings
    (as :func:`dashboard.demo_cache.cached` files them), each computed now. Run it in a process of
    its own: results already in this process's server cache would not be asked for again."""
    from plotly.basedatatypes import BaseFigure
    from streamlit.testing.v1 import AppTest

    from dashboard import demo_cache, kernel_warmup

    import metrics_core.evaluation

    kernel_warmup.start_once = lambda: None  # the kernels are compiled (or loaded) by this process itself
    # the curves on the page, not on the server's thread while their kernel is compiled (it is, here)
    metrics_core.evaluation.metric_curve_compiled = lambda: True
    with demo_cache.recording() as seen:
        at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
        at.run()
        if at.exception:
            raise RuntimeError(f"the Overview failed: {at.exception[0].message}")
    # the demo's tables and prepared models are built without a kernel (dashboard.loading._demo_ranked)
    return {kind: value for kind, value in seen.items()
            if kind.startswith(demo_cache.RESULT) and not isinstance(value, BaseFigure)}


def write(bundle: dict, path: Path) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
        pickle.dump(bundle, f, protocol=pickle.HIGHEST_PROTOCOL)


def read(path: Path) -> dict:
    with gzip.open(path, "rb") as f:
        return pickle.load(f)


#: how far apart (relative) a shipped and a computed array of floats may be: the bootstrap's means are a
#: matrix product, whose order of sums depends on the BLAS kernels of the CPU (another CPU's differ in
#: the last bit or two, about 1e-15); every other result is compared exactly
BLAS_RTOL = 1e-12


def differences(shipped, computed, where: str = "") -> list[str]:
    """Where two results differ (empty when they are the same): frames and floats compared exactly
    (NaN equal to NaN), arrays of floats to within :data:`BLAS_RTOL` of their values, other arrays
    exactly, dataclasses field by field, dicts key by key."""
    if isinstance(shipped, pd.DataFrame) or isinstance(shipped, pd.Series):
        try:
            (pd.testing.assert_frame_equal if isinstance(shipped, pd.DataFrame) else pd.testing.assert_series_equal)(
                shipped, computed, check_exact=True)
        except AssertionError as e:
            return [f"{where}: {' '.join(str(e).split())[:300]}"]
        return []
    if isinstance(shipped, np.ndarray):
        same = (isinstance(computed, np.ndarray) and shipped.shape == computed.shape and shipped.dtype == computed.dtype
                and (np.allclose(shipped, computed, rtol=BLAS_RTOL, atol=0.0, equal_nan=True) if shipped.dtype.kind == "f"
                     else np.array_equal(shipped, computed)))
        return [] if same else [f"{where}: arrays differ"]
    if is_dataclass(shipped) and not isinstance(shipped, type):
        if type(shipped) is not type(computed):
            return [f"{where}: {type(shipped).__name__} != {type(computed).__name__}"]
        return [d for f in fields(shipped) for d in differences(getattr(shipped, f.name), getattr(computed, f.name),
                                                                f"{where}.{f.name}")]
    if isinstance(shipped, dict):
        if not isinstance(computed, dict) or list(shipped) != list(computed):
            return [f"{where}: keys {list(shipped)[:8]} != {list(computed)[:8] if isinstance(computed, dict) else computed}"]
        return [d for key in shipped for d in differences(shipped[key], computed[key], f"{where}[{key!r}]")]
    if isinstance(shipped, (tuple, list)):
        if type(shipped) is not type(computed) or len(shipped) != len(computed):
            return [f"{where}: {type(shipped).__name__} of {len(shipped)} != {computed!r:.80}"]
        return [d for i, (a, b) in enumerate(zip(shipped, computed)) for d in differences(a, b, f"{where}[{i}]")]
    if isinstance(shipped, float) and isinstance(computed, float) and math.isnan(shipped) and math.isnan(computed):
        return []
    return [] if type(shipped) is type(computed) and shipped == computed else [f"{where}: {shipped!r:.80} != {computed!r:.80}"]


def main(argv: list[str] | None = None) -> int:
    from dashboard import demo_cache

    p = argparse.ArgumentParser(description="Write the demo's first-page results the dashboard ships.")
    p.add_argument("--output", type=Path, default=demo_cache.BUNDLE, help="default: %(default)s")
    args = p.parse_args(argv)
    bundle = build()
    write(bundle, args.output)
    print(f"{len(bundle)} results written to {args.output} ({args.output.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
