"""``metrics-core warm``: compile every metric kernel into numba's disk cache, once per installation.

::

    metrics-core warm [--jobs N] [--force] [--quiet]

The kernels are compiled by numba on their first call and kept on disk (``__pycache__`` beside
the sources, or ``NUMBA_CACHE_DIR``). Without this step the first command of a new installation
compiles what it runs (several CPU seconds) and the dashboard's first pages compile the rest;
after it, every later process loads the kernels from the cache. The install command of the
README runs it. It does what :func:`metrics_core.warmup.warmup` does: both variants of every
kernel (the serial one small inputs run, the parallel one large inputs run), ``--jobs 2`` (the
default on a machine with two or more cores) in two processes at once. A cache that is already
complete for the current sources and library versions (:mod:`metrics_core.kernels.cache_stamp`)
is left as it is, in well under a second; ``--force`` loads every kernel all the same.

Exit status 0 when every kernel is in the cache, 2 with one line on stderr when a compile failed
(the commands still work then: a kernel missing from the cache is compiled on its first call).
"""

from __future__ import annotations

import os
import sys

from ..errors import MetricsError

HELP = "compile every metric kernel ahead (once per installation; the README's install command runs it)"


def default_jobs() -> int:
    """Two processes (the serial and the parallel variants side by side) when there are two cores."""
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def register(subparsers) -> None:
    p = subparsers.add_parser("warm", help=HELP, description=HELP + ". Later commands and the dashboard then "
                              "load the compiled kernels instead of compiling them on first use.")
    p.add_argument("--jobs", type=int, default=default_jobs(), metavar="N",
                   help="compile the serial and the parallel variants in two processes at once when N >= 2 "
                        "(default: 2 on a machine with two or more cores, else 1)")
    p.add_argument("--force", action="store_true",
                   help="load every kernel even when the cache is already complete for these sources")
    p.add_argument("--quiet", action="store_true", help="print nothing when it succeeds")
    p.set_defaults(func=run)


def run(args) -> int:
    from .. import warmup
    from ..kernels import cache_stamp
    from ..kernels._jit import interpret_until_compiled

    if args.jobs < 1:
        raise MetricsError(f"--jobs must be 1 or more, got {args.jobs}")
    was_complete = cache_stamp.is_current()
    try:
        with interpret_until_compiled(0):  # this command compiles, whatever the input's size
            seconds = warmup.warmup(force=args.force, jobs=args.jobs)
    except RuntimeError as e:
        raise MetricsError(f"{e}; the commands still work (a kernel missing from the cache is compiled "
                           "on its first call); run metrics-core warm again to retry") from None
    if not args.quiet:
        where = cache_stamp.folder()
        place = f" in {where}" if where is not None else ""
        state = "already complete" if was_complete and not args.force else "complete"
        print(f"metrics_core kernel cache {state}{place} ({seconds:.1f} s)", file=sys.stdout)
    return 0
