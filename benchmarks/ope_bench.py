"""Off-policy estimation at scale: IPS and SNIPS over N logged rows, and DM/DR's reward-model fit apart.

::

    python -m benchmarks.ope_bench --rows 10000000 --users 1000000 --items 20 --repeats 3 --text-repeats 1

Data (seeded): ``users`` contexts, ``items`` actions, the log draws a context
and an action uniformly (propensity ``1/items``) with a click of probability
rising with the item's index; the model's run scores every item of every
context (``users x items`` rows), the evaluation policy is its top-1.

Timings, each the median of ``repeats`` (wall seconds, and the process's CPU
seconds beside them: the machine is shared, CPU seconds are the steadier):

* ``estimators``: IPS, SNIPS, the effective sample size and the largest weight
  from the aligned arrays (``pi_e`` at the logged action, propensity, reward);
* ``prepare_log``: coding the text ids of the log and the run once
  (``mc.prepare_log(log, run)``: pyarrow's dictionary encoding over both);
* ``off_policy(prepared)``: the whole ``mc.off_policy(prepared, policy="top1",
  estimators=["ips", "snips"], n_bootstrap=0)`` on the coded log: the action
  probabilities of the run, their lookup at every logged action, the
  estimators, diagnostics, warnings and per-context shares (prepare once,
  estimate many);
* ``off_policy(log, run)`` with text ids (``--text-repeats``, default 1): both
  of the above in one call;
* ``reward model``: DM/DR's cross-fitted fit on ``--dr-rows`` rows (its own
  line: ``reward_model_seconds`` of the result).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd


def make(rows: int, users: int, items: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    user_ids = pd.Series(np.arange(users)).astype(str).to_numpy(dtype=object)
    item_ids = pd.Series(np.arange(items)).astype(str).to_numpy(dtype=object)
    u = rng.integers(0, users, rows)
    a = rng.integers(0, items, rows)
    reward = (rng.random(rows) < 0.02 + 0.04 * a / items).astype(float)
    log = pd.DataFrame({"user_id": user_ids[u], "item_id": item_ids[a], "reward": reward,
                        "propensity": np.full(rows, 1.0 / items)})
    run = pd.DataFrame({"user_id": np.repeat(user_ids, items), "item_id": np.tile(item_ids, users),
                        "score": rng.random(users * items)})
    return log, run


def timed(fn):
    """(result, wall seconds, CPU seconds of this process)."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def time_estimators(pi_e, pscore, reward) -> float:
    from metrics_core.ope import estimators as E

    t = time.perf_counter()
    w = E.importance_weights(pi_e, pscore)
    float(E.ips_terms(reward, w).mean())
    E.snips_value(reward, w)
    E.effective_sample_size(w)
    float(w.max())
    return time.perf_counter() - t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--users", type=int, default=1_000_000)
    p.add_argument("--items", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dr-rows", type=int, default=100_000)
    p.add_argument("--text-repeats", type=int, default=1)
    args = p.parse_args(argv)
    import metrics_core as mc
    from metrics_core.ope.codes import LogCodes
    from metrics_core.ope.policy import action_probabilities

    t = time.perf_counter()
    log, run = make(args.rows, args.users, args.items)
    print(f"data: {args.rows:,} logged rows, run {len(run):,} rows ({time.perf_counter() - t:.1f} s to generate)")
    prepared, prep_wall, prep_cpu = timed(lambda: mc.prepare_log(log, run))
    print(f"prepare_log (code text ids of log and run once): {prep_wall:.2f} s wall, {prep_cpu:.2f} s CPU")
    probs = action_probabilities(run, "top1")
    pi_e = LogCodes.of(log).at_logged(log, probs)
    pscore, reward = log["propensity"].to_numpy(), log["reward"].to_numpy()
    est, whole, whole_cpu = [], [], []
    for _ in range(args.repeats):
        est.append(time_estimators(pi_e, pscore, reward))
        res, wall, cpu = timed(lambda: mc.off_policy(prepared, policy="top1", estimators=["ips", "snips"],
                                                     n_bootstrap=0))
        whole.append(wall)
        whole_cpu.append(cpu)
    print(res.estimates[["estimator", "value"]].to_string(index=False))
    print(f"estimators (IPS, SNIPS, ESS, max weight) on the aligned arrays: median {statistics.median(est):.3f} s")
    print(f"mc.off_policy(prepared, policy='top1', estimators=['ips','snips'], n_bootstrap=0): median "
          f"{statistics.median(whole):.2f} s wall ({', '.join(f'{x:.2f}' for x in whole)}), "
          f"{statistics.median(whole_cpu):.2f} s CPU")
    for _ in range(args.text_repeats):
        same, wall, cpu = timed(lambda: mc.off_policy(log, run, policy="top1", estimators=["ips", "snips"],
                                                      n_bootstrap=0))
        assert same.estimates["value"].tolist() == res.estimates["value"].tolist()
        print(f"mc.off_policy(log, run) from text ids in one call: {wall:.2f} s wall, {cpu:.2f} s CPU")
    small = log.iloc[: args.dr_rows]
    small_run = run[run["user_id"].isin(set(small["user_id"]))]
    t = time.perf_counter()
    res = mc.off_policy(small, small_run, policy="top1", estimators=["dm", "dr"], n_bootstrap=0)
    total = time.perf_counter() - t
    fit = float(res.diagnostics["reward_model_seconds"].iloc[0])
    print(f"DM/DR on {len(small):,} rows: {total:.2f} s in all, of which the reward model "
          f"({res.settings['reward_model']}, {res.settings['n_folds']} folds) {fit:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
