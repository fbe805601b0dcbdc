"""The kernels' own Python source run by the interpreter (inside ``interpret_until_compiled``, as the
command line runs small inputs on a fresh install) gives the numbers the compiled kernels give.

Every metric of the registry is evaluated twice on adversarial data (ties, short and empty lists,
ground-truth users missing from the run, run-only users, users judged without a relevant item, graded
and negative relevance, ids "12" beside "12.0", string and integer ids) under several conventions
and cutoffs: once by the compiled kernels (the library outside the context), once with every
parallel kernel made to look uncompiled and uncached inside the context, so that each one with a
Python form runs it. Results must be equal exactly: both forms do the same IEEE double operations
in the same order. The kernels that ran compiled in the second evaluation are listed, so a kernel
that stops being interpretable is seen.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run as cli
from test_spark import make_data

import metrics_core as mc
from metrics_core.kernels import _jit, interpreted
from metrics_core.kernels._jit import nb
from metrics_core.layout import build
from metrics_core.metrics import registry

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ROOT / "tests" / "data" / "formats"


def labels_at(k: int, ties: str) -> list[str]:
    """Every registry metric, at cutoff ``k`` where it takes one (those read over one order of a
    tied list are refused under ``ties="average"`` and left out there)."""
    out = []
    for m in registry.METRICS:
        if ties == "average" and m.one_order:
            continue
        if m.cutoff == registry.CUTOFF_LEVEL:
            out.append(f"{m.name}@0.5")
        elif m.cutoff == registry.CUTOFF_NONE:
            out.append(m.name)
        else:
            out.append(f"{m.name}@{k}")
    return list(dict.fromkeys(out))


def adversarial(int_ids: bool, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Run, ground truth, item features and interactions with every awkward case (see the module
    docstring); scores kept inside (0, 1) so that they serve as probabilities too."""
    run, qrels, feats = make_data(seed=seed, n_users=50, int_ids=int_ids)
    run["score"] = run["score"] * 0.9 + 0.05
    first = run["user_id"].iloc[0]
    qrels.loc[len(qrels)] = (first, 9999 if int_ids else "i999", -1)  # a negative judgment
    if not int_ids:  # "12" and "12.0" are two items
        extra = pd.DataFrame({"user_id": ["u12", "u12", "u12"], "item_id": ["12", "12.0", "7"],
                              "score": [0.5, 0.5, 0.25]})
        run = pd.concat([run, extra], ignore_index=True)
        qrels = pd.concat([qrels, pd.DataFrame({"user_id": ["u12", "u12"], "item_id": ["12.0", "8"],
                                                "relevance": [2, 1]})], ignore_index=True)
        feats = pd.concat([feats, pd.DataFrame({"item_id": ["12", "12.0"], "f1": [0.5, 0.25], "f2": [0.0, 1.0],
                                                "f3": [1.0, 1.0]})], ignore_index=True)
    interactions = run[["user_id", "item_id"]].iloc[::3].reset_index(drop=True)
    return run, qrels, feats, interactions


@pytest.fixture
def fresh_install(monkeypatch):
    """Make every kernel look not cached on disk; returns the names of the kernels run as Python
    and of those run compiled while it is in place, and ``forget()``, which makes them look not
    compiled in this process either."""
    seen = {"python": set(), "compiled": set()}
    real_run = interpreted.run

    runs = []

    def python_run(fn, args):
        seen["python"].add(fn.__qualname__)
        runs.append(fn)
        return real_run(fn, args)

    real_call = _jit.LazyKernel.__call__

    def lazy_call(self, *args, **kwargs):
        before = len(runs)
        result = real_call(self, *args, **kwargs)
        if len(runs) == before:
            seen["compiled"].add(self.py_func.__qualname__)
        return result

    monkeypatch.setattr(interpreted, "run", python_run)
    monkeypatch.setattr(_jit.LazyKernel, "__call__", lazy_call)
    monkeypatch.setattr(_jit.SizedKernel, "cached_on_disk", lambda self, variant: False)
    monkeypatch.setattr(_jit.LazyKernel, "cached_on_disk", lambda self: False)

    def forget() -> None:
        """Every kernel as if not called yet in this process."""
        for kernel in _jit.SizedKernel.instances:
            monkeypatch.setattr(kernel, "_called", {_jit.SERIAL: False, _jit.PARALLEL: False})
        for kernel in _jit.LazyKernel.instances:
            monkeypatch.setattr(kernel, "_called", False)

    seen["forget"] = forget
    for variant in ("serial", "parallel"):
        real = getattr(_jit.SizedKernel, variant)

        def compiled(self, real=real):
            seen["compiled"].add(self.py_func.__qualname__)
            return real.fget(self)
        monkeypatch.setattr(_jit.SizedKernel, variant, property(compiled))
    return seen


#: Metrics whose kernels call a C library function (``math.exp``, ``math.lgamma``, ``math.log``, ``**``):
#: interpreted, Python calls the C library's; compiled, numba calls LLVM's intrinsics or its own
#: versions, which may round the last bit differently. Equal to ``rtol=1e-12`` there, exactly elsewhere.
LIBM = {"pap", "ild", "ils"}


def assert_equal(python: mc.Evaluation, compiled: mc.Evaluation) -> None:
    assert list(python.summary) == list(compiled.summary)
    assert list(python.per_user.columns) == list(compiled.per_user.columns)
    assert python.per_user.index.equals(compiled.per_user.index)
    differ = []
    for label, value in compiled.summary.items():
        got = python.summary[label]
        if not ((got == value) or (got != got and value != value)):
            differ.append(label)
    for column in compiled.per_user.columns:
        a, b = python.per_user[column].to_numpy(), compiled.per_user[column].to_numpy()
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            differ.append(column)
    inexact = sorted({label for label in differ if label.split("@")[0] not in LIBM})
    assert not inexact, inexact
    for label in differ:
        if label in compiled.summary:
            assert python.summary[label] == pytest.approx(compiled.summary[label], rel=1e-12, abs=0), label
        else:
            np.testing.assert_allclose(python.per_user[label], compiled.per_user[label], rtol=1e-12, atol=0)


#: the parallel kernels that keep running compiled inside the context (with the reason)
COMPILED_ONLY: dict[str, str] = {}

CASES = [  # (integer ids, seed, cutoff, the layout kernel rather than the plain-Python layout, conventions)
    (False, 1, 5, False, {}),
    (False, 2, 3, True, {"ties": "trec", "gain": "exponential", "ap_norm": "retrieved", "empty_users": "zero"}),
    (True, 3, 10, True, {"ties": "average", "ideal": "retrieved", "ap_norm": "min_k", "missing_users": "exclude",
                         "run_only_users": "zero", "relevance_threshold": 2.0}),
    (False, 4, 1, False, {"ties": "input", "ideal": "k", "ap_norm": "k", "precision_norm": "min_k",
                          "gain": "binary", "short_lists": "zero", "unjudged_rows": "exclude"}),
    (True, 5, 20, False, {"ties": "score_id", "ild_distance": "cosine", "novelty_popularity": "interactions",
                          "gauc_weight": "positives", "recall_level_count": "add_0.9"}),
]


@pytest.mark.parametrize("int_ids, seed, k, layout_kernel, conventions", CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_every_metric_as_python_equals_the_compiled_kernels(fresh_install, monkeypatch, int_ids, seed, k,
                                                            layout_kernel, conventions):
    if layout_kernel:  # the layout kernel itself as Python (inputs above the plain layout's limit)
        monkeypatch.setattr(build, "PLAIN_LAYOUT_MAX_ROWS", 0)
    run, qrels, feats, interactions = adversarial(int_ids, seed)
    labels = labels_at(k, conventions.get("ties", "average"))
    if k != 5:  # several cutoffs in one walk as well
        labels += ["ndcg@5", "map@2", "ndcg", "precision@1"]
    given = dict(item_features=feats, interactions=interactions, **conventions)
    compiled = mc.evaluate(run, qrels, labels, **given)
    assert not fresh_install["python"]
    fresh_install["forget"]()
    fresh_install["compiled"].clear()
    with _jit.interpret_until_compiled():
        python = mc.evaluate(run, qrels, labels, **given)
    assert_equal(python, compiled)
    assert {"_ranking_families", "relevance_codes"} <= fresh_install["python"]
    assert ("_rank_and_join" in fresh_install["python"]) == layout_kernel
    assert fresh_install["compiled"] <= set(COMPILED_ONLY), fresh_install["compiled"] - set(COMPILED_ONLY)


@pytest.mark.parametrize("conventions", [{}, {"gain": "exponential", "ideal": "retrieved", "ties": "trec"}])
def test_the_metric_curve_as_python_equals_the_compiled_kernel(fresh_install, conventions):
    run, qrels, _, _ = adversarial(False, 8)
    ranked = mc.prepare(run, qrels)
    metrics = ["precision", "recall", "mrr", "ndcg", "map", "hit_rate", "f1", "dcg"]
    compiled = mc.metric_curve(ranked, metrics, k_max=12, **conventions)
    fresh_install["forget"]()
    with _jit.interpret_until_compiled():
        python = mc.metric_curve(ranked, metrics, k_max=12, **conventions)
    assert "_ranking_curve" in fresh_install["python"]
    pd.testing.assert_frame_equal(python, compiled, check_exact=True)


@pytest.mark.parametrize("run, qrels", [("run.trec", "qrels.qrels"), ("run_ws.txt", "qrels.tsv"),
                                        ("run.csv", "qrels.csv")])
def test_the_command_line_reading_files_as_python_prints_what_it_prints_compiled(fresh_install, monkeypatch,
                                                                                 run, qrels):
    """The readers' kernels (text scan, repeated pairs) and the layout as Python: the same output."""
    args = ("evaluate", "--run", FORMATS / run, "--qrels", FORMATS / qrels, "-m", "ndcg@10,map,bpref,err@5", "--json")
    limit = _jit.INTERPRET_MAX_WORK
    monkeypatch.setattr(_jit, "INTERPRET_MAX_WORK", 0)  # the command line's context turned off: compiled
    compiled = cli(*args)
    assert compiled.returncode == 0 and not fresh_install["python"]
    monkeypatch.setattr(_jit, "INTERPRET_MAX_WORK", limit)
    monkeypatch.setattr(build, "PLAIN_LAYOUT_MAX_ROWS", 0)
    fresh_install["forget"]()
    python = cli(*args)
    assert (python.returncode, python.stdout, python.stderr) == (compiled.returncode, compiled.stdout, compiled.stderr)
    assert {"_rank_and_join", "_ranking_families", "bpref", "_err"} <= fresh_install["python"]
    print(sorted(fresh_install["python"]))


def test_outside_the_context_or_above_the_limit_the_compiled_kernels_run(fresh_install):
    run, qrels, _, _ = adversarial(False, 6)
    mc.evaluate(run, qrels, ["ndcg@10", "map"])
    assert not fresh_install["python"] and "_ranking_families" in fresh_install["compiled"]
    fresh_install["forget"]()
    with _jit.interpret_until_compiled(max_work=len(run) // 10):
        mc.evaluate(run, qrels, ["ndcg@10"])
    assert "_ranking_families" not in fresh_install["python"]
    fresh_install["forget"]()
    # intra-list distance counts its item pairs (a tenth of a row each), which grow as k squared
    long = pd.DataFrame({"user_id": np.repeat(["a", "b", "c"], 40), "item_id": np.tile([f"i{j}" for j in range(40)], 3),
                         "score": np.tile(np.arange(40.0), 3)})
    feats = pd.DataFrame({"item_id": [f"i{j}" for j in range(40)], "f1": np.arange(40.0) % 3})
    truth = long.iloc[::7][["user_id", "item_id"]].assign(relevance=1)
    fresh_install["forget"]()
    with _jit.interpret_until_compiled(max_work=len(long) + len(truth)):  # 120 rows, 3 x 780 pairs at k = 40
        mc.evaluate(long, truth, ["ild@40"], item_features=feats)
        assert "ils" not in fresh_install["python"] and "ils" in fresh_install["compiled"]
        fresh_install["forget"]()
        mc.evaluate(long, truth, ["ild@5"], item_features=feats)
        assert "ils" in fresh_install["python"]
    fresh_install["forget"]()
    with _jit.interpret_until_compiled(), _jit.use_variant(_jit.SERIAL):  # the warm-up's way: compiled
        mc.evaluate(run, qrels, ["ndcg@10"])
    assert "_ranking_families" not in fresh_install["python"]


def uses_typed_list(n):
    values = nb.typed.List()
    for i in nb.prange(n):
        values.append(i)
    return values


def calls_a_plain_function(n):
    return adversarial(n)


def reads_a_module_function(n):
    return os.getpid() + n


def doubles(x, out):
    for i in nb.prange(x.shape[0]):
        out[i] = x[i] * 2.0


def test_a_kernel_reading_numba_beyond_prange_or_calling_python_has_no_python_form():
    assert interpreted.python_form(uses_typed_list) is None
    assert interpreted.python_form(calls_a_plain_function) is None
    assert interpreted.python_form(reads_a_module_function) is not None  # a module's attribute is a value
    out = np.zeros(3)
    interpreted.python_form(doubles)(np.arange(3.0), out)
    assert out.tolist() == [0.0, 2.0, 4.0]


def test_a_closure_over_a_kernel_has_no_python_form():
    from metrics_core.kernels.ranking import gain_of

    def inner(x):
        return gain_of(x, 0)

    assert interpreted.python_form(inner) is None


@pytest.mark.parametrize("cache_dir", ["given", "in the source tree"])
def test_the_cache_index_is_found_where_numba_puts_it(monkeypatch, tmp_path, cache_dir):
    """:func:`interpreted.index_path` (no numba) names the file numba's own locator names, with
    ``NUMBA_CACHE_DIR`` and without (``__pycache__`` beside the source, writable here)."""
    import numba
    from numba.core import caching

    where = str(tmp_path) if cache_dir == "given" else ""
    monkeypatch.setattr(numba.config, "CACHE_DIR", where)
    monkeypatch.setenv("NUMBA_CACHE_DIR", where)
    kernels = [k for k in _jit.LazyKernel.instances if k.options.get("cache")]
    assert len(kernels) > 50
    for kernel in kernels:
        assert interpreted.index_path(kernel, _jit.NUMBA_CONFIG_FILE) == caching.FunctionCache(kernel.py_func)._cache_file._index_path


def test_a_small_cli_evaluate_on_a_fresh_install_compiles_nothing_and_prints_the_compiled_numbers(
        tmp_path, monkeypatch):
    """A new process on an empty ``NUMBA_CACHE_DIR`` answers without loading numba, writes nothing into
    the cache, and prints what the same command prints in this process, whose kernels are compiled
    (the suite's warm cache)."""
    run, qrels, _, _ = adversarial(False, 7)
    run.to_csv(tmp_path / "run.csv", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    args = ["evaluate", "--run", str(tmp_path / "run.csv"), "--qrels", str(tmp_path / "qrels.csv"), "-m",
            "ndcg@10,map@100,mrr@10,precision@10,recall@100,err@5,bpref", "--json"]
    cache = tmp_path / "numba_cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    probe = ("import sys\nfrom metrics_core.cli import main\ncode = main(sys.argv[1:])\n"
             "sys.stderr.write('numba loaded: %s\\n' % ('numba' in sys.modules))\nsys.exit(code)")
    fresh = subprocess.run([sys.executable, "-c", probe, *args], env=env, cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stderr.splitlines()[-1] == "numba loaded: False"
    assert not cache.exists() or not any(p.is_file() for p in cache.rglob("*"))
    python_runs = []
    monkeypatch.setattr(interpreted, "run", lambda fn, a: python_runs.append(fn) or pytest.fail("interpreted"))
    compiled = cli(*args)
    assert compiled.returncode == 0 and not python_runs
    assert fresh.stdout == compiled.stdout


def test_a_small_cli_evaluate_on_a_complete_cache_runs_as_python_and_prints_the_compiled_numbers(
        tmp_path, monkeypatch):
    """With every kernel in numba's disk cache (the suite's warm cache), a new process still answers a small
    evaluate without loading numba (cheaper than loading it and the cached kernels), and prints what the
    compiled kernels print; with the limit below the input's size it loads numba and runs them compiled."""
    run, qrels, _, _ = adversarial(False, 8)
    run.to_csv(tmp_path / "run.csv", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    args = ["evaluate", "--run", str(tmp_path / "run.csv"), "--qrels", str(tmp_path / "qrels.csv"), "-m",
            "ndcg@10,map@100,mrr@10,precision@10,recall@100,err@5,bpref,pap", "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    probe = ("import sys\nfrom metrics_core.kernels import _jit\nfrom metrics_core.layout.sort_and_join import "
             "_rank_and_join\nfrom metrics_core.kernels.ranking import _ranking_families\n"
             "_jit.INTERPRET_CACHED_MAX_WORK = int(sys.argv[1])\n"
             "assert _rank_and_join.cached_on_disk('serial') and _ranking_families.cached_on_disk('serial')\n"
             "from metrics_core.cli import main\ncode = main(sys.argv[2:])\n"
             "sys.stderr.write('numba loaded: %s\\n' % ('numba' in sys.modules))\nsys.exit(code)")
    outputs = {}
    for limit, loaded in ((_jit.INTERPRET_CACHED_MAX_WORK, "False"), (10, "True")):
        done = subprocess.run([sys.executable, "-c", probe, str(limit), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines()[-1] == f"numba loaded: {loaded}"
        outputs[loaded] = done.stdout
    _jit.load_numba()  # this process runs the compiled kernels
    python_runs = []
    monkeypatch.setattr(interpreted, "run", lambda fn, a: python_runs.append(fn) or pytest.fail("interpreted"))
    compiled = cli(*args)
    assert compiled.returncode == 0 and not python_runs
    assert outputs["False"] == outputs["True"] == compiled.stdout


def test_the_text_scan_as_python_equals_the_compiled_kernel():
    """The large-file reader's kernel (uint64 words; its shifts and products wrap in both forms)."""
    from metrics_core.kernels.text_scan import scan_words

    rng = np.random.default_rng(3)
    text = rng.choice(np.frombuffer(b"ab \n\t\x00\xc3\xa9z", dtype=np.uint8), size=8 * 999)
    for words in (text.view(np.uint64), np.frombuffer(b"plain\nascii\ntext\n\n\n\nonly\n" * 8, dtype=np.uint64)):
        out = [(np.zeros(7, dtype=np.uint64), np.zeros(7, dtype=np.uint64)) for _ in range(2)]
        scan_words(words, 7, *out[0])
        interpreted.run(scan_words.py_func, (words, 7, *out[1]))
        assert all(np.array_equal(a, b) for a, b in zip(*out))
    assert out[0][0].sum() == 56 and not out[0][1].any()
