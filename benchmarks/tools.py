"""One measurement, run in its own process: ``python -m benchmarks.tools SPEC_JSON OUT_JSON``.

SPEC is ``{"tool": ..., "users": ..., "ids": "str"|"int", "ties": bool,
"repeats": n, "profile": bool}``.  The worker generates the data (not timed),
resets the process's peak-RSS mark (``/proc/self/clear_refs``), runs the tool,
and writes ``{"phases": {name: [seconds per repeat]}, "means": {...},
"peak_rss": bytes, "baseline_rss": bytes, "input_bytes": bytes, ...}``.

Tools (each measured from the in-memory DataFrames of :mod:`benchmarks.datagen`
to the five means of :data:`METRICS`):

metrics_core    ``mc.prepare`` (factorise ids, join ground truth, sort) then
                ``mc.evaluate``; also re-evaluation of the prepared data at other
                K with exponential gain (what the dashboard does on a click).
ranx            DataFrame -> ``Qrels``/``Run`` (``Run.from_df`` needs object-dtype
                ids under pandas 3; the cast is part of the conversion), then
                ``ranx.evaluate``.  Its numba compile (or cache load) is measured
                on a tiny input first and excluded.
pytrec_eval     dict building (the usual ``setdefault`` loop) then
                ``RelevanceEvaluator`` + ``evaluate`` + means.  trec_eval has no
                cut-off for ``recip_rank``: mrr@10 = RR if RR >= 1/10 else 0.
floor           :mod:`benchmarks.floor` on the generator's joined arrays.
parquet         split of ``metrics-core evaluate`` on a Parquet pair: read
                (``metrics_core.io.read_table``), prepare (sort), metrics.
classification  auc, logloss, gauc, pcopc on prepared data vs one ``np.sort``
                of the score column.
first_call      import + first prepare/evaluate of a fresh process vs the same
                call repeated (NUMBA_CACHE_DIR chosen by the parent).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks import datagen, floor

METRICS = list(floor.METRICS)
REEVAL_METRICS = ["ndcg@20", "map@50", "mrr@5", "precision@5", "recall@50"]
PYTREC_MEASURES = {"ndcg_cut.10", "map_cut.100", "recip_rank", "P.10", "recall.100"}
CLASSIFICATION = ["auc", "logloss", "gauc", "pcopc"]


# --------------------------------------------------------------------------- memory
def _status(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def current_rss() -> int:
    return _status("VmRSS")


def peak_rss() -> int:
    return _status("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --------------------------------------------------------------------------- helpers
def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _tiny(spec) -> datagen.Dataset:
    return datagen.generate(30, id_type=spec["ids"], seed=1)


# --------------------------------------------------------------------------- tools
def run_metrics_core(ds, spec, phases, extra):
    import metrics_core as mc

    from metrics_core.kernels._jit import PARALLEL, SERIAL, use_variant

    tiny = _tiny(spec)

    def compile_both():  # the tiny input would only reach the serial variants; large inputs run the parallel ones
        for variant in (SERIAL, PARALLEL):
            with use_variant(variant):
                mc.evaluate(mc.prepare(tiny.run, tiny.qrels), metrics=METRICS)

    extra["jit_s"], _ = _timed(compile_both)
    means = None
    for _ in range(spec["repeats"]):
        t_prep, ranked = _timed(lambda: mc.prepare(ds.run, ds.qrels))
        t_eval, ev = _timed(lambda: mc.evaluate(ranked, metrics=METRICS, ties=spec.get("mc_ties", "average")))
        t_re, _ = _timed(lambda: mc.evaluate(ranked, metrics=REEVAL_METRICS, gain="exponential"))
        phases.setdefault("prepare", []).append(t_prep)
        phases.setdefault("evaluate", []).append(t_eval)
        phases.setdefault("end to end", []).append(t_prep + t_eval)
        phases.setdefault("re-evaluate (other K, exponential gain)", []).append(t_re)
        means = {m: float(ev.summary[m]) for m in METRICS}
        del ranked, ev
        gc.collect()
    return means


def _object_ids(df, cols):
    out = {}
    for c in cols:
        s = df[c]
        if s.dtype.kind in "iu":
            s = s.astype(str)
        out[c] = s.astype(object)
    return df.assign(**out)


def run_ranx(ds, spec, phases, extra):
    from ranx import Qrels, Run, evaluate

    def convert(d):
        q = _object_ids(d.qrels, ["user_id", "item_id"])
        r = _object_ids(d.run, ["user_id", "item_id"])
        qrels = Qrels.from_df(q, q_id_col="user_id", doc_id_col="item_id", score_col="relevance")
        run = Run.from_df(r, q_id_col="user_id", doc_id_col="item_id", score_col="score")
        return qrels, run

    tiny = _tiny(spec)
    extra["jit_s"], _ = _timed(lambda: evaluate(*convert(tiny), METRICS))
    means = None
    for _ in range(spec["repeats"]):
        t_conv, (qrels, run) = _timed(lambda: convert(ds))
        t_eval, res = _timed(lambda: evaluate(qrels, run, METRICS))
        phases.setdefault("DataFrame -> Qrels/Run", []).append(t_conv)
        phases.setdefault("evaluate (warm)", []).append(t_eval)
        phases.setdefault("end to end", []).append(t_conv + t_eval)
        means = {m: float(res[m]) for m in METRICS}
        del qrels, run, res
        gc.collect()
    return means


def _pytrec_dicts(d):
    def as_str(s):
        return s.astype(str) if s.dtype.kind in "iu" else s

    qrels: dict = {}
    for u, i, r in zip(as_str(d.qrels["user_id"]).tolist(), as_str(d.qrels["item_id"]).tolist(),
                       d.qrels["relevance"].tolist()):
        qrels.setdefault(u, {})[i] = int(r)
    run: dict = {}
    for u, i, s in zip(as_str(d.run["user_id"]).tolist(), as_str(d.run["item_id"]).tolist(),
                       d.run["score"].tolist()):
        run.setdefault(u, {})[i] = s
    return qrels, run


def _pytrec_means(qrels, run):
    import pytrec_eval

    res = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    vals = list(res.values())
    n = len(vals)
    rr = np.array([v["recip_rank"] for v in vals])
    return {
        "ndcg@10": sum(v["ndcg_cut_10"] for v in vals) / n,
        "map@100": sum(v["map_cut_100"] for v in vals) / n,
        "mrr@10": float(np.where(rr >= 0.1, rr, 0.0).mean()),
        "precision@10": sum(v["P_10"] for v in vals) / n,
        "recall@100": sum(v["recall_100"] for v in vals) / n,
    }


def run_pytrec_eval(ds, spec, phases, extra):
    means = None
    for _ in range(spec["repeats"]):
        t_conv, (qrels, run) = _timed(lambda: _pytrec_dicts(ds))
        t_eval, means = _timed(lambda: _pytrec_means(qrels, run))
        phases.setdefault("dict building", []).append(t_conv)
        phases.setdefault("evaluate", []).append(t_eval)
        phases.setdefault("end to end", []).append(t_conv + t_eval)
        del qrels, run
        gc.collect()
    return means


def run_floor(ds, spec, phases, extra):
    tiny = _tiny(spec)
    extra["jit_s"], _ = _timed(lambda: floor.means(tiny))
    means = None
    for _ in range(spec["repeats"]):
        t, means = _timed(lambda: floor.means(ds))
        phases.setdefault("per-user loop", []).append(t)
    return means


def run_parquet(ds, spec, phases, extra):
    import metrics_core as mc
    from metrics_core.io import read_table

    tiny = _tiny(spec)
    mc.evaluate(mc.prepare(tiny.run, tiny.qrels), metrics=METRICS)
    with tempfile.TemporaryDirectory(prefix="mc_bench_") as tmp:
        run_path = os.path.join(tmp, "run.parquet")
        qrels_path = os.path.join(tmp, "qrels.parquet")
        ds.run.to_parquet(run_path, index=False)
        ds.qrels.to_parquet(qrels_path, index=False)
        extra["parquet_bytes"] = os.path.getsize(run_path) + os.path.getsize(qrels_path)
        gc.collect()
        reset_peak()
        means = None
        for _ in range(spec["repeats"]):
            t_read, (run, qrels) = _timed(lambda: (read_table(run_path, kind="run")[0],
                                                   read_table(qrels_path, kind="qrels")[0]))
            t_prep, ranked = _timed(lambda: mc.prepare(run, qrels))
            t_eval, ev = _timed(lambda: mc.evaluate(ranked, metrics=METRICS))
            phases.setdefault("read (metrics_core.io.read_table)", []).append(t_read)
            phases.setdefault("prepare (factorise, join, sort)", []).append(t_prep)
            phases.setdefault("metrics (mc.evaluate)", []).append(t_eval)
            phases.setdefault("total", []).append(t_read + t_prep + t_eval)
            means = {m: float(ev.summary[m]) for m in METRICS}
            del run, qrels, ranked, ev
            gc.collect()
        cmd = [sys.executable, "-m", "metrics_core", "evaluate", "--qrels", qrels_path, "--run", run_path,
               "--metrics", ",".join(METRICS), "--json"]
        for _ in range(spec["repeats"]):
            t, proc = _timed(lambda: subprocess.run(cmd, capture_output=True, text=True))
            if proc.returncode != 0:
                extra["cli_error"] = proc.stderr.strip()[-500:]
                break
            phases.setdefault("whole CLI process (`metrics-core evaluate ... --json`)", []).append(t)
            cli = json.loads(proc.stdout)["models"]["run"]
            extra["cli_max_abs_diff"] = max(abs(float(cli[m]) - means[m]) for m in METRICS)
    return means


def run_classification(ds, spec, phases, extra):
    import metrics_core as mc

    tiny = _tiny(spec)
    mc.evaluate(mc.prepare(tiny.run, tiny.qrels), metrics=CLASSIFICATION)
    extra["prepare_s"], ranked = _timed(lambda: mc.prepare(ds.run, ds.qrels))
    means = {}
    for _ in range(spec["repeats"]):
        t, _ = _timed(lambda: np.sort(ds.scores))
        phases.setdefault("np.sort(score)", []).append(t)
        for m in CLASSIFICATION:
            t, ev = _timed(lambda: mc.evaluate(ranked, metrics=[m]))
            phases.setdefault(m, []).append(t)
            means[m] = float(ev.summary[m])
            del ev
        gc.collect()
    return means


def run_first_call(ds, spec, phases, extra):
    """``ds`` is generated before ``import metrics_core`` so only its own cost is counted."""
    t_import, mc = _timed(lambda: __import__("metrics_core"))
    metrics = METRICS + CLASSIFICATION

    def call():
        return mc.evaluate(mc.prepare(ds.run, ds.qrels), metrics=metrics)

    t_first, ev = _timed(call)
    t_second, _ = _timed(call)
    phases["import metrics_core"] = [t_import]
    phases["first call"] = [t_first]
    phases["same call again"] = [t_second]
    phases["first-call extra (first - again)"] = [t_first - t_second]
    extra["numba_cache_dir"] = os.environ.get("NUMBA_CACHE_DIR", "")
    return {m: float(ev.summary[m]) for m in METRICS}


RUNNERS = {
    "metrics_core": run_metrics_core,
    "ranx": run_ranx,
    "pytrec_eval": run_pytrec_eval,
    "floor": run_floor,
    "parquet": run_parquet,
    "classification": run_classification,
    "first_call": run_first_call,
}


def measure(spec: dict) -> dict:
    """Generate the data, run one tool, return its phases, means and memory."""
    t_gen, ds = _timed(lambda: datagen.generate(spec["users"], ties=spec["ties"], id_type=spec["ids"]))
    gc.collect()
    baseline = current_rss()
    peak_reset = reset_peak()
    phases: dict[str, list[float]] = {}
    extra: dict = {"generate_s": t_gen}
    runner = RUNNERS[spec["tool"]]
    if spec.get("profile"):
        import cProfile
        import io
        import pstats

        prof = cProfile.Profile()
        means = prof.runcall(runner, ds, spec, phases, extra)
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
        extra["profile"] = buf.getvalue()
    else:
        means = runner(ds, spec, phases, extra)
    return {
        "tool": spec["tool"],
        "spec": spec,
        "phases": phases,
        "means": means,
        "extra": extra,
        "n_rows": ds.n_rows,
        "n_qrels": len(ds.qrels),
        "input_bytes": ds.input_bytes(),
        "baseline_rss": baseline,
        "peak_rss": peak_rss(),
        "peak_reset": peak_reset,
        "loadavg": os.getloadavg(),
    }


def main(argv: list[str]) -> None:
    spec = json.loads(argv[0])
    result = measure(spec)
    with open(argv[1], "w") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
