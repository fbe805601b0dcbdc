"""What each library computes, declared once: its conventions, its metric names, its documented bugs.

A preset sets every convention of :mod:`metrics_core.metrics.conventions` to what one
library computes (``mc.evaluate(..., preset="rectools")``, ``--preset
rectools``); explicit keywords still override it. Conventions a preset does not
name keep their defaults. ``names`` maps the library's metric names to ours,
so a user can paste ``ndcg_cut_10`` (trec_eval), ``ndcgAt`` (Spark) or
``NDCG@10`` (ranx) under that preset: a name is the library's base name,
optionally followed by ``_k`` or ``@k``. Results keep the name the user typed.
A library name may also fix conventions of its own (``name_settings``):
Microsoft Recommenders' ``map`` divides by R where its ``map_at_k`` divides by
``min(k, R)``, so the two names give the two values under one preset (an
explicit keyword still wins). ``notes`` say where the library's code differs
from its documentation and which of its names cannot be reproduced, and why;
``checked`` says how the preset is tested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import MetricsError


@dataclass(frozen=True)
class Preset:
    """One library: ``settings`` (convention -> value), ``names`` (library metric name -> our base name),
    ``notes`` (known differences from its documentation, names not reproduced), ``checked`` (how the
    preset is tested) and ``name_settings`` (library name -> conventions that only this name sets)."""

    name: str
    library: str
    settings: dict
    names: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    checked: str = ""
    name_settings: dict = field(default_factory=dict)  # library name -> conventions that name fixes
    #: a name standing for a list of the library's names (trec_eval's ``all_trec``)
    measure_sets: dict = field(default_factory=dict)
    #: parameters written ``Name(param=value)`` (ir_measures): param -> function of the value text
    #: giving the conventions it fixes (one-line MetricsError when the value is not accepted)
    params: dict = field(default_factory=dict)
    #: a library name that means another of our metrics when written with a parameter: library name ->
    #: {parameter: our base name} (ir_measures' ``RBP`` is graded, ``RBP(rel=1)`` binary)
    param_names: dict = field(default_factory=dict)


_TREC_NAMES = {"ndcg": "ndcg", "ndcg_cut": "ndcg", "map": "map", "map_cut": "map", "P": "precision",
               "recall": "recall", "recip_rank": "mrr", "Rprec": "r_precision", "success": "hit_rate",
               "bpref": "bpref", "infAP": "infap", "iprec_at_recall": "iprec_at_recall", "11pt_avg": "iprec_11pt",
               "Rprec_mult": "rprec_mult", "relative_P": "relative_precision", "set_P": "set_precision",
               "set_recall": "set_recall", "set_F": "set_f", "set_map": "set_map",
               "set_relative_P": "set_relative_precision", "utility": "utility", "num_ret": "num_ret",
               "num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "num_nonrel_judged_ret": "num_nonrel_judged_ret",
               "num_q": "num_q", "gm_map": "gm_map", "gm_bpref": "gm_bpref", "G": "gain_g", "binG": "bin_g",
               "ndcg_rel": "ndcg_rel", "Rndcg": "rndcg"}
_TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval's ``-m all_trec``: every measure it computes with its default parameters, as pytrec_eval names
#: them (``runid`` and ``relstring`` are text, not numbers, and are left out)
ALL_TREC = tuple(sorted(
    [f"{name}_{k}" for name in ("P", "recall", "map_cut", "ndcg_cut", "relative_P") for k in _TREC_CUTOFFS]
    + [f"success_{k}" for k in (1, 5, 10)]
    + [f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]
    + [f"Rprec_mult_{x / 10:.2f}" for x in range(2, 21, 2)]
    + ["11pt_avg", "G", "Rndcg", "Rprec", "binG", "bpref", "gm_bpref", "gm_map", "infAP", "map", "ndcg", "ndcg_rel",
       "num_nonrel_judged_ret", "num_q", "num_rel", "num_rel_ret", "num_ret", "recip_rank", "set_F", "set_P",
       "set_map", "set_recall", "set_relative_P", "utility"]))
_TREC_SETS = {"all_trec": ALL_TREC}
# trec_eval averages over the queries of the run that have judgments, also those without a relevant one
_TREC = dict(ties="trec", gain="linear", ideal="judged", ap_norm="relevant", precision_norm="k",
             empty_users="zero", missing_users="exclude")
# pytrec_eval's trec_eval predates version 10's rounding of recall levels
_PYTREC = dict(_TREC, recall_level_count="add_0.9")

PRESETS: tuple[Preset, ...] = (
    Preset("trec_eval", "trec_eval 10 (C, without -c)", _TREC, _TREC_NAMES,
           notes=("`all_trec` leaves out runid and relstring (text, not numbers); rbp and the preference "
                  "measures of newer trec_eval are not in pytrec_eval's set and not mapped",),
           checked="tests/test_presets_libraries.py and tests/test_trec_measures.py against pytrec_eval "
                   "(trec_eval's C code)", measure_sets=_TREC_SETS),
    Preset("pytrec_eval", "pytrec_eval (trec_eval's C code, per query)", _PYTREC, _TREC_NAMES,
           notes=("pytrec_eval bundles a trec_eval from before version 10, which turns a recall level x into "
                  "floor(x R + 0.9) relevant items (recall_level_count=add_0.9); trec_eval 10 rounds x R",),
           checked="tests/test_presets_libraries.py and tests/test_trec_measures.py against pytrec_eval",
           measure_sets=_TREC_SETS),
    Preset("ir_measures", "ir_measures (pytrec_eval provider)", dict(_PYTREC, missing_users="zero"),
           {"nDCG": "ndcg", "AP": "map", "P": "precision", "R": "recall", "RR": "mrr", "Rprec": "r_precision",
            "Success": "hit_rate", "infAP": "infap", "IPrec": "iprec_at_recall", "NumRet": "num_ret",
            "NumRelRet": "num_rel_ret", "NumRel": "num_rel", "NumQ": "num_q", "Bpref": "bpref",
            "SetP": "set_precision", "SetR": "set_recall", "SetF": "set_f", "SetAP": "set_map", "RBP": "rbp_graded",
            "ERR": "err", "Judged": "judged", "SDCG": "sdcg"},
           notes=("parameters are read as ir_measures writes them: rel=N (relevance_threshold), "
                  "dcg='log2'|'exp-log2' (gain linear|exponential), p=X (rbp_persistence), min_rel=N and "
                  "max_rel=N (min_relevance, max_relevance: SDCG's scale), judged_only=False; "
                  "other parameters are refused",
                  "RBP without rel is graded (rbp_graded, as its trectools provider computes it: each item "
                  "weighted by its grade); RBP(rel=N) is binary (rbp, relevant at grade N or above)",
                  "SDCG reads min_rel and max_rel (min_relevance, max_relevance); ir_measures requires max_rel, "
                  "here it defaults to the largest grade of the ground truth; its cwl_eval provider reads at most "
                  "1,000 items of each list, the preset the whole list",
                  "Judged sorts tied scores by docno ascending (its own provider) where the preset keeps "
                  "trec_eval's descending order: the two differ only where a tie group is cut by k"),
           checked="tests/test_presets_libraries.py and tests/test_trec_measures.py against "
                   "ir_measures.calc_aggregate / iter_calc",
           params={"rel": lambda v: {"relevance_threshold": _number(v, "rel")},
                   "dcg": lambda v: {"gain": _choice(v, "dcg", {"log2": "linear", "exp-log2": "exponential"})},
                   "p": lambda v: {"rbp_persistence": _number(v, "p")},
                   "min_rel": lambda v: {"min_relevance": _number(v, "min_rel")},
                   "max_rel": lambda v: {"max_relevance": _number(v, "max_rel")},
                   "judged_only": lambda v: _choice(v, "judged_only", {"False": {}})},
           param_names={"RBP": {"rel": "rbp"}}),
    Preset("trectools", "trectools (TrecEval)", dict(_TREC, run_only_users="zero", ties="score_id"),
           {"NDCG": "ndcg", "MAP": "map", "P": "precision", "Rprec": "r_precision", "RR": "mrr"},
           notes=("trectools' NDCG breaks score ties by docid ascending while its other measures use descending "
                  "(trec_eval's order); the preset uses descending for every metric",
                  "its NDCG takes the run's rows in file order and divides the sum over queries by the number of "
                  "queries of the run (also those without judgments); the preset averages over the judged users "
                  "as its other measures do",
                  "like trec_eval without -c it leaves out topics the run does not answer (missing_users=exclude), "
                  "but it divides each sum by the number of topics of the run, so topics of the run without "
                  "judgments count as 0 (run_only_users=zero)",
                  "it sorts the 64-bit scores with pandas, not as trec_eval's 32-bit floats (ties=score_id)"),
           checked="tests/test_presets_libraries.py against trectools' MAP, P@k and RR (not its NDCG, see notes)"),
    Preset("ranx", "ranx (make_comparable=True)",
           dict(ties="input", gain="linear", ideal="judged", ap_norm="relevant", precision_norm="k",
                empty_users="zero", missing_users="zero"),
           {"ndcg": "ndcg", "map": "map", "precision": "precision", "recall": "recall", "mrr": "mrr",
            "r-precision": "r_precision", "hit_rate": "hit_rate", "hits": "hit_ratio"},
           checked="tests/test_presets_libraries.py against ranx"),
    Preset("sklearn", "scikit-learn", dict(ties="average", gain="linear", ideal="retrieved", empty_users="zero",
                                            missing_users="exclude"),
           {"ndcg_score": "ndcg", "dcg_score": "dcg", "roc_auc_score": "auc", "average_precision_score": "pr_auc",
            "log_loss": "logloss", "brier_score_loss": "brier", "mean_absolute_error": "mae",
            "accuracy_score": "accuracy", "precision_score": "precision", "recall_score": "recall",
            "f1_score": "f1"},
           checked="tests/test_presets_libraries.py against sklearn.metrics.ndcg_score / dcg_score"),
    Preset("spark_mllib", "Spark MLlib RankingMetrics / pyspark.ml RankingEvaluator",
           dict(ties="input", gain="binary", ideal="judged", ap_norm="min_k", precision_norm="k",
                empty_users="zero", missing_users="exclude"),
           {"ndcgAt": "ndcg", "meanAveragePrecisionAt": "map", "meanAveragePrecision": "map",
            "precisionAt": "precision", "recallAt": "recall",
            # RankingEvaluator's metricName values (its k is the evaluator's k, written @k here)
            "ndcgAtK": "ndcg", "meanAveragePrecisionAtK": "map", "precisionAtK": "precision",
            "recallAtK": "recall"},
           notes=("pyspark's Python RankingMetrics drops the relevance values of (prediction, label, relevance) "
                  "triples and returns binary NDCG; the preset is binary, as documented for labels",
                  "Spark's graded NDCG takes the ideal from the label array in the given order, not sorted "
                  "(values above 1 are possible); the preset sorts the ideal",
                  "meanAveragePrecision (no k) divides each user's sum by R, meanAveragePrecisionAt(k) by "
                  "min(k, R): each name sets its own ap_norm"),
           checked="tests/test_presets_libraries.py against pyspark.mllib.evaluation.RankingMetrics",
           name_settings={"meanAveragePrecision": {"ap_norm": "relevant"}}),
    Preset("ms_recommenders", "Microsoft Recommenders (python_evaluation)",
           dict(ties="input", gain="binary", ideal="judged", ap_norm="min_k", precision_norm="k",
                empty_users="exclude", missing_users="exclude", unjudged_rows="exclude",
                novelty_popularity="interactions", novelty_average="rows", beyond_users="listed"),
           {"ndcg_at_k": "ndcg", "map_at_k": "map", "map": "map", "precision_at_k": "precision",
            "recall_at_k": "recall", "r_precision_at_k": "r_precision", "auc": "auc", "logloss": "logloss",
            "rmse": "rmse", "mae": "mae", "novelty": "novelty", "serendipity": "serendipity_sim",
            "catalog_coverage": "coverage"},
           notes=("r_precision_at_k averages only over users with a hit in their top R; the preset averages over "
                  "every evaluated user",
                  "ndcg_at_k averages over every user of rating_true (users missing from the predictions score 0) "
                  "while its other ranking metrics average over the users in both; the preset leaves missing "
                  "users out of every metric",
                  "every row of rating_true is relevant whatever its rating (score_type='binary'); give only "
                  "relevant rows, or set relevance_threshold",
                  "novelty leaves recommended items absent from train_df out of its sum but not of its row count; "
                  "the preset counts such an item once",
                  "map(k) divides each user's sum by R (as its docstring says), map_at_k(k) by min(k, R): each "
                  "name sets its own ap_norm",
                  "serendipity and catalog_coverage read every row of reco_df (write them without @k); "
                  "serendipity's relevance is reco_df's relevance column: pass those rows as the ground truth and "
                  "train_df as interactions (item_sim_measure='item_cooccurrence_count'); catalog_coverage "
                  "divides by train_df's distinct items: pass them as item_features",
                  "diversity is not mapped: it is 1 minus each user's mean pairwise similarity, averaged, and ils "
                  "reports the similarity itself (so diversity = 1 - ils over the same users and features)"),
           checked="tests/test_presets_libraries.py against recommenders.evaluation.python_evaluation",
           name_settings={"map": {"ap_norm": "relevant"}}),
    Preset("rectools", "RecTools", dict(ties="input", gain="binary", ideal="k", ap_norm="relevant",
                                        precision_norm="k", empty_users="exclude", missing_users="zero",
                                        beyond_users="listed", short_lists="zero"),
           {"NDCG": "ndcg", "MAP": "map", "Precision": "precision", "Recall": "recall", "MRR": "mrr",
            "HitRate": "hit_rate", "F1Beta": "fbeta", "MCC": "mcc", "Accuracy": "accuracy",
            "PartialAUC": "pauc", "PAP": "pap", "Serendipity": "serendipity_pop", "MeanInvUserFreq": "novelty",
            "AvgRecPopularity": "arp", "CatalogCoverage": "coverage", "IntraListDiversity": "ild"},
           notes=("ranking metrics average over the users of its interactions (users without recommendations "
                  "score 0); MeanInvUserFreq, AvgRecPopularity, CatalogCoverage, Serendipity and "
                  "IntraListDiversity over every user of the recommendations (beyond_users=listed)",
                  "MCC, Accuracy, Serendipity and CatalogCoverage(normalize=True) take the catalog as "
                  "item_features' item ids; CatalogCoverage(normalize=False) counts items, not a share: not "
                  "reproduced",
                  "AvgRecPopularity counts interaction rows (a repeated user-item pair counts twice), arp counts "
                  "distinct users: equal when prev_interactions holds each pair once",
                  "IntraListDiversity with PairwiseHammingDistanceCalculator is ild@k: the mean pairwise Hamming "
                  "distance of the item_features rows (its features_df with item_id as a column), a top k of one "
                  "item scoring 0 (short_lists=zero); pairs with an item without features are left out, as its "
                  "NaN distances are; with a cosine distance calculator (1 - cosine similarity of the feature "
                  "vectors) it is ild@k with ild_distance=cosine; other distance calculators are not reproduced",
                  "Intersection (overlap with a reference model's lists) reads two runs, so it is not a metric of "
                  "evaluate: mc.intersection(run, reference_run, k, reference_k) is Intersection(k, ref_k).calc "
                  "(ties=input: RecTools' ranks)",
                  "DebiasConfig(iqr_coef, random_state) down-samples popular items of the ground truth before any "
                  "metric: mc.debias(qrels, iqr_coef, seed) is that step (the same rows for the same seed), then "
                  "evaluate under this preset"),
           checked="tests/test_presets_libraries.py against rectools.metrics"),
    Preset("recmetrics", "recmetrics", dict(ties="input", gain="binary", ap_norm="relevant", empty_users="zero",
                                            missing_users="zero"),
           {"mark": "map"},
           notes=("recommender_precision and recommender_recall are not mapped: they round each user's value to 4 "
                  "decimals before averaging (and precision divides by the whole list's length); use precision@k "
                  "and recall@k",
                  "prediction_coverage is not mapped: it returns a percentage rounded to 2 decimals; coverage is the "
                  "unrounded share (prediction_coverage = round(100 * coverage, 2) with the catalog as "
                  "item_features)",
                  "catalog_coverage samples k users at random (unseeded): not reproducible",
                  "its novelty, personalization and intra_list_similarity are not mapped: not checked against "
                  "recmetrics"),
           checked="tests/test_presets_libraries.py against recmetrics.mark (installed with --no-deps)"),
    Preset("recbole", "RecBole", dict(ties="input", gain="binary", ideal="judged", ap_norm="min_k",
                                      precision_norm="k", empty_users="exclude", missing_users="zero"),
           {"NDCG": "ndcg", "MAP": "map", "Precision": "precision", "Recall": "recall", "MRR": "mrr",
            "Hit": "hit_rate"},
           checked="tests/test_presets_worked_examples.py: worked example from recbole/evaluator/metrics.py"),
    Preset("torchmetrics", "torchmetrics (functional retrieval)",
           dict(ties="average", gain="linear", ideal="retrieved", ap_norm="retrieved", precision_norm="k",
                empty_users="zero", missing_users="exclude"),
           {"retrieval_normalized_dcg": "ndcg", "RetrievalNormalizedDCG": "ndcg",
            "retrieval_average_precision": "map", "RetrievalMAP": "map", "retrieval_precision": "precision",
            "RetrievalPrecision": "precision", "retrieval_recall": "recall", "RetrievalRecall": "recall",
            "retrieval_reciprocal_rank": "mrr", "RetrievalMRR": "mrr", "retrieval_hit_rate": "hit_rate",
            "RetrievalHitRate": "hit_rate", "retrieval_r_precision": "r_precision",
            "RetrievalRPrecision": "r_precision"},
           notes=("retrieval_normalized_dcg averages tied scores (as scikit-learn) but first sets every score <= 0 "
                  "to -inf, so non-positive scores tie at the bottom and a list without a positive score is 0; "
                  "the preset ranks the scores as given",
                  "its AP and precision sort with torch.argsort, which leaves the order of tied scores unspecified; "
                  "the preset averages over tie orders"),
           checked="tests/test_presets_worked_examples.py: worked example from torchmetrics functional/retrieval"),
)
BY_NAME: dict[str, Preset] = {p.name: p for p in PRESETS}


def get(name: str) -> Preset:
    """The preset called ``name``; one-line MetricsError naming the known ones otherwise."""
    if name not in BY_NAME:
        raise MetricsError(f"unknown preset {name!r}; known: {', '.join(BY_NAME)}")
    return BY_NAME[name]


def settings(name: str | None) -> dict:
    """The conventions a preset sets (empty for no preset)."""
    return {} if name is None else dict(get(name).settings)


_CUTOFF = re.compile(r"^(.*?)(?:[_@]\s*([0-9]+(?:\.[0-9]+)?))?\s*$")
# ir_measures' syntax: Name(param=value, ...)@cutoff
_PARAMS = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*(?:@\s*([0-9]+(?:\.[0-9]+)?))?\s*$")


def _number(text: str, param: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise MetricsError(f"parameter {param}={text[:40]!r} must be a number") from None


def _choice(text: str, param: str, choices: dict):
    if text not in choices:
        raise MetricsError(f"parameter {param}={text[:40]!r} is not offered; use {' or '.join(choices)}")
    return choices[text]


def _split_params(text: str, label: str) -> dict[str, str]:
    """``rel=2, dcg='exp-log2'`` -> {"rel": "2", "dcg": "exp-log2"} (quotes removed)."""
    params = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq:
            raise MetricsError(f"cannot read parameter {part[:40]!r} of {label[:80]!r}; write name=value")
        params[key.strip()] = value.strip().strip("'\"")
    return params


def _library_parts(label: str, preset: str) -> tuple[str | None, str | None, dict]:
    """(the preset's library name that ``label`` uses, its cutoff text, its parameters), or (None, None, {}).

    Library names are read whatever their case (``ndcg_cut_10`` for trec_eval's ``ndcg_cut``), except where
    the text is written as one of our own names that the library's name in another case means another
    metric: under ir_measures ``RBP`` is graded, ``rbp`` stays our binary rbp."""
    names = {k.lower(): k for k in get(preset).names}

    def library(base: str) -> str | None:
        name = names.get(base.lower())
        if name is None or name == base:
            return name
        from .registry import canonical
        ours = canonical(base)
        return name if ours is None or ours == get(preset).names[name] else None

    text = label.strip()
    if library(text) is not None:
        return library(text), None, {}
    with_params = _PARAMS.match(text)
    if with_params and get(preset).params and library(with_params.group(1)) is not None:
        base, params, k = with_params.groups()
        return library(base), k, _split_params(params, text)
    base, k = _CUTOFF.match(text).groups()
    if k is not None and library(base) is not None:
        return library(base), k, {}
    return None, None, {}


def expand(labels, preset: str | None) -> list:
    """``labels`` with each name of a measure set of ``preset`` (trec_eval's ``all_trec``) replaced by its names."""
    if preset is None:
        return labels
    sets = get(preset).measure_sets
    return [name for label in labels for name in (sets.get(label.strip(), (label,)) if isinstance(label, str)
                                                    else (label,))]


def metric_name(label: str, preset: str | None) -> str:
    """Our metric label for a library's metric name under ``preset`` (``ndcg_cut_10`` -> ``ndcg@10``);
    names the preset does not know are returned unchanged (ours are always accepted)."""
    if preset is None or not isinstance(label, str):
        return label
    name, k, params = _library_parts(label, preset)
    if name is None:
        return label
    ours = get(preset).names[name]
    for param in params:  # a parameter that makes the name another metric (ir_measures' RBP(rel=1))
        ours = get(preset).param_names.get(name, {}).get(param, ours)
    return ours if k is None else f"{ours}@{k}"


def metric_settings(label, preset: str | None) -> dict:
    """The conventions the library name ``label`` fixes under ``preset`` (empty for most names)."""
    if preset is None or not isinstance(label, str):
        return {}
    name, _, params = _library_parts(label, preset)
    if name is None:
        return {}
    fixed = dict(get(preset).name_settings.get(name, {}))
    known = get(preset).params
    for param, value in params.items():
        if param not in known:
            raise MetricsError(f"parameter {param[:40]!r} of {label[:80]!r} is not read under preset {preset}; "
                               f"known: {', '.join(known)}")
        fixed.update(known[param](value))
    return fixed


def metric_names(labels, preset: str | None):
    """:func:`metric_name` of every label (a list, or a comma-separated string)."""
    if preset is None:
        return labels
    get(preset)
    if isinstance(labels, str):
        labels = split_labels(labels)
    return [metric_name(x, preset) for x in expand(labels, preset)]


def split_labels(text: str) -> list[str]:
    """A comma-separated list of names, commas inside parentheses kept (``nDCG(dcg='exp-log2', rel=2)@10``)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def parse_metrics(labels, preset: str | None):
    """Parsed metric names under a preset; each keeps the label the user wrote (``ndcg_cut_10``)."""
    from dataclasses import replace

    from .registry import parse_metrics as parse

    if preset is None:
        return parse(labels)
    given = split_labels(labels) if isinstance(labels, str) else labels
    if not isinstance(given, (str, bytes)) and given is not None:
        try:
            given = expand(list(given), preset)
        except TypeError:
            pass  # not a list: refused below as without a preset
    specs = parse(metric_names(given, preset))  # refuses what is not a list of names, as without a preset
    return [replace(spec, label=label) for spec, label in zip(specs, list(given))]


def settings_groups(specs, preset: str | None, explicit: dict) -> list[tuple[dict, list]]:
    """``specs`` grouped by the conventions their library names fix (keywords given in ``explicit``
    win over them): ``[(settings, specs), ...]``, the group without settings first."""
    groups: dict[tuple, list] = {}
    for spec in specs:
        fixed = {k: v for k, v in metric_settings(spec.label, preset).items() if explicit.get(k) is None}
        groups.setdefault(tuple(sorted(fixed.items())), []).append(spec)
    return [(dict(key), group) for key, group in sorted(groups.items(), key=lambda kv: len(kv[0]))]
