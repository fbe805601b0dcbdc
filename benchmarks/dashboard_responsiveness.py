"""How fast does the Overview refresh when K or the gain changes on big data?

The target: with 1M scored rows per model loaded (3 models), changing K or
the gain refreshes the Overview in under a second, measured on the
benchmark's own data generator. Default: 10,000 users x 100
candidates of :mod:`benchmarks.datagen` = 1M rows per model. This drives the
real app with Streamlit's AppTest (no browser) and prints the wall-clock time
of each script run:

    python benchmarks/dashboard_responsiveness.py [--users 10000] [--candidates 100]

The data is loaded the way an upload is (Parquet bytes in the session's
sources), so the first run pays for reading, joining and sorting; later runs
must only re-evaluate from the cached ``mc.Ranked``. Numbers are reported,
never asserted (the machine is shared).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_data(n_users: int, n_candidates: int = 100, n_models: int = 3, seed: int = 0):
    """Three models over the benchmark generator's data (:mod:`benchmarks.datagen`, string ids).

    Model 0 ranks by the generator's scores; model m adds uniform noise of
    width ``0.5 m`` (rescaled into [0, 1)), so the models share candidates and
    ground truth and get steadily worse.
    """
    from benchmarks import datagen

    ds = datagen.generate(n_users, n_candidates=n_candidates, seed=seed, id_type="str")
    rng = np.random.default_rng(seed)
    base = ds.run["score"].to_numpy()
    runs = {}
    for m in range(n_models):
        noisy = (base + rng.random(base.shape[0]) * 0.5 * m) / (1.0 + 0.5 * m)
        runs[f"model_{m}"] = ds.run.assign(score=noisy)
    return runs, ds.qrels


def parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=10_000)
    ap.add_argument("--candidates", type=int, default=100)
    args = ap.parse_args()

    from streamlit.testing.v1 import AppTest

    from dashboard.sources import _SESSION, Blob, Sources, _Session

    t = time.perf_counter()
    runs, qrels = make_data(args.users, args.candidates)
    sources = Sources(runs={n: Blob.of(f"{n}.parquet", parquet_bytes(df)) for n, df in runs.items()},
                      qrels=Blob.of("qrels.parquet", parquet_bytes(qrels)))
    rows = sum(len(df) for df in runs.values())
    print(f"data: {len(runs)} models, {rows:,} scored rows ({rows // len(runs):,} per model), "
          f"{len(qrels):,} judgments; generated in {time.perf_counter() - t:.1f} s")

    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=900)
    at.session_state[_SESSION] = _Session(sources=sources)

    def timed(label: str) -> float:
        t0 = time.perf_counter()
        at.run()
        dt = time.perf_counter() - t0
        problems = [e.value for e in at.exception] + [e.value for e in at.error]
        print(f"{label:<52s} {dt:7.2f} s" + (f"   PROBLEM: {problems}" if problems else ""))
        return dt

    timed("first Overview (read + prepare + evaluate)")
    timed("rerun, nothing changed")
    results = {}
    for label, key, value in [
        ("K 10 -> 20", "k", 20),
        ("gain linear -> exponential", "gain", "exponential"),
        ("K 20 -> 5", "k", 5),
        ("ties average -> trec", "ties", "trec"),
        ("ties trec -> average (cached)", "ties", "average"),
        ("gain exponential -> linear", "gain", "linear"),
        ("K 5 -> 20 (cached)", "k", 20),
    ]:
        at.session_state[key] = value
        results[label] = timed(f"Overview after {label}")
    fresh = [v for k, v in results.items() if "cached" not in k]
    print(f"\nK/gain/ties change, uncached: median {np.median(fresh):.2f} s, max {max(fresh):.2f} s "
          f"(target < 1 s); cached: max {max(v for k, v in results.items() if 'cached' in k):.2f} s")


if __name__ == "__main__":
    main()
