"""A fused model: two or more loaded models combined by :func:`metrics_core.fuse` into one result file,
which joins the analysis as an uploaded file does (the working copy keeps it; a snapshot and its link
open it; every page treats it as any other model).

:func:`fused_run_bytes` is the pure part (runs in, the fused run's CSV bytes out, tested without
Streamlit); :func:`add_fused` reads the chosen models' files as the dashboard read them and adds the
result under the name given. On the demo data (nothing uploaded) the demo's tables become files first
(:func:`demo_files`: each model, the ground truth, the item features and the user attributes, every
value written exactly), so the fused model joins the three demo models in a working copy of their own.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

import metrics_core as mc
from metrics_core.errors import MetricsError
from metrics_core.fusion import RANK_BASED

from . import loading, sources

#: the fusion methods offered, by the names ranx and the literature give them
METHOD_LABELS = {"rrf": "RRF (reciprocal rank fusion)", "sum": "CombSUM", "mnz": "CombMNZ", "max": "CombMAX",
                 "min": "CombMIN", "med": "CombMED", "anz": "CombANZ", "wsum": "Weighted sum", "isr": "ISR",
                 "bordafuse": "Borda count"}
NORM_LABELS = {"min-max": "min-max", "max": "max", "sum": "sum", "zmuv": "z-score", "none": "none (scores as given)"}
#: the longest name of a fused model
MAX_NAME = 120


def needs_scores(method: str) -> bool:
    """Whether ``method`` reads the (normalised) scores; the rank-based ones read only each list's order."""
    return method not in RANK_BASED


def default_name(models, method: str) -> str:
    """The name a fused model is offered under: ``rrf(bm25+dense)``."""
    return f"{method}({'+'.join(models)})"[:MAX_NAME]


def fused_run_bytes(runs: dict, method: str, norm: str, weights=None, k: float = 60) -> bytes:
    """The CSV (``user_id,item_id,score``, UTF-8) of :func:`metrics_core.fuse` over ``runs``
    (``{model: DataFrame with user_id, item_id, score}``): ids written exactly as read, scores as the
    shortest text that reads back to the same float."""
    fused = mc.fuse({name: run[["user_id", "item_id", "score"]] for name, run in runs.items()}, method=method,
                    norm=norm, weights=weights, k=k)
    return _exact_csv(fused)


def read_weights(text: str, n_models: int) -> list[float] | None:
    """The weighted sum's weights typed as ``0.7, 0.3`` (None when left empty: equal weights); a one-line
    MetricsError unless there is one finite number per model."""
    text = str(text or "").strip()
    if not text:
        return None
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    try:
        weights = [float(p) for p in parts]
    except ValueError:
        raise MetricsError(f"weights must be numbers separated by commas, e.g. 0.7, 0.3; got {text[:60]!r}") from None
    if len(weights) != n_models or not all(w == w and abs(w) != float("inf") for w in weights):
        raise MetricsError(f"give one finite weight per model chosen ({n_models}), e.g. "
                           f"{', '.join(['1'] * n_models)}; got {text[:60]!r}")
    return weights


def check_name(name: str, models, existing) -> str:
    """The fused model's name, stripped; a one-line MetricsError when it is empty, too long, has a path
    separator, or is the name of one of the models it fuses."""
    name = str(name).strip()
    if not name:
        raise MetricsError("name the fused model")
    if len(name) > MAX_NAME:
        raise MetricsError(f"the fused model's name is {len(name)} characters long; at most {MAX_NAME}")
    if "/" in name or "\\" in name:
        raise MetricsError("the fused model's name cannot hold / or \\")
    if sources.model_name(name + ".csv") != name:
        raise MetricsError("the fused model's name cannot end with a file extension such as .csv")
    if name in models:
        raise MetricsError(f"the fused model cannot replace {name}, one of the models it fuses; choose another name")
    return name


def _exact_csv(frame: pd.DataFrame) -> bytes:
    """``frame`` as UTF-8 CSV, each number as the shortest text that reads back to the same float."""
    return frame.to_csv(index=False, float_format=None).encode("utf-8")


def demo_files(demo) -> sources.Sources:
    """The demo data (:class:`dashboard.demo.DemoData`) as the files an upload would give: ``<model>.csv``
    per model, ``demo_qrels.csv``, ``demo_item_features.csv`` and ``demo_users.csv``, ids as text and
    every number exact, so that they read back to the very tables the demo shows."""
    def blob(name: str, frame: pd.DataFrame) -> sources.Blob:
        return sources.Blob.of(name, _exact_csv(frame))

    return sources.Sources(runs={model: blob(f"{model}.csv", run) for model, run in demo.runs.items()},
                           qrels=blob("demo_qrels.csv", demo.qrels),
                           item_features=blob("demo_item_features.csv", demo.item_features),
                           user_attributes=blob("demo_users.csv", demo.users))


def fusable(models, src: sources.Sources) -> list[str]:
    """The models shown that can be fused: the uploaded ones, or every demo model when nothing is uploaded."""
    return list(models) if src.empty else [name for name in models if name in src.runs]


#: the weighted sum's weights optimised on a metric: grid step, share of the users they are chosen on, seed
OPTIMIZE_STEP, OPTIMIZE_TRAIN_SHARE, OPTIMIZE_SEED = 0.1, 0.5, 0


def optimized_line(best) -> str:
    """What :func:`metrics_core.optimize_fusion_weights` chose, in one sentence."""
    weights = ", ".join(f"{w:g}" for w in best.weights)
    return (f"Weights {weights} chosen on {best.metric} over {len(best.train_users):,} of the users "
            f"({best.train:.4f} there; grid step {OPTIMIZE_STEP:g}, seed {OPTIMIZE_SEED}); "
            f"{best.test:.4f} on the other {len(best.test_users):,} users.")


def add_fused(models, method: str, norm: str, name: str, weights=None, k: float = 60,
              optimize: str | None = None) -> tuple[str, str | None]:
    """Fuse the loaded models ``models`` and add the result as a model named ``name`` (a model of that
    name is replaced, as an upload of that name would); returns the name and, when ``optimize`` names a
    metric (the weighted sum only), the sentence of :func:`optimized_line`: the weights are then chosen
    on that metric over half of the ground truth's users (seeded) and reported on the others, as
    ``metrics-core fuse --optimize`` does. On the demo data the demo's files (:func:`demo_files`) and the
    fused model are saved together as a new working copy. One-line MetricsError when fewer than two
    models are chosen, a model is not an uploaded one, a file has no score, or optimising has no ground
    truth file."""
    src = sources.sources()
    from_demo = src.empty
    if from_demo:
        src = demo_files(loading.demo_data())
    models = list(dict.fromkeys(models))
    if len(models) < 2:
        raise MetricsError("choose at least two models to fuse")
    missing = [m for m in models if m not in src.runs]
    if missing:
        raise MetricsError(f"{missing[0]} is not an uploaded model; fusion takes the models of the Data page")
    name = check_name(name, models, src.runs)
    runs = {}
    for model in models:
        blob = src.runs[model]
        run, _ = loading.read_blob(blob, "results")
        if "score" not in run.columns:
            raise MetricsError(f"{blob.name} has no score or rank column: it cannot be fused")
        runs[model] = pd.DataFrame({"user_id": run["user_id"], "item_id": run["item_id"], "score": run["score"]})
    line = None
    if optimize and method == "wsum":
        if src.qrels is None:
            raise MetricsError("optimising the weights needs a ground truth file: upload one, or type the weights")
        qrels, _ = loading.read_blob(src.qrels, "qrels")
        best = mc.optimize_fusion_weights(runs, qrels, optimize, norm=norm, step=OPTIMIZE_STEP,
                                          train_share=OPTIMIZE_TRAIN_SHARE, seed=OPTIMIZE_SEED)
        weights, line = best.weights, optimized_line(best)
    blob = sources.Blob.of(f"{name}.csv", fused_run_bytes(runs, method, norm,
                                                         weights=weights if method == "wsum" else None, k=k))
    if not from_demo:
        return sources.add_run(blob), line
    sources.load_sources(replace(src, runs={**src.runs, sources.model_name(blob.name): blob}))
    return sources.model_name(blob.name), line
