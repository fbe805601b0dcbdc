"""Compile every kernel once so later processes load them from numba's disk cache.

The first call of a fresh installation compiles the kernels it touches: small
inputs use the serial variants (a few seconds), large inputs the parallel ones
(tens of seconds on two cores). Run ``python -m metrics_core.warmup`` after
installing to compile both variants of every kernel ahead of time (``--jobs 2``: the two
variants in two processes at once, on two cores), or call
:func:`warmup` before starting a server whose first request must be quick
(the dashboard starts it in a background process).

With ``--first-page`` it starts with the kernels the dashboard's first page (the
Overview) needs, in the order that page asks for them, on data laid out by the
plain-Python layout pass: the page compiles the layout kernel itself meanwhile,
so the two processes compile different kernels on the two cores and the page
then loads the others from the cache.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pyarrow as pa

from .metrics import registry
from .grouping import group_users
from .io.checks import earlier_pairs
from .kernels import cache_stamp
from .kernels._jit import PARALLEL, SERIAL, use_variant
from .kernels.input_checks import first_whole_decimal
from .kernels.json_depth import first_too_deep
from .kernels.text_scan import scan_words


def _tiny_data():
    """(run with relevance, its order shuffled, ground truth, item features, item tags, interactions)."""
    run = pd.DataFrame({
        "user_id": ["a", "a", "a", "b", "b", "c"],
        "item_id": ["x", "y", "z", "x", "z", "y"],
        "score": [0.9, 0.5, 0.5, 0.2, 0.7, 0.4],
        "relevance": [1.0, 0.0, 2.0, 1.0, 0.0, 1.0],
    })
    shuffled = run.iloc[[3, 0, 5, 1, 4, 2]]
    qrels = run[["user_id", "item_id", "relevance"]]
    features = pd.DataFrame({"item_id": ["x", "y", "z"], "dim_a": [1.0, 0.0, 1.0], "dim_b": [0.0, 1.0, 1.0]})
    tags = pd.DataFrame({"item_id": ["x", "y", "z"], "tags": ["a|b", "b", "c"]})
    interactions = run[["user_id", "item_id"]]
    return run, shuffled, qrels, features, tags, interactions


#: the cutoff of the warm-up's metrics (the tiny lists hold up to three items)
K = 2


def _labels(metrics) -> list[str]:
    """Each metric at cutoff ``K``, and by its name alone where the cutoff is optional (the whole list)."""
    labels = [f"{m.name}@0.5" if m.cutoff == registry.CUTOFF_LEVEL else registry.label_at(m, K) for m in metrics]
    labels += [m.name for m in metrics if m.cutoff == registry.CUTOFF_OPTIONAL]
    return list(dict.fromkeys(labels))


#: every metric of the registry: each kernel it reaches is compiled
EVERY = _labels(registry.METRICS)
#: the metrics that read item features, evaluated again on tag sets (another kernel)
ON_TAGS = [registry.label_at(m, K) for m in registry.METRICS if "item_features" in m.needs]
#: the metrics read over one order of each list (refused under ties="average" on the tiny run's ties)
ONE_ORDER = set(_labels([m for m in registry.METRICS if m.one_order]))
#: the ranking metrics drawn against K, by name (those with a level have no curve over K)
CURVES = list(dict.fromkeys(m.name for m in registry.metrics_of_kind("ranking", "pooled")
                            if m.cutoff != registry.CUTOFF_LEVEL and not m.one_order))


def _first_page(mc) -> None:
    """The serial kernels of the Overview after its layout (ties averaged, the default).

    The page asks for its ranking metrics, then scored-row metrics and beyond-accuracy
    metrics (the ``overview`` section of the registry); the metric curves it leaves to its
    worker thread while they are not compiled. Here they come in the reverse order, the curves after the metrics
    the page waits for: the page compiles what it reaches first, the warm-up works
    from the other end, and a kernel one of them is compiling is waited for by the
    other (see :func:`metrics_core.kernels._jit.compile_lock`), so they meet in
    the middle instead of compiling the same kernels side by side.
    """
    from .layout.build import prepare_plain

    run, _, qrels, features, _, interactions = _tiny_data()
    page = {kind: [registry.label_at(m, K) for m in registry.metrics_in("overview", *kind)]
            for kind in (("ranking", "pooled"), ("scored", "scored_per_user"), ("diversity",))}
    with use_variant(SERIAL):
        ranked = prepare_plain(run.drop(columns="relevance"), qrels)
        ranked.score, ranked.q_rel  # noqa: B018 - gathered by the page's demo models before it draws
        for kind in (("diversity",), ("scored", "scored_per_user")):
            mc.evaluate(ranked, metrics=page[kind], ties="average", item_features=features, interactions=interactions)
        mc.metric_curve(ranked, list(registry.curve_metrics()), k_max=3, ties="average")
        mc.evaluate(ranked, metrics=page[("ranking", "pooled")], ties="average")


def load_upload_kernels() -> None:
    """Call, on tiny data, the parallel kernels a large upload's way to the Overview runs (the scan of
    a text file, the layout, the Overview's ranking and scored-row metrics), so that a process loads
    them before the files arrive: a server that does this while it waits for an upload (the
    dashboard, once its first page is drawn) does not load them (tenths of a second each) while
    the user waits. Only kernels already in numba's disk cache should be loaded this way: a kernel
    not there is compiled, in this process."""
    import metrics_core as mc
    from .layout.build import prepare_plain  # noqa: F401 - the layout module, imported as a page does

    run, _, qrels, _, _, _ = _tiny_data()
    overview = {kind: [registry.label_at(m, K) for m in registry.metrics_in("overview", *kind)]
                for kind in (("ranking", "pooled"), ("scored", "scored_per_user"))}
    with use_variant(PARALLEL):
        scan_words(np.zeros(4, dtype=np.uint64), 2, np.zeros(2, dtype=np.uint64), np.zeros(2, dtype=np.uint64))
        ranked = mc.prepare(run.drop(columns="relevance"), qrels)
        ranked.score, ranked.q_rel  # noqa: B018 - gathered by the scored-row metrics
        mc.evaluate(ranked, metrics=overview[("ranking", "pooled")])
        mc.evaluate(ranked, metrics=overview[("scored", "scored_per_user")], gain="linear", ties="average")


def _steps(mc) -> list:
    """The warm-up's calls on tiny data, in order, each a function of no argument: every metric family
    under every tie rule, the curves, and the kernels only large inputs or other readers reach."""
    run, shuffled, qrels, features, tags, interactions = _tiny_data()
    steps = []
    for ties in ("average", "trec", "input"):
        for frame in (run, shuffled):
            every = [m for m in EVERY if ties != "average" or m not in ONE_ORDER]

            def evaluate(frame=frame, ties=ties, every=every):
                ranked = mc.prepare(frame.drop(columns="relevance"), qrels)
                # curves first: a page computes them last, so a warm-up running beside it has them ready
                mc.metric_curve(ranked, CURVES, k_max=3, ties=ties)
                mc.evaluate(ranked, metrics=every, ties=ties, item_features=features, interactions=interactions)
                mc.evaluate(ranked, metrics=ON_TAGS, ties=ties, item_features=tags)
            steps.append(evaluate)

    def classification_curves():
        ranked = mc.prepare(run)
        mc.roc_curve(ranked)
        mc.pr_curve(ranked)
        mc.calibration_curve(ranked)

    log = pd.DataFrame({"user_id": ["a", "a", "b", "c"], "item_id": ["x", "y", "z", "y"],
                        "reward": [1.0, 0.0, 1.0, 0.0], "propensity": [0.5, 0.5, 1.0, 0.5]})
    steps += [
        # integer item ids: the layout kernel is compiled once per id form (strings above)
        lambda: mc.prepare(run.assign(item_id=run["item_id"].map({"x": 1, "y": 2, "z": 3}))),
        classification_curves,
        lambda: mc.ndcg_at_k(np.array([1.0, 0.0]), 2),
        # the scan of a large text file (smaller texts never call it)
        lambda: scan_words(np.zeros(4, dtype=np.uint64), 2, np.zeros(2, dtype=np.uint64), np.zeros(2, dtype=np.uint64)),
        # whole numbers written "7.0" among many ids (smaller id columns never call it)
        lambda: first_whole_decimal(np.zeros(2, dtype=np.int64), np.zeros(1, dtype=np.uint8)),
        # the nesting bound of a JSON-lines text with many brackets
        lambda: first_too_deep(np.frombuffer(b'{"a": [[1]]}', dtype=np.uint8), 100),
        # the readers' check for repeated (user, item) pairs of string ids
        lambda: earlier_pairs(pa.array(["a", "a", "b"]), pa.array(["x", "x", "y"]), np.array([1.0, 0.0, 1.0])),
        # the grouping of numeric user ids (compare, segments): integer and decimal columns
        lambda: [group_users(users) for users in (pd.Series([3, 3, 1]), pd.Series([3.0, 3.0, 1.0]))],
        # off-policy estimation (mc.off_policy, metrics-core ope, the Counterfactual page): the lookup of
        # each logged action's probability under the model's policy
        lambda: mc.off_policy(log, run.drop(columns="relevance"), policy="top1", estimators=["ips", "snips"],
                              n_bootstrap=0),
    ]
    return steps


def _exercise(mc, reverse: bool = False) -> None:
    """Run every step of :func:`_steps`, last step first with ``reverse``: a process helping another
    that compiles the same variant starts from the other end, and a kernel the other is compiling is
    waited for and then loaded from the cache (:func:`metrics_core.kernels._jit.compile_lock`)."""
    steps = _steps(mc)
    for step in reversed(steps) if reverse else steps:
        step()


def warmup(variants: tuple[str, ...] = (SERIAL, PARALLEL), first_page: bool = False,
           then=lambda: None, force: bool = False, jobs: int = 1) -> float:
    """Compile (or load) every kernel in each of ``variants``, with ``first_page`` the first
    page's kernels before anything else, and calls ``then()`` in between; returns seconds spent.

    ``jobs``: with 2 or more, the variants after the first are compiled at the same time in
    child processes (``python -m metrics_core.warmup --variant ...``), one per variant, while this
    process compiles the first and then helps each child from the other end of its steps (the
    parallel variant compiles about three times as long as the serial one: on two cores both stay
    busy to the end). A child that fails raises :class:`RuntimeError` here, with the last line it wrote.

    Once both variants are done it writes the cache stamp (:mod:`metrics_core.kernels.cache_stamp`);
    while that stamp is current every kernel is on disk already and nothing is done (``force``:
    load them all the same)."""
    import metrics_core as mc

    start = time.perf_counter()
    complete = set(variants) >= {SERIAL, PARALLEL}
    if complete and not force and cache_stamp.is_current():
        return time.perf_counter() - start
    if first_page:
        _first_page(mc)
    then()
    here, elsewhere = (variants[:1], variants[1:]) if jobs > 1 else (variants, ())
    children = [(variant, _start_variant(variant)) for variant in elsewhere]
    try:
        for variant in here:
            with use_variant(variant):
                _exercise(mc)
        for variant in elsewhere:  # then help each child from the other end of its steps
            with use_variant(variant):
                _exercise(mc, reverse=True)
    finally:
        failed = [(variant, _finish(child)) for variant, child in children]
    failed = [(variant, message) for variant, message in failed if message is not None]
    if failed:
        raise RuntimeError("; ".join(f"the {variant} kernels' warm-up failed: {message}" for variant, message in failed))
    if complete:
        cache_stamp.write()
    return time.perf_counter() - start


def _start_variant(variant: str) -> subprocess.Popen:
    """A child process compiling the kernels of ``variant`` only (it writes no stamp)."""
    return subprocess.Popen([sys.executable, "-m", "metrics_core.warmup", "--variant", variant],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _finish(child: subprocess.Popen) -> str | None:
    """Wait for ``child``; None when it succeeded, else the last line it wrote (or its exit status)."""
    _, err = child.communicate()
    if child.returncode == 0:
        return None
    lines = [line for line in (err or "").splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {child.returncode}"


def _exit_with_parent(parent: int) -> None:
    """End this process as soon as process ``parent`` has ended: at once when it already has (it may
    exit before this process has imported anything), else when it is no longer this process's
    parent. (Linux's parent-death signal would fire when the thread that started this process
    ends, which in a Streamlit server is the end of a script run: it is not used.)"""
    if os.getppid() != parent:
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Compile every metrics_core kernel into numba's disk cache.")
    p.add_argument("--background", action="store_true",
                   help="run at low priority (after the first page's kernels with --first-page: the page "
                        "waits for those), quietly, and stop when the parent process ends")
    p.add_argument("--parent", type=int, default=None, metavar="PID",
                   help="with --background: the process whose end ends this one (default: the parent at start)")
    p.add_argument("--first-page", action="store_true",
                   help="start with the kernels of the dashboard's first page (not its layout kernel)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="compile the serial and the parallel variants at the same time in two processes "
                        "when N >= 2 (default 1: one after the other)")
    p.add_argument("--variant", choices=(SERIAL, PARALLEL), default=None,
                   help="compile this variant only (the cache stamp is written once both are done)")
    args = p.parse_args(argv)
    if args.background:
        _exit_with_parent(args.parent if args.parent is not None else os.getppid())
    variants = (args.variant,) if args.variant else (SERIAL, PARALLEL)
    seconds = warmup(variants, first_page=args.first_page, jobs=args.jobs,
                     then=(lambda: os.nice(10)) if args.background else lambda: None)
    if not args.background:
        print(f"metrics_core kernels ready ({seconds:.1f} s)")


if __name__ == "__main__":
    main()
