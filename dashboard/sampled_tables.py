"""The Compare page's section on runs scored on sampled negatives (the 1+N protocol).

Each user's held-out target is ranked among ``m`` negatives sampled from a catalogue of ``n`` items
instead of among all of them; the sampled hr@K, ndcg@K, recall@K and AP then overstate the full
metrics and can put two models in the other order (Krichene and Rendle, KDD 2020). The section shows
each model's sampled and corrected values (:func:`metrics_core.sampled_metrics`: the same formulas as
``metrics-core compare --sampled-items N --sampled-correction bv|ls``) and one sentence per pair of the
baseline and a challenger whose order may reverse under full ranking (:func:`metrics_core.may_reverse`).

:func:`sampled_section` is pure (no Streamlit); :func:`cached_section` keeps its result in the server's
byte-bounded cache, keyed by the models' content and the settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

import metrics_core as mc
from metrics_core.errors import MetricsError
from metrics_core.metrics.registry import parse_metric
from metrics_core.metrics.sampled import METRICS, out_of_range

from . import cache

#: the corrections offered (``none`` is the sampled column itself)
CORRECTIONS = ("bv", "ls")
CORRECTION_LABELS = {"bv": "bias-variance (γ = 0.1)", "ls": "least squares"}
#: the largest catalogue the page takes
MAX_ITEMS = 1_000_000
#: the correction builds an n x (m + 1) matrix of hypergeometric probabilities for a catalogue of n items
#: and m negatives per user: the page corrects up to this many entries (160 MB of float64; 200,000 items
#: with 99 negatives), the command line has no such limit
MAX_ENTRIES = 20_000_000
COVERED_NOTE = ("The correction covers hr@K (hit_rate), recall@K, ndcg@K and AP (map@K) of one held-out "
                "target per user; pick one of them under Per-user metrics.")


@dataclass(frozen=True)
class SampledSection:
    """``table``: one row per model and metric (``model``, ``metric``, ``sampled``, ``corrected``);
    ``reversals``: one sentence per pair whose order may reverse; ``cautions``: one sentence per corrected
    value outside the metric's range 0..1 (an unstable estimate); ``note``: how many negatives each user
    had, the catalogue and the correction, in words."""

    table: pd.DataFrame
    reversals: list[str]
    cautions: list[str]
    note: str


def covered(metrics) -> list[str]:
    """The labels of ``metrics`` the correction covers (hit_rate, recall, ndcg and map), in order."""
    return [m for m in metrics if parse_metric(m).name in METRICS]


def run_and_truth(ranked: mc.Ranked) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A prepared model back as its scored run (``user_id``, ``item_id``, ``score``) and its ground truth
    (``user_id``, ``item_id``, ``relevance``), ids as the page reads them."""
    items = ranked.item_ids
    run = pd.DataFrame({"user_id": ranked.user_ids.repeat(np.diff(ranked.offsets)),
                        "item_id": items[ranked.item], "score": ranked.score})
    truth = pd.DataFrame({"user_id": ranked.user_ids.repeat(np.diff(ranked.q_offsets)),
                          "item_id": items[ranked.q_item], "relevance": ranked.q_rel})
    return run, truth


def _negatives(counts: list[int]) -> str:
    if len(counts) == 1:
        return f"{counts[0]:,} sampled negatives"
    return f"{counts[0]:,} to {counts[-1]:,} sampled negatives (each user corrected with its own count)"


def sampled_section(runs: dict[str, tuple[pd.DataFrame, pd.DataFrame]], metrics, n_items: int, correction: str,
                    baseline: str, challengers) -> SampledSection:
    """Each model's sampled and corrected ``metrics`` (those :func:`covered`) when every user's target was
    ranked among sampled negatives of a catalogue of ``n_items`` items, and the sentences of the pairs
    (``baseline``, each of ``challengers``) whose sampled order differs from the corrected one.

    ``runs``: model -> (scored run, ground truth), the run holding each user's target and its negatives.
    Raises :class:`MetricsError` with one line naming the model when its run is no 1+N run (a user with
    several relevant items, a target missing from its candidates, a catalogue no larger than a list).
    """
    if correction not in CORRECTIONS:
        raise MetricsError(f"the correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    if not 2 <= int(n_items) <= MAX_ITEMS:
        raise MetricsError(f"the catalogue size must be between 2 and {MAX_ITEMS:,} items, got {n_items}")
    labels = covered(metrics)
    if not labels:
        raise MetricsError(COVERED_NOTE)
    results = {}
    for name in [baseline, *challengers]:
        run, truth = runs[name]
        longest = int(run.groupby("user_id", sort=False).size().max()) if len(run) else 0
        if int(n_items) * max(longest, 1) > MAX_ENTRIES:
            raise MetricsError(f"Model {name}: a catalogue of {int(n_items):,} items with lists of up to {longest:,} "
                               f"candidates needs {int(n_items) * longest:,} probabilities, more than the page's "
                               f"{MAX_ENTRIES:,}; correct it with metrics-core compare --sampled-items")
        try:
            results[name] = mc.sampled_metrics(run, truth, labels, n_items=int(n_items), correction=correction)
        except MetricsError as exc:
            raise MetricsError(f"Model {name}: {exc}") from None
    rows = [{"model": name, "metric": metric, "sampled": float(r.summary.loc[metric, "sampled"]),
             "corrected": float(r.summary.loc[metric, "corrected"])}
            for name, r in results.items() for metric in labels]
    table = pd.DataFrame(rows, columns=["model", "metric", "sampled", "corrected"])
    reversals = [line for c in challengers
                 for line in mc.may_reverse(results[baseline], results[c], names=(baseline, c))]
    cautions = [line for name, r in results.items() for line in out_of_range(r, name)]
    counts = sorted({m for r in results.values() for m in r.settings["negatives"]})
    note = (f"Each user's target ranked among {_negatives(counts)} of a catalogue of {int(n_items):,} items "
            f"(drawn without replacement); corrected by {CORRECTION_LABELS[correction]} "
            "(Krichene and Rendle, KDD 2020), the estimate of the metric under full ranking. Users with a "
            "held-out target; a target tied with negatives counts the mean over the tied ranks.")
    return SampledSection(table, reversals, cautions, note)


def cached_section(models: dict[str, mc.Ranked], keys: dict[str, str], metrics, n_items: int, correction: str,
                   baseline: str, challengers) -> tuple[SampledSection | None, str | None]:
    """``(section, None)``: :func:`sampled_section` of the prepared ``models`` (``keys``: their content keys),
    cached on the server by the models' content and the settings; or ``(None, the one-line reason)`` when the
    runs are no 1+N runs (the failure is cached too)."""
    chosen = [baseline, *challengers]
    key = "|".join(["sampled", *(f"{n}={keys.get(n, n)}" for n in chosen), *covered(metrics), str(int(n_items)),
                    correction])

    def compute() -> SampledSection:
        return sampled_section({n: run_and_truth(models[n]) for n in chosen}, metrics, n_items, correction,
                               baseline, challengers)
    try:
        return cache.SHARED.get_or_compute(key, compute, size=_size), None
    except MetricsError as exc:
        return None, str(exc)


def _size(section: SampledSection) -> int:
    """Bytes a section holds (its table and sentences)."""
    return int(section.table.memory_usage(deep=True).sum()) + sum(map(len, section.reversals + section.cautions)) + 4096


__all__ = ["CORRECTIONS", "CORRECTION_LABELS", "COVERED_NOTE", "MAX_ENTRIES", "MAX_ITEMS", "SampledSection",
           "cached_section", "covered", "run_and_truth", "sampled_section"]
