"""On a fresh install (the layout kernel not compiled yet) ``metrics-core evaluate`` lays out a small
file with the plain-Python pass instead of compiling the kernel first: the same tables, the same
warnings and the same one-line errors as the compiled pass, which runs once the kernel is cached or
the input is larger than ``PLAIN_LAYOUT_MAX_ROWS``."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run as cli

from metrics_core.layout import build, plain

DATA = Path(__file__).resolve().parent / "data" / "formats"
METRICS = "ndcg@10,map@100,recall@10,mrr@10,precision@5,r_precision"


@pytest.fixture
def layout_calls(monkeypatch):
    """Calls of the plain pass, counted; ``uncompiled(True)`` makes the layout kernel look not cached. numba is
    loaded first: in a process that has not loaded it a small input takes the plain pass even when the kernel
    is cached (``_jit.INTERPRET_CACHED_MAX_WORK``)."""
    from metrics_core.kernels._jit import load_numba

    load_numba()
    calls = []
    real = plain.rank_and_join

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(plain, "rank_and_join", counted)

    def uncompiled(flag: bool):
        monkeypatch.setattr(build, "layout_kernel_cached", lambda: not flag)
    return calls, uncompiled


def _both(layout_calls, *args):
    calls, uncompiled = layout_calls
    uncompiled(False)
    compiled = cli(*args)
    assert calls == []
    uncompiled(True)
    fresh = cli(*args)
    return compiled, fresh, len(calls)


@pytest.mark.parametrize("run, qrels", [("run.csv", "qrels.csv"), ("run.trec", "qrels.qrels"),
                                        ("run_ws.txt", "qrels.tsv"), ("run.parquet", "qrels_negative.qrels")])
def test_a_small_file_on_a_fresh_install_gives_what_the_compiled_layout_gives(layout_calls, run, qrels, tmp_path):
    per_user = tmp_path / "per_user.csv"
    args = ("evaluate", "--run", DATA / run, "--qrels", DATA / qrels, "-m", METRICS, "--per-user", per_user)
    calls, uncompiled = layout_calls
    uncompiled(False)
    compiled = cli(*args)
    compiled_per_user = per_user.read_text()
    assert calls == [] and compiled.returncode == 0
    uncompiled(True)
    fresh = cli(*args)
    assert len(calls) == 1
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (compiled.returncode, compiled.stdout, compiled.stderr)
    assert per_user.read_text() == compiled_per_user


def test_a_repeated_pair_says_the_same_line(layout_calls, tmp_path):
    run = tmp_path / "run.csv"
    run.write_text("user_id,item_id,score\nu1,12,0.5\nu1,12.0,0.4\nu2,a,0.3\nu2, a,0.2\n")
    qrels = tmp_path / "qrels.csv"
    qrels.write_text("user_id,item_id,relevance\nu1,12,1\nu2,a,1\n")
    compiled, fresh, n_plain = _both(layout_calls, "evaluate", "--run", run, "--qrels", qrels, "-m", "ndcg@10")
    assert n_plain == 1 and compiled.returncode == 2 and compiled.stderr.startswith("error: ")
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (compiled.returncode, compiled.stdout, compiled.stderr)


def test_a_larger_input_or_a_cached_kernel_takes_the_compiled_pass(layout_calls, monkeypatch):
    calls, uncompiled = layout_calls
    uncompiled(True)
    monkeypatch.setattr(build, "PLAIN_LAYOUT_MAX_ROWS", 3)
    assert cli("evaluate", "--run", DATA / "run.csv", "--qrels", DATA / "qrels.csv", "-m", "ndcg@10").returncode == 0
    assert calls == []
