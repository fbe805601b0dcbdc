"""The serial and parallel variants of every parallel kernel give identical results.

Small inputs run the serial variant of each parallel kernel (it compiles several
times faster on a fresh installation), large inputs the parallel one. Nothing a
user sees may depend on which ran: here the whole pipeline (prepare, evaluate
with every metric family and tie rule, metric curves, plot curves) runs once
with every kernel forced serial and once forced parallel on random data with
many ties, and the results must be equal bit for bit. Also checked: the size
rule itself, that inputs reach the kernels read-only (one compiled version for
read-only and writable columns), and the dashboard's background warm-up process
(started once, ends with its parent, compiles what the first page needs besides the
layout kernel). No test measures time.
"""

from __future__ import annotations

import _deadlines as deadlines
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _quick_cases import covering
from numba import types

import metrics_core as mc
from metrics_core.kernels import _jit
from metrics_core.kernels._jit import PARALLEL, PARALLEL_MIN_WORK, SERIAL, SizedKernel, use_variant

KERNEL_MODULES = ["metrics_core.diagnostics", "metrics_core.kernels.classification", "metrics_core.kernels.diversity",
                  "metrics_core.kernels.group_rows", "metrics_core.kernels.input_checks",
                  "metrics_core.kernels.partial_auc", "metrics_core.kernels.ranking",
                  "metrics_core.kernels.serendipity", "metrics_core.layout.kernels",
                  "metrics_core.layout.sort_and_join", "metrics_core.kernels.text_scan"]
METRICS = ["ndcg@5", "dcg@5", "cg@5", "map@5", "map", "mrr@5", "precision@5", "recall@5", "f1@5", "hit_rate@5",
           "r_precision", "hit_ratio@5", "fbeta@5", "mcc@5", "accuracy@5", "pauc@5", "pap@5", "auc", "pr_auc",
           "logloss", "brier", "rmse", "gauc", "pcopc", "ece", "accuracy", "coverage@5", "novelty@5",
           "personalization@5", "ils@5", "entropy@5", "gini@5", "arp@5", "aplt@5", "serendipity_pop@5",
           "serendipity_sim@5"]


def sized_kernels() -> list[SizedKernel]:
    found = []
    for name in KERNEL_MODULES:
        module = importlib.import_module(name)
        found += [obj for obj in vars(module).values() if isinstance(obj, SizedKernel)]
    return found


def random_data(seed: int, n_users: int = 60, ids: str = "str"):
    """Run, ground truth, item features and interactions with many tied scores (5 levels)."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for u in range(n_users):
        n = int(rng.integers(1, 30))
        items = rng.choice(80, size=n, replace=False)
        scores = rng.integers(0, 5, size=n) / 4.0  # scores in [0, 1], heavily tied
        for item, score in zip(items, scores):
            rows.append((u, int(item), float(score)))
        judged = rng.choice(80, size=int(rng.integers(0, 12)), replace=False)
        truth += [(u, int(item), int(rng.integers(0, 4))) for item in judged]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    if ids == "str":
        for frame in (run, qrels):
            frame["user_id"] = "u" + frame["user_id"].astype(str)
            frame["item_id"] = "i" + frame["item_id"].astype(str)
    item_ids = sorted(set(run["item_id"]) | set(qrels["item_id"]))
    features = pd.DataFrame({"item_id": item_ids, "f0": rng.random(len(item_ids)),
                             "f1": rng.random(len(item_ids))})
    interactions = run.sample(frac=0.5, random_state=seed)[["user_id", "item_id"]]
    return run, qrels, features, interactions


def everything(run, qrels, features, interactions, ties: str) -> dict:
    """Every number the pipeline produces on these inputs."""
    ranked = mc.prepare(run, qrels)
    ev = mc.evaluate(ranked, metrics=METRICS, ties=ties, item_features=features, interactions=interactions)
    curve = mc.metric_curve(ranked, ["ndcg", "map", "mrr", "precision", "recall"], k_max=12, ties=ties)
    return {
        "layout": [np.asarray(a).copy() for a in (ranked.offsets, ranked.tie_key, ranked.rel_code, ranked.row)],
        "summary": ev.summary,
        "per_user": ev.per_user,
        "diagnostics": ev.diagnostics.to_dict(),
        "curve": curve,
        "roc": mc.roc_curve(ranked),
        "pr": mc.pr_curve(ranked),
    }


def assert_identical(a: dict, b: dict) -> None:
    for x, y in zip(a["layout"], b["layout"]):
        np.testing.assert_array_equal(x, y)
    assert a["summary"].keys() == b["summary"].keys()
    for name in a["summary"]:
        x, y = a["summary"][name], b["summary"][name]
        assert x == y or (np.isnan(x) and np.isnan(y)), (name, x, y)
    pd.testing.assert_frame_equal(a["per_user"], b["per_user"], check_exact=True)
    assert a["diagnostics"] == b["diagnostics"]
    for key in ("curve", "roc", "pr"):
        pd.testing.assert_frame_equal(a[key], b[key], check_exact=True)


#: every data set with every tie rule; the quick tier each data set and each tie rule once
VARIANT_CASES = covering([(seed, ids, ties) for seed, ids in ((1, "str"), (2, "int"), (3, "str"))
                          for ties in ("average", "trec", "input")], lambda c: c[:2], lambda c: c[2])


@pytest.mark.parametrize("seed, ids, ties", VARIANT_CASES, ids=["-".join(map(str, c)) for c in VARIANT_CASES])
def test_serial_and_parallel_kernels_give_identical_results(seed, ids, ties):
    data = random_data(seed, ids=ids)
    shuffled = data[0].sample(frac=1.0, random_state=seed)  # users' rows not grouped: the other layout path
    for run in (data[0], shuffled):
        with use_variant(SERIAL):
            serial = everything(run, *data[1:], ties)
        with use_variant(PARALLEL):
            parallel = everything(run, *data[1:], ties)
        assert_identical(serial, parallel)


def test_the_forced_variant_is_the_one_that_runs():
    from metrics_core.kernels import ranking

    kernel = ranking._ranking_families
    names = kernel.py_func.__code__.co_varnames[:kernel.py_func.__code__.co_argcount]
    args = [np.zeros(1, dtype=np.uint8)] * len(names)  # a tiny input: serial unless forced
    args[names.index("lists")] = ranking.RankedLists(*[np.zeros(1, dtype=np.uint8)] * len(ranking.RankedLists._fields))
    assert kernel.variant_for(args) == SERIAL
    with use_variant(PARALLEL):
        assert kernel.variant_for(args) == PARALLEL
        with use_variant(SERIAL):
            assert kernel.variant_for(args) == SERIAL
        assert kernel.variant_for(args) == PARALLEL
    with pytest.raises(ValueError):
        with use_variant("threads"):
            pass


def test_size_rule_picks_serial_below_the_threshold_and_parallel_from_it():
    from metrics_core.kernels import ranking

    kernel = ranking._ranking_families
    names = kernel.py_func.__code__.co_varnames[:kernel.py_func.__code__.co_argcount]
    work = names.index("lists")

    def args(n):
        a = [0] * len(names)
        a[work] = ranking.RankedLists(*[np.zeros(1)] * len(ranking.RankedLists._fields))._replace(
            rel_code=np.zeros(n, dtype=np.uint8))
        return a

    assert kernel.variant_for(args(PARALLEL_MIN_WORK - 1)) == SERIAL
    assert kernel.variant_for(args(PARALLEL_MIN_WORK)) == PARALLEL
    assert kernel.variant_for(args(0)) == SERIAL


def test_every_parallel_kernel_names_existing_arguments():
    with pytest.raises(TypeError):
        _jit.njit(lambda x, out: None, parallel=True, work="rows")
    with pytest.raises(TypeError):
        _jit.njit(lambda x, out: None, parallel=True)
    kernels = sized_kernels()
    assert len(kernels) >= 19
    for kernel in kernels:  # the serial twin has its own name, so numba caches it apart
        assert kernel.serial.py_func.__qualname__ == kernel.py_func.__qualname__ + "_serial"
        assert kernel.parallel.py_func is kernel.py_func


def test_inputs_reach_the_kernels_read_only_whatever_the_caller_passed():
    run, qrels, features, interactions = random_data(5, ids="int")
    writable = everything(run, qrels, features, interactions, "average")
    frozen = []
    for frame in (run, qrels):
        copy = frame.copy()
        for column in copy.columns:
            values = copy[column].to_numpy().copy()
            values.flags.writeable = False
            copy[column] = values
        frozen.append(copy)
    assert_identical(writable, everything(*frozen, features, interactions, "average"))
    for kernel in sized_kernels():
        names = kernel.py_func.__code__.co_varnames[:kernel.py_func.__code__.co_argcount]
        for variant in (kernel.serial, kernel.parallel):
            for signature in variant.signatures:
                for i, arg in enumerate(signature):
                    if i in kernel._writes:
                        continue
                    inner = list(arg) if isinstance(arg, types.BaseTuple) else [arg]  # e.g. string ids
                    for array in (t for t in inner if isinstance(t, types.Array)):
                        assert not array.mutable, (kernel.py_func.__qualname__, names[i])


def test_dashboard_starts_its_background_warmup_once(monkeypatch):
    from dashboard import kernel_warmup

    started = []

    class FakeProcess:
        def __init__(self, args, **kwargs):
            started.append(args)

    monkeypatch.setattr(kernel_warmup, "_started", None)
    monkeypatch.setattr(kernel_warmup, "_cache_complete", False)  # a cache without every kernel
    monkeypatch.setattr(kernel_warmup.subprocess, "Popen", FakeProcess)
    first = kernel_warmup.start_once()
    assert kernel_warmup.start_once() is first
    assert started == [[sys.executable, "-m", "metrics_core.warmup", "--background", "--first-page",
                        "--parent", str(os.getpid())]]


@pytest.mark.parametrize("parent_lives", [0, 8], ids=["parent-gone-before-start", "parent-ends-during-compile"])
def test_background_warmup_ends_with_its_parent(tmp_path, parent_lives):
    """A parent starts ``metrics_core.warmup --background --parent PID`` and exits, at once or while
    the warm-up compiles (an empty kernel cache): the warm-up must end too."""
    parent = subprocess.run(
        [sys.executable, "-c",
         "import os, subprocess, sys, time; p = subprocess.Popen([sys.executable, '-m', 'metrics_core.warmup', "
         f"'--background', '--parent', str(os.getpid())]); print(p.pid, flush=True); time.sleep({parent_lives})"],
        capture_output=True, text=True, check=True, env={**__import__("os").environ,
                                                         "NUMBA_CACHE_DIR": str(tmp_path)})
    child = int(parent.stdout.strip())
    deadline = time.monotonic() + deadlines.BACKGROUND
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{child}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state == "Z":  # ended, not yet reaped
            return
        time.sleep(0.2)
    subprocess.run(["kill", str(child)])
    pytest.fail("the background warm-up outlived its parent")


# a script prologue that counts numba compiles (not cache loads) by the compiled function's name
COMPILE_LISTENER = """
import collections, sys
from numba.core import event
compiled = collections.Counter()
class Listener(event.Listener):
    def on_start(self, ev):
        compiled[ev.data['dispatcher'].py_func.__qualname__] += 1
    def on_end(self, ev):
        pass
event.register('numba:compile', Listener())
"""


@pytest.mark.long  # compiles on an empty kernel cache, twice: 123 s in a full run
def test_first_page_warmup_compiles_what_the_overview_asks_for_without_the_layout_kernel(tmp_path):
    """On an empty kernel cache, the first-page phase of the warm-up compiles every kernel the Overview
    of the demo asks for except the layout kernel, and the Overview then compiles nothing: on a fresh
    install it lays the demo out in plain Python."""
    script = COMPILE_LISTENER + """
if sys.argv[1] == 'warmup':
    import metrics_core as mc
    from metrics_core import warmup
    warmup._first_page(mc)
else:
    from dashboard import kernel_warmup
    kernel_warmup.start_once = lambda: None
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file('dashboard/app.py', default_timeout=600)  # inside a subprocess bounded by deadlines.SUBPROCESS
    at.run()
    assert not at.exception
print(' '.join(sorted(name for name in compiled if name.startswith('_rank_and_join')
                      or '_serial' in name or name.endswith('_parallel'))))
"""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    root = str(Path(mc.__file__).resolve().parents[1])
    runs = [subprocess.run([sys.executable, "-c", script, part], cwd=root, env=env, capture_output=True, text=True,
                           timeout=deadlines.SUBPROCESS) for part in ("warmup", "page")]
    for done in runs:
        assert done.returncode == 0, done.stderr[-2000:]
    warmed, page = (done.stdout.split() for done in runs)
    assert "_rank_and_join_serial" not in warmed and "_ranking_families_serial" in warmed
    assert page == []


#: a probe kernel made with the package's ``njit``, in a module of its own; the processes started here import it
#: without running metrics_core's package ``__init__`` (pandas and the metric registry, which the probe never
#: uses: about a second of CPU less per process), the kernel decorator and its locks run as they are
KERNEL_MODULE = f'''
import sys, types
if "metrics_core" not in sys.modules:
    _package = types.ModuleType("metrics_core")
    _package.__path__ = [{str(Path(__file__).resolve().parents[1] / "metrics_core")!r}]
    sys.modules["metrics_core"] = _package
import numba as nb
import numpy as np
from metrics_core.kernels._jit import njit

@njit(parallel=True, work="x")
def total(x):
    s = 0.0
    for i in nb.prange(x.shape[0]):
        s += x[i]
    return s
'''


def _kernel_module(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lock_probe_kernels.py").write_text(KERNEL_MODULE)
    return folder


def test_cached_on_disk_is_false_until_a_first_call_compiles_the_variant(tmp_path):
    script = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from lock_probe_kernels import total
before = (total.cached_on_disk("serial"), total.cached_on_disk("parallel"))
assert total(np.ones(4)) == 4.0
print(before, (total.cached_on_disk("serial"), total.cached_on_disk("parallel")))
"""
    folder = _kernel_module(tmp_path / "mod")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script, str(folder)], env=env, capture_output=True, text=True,
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "(False, False) (True, False)"


def test_a_process_waits_for_another_compiling_the_same_kernel_then_loads_it(tmp_path):
    """The first call of a kernel takes its compile lock: while another process holds it the call
    waits, then loads the other's compiled code from the shared cache instead of compiling it."""
    import fcntl

    script = COMPILE_LISTENER + """
sys.path.insert(0, sys.argv[1])
import numpy as np
from lock_probe_kernels import total
open(sys.argv[2], 'w').write('started')
assert total(np.ones(3)) == 3.0
print(' '.join(sorted(compiled)))
"""
    folder = _kernel_module(tmp_path / "mod")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    cache_folder = _cache_folder(folder, env)
    # this test process plays the other process: it holds the lock, compiles, then releases it
    os.makedirs(cache_folder, exist_ok=True)
    lock = open(os.path.join(cache_folder, "total_serial.compile-lock"), "a+b")
    fcntl.flock(lock, fcntl.LOCK_EX)
    started = tmp_path / "started"
    # the waiter would stop waiting after METRICS_CORE_COMPILE_WAIT: longer than this test's own bound
    waiter = subprocess.Popen([sys.executable, "-c", script, str(folder), str(started)],
                              env={**env, "METRICS_CORE_COMPILE_WAIT": str(deadlines.SUBPROCESS)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + deadlines.BACKGROUND
        while not started.exists() and waiter.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), waiter.stderr.read()[-2000:] if waiter.poll() is not None else "no start"
        time.sleep(1.0)
        assert waiter.poll() is None  # still waiting for the lock
        compile_in_subprocess(folder, env)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    out, err = waiter.communicate(timeout=deadlines.SUBPROCESS)
    assert waiter.returncode == 0, err[-2000:]
    assert "total_serial" not in out.split()  # loaded from the cache the other process filled


def _cache_folder(folder: Path, env: dict) -> str:
    """The numba cache folder of the probe kernel's serial variant, as a new process sees it."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from lock_probe_kernels import total; "
         "print(total.serial._cache._cache_path)", str(folder)],
        env=env, capture_output=True, text=True, timeout=deadlines.SUBPROCESS, check=True).stdout.strip()


def compile_in_subprocess(folder: Path, env: dict) -> None:
    """Compile the probe kernel's serial variant into the shared cache (without taking the lock)."""
    script = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from lock_probe_kernels import total
x = np.ones(2)
x.flags.writeable = False  # as the kernel's first call passes it
assert total.serial(x) == 2.0
"""
    done = subprocess.run([sys.executable, "-c", script, str(folder)], env=env, capture_output=True, text=True,
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr[-2000:]


def _hold_lock_and_call(tmp_path, compiled_first: bool, wait: float):
    """Hold the probe kernel's compile lock in this process while a new process makes its first
    call (with ``METRICS_CORE_COMPILE_WAIT=wait``); returns the names that process compiled."""
    import fcntl

    script = COMPILE_LISTENER + """
sys.path.insert(0, sys.argv[1])
import numpy as np
from lock_probe_kernels import total
assert total(np.ones(3)) == 3.0
print(' '.join(sorted(compiled)))
"""
    folder = _kernel_module(tmp_path / "mod")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    if compiled_first:
        compile_in_subprocess(folder, env)
    cache_folder = _cache_folder(folder, env)
    os.makedirs(cache_folder, exist_ok=True)
    lock = open(os.path.join(cache_folder, "total_serial.compile-lock"), "a+b")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:  # the lock is held for the whole run of the other process: it must not wait for it
        done = subprocess.run([sys.executable, "-c", script, str(folder)],
                              env={**env, "METRICS_CORE_COMPILE_WAIT": str(wait)},
                              capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_a_kernel_on_disk_is_loaded_without_waiting_for_the_compile_lock(tmp_path):
    """A holder that never lets go (a starved background warm-up) does not delay a kernel whose
    compiled code is already on disk: loading takes no lock (the wait allowed would fail the run)."""
    compiled = _hold_lock_and_call(tmp_path, compiled_first=True, wait=deadlines.SUBPROCESS * 10)
    assert "total_serial" not in compiled  # loaded, not compiled


def test_the_wait_for_another_compile_is_bounded(tmp_path):
    """Past METRICS_CORE_COMPILE_WAIT seconds the first call compiles the kernel itself."""
    compiled = _hold_lock_and_call(tmp_path, compiled_first=False, wait=1)
    assert "total_serial" in compiled
