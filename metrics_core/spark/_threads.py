"""Numba's thread count inside a Spark task.

Spark already runs one task per core it gives the task, so the compiled kernels a
task calls use that many threads (one by default) instead of every core of the
executor. The task functions of :mod:`._evaluate` (grouped DataFrames) and
:mod:`._range_reads` (user-id ranges read from Parquet files) call it first.
"""

from __future__ import annotations


def limit_threads() -> None:
    """One numba thread per core of the running Spark task (nothing outside a task)."""
    try:
        from pyspark import TaskContext

        from ..kernels._jit import load_numba

        numba = load_numba()  # set up as the kernels use it (threading layer, shipped cache) before its threads start
        ctx = TaskContext.get()
        cpus = int(ctx.cpus()) if ctx is not None else 1
        numba.set_num_threads(max(1, min(cpus, numba.config.NUMBA_NUM_THREADS)))
    except Exception:  # outside a task (tests calling the function directly)
        pass
