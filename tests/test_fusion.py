"""mc.fuse against ranx.fuse on generated runs: tied scores, users missing in one run, lists of 1 to 14
items; every method under min-max, max and sum normalisation, z-score against a formula written here;
weights chosen on one share of the users and reported on the other; ``metrics-core fuse``.

ranx sorts tied scores with an unspecified order; its rank-based methods (RRF, ISR, BordaFuse) are
compared on runs whose ties are broken the way mc.fuse breaks them (the run's row order), given to ranx
as distinct scores in that order. ranx's z-score normalisation (``zmuv``) loses whole queries of a run
here (ranx 0.3, its parallel loop), so ``zmuv`` is checked against the formula ``(s - mean) / std``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _quick_cases import covering

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.fusion import METHODS

TOL = 1e-9
PARAMS = {"wsum": {"weights": [0.2, 0.5, 0.3]}, "rrf": {"k": 60}}


def make_runs(seed: int, ties: bool):
    """Three runs over 12 users: user q3 missing from the first, q5 from the second; lists of 1 to 14."""
    rng = np.random.default_rng(seed)
    runs = []
    for drop in ({"q3"}, {"q5"}, set()):
        rows = []
        for u in range(12):
            if f"q{u}" in drop:
                continue
            n = int(rng.integers(1, 15))
            scores = rng.integers(0, 4, n) / 2.0 if ties else rng.normal(size=n)
            rows += [(f"q{u}", f"d{i}", float(s)) for i, s in zip(rng.choice(30, n, replace=False), scores)]
        runs.append(pd.DataFrame(rows, columns=["user_id", "item_id", "score"]))
    assert any(r.groupby("user_id")["score"].nunique().lt(r.groupby("user_id").size()).any() for r in runs) == ties
    return runs


def _ranx_runs(runs, distinct: bool):
    """ranx Runs over every user (an empty dict where a run lacks one); with ``distinct``, scores replaced by
    n, n-1, ... in the order score descending, ties by row (mc.fuse's ranks)."""
    from ranx import Run

    users = sorted(set().union(*[set(r["user_id"]) for r in runs]))
    out = []
    for run in runs:
        d = {u: {} for u in users}
        frame = run.assign(row=np.arange(len(run)))
        for u, g in frame.groupby("user_id"):
            g = g.sort_values(["score", "row"], ascending=[False, True], kind="stable")
            values = np.arange(len(g), 0, -1, dtype=float) if distinct else g["score"].to_numpy()
            d[u] = dict(zip(g["item_id"], values))
        out.append(Run(d))
    return out


def _as_dict(run: pd.DataFrame) -> dict:
    out = {}
    for u, i, s in run.itertuples(index=False):
        out.setdefault(u, {})[i] = s
    return out


def _same(got: pd.DataFrame, want: dict):
    g = _as_dict(got)
    assert {(u, i) for u in g for i in g[u]} == {(u, i) for u in want for i in want[u]}
    for u in want:
        for i, v in want[u].items():
            assert g[u][i] == pytest.approx(v, rel=1e-12, abs=TOL), (u, i)  # max norm: s / 1e-9 when max < 0


#: every method x normalisation x tied or distinct scores; the quick tier each value of each at least once
FUSE_CASES = covering([(method, norm, ties) for method in METHODS for norm in ("min-max", "max", "sum")
                       for ties in (False, True)], lambda c: c[0], lambda c: c[1], lambda c: c[2])


@pytest.mark.parametrize("method, norm, ties", FUSE_CASES, ids=[f"{m}-{n}-{t}" for m, n, t in FUSE_CASES])
def test_fuse_matches_ranx(ties, norm, method):
    from ranx import fuse as ranx_fuse

    runs = make_runs(ties + 1, ties)  # two draws: one with tied scores, one without
    params = PARAMS.get(method, {})
    rank_based = method in ("rrf", "isr", "bordafuse")
    if rank_based:  # ranx's order of tied scores is its sort's: the ranks are given to it (see the docstring)
        want = ranx_fuse(_ranx_runs(runs, distinct=True), norm=norm, method=method, params=params).to_dict()
    else:
        want = ranx_fuse(_ranx_runs(runs, distinct=False), norm=norm, method=method, params=params).to_dict()
    got = mc.fuse(runs, method=method, norm=norm, **params)
    _same(got, want)
    # each user's items by fused score descending
    for _, g in got.groupby("user_id", sort=False):
        assert g["score"].is_monotonic_decreasing


@pytest.mark.parametrize("method", ["sum", "mnz", "max", "min", "med", "anz", "wsum"])
def test_zscore_normalisation_matches_the_formula(method):
    runs = make_runs(3, ties=True)
    weights = [0.2, 0.5, 0.3]
    per_item: dict = {}
    for r, run in enumerate(runs):
        for u, g in run.groupby("user_id"):
            s = g["score"].to_numpy()
            z = (s - s.mean()) / max(float(np.sqrt(((s - s.mean()) ** 2).mean())), 1e-9)
            for i, v in zip(g["item_id"], z):
                per_item.setdefault((u, i), []).append((r, v))
    want: dict = {}
    for (u, i), pairs in per_item.items():
        v = [x for _, x in pairs]
        want.setdefault(u, {})[i] = {"sum": sum(v), "mnz": sum(v) * len(v), "max": max(v), "min": min(v),
                                     "med": float(np.median(v)), "anz": sum(v) / len(v),
                                     "wsum": sum(weights[r] * x for r, x in pairs)}[method]
    got = mc.fuse(runs, method=method, norm="z-score", weights=weights if method == "wsum" else None)
    _same(got, want)


def test_fuse_refuses_bad_input_in_one_line():
    runs = make_runs(0, ties=False)
    with pytest.raises(mc.MetricsError, match="unknown fusion method 'nope'"):
        mc.fuse(runs, method="nope")
    with pytest.raises(mc.MetricsError, match="one finite weight per run"):
        mc.fuse(runs, method="wsum", weights=[1, 2])
    with pytest.raises(mc.MetricsError, match="at least two runs"):
        mc.fuse(runs[:1])
    doubled = pd.concat([runs[0], runs[0].head(1)], ignore_index=True)
    with pytest.raises(mc.MetricsError, match="listed twice"):
        mc.fuse([doubled, runs[1]], method="sum")


def _qrels(runs, seed=0):
    rng = np.random.default_rng(seed)
    items = pd.concat(runs).drop_duplicates(["user_id", "item_id"])
    return items.assign(relevance=rng.integers(0, 3, len(items)))[["user_id", "item_id", "relevance"]]


def test_weights_chosen_on_one_share_and_reported_on_the_other():
    runs = make_runs(4, ties=False)
    qrels = _qrels(runs)
    result = mc.optimize_fusion_weights(runs, qrels, metric="ndcg@5", step=0.25, train_share=0.5, seed=1)
    assert len(result.grid) == 15  # weights of 3 runs in quarters summing to 1
    assert not set(result.train_users) & set(result.test_users)
    assert set(result.train_users) | set(result.test_users) == set(qrels["user_id"])
    assert result.train == result.grid["train"].max()
    # each reported number is evaluate on its users of the run fused with the chosen weights
    fused = mc.fuse(runs, method="wsum", weights=result.weights)
    for users, value in ((result.train_users, result.train), (result.test_users, result.test)):
        truth = qrels[qrels["user_id"].isin(users)]
        want = mc.evaluate(fused[fused["user_id"].isin(users)], truth, metrics=["ndcg@5"]).summary["ndcg@5"]
        assert value == pytest.approx(want, abs=TOL)
    assert sum(result.weights) == pytest.approx(1.0)


def test_cli_fuse_writes_a_run_file(tmp_path, capsys):
    runs = make_runs(5, ties=True)
    paths = []
    for i, run in enumerate(runs):
        paths.append(tmp_path / f"run{i}.csv")
        run.to_csv(paths[-1], index=False)
    out = tmp_path / "fused.trec"
    args = ["fuse"] + [x for p in paths for x in ("--run", str(p))] + ["--method", "rrf", "--output", str(out)]
    assert main(args) == 0
    got = pd.read_csv(out, sep=" ", header=None, names=["user_id", "q0", "item_id", "rank", "score", "tag"],
                      dtype={"user_id": str, "item_id": str})
    want = mc.fuse(runs, method="rrf")
    assert list(got["user_id"]) == list(want["user_id"]) and list(got["item_id"]) == list(want["item_id"])
    assert np.allclose(got["score"], want["score"], atol=1e-12)
    assert (got["rank"] == got.groupby("user_id").cumcount() + 1).all()
    assert (got["tag"] == "rrf").all()
    # a bad method is one line naming the choices
    assert main(["fuse", "--run", str(paths[0]), "--run", str(paths[1]), "--method", "nope",
                 "--output", str(tmp_path / "x.csv")]) != 0
