"""The metric table: every metric declared once, with everything the rest of the package reads.

Each :class:`Metric` says what a metric is called (its name and the names
other libraries give it), what kind of quantity it is, what it reads
(:data:`NEEDS`), which direction is better, its formula and its meaning, the
ranking ``family`` it reads, and how the Spark engine combines it over groups of users or why
it refuses it (``spark``, ``spark_refusal``, ``spark_catalogue``). The table only
declares: this module imports nothing of the package but its errors (no numba, no kernels),
so what needs only names, directions or sections (``stats``, the command line's help) reads it
cheaply. The computation is bound where it runs, by the entry's name or family:
:data:`metrics_core.metrics.derived.BY_FAMILY`, :data:`metrics_core.metrics.reductions.BY_METRIC`,
:data:`metrics_core.metrics.diversity.BY_METRIC`. The name
parser (:func:`parse_metric`, with "did you mean"), ``evaluate``'s dispatch,
the Spark engine, the command line's ``--help``, ``stats``' direction of
improvement, the dashboard's lists and tooltips and docs/metrics.md's metric table
all read this table; ``tests/test_single_source.py`` lists the places that
still write a metric's name elsewhere, and why. Where a metric is shown, and
whether it is a default selection (the dashboard's pages, the report's default
metrics, the kernel warm-up), is its ``sections``.

Kinds:

- ``ranking``: per user over the ranked list, averaged over evaluated users
  (one column ``family`` of the ranking kernel, or a derived family);
- ``pooled``: summed over users before dividing (``hit_ratio@k``);
- ``scored``: over all scored rows at once (classification and regression);
- ``scored_per_user``: over each user's scored rows, then weighted (``gauc``);
- ``diversity``: over the top-k lists (per user or across users).

A name such as ``precision`` exists twice: with ``@k`` it is the ranking
metric, without it the classification metric at ``threshold``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ..errors import MetricsError

KINDS = ("ranking", "pooled", "scored", "scored_per_user", "diversity")
KIND_TITLES = {
    "ranking": "ranking, per user",
    "pooled": "ranking, pooled over users",
    "scored": "scored rows",
    "scored_per_user": "scored rows, per user",
    "diversity": "diversity",
}
#: what a metric reads besides the run: "relevance" the ground truth; "probabilities" scores in [0, 1];
#: "item_features" the item-features table (required); "catalogue" the item-features table when given, for
#: the catalogue size N (else the items seen); "interactions" the interactions table when given (else the
#: relevant ground truth); "history" the interactions table (required); "reference" a second run that the
#: metric compares against (no entry of the table reads one yet: ``mc.intersection`` compares two runs
#: outside it, and ``evaluate`` refuses such an entry)
NEEDS = ("relevance", "probabilities", "item_features", "catalogue", "interactions", "history", "reference")
#: the table each need reads
NEED_TABLES = {"relevance": "qrels", "probabilities": "run", "item_features": "item_features",
               "catalogue": "item_features", "interactions": "interactions", "history": "interactions",
               "reference": "reference run"}
HIGHER, LOWER = "higher", "lower"

# cutoff rules: "optional" (name or name@k), "required" (only name@k selects this entry), "none";
# "level": name@x with a decimal x >= 0 (a recall level, a multiple of R), read into MetricSpec.level
CUTOFF_OPTIONAL, CUTOFF_REQUIRED, CUTOFF_NONE, CUTOFF_LEVEL = "optional", "required", "none", "level"

#: how the per-user values of a metric make its summary (``Metric.aggregate``)
AGGREGATES = {
    "mean": "mean over the evaluated users",
    "sum": "sum over the evaluated users (trec_eval's num_* counts)",
    "geometric": "exp of the mean of the per-user values, which are logarithms (trec_eval's gm_map, gm_bpref)",
}

#: how the Spark engine (metrics_core.spark) combines a metric over groups of whole users
SPARK_COMBINES = {
    "user_mean": "per-user values of mc.evaluate on each group, averaged over the evaluated users",
    "pooled_hits": "hits and relevant counts of each group, summed before dividing",
    "row_sums": "partial sums of metrics_core.metrics.reductions over each group's scored rows",
    "rank_counts": "positives and negatives per distinct score of each group, then exact rank statistics",
    "item_coverage": "per-item top-k inclusion sums of each group, added per item, over the catalogue",
    "item_pairs": "per-item top-k counts of each group, added per item: the pairs of users sharing an item",
    "popularity": "per-user values of each group with item popularity counted over the whole data",
    "refused": "not computed: spark_refusal says why",
}
#: the Spark combination of each kind, for entries that do not name theirs
SPARK_BY_KIND = {"ranking": "user_mean", "pooled": "pooled_hits", "scored": "row_sums",
                 "scored_per_user": "row_sums", "diversity": "refused"}
#: combinations in which Spark computes across groups with code of its own (item popularity, per-item sums),
#: where mc.evaluate's handling of the users and of popularity does not run: a convention that shapes only
#: such metrics is taken at its default there (:meth:`metrics_core.metrics.conventions.Convention.spark_refusal`)
SPARK_OWN_CODE = ("item_coverage", "item_pairs", "popularity")
#: why the Spark engine takes such a convention at its default only
SPARK_OWN_CODE_REFUSAL = ("the Spark engine combines every metric it shapes over the groups of users with code of its "
                          "own (item popularity, per-item sums), where this convention is not read")
#: the reason of a refused entry that gives none
SPARK_REFUSAL = ("it needs item popularity, history or exposure over all groups of users, which the Spark engine "
                 "does not combine yet")

#: Where a metric is shown or selected by default (``Metric.sections``), and what each place is.
#: The dashboard's pages, the report's default metrics and the kernel warm-up read these; none of
#: them names a metric itself.
SECTIONS = {
    "overview": "the Overview's tables (ranking, scored rows, beyond accuracy); the warm-up compiles "
                "them first",
    "per_user": "the per-user metric selectors of Distributions, Failures, Compare and Share",
    "headline": "selected by default: the report's default metrics (the command line at K=10), offered "
                "first in the ranking lists (the first one is each selector's default)",
    "share_default": "the Share page's default metrics of the HTML report",
    "explain": "the Explain page's metric selector",
    "curves_k": "the Curves page's chart of the metric at every cutoff K",
    "pooled_rows": "the Curves page's table over pooled scored rows",
    "roc": "the value named beside the ROC curves",
    "pr_curve": "the value named beside the precision-recall curves",
    "calibration": "the value named beside the reliability plot",
    "threshold": "classification at the threshold: the confusion matrix's table (Curves); the Overview "
                 "marks them as needing probabilities at the default threshold",
    "errors": "the Overview's error metrics, shown where the scores predict the relevance grade",
    "triage": "whether a user has a relevant item in the top K (the Failures triage)",
    "metric_vs_k": "the Overview's metric-vs-K panels and mc.plot's default curves (one kernel pass for all K)",
}
#: The sections of a metric that does not set its own: every metric is in the Overview, and the
#: per-user ranking metrics are in the per-user selectors.
KIND_SECTIONS = {
    "ranking": ("overview", "per_user"),
    "pooled": ("overview",),
    "scored": ("overview",),
    "scored_per_user": ("overview",),
    "diversity": ("overview",),
}


@dataclass(frozen=True)
class Metric:
    """One metric: how it is named, what it needs and means, and where its computation is bound.

    How it is computed, by kind: ``ranking`` and ``pooled`` metrics are the
    column ``family`` of ``evaluate.ranking_table``: a column of the ranking
    kernel, or, when :data:`metrics_core.metrics.derived.BY_FAMILY` holds the family
    (:class:`metrics_core.metrics.derived.Derived`), a family filled after it (F-beta, MCC
    and accuracy from hits@k, pAUC and pAp by their own kernel, bpref by its own;
    precision@k over ``min(k, R)`` only under ``precision_norm="min_k"``). Scored-row
    metrics are the reduction :data:`metrics_core.metrics.reductions.BY_METRIC` binds to
    their ``name`` (:class:`metrics_core.metrics.reductions.RowReduction`: partial sums, then
    finalize; or a rank statistic over all rows). Diversity metrics are the function
    :data:`metrics_core.metrics.diversity.BY_METRIC` binds to their ``name``, one signature
    ``compute(lists, k) -> (value, per-user values or None)``. ``needs`` says
    what it reads besides the run (:data:`NEEDS`; :attr:`tables` names the
    tables). ``per_user`` metrics give one value per evaluated user (a column of
    ``Evaluation.per_user``). ``convention`` names the defaults that shape the
    value (documentation column).
    ``sections`` names where the metric is shown or selected by default (keys of
    :data:`SECTIONS`); left out, it is :data:`KIND_SECTIONS` of its ``kind``.
    """

    name: str
    kind: str
    direction: str
    formula: str
    meaning: str
    aliases: tuple[str, ...] = ()
    needs: tuple[str, ...] = ("relevance",)
    cutoff: str = CUTOFF_OPTIONAL
    family: str | None = None
    per_user: bool = False
    convention: str = ""

    #: how the Spark engine combines the metric over its groups of users: a key of SPARK_COMBINES;
    #: None takes SPARK_BY_KIND[kind]
    spark: str | None = None
    #: why the Spark engine refuses the metric (spark == "refused"); "" takes SPARK_REFUSAL
    spark_refusal: str = ""
    #: on Spark the catalogue of N items must be the item-features table (all groups then agree on N)
    spark_catalogue: bool = False
    #: where the metric is shown or selected by default (keys of SECTIONS); None takes KIND_SECTIONS[kind]
    sections: tuple[str, ...] | None = None
    #: how the per-user values make the summary: a key of AGGREGATES
    aggregate: str = "mean"
    #: the largest level of a CUTOFF_LEVEL metric (None: no bound)
    level_max: float | None = None
    #: computed over one order of each list (the tie rule's): refused under ties="average" when the run
    #: has tied scores, its expectation over tie orders not being computed
    one_order: bool = False

    def __post_init__(self):
        # the fields left out take the defaults of the kind (frozen: set through object.__setattr__)
        if self.spark is None:
            object.__setattr__(self, "spark", SPARK_BY_KIND[self.kind])
        if self.spark not in SPARK_COMBINES:
            raise ValueError(f"metric {self.name}: spark must be one of {', '.join(SPARK_COMBINES)}")
        if self.spark == "refused" and not self.spark_refusal:
            object.__setattr__(self, "spark_refusal", SPARK_REFUSAL)
        sections = KIND_SECTIONS[self.kind] if self.sections is None else tuple(self.sections)
        unknown = [s for s in sections if s not in SECTIONS]
        if unknown:
            raise ValueError(f"metric {self.name}: unknown section(s) {', '.join(unknown)}; known: "
                             f"{', '.join(SECTIONS)}")
        object.__setattr__(self, "sections", sections)
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"metric {self.name}: aggregate must be one of {', '.join(AGGREGATES)}")

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables the metric reads: the run, then those of its ``needs`` (see :data:`NEEDS`)."""
        return tuple(dict.fromkeys(("run", *(NEED_TABLES[n] for n in self.needs))))

    @property
    def on_spark(self) -> bool:
        """Whether the Spark engine computes the metric (else :attr:`spark_refusal` says why not)."""
        return self.spark != "refused"

    @property
    def higher_is_better(self) -> bool:
        return self.direction == HIGHER

    @property
    def on_scored_rows(self) -> bool:
        """Computed from scores and labels of rows rather than from ranked lists."""
        return self.kind in ("scored", "scored_per_user")

    @property
    def display(self) -> str:
        """How the documentation and the help write the name: ``ndcg@k``, ``r_precision``, ``auc``."""
        if self.cutoff == CUTOFF_LEVEL:
            return f"{self.name}@x"
        return self.name if self.cutoff == CUTOFF_NONE else f"{self.name}@k"

    @property
    def tooltip(self) -> str:
        """One line for a dashboard tooltip: meaning, formula, direction."""
        return f"{self.meaning} {self.formula}. {self.direction.capitalize()} is better."


def _ranking(name, family, formula, meaning, aliases=(), convention="", cutoff=CUTOFF_OPTIONAL, direction=HIGHER,
             **fields):
    return Metric(name=name, kind="ranking", direction=direction, formula=formula, meaning=meaning, aliases=aliases,
                  cutoff=cutoff, family=family, per_user=True, convention=convention, **fields)


#: sections of a per-user ranking metric with more places than its kind's
_RANKED = KIND_SECTIONS["ranking"]
_SCORED = KIND_SECTIONS["scored"]


METRICS: tuple[Metric, ...] = (
    _ranking("cg", "cg", "`sum_{i<=K} g(rel_i)`", "Cumulative gain of the top k.", convention="linear gain"),
    _ranking("dcg", "dcg", "`sum_{i<=K} g(rel_i) / log2(i+1)`", "Discounted cumulative gain of the top k.",
             convention="linear gain"),
    _ranking("ndcg", "ndcg", "`DCG@k / IDCG@k` (0 when IDCG = 0)",
             "DCG of the top k relative to the best possible order.", aliases=("ndcg_cut", "ndcg_score"),
             convention="ideal from all judged items (`ideal=\"judged\"`)",
             sections=(*_RANKED, "headline", "share_default", "explain", "metric_vs_k")),
    _ranking("map", "ap", "AP@k `= (1/D) sum_{i<=K} h_i P@i`",
             "Mean over users of the average precision at each relevant position.",
             aliases=("map_cut", "ap"), convention="`D = R` (`ap_norm=\"relevant\"`, trec_eval `map_cut`)",
             sections=(*_RANKED, "headline", "share_default", "explain", "metric_vs_k")),
    _ranking("mrr", "rr", "`1 / rank of the first relevant item <= K`, else 0",
             "Mean reciprocal rank of the first relevant item.", aliases=("recip_rank", "rr"),
             sections=(*_RANKED, "headline", "explain", "metric_vs_k")),
    _ranking("precision", "precision", "`hits@K / k` (whole list: `/ n`)",
             "Share of the top k that is relevant.", aliases=("p",),
             convention="divides by k even for short lists (trec_eval)", cutoff=CUTOFF_REQUIRED, sections=(*_RANKED, "headline", "explain", "curves_k", "metric_vs_k")),
    _ranking("recall", "recall", "`hits@K / R`", "Share of the relevant items found in the top k.",
             aliases=("r",), cutoff=CUTOFF_REQUIRED,
             sections=(*_RANKED, "headline", "share_default", "explain", "curves_k", "metric_vs_k")),
    _ranking("f1", "f1", "harmonic mean of the user's P@k and R@k `= 2 hits / (k + R)`",
             "Balance of precision and recall at k.", cutoff=CUTOFF_REQUIRED),
    _ranking("hit_rate", "hit", "1 if `hits@K > 0`", "Share of users with at least one relevant item in the top k.",
             aliases=("success", "hr", "hit"), sections=(*_RANKED, "headline", "explain", "triage", "metric_vs_k")),
    _ranking("r_precision", "r_precision", "`hits@R / R`", "Precision at the user's number of relevant items.",
             aliases=("rprec",), cutoff=CUTOFF_NONE, sections=(*_RANKED, "headline", "explain")),
    Metric("hit_ratio", "pooled", HIGHER, "pooled over all users: `sum_u hits@K / sum_u R`",
           "Relevant items found in the top k over all relevant items, pooled over users.", family="hits"),
    Metric("auc", "scored", HIGHER, "ROC AUC over all scored rows, ties count one half",
           "Chance that a random positive row scores above a random negative row.", aliases=("roc_auc",),
           cutoff=CUTOFF_NONE, convention="label = relevance >= threshold", spark="rank_counts",
           sections=(*_SCORED, "headline", "share_default", "pooled_rows", "roc")),
    Metric("pr_auc", "scored", HIGHER, "average precision as scikit-learn's `average_precision_score`",
           "Area under the precision-recall curve over all scored rows.",
           aliases=("average_precision", "ap_score"), cutoff=CUTOFF_NONE, spark="rank_counts",
           sections=(*_SCORED, "headline", "pooled_rows", "pr_curve")),
    Metric("logloss", "scored", LOWER, "`-mean(y log p + (1-y) log(1-p))`, p clipped to `[eps, 1-eps]`",
           "Cross-entropy of the scores read as probabilities of the label.", aliases=("log_loss",),
           needs=("relevance", "probabilities"), cutoff=CUTOFF_NONE, convention="scores must be in [0, 1]"),
    Metric("brier", "scored", LOWER, "`mean((score - label)^2)` over scored rows",
           "Mean squared error of the scores read as probabilities of the label.",
           aliases=("brier_score", "brier_score_loss"), needs=("relevance", "probabilities"), cutoff=CUTOFF_NONE,
           convention="scores must be in [0, 1]"),
    Metric("rmse", "scored", LOWER, "`sqrt(mean((score - relevance)^2))` over scored rows",
           "Root mean squared error of the score as a prediction of the relevance.", cutoff=CUTOFF_NONE,
           sections=(*_SCORED, "errors")),
    Metric("mse", "scored", LOWER, "`mean((score - relevance)^2)` over scored rows",
           "Mean squared error of the score as a prediction of the relevance (scikit-learn `mean_squared_error`).",
           aliases=("mean_squared_error",), cutoff=CUTOFF_NONE,
           sections=(*_SCORED, "errors")),
    Metric("mae", "scored", LOWER, "`mean(|score - relevance|)` over scored rows",
           "Mean absolute error of the score as a prediction of the relevance.", aliases=("mean_absolute_error",),
           cutoff=CUTOFF_NONE,
           sections=(*_SCORED, "errors")),
    Metric("accuracy", "scored", HIGHER, "`(tp + tn) / rows`, predicted positive when `score >= threshold`",
           "Share of scored rows whose predicted class is the label.", cutoff=CUTOFF_NONE,
           convention="`threshold=0.5`",
           sections=(*_SCORED, "threshold")),
    Metric("precision", "scored", HIGHER, "`tp / (tp + fp)` (0 without predicted positives)",
           "Share of rows predicted positive that are positive.", aliases=("p",), cutoff=CUTOFF_NONE,
           convention="`threshold=0.5`",
           sections=(*_SCORED, "threshold")),
    Metric("recall", "scored", HIGHER, "`tp / (tp + fn)` (0 without positives)",
           "Share of positive rows predicted positive.", aliases=("r",), cutoff=CUTOFF_NONE,
           convention="`threshold=0.5`",
           sections=(*_SCORED, "threshold")),
    Metric("f1", "scored", HIGHER, "`2 tp / (2 tp + fp + fn)`", "Harmonic mean of classification precision and recall.",
           cutoff=CUTOFF_NONE, convention="`threshold=0.5`",
           sections=(*_SCORED, "threshold")),
    Metric("gauc", "scored_per_user", HIGHER, "`sum_u w_u AUC_u / sum_u w_u` over users with both classes",
           "ROC AUC within each user's rows, averaged with weights.", cutoff=CUTOFF_NONE, per_user=True,
           convention="`gauc_weight=\"rows\"` (or `positives`, `uniform`); single-class users skipped and counted",
           sections=(*KIND_SECTIONS["scored_per_user"], "headline", "pooled_rows")),
    Metric("pcopc", "scored", HIGHER, "`sum(score) / sum(label)` (1.0 = calibrated)",
           "Predicted over observed positives: calibration of click-through scores (1.0 = calibrated).",
           aliases=("copc", "ctr_calibration"), needs=("relevance", "probabilities"), cutoff=CUTOFF_NONE,
           sections=(*_SCORED, "pooled_rows", "calibration")),
    Metric("ils", "diversity", LOWER,
           "mean pairwise similarity of the top-k items: cosine of feature vectors, or Jaccard of tag sets",
           "How similar the items of a list are to each other (lower means more diverse lists).",
           aliases=("intra_list_similarity",), needs=("item_features",), per_user=True,
           convention="needs `item_features`", spark="user_mean"),
    Metric("ild", "diversity", HIGHER,
           "mean pairwise distance of the top-k items: Hamming (feature columns whose values differ, or tags in "
           "one set only) or cosine `1 - cos` (`ild_distance`)",
           "How different the items of a list are from each other, in features (RecTools `IntraListDiversity`).",
           aliases=("intra_list_diversity",), needs=("item_features",), per_user=True,
           convention="needs `item_features`; a top k of one item: `short_lists`; distance: `ild_distance`",
           spark_refusal="the Spark engine does not pass its per-user values through the groups yet (ils@k it does)"),
    Metric("coverage", "diversity", HIGHER, "distinct items in evaluated users' top-k / catalogue size",
           "Share of the catalogue that some user sees in the top k.",
           convention="catalogue = item features, else all items seen",
           needs=("catalogue",), spark="item_coverage"),
    Metric("novelty", "diversity", HIGHER,
           "mean `-log2 pop(i)` over the top k, `pop` = share of users who interacted with i",
           "How unpopular, hence unexpected, the recommended items are.", needs=("relevance", "interactions"),
           per_user=True, convention="popularity from `interactions`, else the relevant ground truth", spark="popularity"),
    Metric("personalization", "diversity", HIGHER, "`1 - mean_{u<v} |L_u ∩ L_v| / k`",
           "How different the top-k lists of two users are.", needs=(),
           convention="exact for any number of users (`sum_i C(c_i, 2)` shared pairs)", spark="item_pairs"),
    Metric("r2", "scored", HIGHER, "`1 - sum (relevance - score)^2 / sum (relevance - mean relevance)^2` over "
           "scored rows (NaN for a constant relevance)",
           "Coefficient of determination of the score as a prediction of the relevance (scikit-learn `r2_score`).",
           aliases=("r2_score", "rsquared"), cutoff=CUTOFF_NONE,
           sections=(*_SCORED, "errors")),
    Metric("explained_variance", "scored", HIGHER,
           "`1 - Var(relevance - score) / Var(relevance)` over scored rows (NaN for a constant relevance)",
           "Share of the relevance's variance the score explains (scikit-learn `explained_variance_score`).",
           aliases=("explained_variance_score", "exp_var"), cutoff=CUTOFF_NONE,
           sections=(*_SCORED, "errors")),
    Metric("ece", "scored", LOWER,
           "`sum_b (n_b / n) |mean(label)_b - mean(score)_b|` over 10 equal-width score bins "
           "`[0, .1], (.1, .2], ..., (.9, 1]`",
           "Expected calibration error: gap between predicted probability and observed positive rate, per bin.",
           aliases=("expected_calibration_error",), needs=("relevance", "probabilities"), cutoff=CUTOFF_NONE,
           convention="bins of scikit-learn's `calibration_curve(n_bins=10, strategy=\"uniform\")`; "
                      "scores must be in [0, 1]"),
    _ranking("fbeta", "fbeta", "`(1 + b^2) P R / (b^2 P + R) = (1 + b^2) hits@K / (b^2 R + k)`",
             "Weighted harmonic mean of precision@k and recall@k (recall weighs `beta` times as much).",
             aliases=("f_beta", "f1beta"), cutoff=CUTOFF_REQUIRED, convention="`beta=1` (RecTools `F1Beta`)"),
    _ranking("mcc", "mcc",
             "`(tp tn - fp fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn))` with `tp = hits@K`, `fp = k - tp`, "
             "`fn = R - tp`, `tn = N - k - fn` (0 when a factor is 0)",
             "Matthews correlation between 'in the top k' and 'relevant' over the catalogue of N items.",
             aliases=("matthews",), cutoff=CUTOFF_REQUIRED,
             convention="N = catalogue: items of `item_features`, else all items seen (RecTools `MCC`)", needs=("relevance", "catalogue"), spark_catalogue=True),
    _ranking("accuracy", "accuracy", "`(tp + tn) / N` with `tp = hits@K`, `tn = N - k - (R - tp)`",
             "Share of the catalogue's N items classified right by 'in the top k' vs 'relevant'.",
             cutoff=CUTOFF_REQUIRED,
             convention="N = catalogue: items of `item_features`, else all items seen (RecTools `Accuracy`)", needs=("relevance", "catalogue"), spark_catalogue=True),
    _ranking("pauc", "pauc",
             "`1/(k R) sum_{relevant x} max(k - f(x), 0)`, `f(x)` = non-relevant items ranked above x",
             "ROC AUC of all relevant items against the top k non-relevant ones (partial AUC).",
             aliases=("partial_auc",), cutoff=CUTOFF_REQUIRED,
             convention="relevant items not in the list count as ranked last (RecTools `PartialAUC`, "
                        "`insufficient_handling=\"ignore\"`)"),
    _ranking("pap", "pap",
             "`1/(k min(k, R)) sum_{x in first min(k, R) relevant} max(k - f(x), 0)`",
             "Partial AUC of the top min(k, R) relevant items against the top k non-relevant ones (pAp@k).",
             cutoff=CUTOFF_REQUIRED, convention="as `pauc@k` (RecTools `PAP`)"),
    _ranking("bpref", "bpref",
             "`(1/R) sum_{relevant x ranked} (1 - min(f(x), R) / min(R, N))`, `f(x)` = judged non-relevant items "
             "ranked above x, N = judged non-relevant items (a term is 1 when `f(x) = 0`)",
             "Binary preference: how rarely judged non-relevant items outrank the relevant ones; unjudged items "
             "are skipped.", cutoff=CUTOFF_NONE,
             convention="whole list, no cutoff; unjudged items and negative relevances ignored, relevance 0 "
                        "judged non-relevant (trec_eval `bpref`)"),
    # trec_eval's measures (its own names under the trec_eval preset: metrics_core.presets); the list
    # is read in the tie rule's order, as trec_eval reads it under the trec_eval preset
    _ranking("infap", "infap",
             "`(1/R) sum_{relevant x} (1/(j+1) + (j/(j+1)) ((r-1+nr+pu)/j) ((r-1+eps)/(r-1+nr+2 eps)))` at 0-based "
             "rank j, r/nr/pu = judged relevant/non-relevant/pooled-unjudged items above, eps = 1e-5",
             "Inferred AP: AP estimated from a judged sample of the pool (Yilmaz and Aslam).", aliases=("inf_ap",),
             cutoff=CUTOFF_NONE, one_order=True, sections=(),
             convention="negative relevance = pooled but unjudged, absent = outside the pool (trec_eval `infAP`)"),
    _ranking("iprec_at_recall", "iprec_at_recall",
             "`max_{i >= rank of the c-th relevant item} P@i`, `c = round(x R)` (0 when fewer are retrieved)",
             "Interpolated precision at recall level x.", aliases=("iprec",), cutoff=CUTOFF_LEVEL, level_max=1.0, one_order=True, sections=(),
             convention="`recall_level_count=\"round\"` (trec_eval 10 `iprec_at_recall`)"),
    _ranking("iprec_11pt", "iprec_11pt", "mean of `iprec_at_recall@x` over x = 0, 0.1, ..., 1",
             "Interpolated precision averaged over 11 recall levels.", aliases=("eleven_point_average",),
             cutoff=CUTOFF_NONE, one_order=True, sections=(),
             convention="trec_eval `11pt_avg`"),
    _ranking("rprec_mult", "rprec_mult", "`hits@c / c`, `c = floor(x R + 0.9)` (0 when c = 0)",
             "Precision at a multiple x of the user's number of relevant items.", cutoff=CUTOFF_LEVEL, sections=(), convention="trec_eval `Rprec_mult`"),
    _ranking("relative_precision", "relative_precision", "`hits@K / min(k, R)`",
             "Precision at k relative to the best possible at k.", aliases=("relative_p",),
             cutoff=CUTOFF_REQUIRED, sections=(),
             convention="trec_eval `relative_P`"),
    _ranking("set_precision", "set_precision", "`rel_ret / ret` over the whole list",
             "Share of the retrieved items that is relevant (the list as a set).", aliases=("set_p",),
             cutoff=CUTOFF_NONE, sections=(), convention="trec_eval `set_P`"),
    _ranking("set_recall", "set_recall", "`rel_ret / R`", "Share of the relevant items retrieved at all.",
             cutoff=CUTOFF_NONE, sections=(), convention="trec_eval `set_recall`"),
    _ranking("set_f", "set_f", "`2 P R / (P + R)` of set_precision and set_recall (0 when rel_ret = 0)",
             "Harmonic mean of set precision and set recall.", cutoff=CUTOFF_NONE,
             sections=(), convention="trec_eval `set_F` (beta = 1)"),
    _ranking("set_map", "set_map", "`rel_ret^2 / (ret R)`", "Unranked AP: set precision times set recall.",
             cutoff=CUTOFF_NONE, sections=(), convention="trec_eval `set_map`"),
    _ranking("set_relative_precision", "set_relative_precision", "`rel_ret / min(ret, R)`",
             "Set precision relative to the best possible for a set of that size.", aliases=("set_relative_p",),
             cutoff=CUTOFF_NONE, sections=(),
             convention="trec_eval `set_relative_P`"),
    _ranking("utility", "utility", "`rel_ret - (ret - rel_ret)`",
             "Set utility: +1 per relevant retrieved item, -1 per other retrieved item.", cutoff=CUTOFF_NONE, sections=(), convention="trec_eval `utility` with its default 1,-1,0,0"),
    _ranking("num_ret", "num_ret", "`n` (list length), summed over users", "Items retrieved.",
             cutoff=CUTOFF_NONE, aggregate="sum", sections=(),
             convention="summed, as trec_eval `num_ret`"),
    _ranking("num_rel", "num_rel", "`R`, summed over users", "Relevant items in the ground truth.",
             cutoff=CUTOFF_NONE, aggregate="sum", sections=(),
             convention="summed, as trec_eval `num_rel`"),
    _ranking("num_rel_ret", "num_rel_ret", "`rel_ret`, summed over users", "Relevant items retrieved.",
             cutoff=CUTOFF_NONE, aggregate="sum", sections=(),
             convention="summed, as trec_eval `num_rel_ret`"),
    _ranking("num_nonrel_judged_ret", "num_nonrel_judged_ret", "judged non-relevant items retrieved, summed",
             "Judged non-relevant items retrieved.", cutoff=CUTOFF_NONE,
             aggregate="sum", sections=(), convention="summed, as trec_eval `num_nonrel_judged_ret`"),
    _ranking("num_q", "num_q", "1 per evaluated user, summed", "Number of evaluated users (queries).",
             cutoff=CUTOFF_NONE, aggregate="sum", sections=(),
             convention="as trec_eval `num_q`"),
    _ranking("gm_map", "gm_map", "`exp(mean_u log(max(AP_u, 1e-5)))`; per user `log(max(AP, 1e-5))`",
             "Geometric mean of the users' AP.", cutoff=CUTOFF_NONE, aggregate="geometric",
             sections=(), convention="trec_eval `gm_map` (per user the logarithm, as trec_eval prints it)"),
    _ranking("gm_bpref", "gm_bpref", "`exp(mean_u log(max(bpref_u, 1e-5)))`",
             "Geometric mean of the users' bpref.", cutoff=CUTOFF_NONE,
             aggregate="geometric", sections=(), convention="trec_eval `gm_bpref` (per user the logarithm)"),
    _ranking("gain_g", "gain_g", "`sum_i g_i / log2(2 + C_i - S_i) / sum_j I_j`, `S_i` gains so far, "
             "`C_i = sum_{j<=i} max(I_j, 1)` over the ideal gains I",
             "Normalised gain G: each item's gain discounted by how far the list is behind the ideal.",
             cutoff=CUTOFF_NONE, one_order=True, sections=(),
             convention="gains = relevances (trec_eval `G`)"),
    _ranking("bin_g", "bin_g", "`(1/R) sum_{relevant x} 1 / log2(2 + non-relevant items above x)`",
             "Binary G: relevant items discounted by the non-relevant items above them.", aliases=("bing",),
             cutoff=CUTOFF_NONE, one_order=True, sections=(), convention="trec_eval `binG`"),
    _ranking("ndcg_rel", "ndcg_rel", "mean over the R' items of positive gain of `DCG/IDCG` at each one's rank "
             "(at the end of the list for those not retrieved)",
             "nDCG averaged at the relevant items.", cutoff=CUTOFF_NONE, one_order=True,
             sections=(), convention="gains = relevances (trec_eval `ndcg_rel`)"),
    _ranking("rndcg", "rndcg", "mean of `DCG@m / IDCG@m` at the ranks m where the ideal gain changes",
             "nDCG averaged at the boundaries of the relevance levels.", cutoff=CUTOFF_NONE,
             one_order=True, sections=(), convention="gains = relevances (trec_eval `Rndcg`)"),
    # measures of ir_measures beyond trec_eval's
    _ranking("rbp", "rbp", "`(1 - p) sum_{i<=K} h_i p^(i-1)`",
             "Rank-biased precision: relevant items weighted by a user who goes on with persistence p.",
             convention="binary relevance; `p = rbp_persistence` (0.8, ir_measures `RBP`)",
             sections=(*_RANKED, "curves_k", "metric_vs_k")),
    _ranking("rbp_graded", "rbp_graded", "`(1 - p) sum_{i<=K} max(rel_i, 0) p^(i-1)`",
             "Graded rank-biased precision: each item weighted by its relevance grade (above 1 when grades are).",
             aliases=("grbp",), sections=(*_RANKED, "curves_k"),
             convention="grades as given, unjudged 0; `p = rbp_persistence` (ir_measures `RBP` without `rel`, "
                        "trectools `get_rbp(binary_topical_relevance=False)`)"),
    _ranking("sdcg", "sdcg", "`sum_{i<=K} g_i / log2(i+1) / sum_{i<=k} 1 / log2(i+1)`, "
             "`g = (min(max(rel, lo), hi) - lo) / (hi - lo)`",
             "Scaled DCG: DCG of the top k over that of k fully relevant items, assumed to exist.",
             aliases=("scaled_dcg",), cutoff=CUTOFF_REQUIRED, sections=(*_RANKED, "curves_k"),
             convention="`lo = min_relevance` (0), `hi = max_relevance` (0: the largest grade); unjudged 0 "
                        "(ir_measures `SDCG`, cwl_eval `NDCG-k`)"),
    _ranking("rbp_residual", "rbp_residual", "`(1 - p) sum_{i<=K} u_i p^(i-1) + p^K`, u = unjudged",
             "Residual of RBP: how much it could still rise if unjudged and unseen items were relevant.",
             aliases=("rbp_resid",), sections=(),
             convention="`p = rbp_persistence`; lower is better-determined", direction=LOWER),
    _ranking("err", "err", "`sum_{i<=K} (1/i) R_i prod_{j<i} (1 - R_j)`, `R_i = (2^g_i - 1) / 16`",
             "Expected reciprocal rank: a cascade user stopping at a satisfying item.",
             convention="grades 0..4 (gdeval, ir_measures `ERR`)",
             sections=(*_RANKED, "curves_k")),
    _ranking("judged", "judged", "`(judged items of the top K) / K`",
             "Share of the top k that the ground truth judges.",
             convention="any judgment counts (ir_measures `Judged`)",
             sections=(*_RANKED, "curves_k")),
    Metric("entropy", "diversity", HIGHER, "`-sum_i p_i log2 p_i`, `p_i` = share of all top-k slots held by item i",
           "Distributional coverage: how evenly the recommendations spread over the items.",
           aliases=("distributional_coverage", "shannon_entropy"), needs=(),
           convention="ties: a tie group cut by k shares its slots (expected counts)"),
    Metric("gini", "diversity", LOWER,
           "`sum_{i,j} |c_i - c_j| / (2 N sum_i c_i)`, `c_i` = top-k slots of item i over the catalogue of N items",
           "Gini index of how often each catalogue item is recommended (0 = evenly, near 1 = a few items).",
           aliases=("gini_index",),
           convention="catalogue as `coverage`, never recommended items count 0 (RecBole `GiniIndex`)",
           needs=("catalogue",)),
    Metric("arp", "diversity", LOWER, "mean over the top k of `pop(i)`, `pop` = users who interacted with i",
           "Average recommendation popularity: how popular the recommended items are.",
           aliases=("average_recommendation_popularity",), needs=("relevance", "interactions"), per_user=True,
           convention="popularity from `interactions`, else the relevant ground truth"),
    Metric("aplt", "diversity", HIGHER,
           "share of the top k in the long tail: items outside the short head, the most popular items "
           "holding 80% of the interactions",
           "Long-tail share: how much of each list comes from the less popular items.",
           aliases=("long_tail_share", "long_tail"), needs=("relevance", "interactions"), per_user=True,
           convention="head: items whose more popular items hold < 80% of the interactions (as `arp`)"),
    Metric("serendipity_pop", "diversity", HIGHER,
           "`mean_{i<=K} max((N+1-i)/N - (N+1-prank(i))/N, 0) h_i`, `prank` = dense popularity rank "
           "(0 term for items without interactions)",
           "Serendipity as RecTools defines it: relevant items ranked higher than their popularity would place them.",
           aliases=("serendipity_rectools",), needs=("relevance", "interactions", "catalogue"), per_user=True,
           convention="N = catalogue as `mcc@k`; popularity as `arp`"),
    Metric("serendipity_sim", "diversity", HIGHER,
           "`mean_{i<=K} (1 - mean_{j in H_u} cos(i, j)) h_i`, cos = co-occurrence cosine over `interactions`, "
           "`H_u` = the user's interacted items",
           "Serendipity as Microsoft Recommenders defines it: relevant items unlike the user's history.",
           aliases=("serendipity_ms", "user_serendipity"), needs=("relevance", "history"), per_user=True,
           convention="needs `interactions`; users without history left out",
           sections=()),  # needs a user history table, which the dashboard does not take
)

METRIC_NAMES: list[str] = sorted({m.name for m in METRICS})
_ENTRIES: dict[str, tuple[Metric, ...]] = {n: tuple(m for m in METRICS if m.name == n) for n in METRIC_NAMES}
ALIASES: dict[str, str] = {alias: m.name for m in METRICS for alias in m.aliases}
#: largest cutoff k: kept as given (P@k divides by it) while memory is sized by the longest list
MAX_K = 2**62
_WHOLE = re.compile(r"^\s*([0-9]+)(?:\.0*)?\s*$", re.ASCII)  # "20", "20.0": a whole number as text
_PATTERN = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_\-]*)\s*(?:@\s*(-?[0-9]+(?:\.[0-9]*)?))?\s*$")


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name: ``name`` (canonical base), ``k`` (0 = whole list), ``label`` as given,
    ``kind``, the :class:`Metric` entry it selects and, for a metric with a level (``iprec_at_recall@0.5``),
    ``level``."""

    name: str
    k: int
    label: str
    kind: str
    metric: Metric | None = None
    level: float | None = None

    @property
    def entry(self) -> Metric:
        return self.metric if self.metric is not None else _select(self.name, self.kind == "ranking")

    @property
    def per_user(self) -> bool:
        return self.entry.per_user


def canonical(base: str) -> str | None:
    """Canonical metric name of a base name or alias (case-insensitive, ``-`` = ``_``), or None."""
    key = str(base).strip().lower().replace("-", "_")
    key = ALIASES.get(key, key)
    return key if key in _ENTRIES else None


def entry_named(text: str) -> Metric:
    """The entry a declaration names, as the docs write it: ``"ndcg"``, ``"precision@k"`` (the entry that
    takes a cutoff), ``"precision"`` (the one that does not); MetricsError for an unknown name."""
    base, at, _ = str(text).partition("@")
    name = canonical(base)
    if name is None:
        raise MetricsError(f"unknown metric {str(text)[:80]!r}{_suggestion(base[:80])}")
    return _select(name, bool(at))


def _select(name: str, with_cutoff: bool) -> Metric:
    """The entry of ``name``: with a cutoff the one that takes ``@k``, else the one that does not need it."""
    entries = _ENTRIES[name]
    if len(entries) == 1:
        return entries[0]
    wanted = [m for m in entries if (m.cutoff != CUTOFF_NONE) == with_cutoff]
    return wanted[0]


def _suggestion(base: str) -> str:
    close = difflib.get_close_matches(base, METRIC_NAMES + list(ALIASES), n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else f"; known metrics: {', '.join(METRIC_NAMES)}"


def _cutoff(k_text: str, label: str) -> int:
    """The whole number k of ``@k`` (1..MAX_K), read from its text (never through a float)."""
    whole, _, fraction = k_text.partition(".")
    digits = whole.lstrip("-").lstrip("0")
    k = -1 if fraction.strip("0") else MAX_K + 1 if len(digits) > 19 else int(whole)
    if k <= 0:
        raise MetricsError(f"cutoff k must be a whole number >= 1 in '{label[:80]}'")
    if k > MAX_K:
        raise MetricsError(f"cutoff k in '{label[:40]}' is larger than the largest supported cutoff 2^62; "
                           f"leave out @k to use the whole list")
    return k


def check_cutoff(value, high: int = MAX_K, what: str = "k") -> int:
    """A cutoff given as a number or as text (a URL parameter, an option): a whole number from 1 to
    ``high``, read from its text (never through a float: ``inf``, ``1e999`` and ``2.5`` are refused),
    else a one-line MetricsError naming ``what`` and the range."""
    text = "" if isinstance(value, bool) else str(int(value)) if isinstance(value, float) and value.is_integer() \
        else str(value)
    m = _WHOLE.match(text)
    k = -1
    if m:  # digits beyond the length of ``high`` are above it: no huge integer is built
        digits = m.group(1).lstrip("0")
        k = high + 1 if len(digits) > len(str(high)) else int(digits or "0")
    if not 1 <= k <= high:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise MetricsError(f"{what} must be a whole number from 1 to {high:,}; got {shown}")
    return k


def parse_metric(label: str) -> MetricSpec:
    """Parse ``"NDCG@10"`` -> MetricSpec(name="ndcg", k=10, ...); one-line MetricsError otherwise.

    Parameters
    ----------
    label : str
        A metric name, case-insensitive, with an optional cutoff (``"ndcg@10"``, ``"MAP"``, an alias
        such as ``"ndcg_cut@10"``).

    Returns
    -------
    MetricSpec
        ``name`` (the registry's), ``k`` (0: the whole list), ``label`` (as given), ``metric`` (the
        registry entry).

    Examples
    --------
    >>> import metrics_core as mc
    >>> spec = mc.parse_metric("NDCG@10")
    >>> spec.name, spec.k, spec.label
    ('ndcg', 10, 'NDCG@10')
    >>> mc.parse_metric("recip_rank@5").name  # an alias
    'mrr'
    """
    if not isinstance(label, str):
        raise MetricsError(f"a metric name must be a string such as 'ndcg@10', got {type(label).__name__}")
    if not label.strip():
        raise MetricsError(f"empty metric name {label!r}; known metrics: {', '.join(METRIC_NAMES)}")
    m = _PATTERN.match(label)
    if not m:
        raise MetricsError(f"cannot read metric name {label[:80]!r}; write it as name or name@k, e.g. ndcg@10")
    raw, k_text = m.group(1).lower().replace("-", "_"), m.group(2)
    base = canonical(raw)
    if base is None:
        raise MetricsError(f"unknown metric '{label[:80]}'{_suggestion(raw[:80])}")
    metric = _select(base, k_text is not None)
    k = 0
    if metric.cutoff == CUTOFF_LEVEL:
        return MetricSpec(name=base, k=0, label=label, kind=metric.kind, metric=metric,
                          level=_level(metric, k_text, label))
    if k_text is not None:
        if metric.cutoff == CUTOFF_NONE:
            raise MetricsError(f"metric '{base}' takes no cutoff; write '{base}' instead of '{label}'")
        k = _cutoff(k_text, label)
    return MetricSpec(name=base, k=k, label=label, kind=metric.kind, metric=metric)


def _level(metric: Metric, text: str | None, label: str) -> float:
    """The level x of ``name@x`` (a decimal from 0 to ``metric.level_max``)."""
    bound = "" if metric.level_max is None else f" to {metric.level_max:g}"
    if text is None:
        raise MetricsError(f"metric '{metric.name}' needs a level, e.g. {metric.name}@0.5 (a number from 0{bound})")
    level = float(text)
    if level < 0 or (metric.level_max is not None and level > metric.level_max):
        raise MetricsError(f"the level of '{label[:80]}' must be a number from 0{bound}")
    return level


def parse_metrics(labels) -> list[MetricSpec]:
    """Parse a list (or a comma-separated string) of metric names.

    Parameters
    ----------
    labels : str or sequence of str
        ``"ndcg@10,map"`` or ``["ndcg@10", "map"]``.

    Examples
    --------
    >>> import metrics_core as mc
    >>> [(s.name, s.k) for s in mc.parse_metrics("ndcg@10,map")]
    [('ndcg', 10), ('map', 0)]
    """
    if isinstance(labels, str):
        labels = [x for x in labels.split(",") if x.strip()]
    if labels is None:
        raise MetricsError("metrics is None; pass metric names, e.g. metrics=['ndcg@10', 'map@100']")
    try:
        labels = list(labels)
    except TypeError:
        raise MetricsError(f"metrics must be a list of names such as ['ndcg@10'], got {type(labels).__name__}") from None
    bad = [x for x in labels if not isinstance(x, str)]
    if bad:
        raise MetricsError(f"a metric name must be a string such as 'ndcg@10', got {bad[0]!r}")
    specs = [parse_metric(x.strip()) for x in labels]
    if not specs:
        raise MetricsError("no metric requested; e.g. --metrics ndcg@10,map@100")
    return specs


def lookup(label: str) -> Metric:
    """The entry of a metric name or label (``"ndcg@10"``, ``"P@5"``, ``"log_loss"``); MetricsError if unknown."""
    return parse_metric(label).entry


def higher_is_better(label: str) -> bool:
    """Whether a larger value of this metric is better (unknown names count as higher-is-better)."""
    try:
        return lookup(str(label)).higher_is_better
    except MetricsError:
        return True


def curve_metrics() -> tuple[str, ...]:
    """The metrics drawn against K by default (the ``metric_vs_k`` section): the Overview's panels,
    ``mc.plot.metric_vs_k`` and the warm-up."""
    return tuple(dict.fromkeys(m.name for m in metrics_in("metric_vs_k")))


def metrics_of_kind(*kinds: str) -> tuple[Metric, ...]:
    """Entries of the given kinds, in table order."""
    return tuple(m for m in METRICS if m.kind in kinds)


def metrics_in(section: str, *kinds: str) -> tuple[Metric, ...]:
    """Entries shown in ``section`` (a key of :data:`SECTIONS`), of the given kinds (all when none),
    in table order."""
    if section not in SECTIONS:
        raise MetricsError(f"unknown metric section {section!r}; known: {', '.join(SECTIONS)}")
    return tuple(m for m in METRICS if section in m.sections and (not kinds or m.kind in kinds))


def label_at(metric: Metric, k: int) -> str:
    """The label ``metric`` is requested with at cutoff ``k``: ``ndcg@10``; a metric that takes no
    cutoff (``r_precision``, the scored-row metrics) by its name (a metric with a level takes none)."""
    if metric.cutoff == CUTOFF_LEVEL:
        raise MetricsError(f"{metric.name} takes a level (e.g. {metric.name}@0.5), not a cutoff k")
    return metric.name if metric.cutoff == CUTOFF_NONE else f"{metric.name}@{k}"


def lower_is_better_names() -> frozenset[str]:
    """Every name and alias of the metrics for which a smaller value is better."""
    return frozenset(n for m in METRICS if not m.higher_is_better for n in (m.name, *m.aliases))


def help_text() -> str:
    """The metric list for the command line's ``--metrics`` help, grouped by kind."""
    groups = []
    for kind in KINDS:
        names = [m.display for m in METRICS if m.kind == kind]
        groups.append(f"{KIND_TITLES[kind]}: {', '.join(names)}")
    return "; ".join(groups)


def _cell(text: str) -> str:
    """A markdown table cell: pipes escaped (also inside code spans, as GitHub reads tables)."""
    return text.replace("|", "\\|")


def markdown_table() -> str:
    """docs/metrics.md's metric table (one row per entry, generated from the table above)."""
    lines = ["| metric | kind | formula (per user unless stated) | better | default convention |",
             "| --- | --- | --- | --- | --- |"]
    for m in METRICS:
        names = f"`{m.display}`"
        if m.aliases:
            suffix = {CUTOFF_NONE: "", CUTOFF_LEVEL: "@x"}.get(m.cutoff, "@k")
            names += " (" + ", ".join(f"`{a}{suffix}`" for a in m.aliases) + ")"
        lines.append(f"| {names} | {KIND_TITLES[m.kind]} | {_cell(m.formula)} | {m.direction} | "
                     f"{_cell(m.convention)} |")
    return "\n".join(lines)


def api_lists() -> str:
    """docs/api.md's metric lists by kind (comment lines of its code block), generated from the table above."""
    titles = {"ranking": "ranking (per user, mean over evaluated users)", "pooled": "pooled over users",
              "scored": "scored rows (global)", "scored_per_user": "scored rows per user", "diversity": "diversity"}
    lines = []
    for kind in KINDS:
        names = [m.display for m in METRICS if m.kind == kind]
        line = f"#   {titles[kind]}:"
        for name in names:  # wrapped at 110 characters
            if len(line) + 1 + len(name) > 110:
                lines.append(line)
                line = "#      "
            line += " " + name
        lines.append(line)
    lines.append('#       note: "precision", "recall", "f1", "accuracy" WITHOUT @k are the classification ones at '
                 '`threshold`.')
    return "\n".join(lines)
