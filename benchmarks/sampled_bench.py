"""The sampled-metric correction's rank-transition matrix: metrics_core's log-gamma form against
scipy.stats' exact pmf, side by side on the same sizes.

::

    python -m benchmarks.sampled_bench --items 2000 10000 --negatives 99 --large 100000 200000

For each catalogue size ``n`` of ``--items`` and ``m`` = ``--negatives``: the ``n x (m + 1)`` matrix of
``P(sampled rank j | full rank r)`` (hypergeometric: negatives drawn without replacement) built by
``metrics_core.metrics.sampled.rank_transition`` (its cache bypassed) and by
``scipy.stats.hypergeom.pmf`` over the same grid; CPU seconds of this process (the machine is
shared: CPU seconds are the steadier), the ratio scipy / metrics_core, and the largest absolute
difference of the two matrices. ``--large``: sizes timed on metrics_core's side only (scipy takes
minutes there), with the whole bias-variance correction of ndcg@10 (``correction_function``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def cpu(fn):
    """(result, CPU seconds of this process)."""
    c = time.process_time()
    out = fn()
    return out, time.process_time() - c


def main(argv=None) -> None:
    from scipy import stats

    from metrics_core.metrics.sampled import _transition, correction_function

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, nargs="+", default=[2000, 10000])
    p.add_argument("--negatives", type=int, default=99)
    p.add_argument("--large", type=int, nargs="*", default=[100000, 200000])
    args = p.parse_args(argv)
    m = args.negatives
    print(f"{'items':>8} {'metrics_core s':>15} {'scipy.stats s':>14} {'ratio':>8} {'max |diff|':>11}")
    for n in args.items:
        _transition.cache_clear()
        ours, t_ours = cpu(lambda: _transition(n, m, "without_replacement"))
        above, drawn = np.arange(n)[:, None], np.arange(m + 1)[None, :]
        ref, t_ref = cpu(lambda: stats.hypergeom.pmf(drawn, n - 1, above, m))
        print(f"{n:>8} {t_ours:>15.3f} {t_ref:>14.3f} {t_ref / t_ours:>7.1f}x {np.abs(ours - ref).max():>11.2e}")
    for n in args.large:
        _transition.cache_clear()
        _, t = cpu(lambda: correction_function("ndcg", 10, n, m, "bv"))
        print(f"{n:>8} {t:>15.3f} {'(bv correction of ndcg@10, whole)':>30}")


if __name__ == "__main__":
    main()
