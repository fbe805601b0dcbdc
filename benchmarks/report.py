"""Markdown tables of the benchmark: timings per tool, agreement, performance targets.

Every time is in seconds; "min" and "median" are over the repeats of one run.
Ratios use medians.  A ratio "x faster" is the other tool's time divided by
metrics_core's time.
"""

from __future__ import annotations

import statistics

GIB = 2**30
MIB = 2**20
AGREEMENT_TOL = 1e-9


def med(values) -> float:
    return float(statistics.median(values))


def fmt_bytes(n: float) -> str:
    return f"{n / GIB:.2f} GiB" if n >= GIB else f"{n / MIB:.0f} MiB"


def fmt_s(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def timing_table(results: list[dict]) -> str:
    """One row per (tool, step): min, median, ratio to metrics_core end to end, peak RSS."""
    mc = next((r for r in results if r["label"] == "metrics_core"), None)
    ref = med(mc["phases"]["end to end"]) if mc else None
    lines = [
        "| tool | step | min s | median s | vs metrics_core end to end | peak RSS (process) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in results:
        first = True
        jit = r["extra"].get("jit_s")
        if jit is not None:
            lines.append(f"| {r['label']} | JIT compile or cache load (excluded) | {fmt_s(jit)} | | | |")
        for step, times in r["phases"].items():
            ratio = ""
            if ref and step in ("end to end", "evaluate (warm)", "per-user loop", "evaluate", "dict building",
                                "DataFrame -> Qrels/Run"):
                ratio = f"{med(times) / ref:.2f}x"
            peak = fmt_bytes(r["peak_rss"]) if first else ""
            lines.append(f"| {r['label']} | {step} | {fmt_s(min(times))} | {fmt_s(med(times))} | {ratio} | {peak} |")
            first = False
    return "\n".join(lines)


def agreement(results: list[dict], metrics: list[str]) -> tuple[bool, str]:
    """Largest absolute difference of each tool's means from the first tool's."""
    with_means = [r for r in results if r.get("means") and all(m in r["means"] for m in metrics)]
    if len(with_means) < 2:
        return True, "agreement: fewer than two tools, nothing to compare"
    base = with_means[0]
    ok = True
    parts = []
    for r in with_means[1:]:
        diff = max(abs(r["means"][m] - base["means"][m]) for m in metrics)
        ok &= diff <= AGREEMENT_TOL
        parts.append(f"{r['label']} {diff:.1e}")
    means = ", ".join(f"{m} {base['means'][m]:.6f}" for m in metrics)
    verdict = "agree" if ok else "DISAGREE"
    return ok, (f"means ({base['label']}): {means}\n\nmax |difference| vs {base['label']}: "
                f"{'; '.join(parts)} -> {verdict} (tolerance {AGREEMENT_TOL:g})")


def _row(name, value, target, op, unit="x"):
    if value is None:
        return f"| {name} | not measured | {op} {target}{unit} | - |"
    met = value >= target if op == ">=" else value <= target
    return f"| {name} | {value:.2f}{unit} | {op} {target}{unit} | {'met' if met else 'NOT met'} |"


def targets(by_label: dict[str, dict], extras: dict[str, dict]) -> str:
    """The performance targets (speed against ranx, pytrec_eval and the floor; memory; ties): those of the
    per-user-count run when ``by_label`` is given, then those of the extra measurements (first call,
    classification) in ``extras``."""
    def phase(label, step):
        r = by_label.get(label)
        return med(r["phases"][step]) if r and step in r["phases"] else None

    def ratio(a, b):
        return a / b if a is not None and b else None

    mc_e2e = phase("metrics_core", "end to end")
    mc_re = phase("metrics_core", "re-evaluate (other K, exponential gain)")
    ranx_e2e = phase("ranx", "end to end")
    ranx_eval = phase("ranx", "evaluate (warm)")
    trec_e2e = phase("pytrec_eval", "end to end")
    floor_t = phase("floor", "per-user loop")
    tied = phase("metrics_core (tied scores)", "end to end")
    mc = by_label.get("metrics_core")
    rows = ["| target | measured | goal | status |", "|---|---:|---:|---|"]
    if by_label:
        rows += [
            _row("metrics_core end to end vs ranx end to end (x faster)", ratio(ranx_e2e, mc_e2e), 20, ">="),
            _row("metrics_core end to end vs ranx warm evaluate alone (x faster)", ratio(ranx_eval, mc_e2e), 3, ">="),
            _row("metrics_core end to end vs pytrec_eval end to end (x faster)", ratio(trec_e2e, mc_e2e), 10, ">="),
            _row("re-evaluate prepared data vs ranx warm evaluate (x faster)", ratio(ranx_eval, mc_re), 30, ">="),
            _row("metrics_core end to end / compiled-loop floor", ratio(mc_e2e, floor_t), 2, "<="),
            _row("peak RSS / input in-memory size (metrics_core process)",
                 ratio(mc["peak_rss"], mc["input_bytes"]) if mc else None, 3, "<="),
            _row("tied scores (ties=average) / no ties, end to end", ratio(tied, mc_e2e), 1.5, "<="),
        ]
    first = extras.get("first_call")
    if first:
        rows.append(_row("first call of a fresh process, extra seconds (warm disk cache)",
                         first["phases"]["first-call extra (first - again)"][0], 3, "<=", " s"))
    cls = extras.get("classification")
    if cls:
        sort_t = med(cls["phases"]["np.sort(score)"])
        for m in ("auc", "logloss", "gauc", "pcopc"):
            if m in cls["phases"]:
                rows.append(_row(f"{m} / one np.sort of the score column", med(cls["phases"][m]) / sort_t, 2, "<="))
    return "\n".join(rows)
