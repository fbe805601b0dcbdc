"""Ranking families filled after the ranking kernel, one function each with one signature.

The ranking kernel (:func:`metrics_core.kernels.ranking.ranking_families`)
computes the columns of ``KERNEL_FAMILIES`` in one pass. A family it does not
compute is a :class:`Derived`: a function of the kernel's columns it names
(``hits``), the ranked lists, the cutoff, the conventions and the catalogue
size (and the level ``x`` of a metric written ``name@x``). The registry declares each metric's
``family``; :data:`BY_FAMILY` binds a family to its derivation here, where it is computed,
so :func:`metrics_core.evaluation.ranking_table` fills every column by the same loop.

A derivation may apply only under some conventions (``when``): precision@k
divided by ``min(k, R)`` (``precision_norm="min_k"``) replaces the kernel's
precision column then, and only then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ..errors import MetricsError
from ..kernels import set_measures
from ..kernels import topk_confusion as topk
from ..kernels.bpref import bpref_values
from ..kernels.err import MAX_GRADE, err_values
from ..kernels.gain_g import bin_g_values, g_values
from ..kernels.infap import infap_values
from ..kernels.interpolated_precision import ELEVEN_LEVELS, iprec_values
from ..kernels.judged import judged_values
from ..kernels.ndcg_levels import ndcg_rel_values, rndcg_values
from ..kernels.rank_biased import GRADED, RBP as RBP_BINARY, RESIDUAL, rank_biased_values
from ..kernels.scaled_dcg import MAX_SDCG_K, scaled_dcg_values
from ..kernels.rprec_mult import TREC_MULTIPLES, rprec_mult_values
from ..kernels.trec_lists import NUM_NONREL_JUDGED_RET, NUM_REL_RET, NUM_RET, set_counts
from ..kernels.partial_auc import PAP, PAUC, partial_auc_values
from ..kernels.ranking import AP, HITS_COLUMN, KERNEL_FAMILIES, RankedLists
from .kernel_settings import RelevanceViews


@dataclass(frozen=True)
class Inputs:
    """What a derived family reads: the prepared data (:class:`~metrics_core.layout.Ranked`), the
    ranked lists as the kernels see them (``views``, :class:`metrics_core.metrics.kernel_settings.RelevanceViews`:
    :attr:`lists` with the relevances the gain reads, :attr:`graded` with the relevances as given), the
    cutoff ``k`` (0 = whole list), the kernel ``columns`` it asked for (name -> per-user values), the
    resolved conventions (:class:`metrics_core.metrics.conventions.Settings`) and
    ``catalogue``, a function giving N, the catalogue size (read only when asked)."""

    ranked: object
    views: RelevanceViews
    k: int
    columns: Mapping[str, np.ndarray]
    settings: Mapping
    catalogue: Callable[[], int]
    level: float | None = None

    @property
    def lists(self) -> RankedLists:
        """The lists with the relevances the gain reads (0/1 under the binary gain)."""
        return self.views.gain

    @property
    def threshold(self) -> float:
        """The relevance threshold of :attr:`lists` (1 under the binary gain)."""
        return self.views.threshold

    @property
    def graded(self) -> RankedLists:
        """The lists with the relevances as given, whatever the gain: the measures defined on judgments (bpref,
        trec_eval's measures) read a negative relevance as "in the pool, unjudged" and grades as grades."""
        return self.views.graded

    @property
    def graded_threshold(self) -> float:
        """The user's ``relevance_threshold``, the threshold of :attr:`graded`."""
        return self.views.graded_threshold


@dataclass(frozen=True)
class Derived:
    """A ranking family computed after the kernel: ``compute(inputs) -> one value per user code``,
    reading the kernel ``columns`` it names; ``when(settings)``, if given, says under which
    conventions it replaces the kernel's column of the same name."""

    compute: Callable[[Inputs], np.ndarray]
    columns: tuple[str, ...] = ()
    when: Callable[[Mapping], bool] | None = None

    def applies(self, settings: Mapping) -> bool:
        return self.when is None or bool(self.when(settings))


def _fbeta(i: Inputs) -> np.ndarray:
    return topk.fbeta(i.columns[HITS_COLUMN], i.lists.n_rel, i.k, i.settings["beta"])


def _mcc(i: Inputs) -> np.ndarray:
    return topk.mcc(i.columns[HITS_COLUMN], i.lists.n_rel, i.k, i.catalogue())


def _accuracy(i: Inputs) -> np.ndarray:
    return topk.accuracy(i.columns[HITS_COLUMN], i.lists.n_rel, i.k, i.catalogue())


def _partial_auc(kind: int) -> Callable[[Inputs], np.ndarray]:
    return lambda i: partial_auc_values(i.lists, i.k, i.threshold, i.settings["ties"] == "average", kind)


def _precision_min_k(i: Inputs) -> np.ndarray:
    """precision@k divided by min(k, R) (0 when R = 0)."""
    den = np.minimum(float(i.k), i.lists.n_rel.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, i.columns[HITS_COLUMN] / den, 0.0)


def _bpref(i: Inputs) -> np.ndarray:
    """bpref reads the relevances as given (a negative one is unjudged), whatever the gain."""
    return bpref_values(i.graded, i.graded_threshold, i.settings["ties"] == "average")


#: F-beta@k, MCC@k and accuracy@k from hits@k (:mod:`metrics_core.kernels.topk_confusion`)
FBETA = Derived(_fbeta, (HITS_COLUMN,))
MCC = Derived(_mcc, (HITS_COLUMN,))
ACCURACY = Derived(_accuracy, (HITS_COLUMN,))
#: pAUC@k and pAp@k by their own kernel (:mod:`metrics_core.kernels.partial_auc`)
PARTIAL_AUC = Derived(_partial_auc(PAUC))
PARTIAL_AP = Derived(_partial_auc(PAP))
#: precision@k over min(k, R), under ``precision_norm="min_k"`` only
PRECISION_MIN_K = Derived(_precision_min_k, (HITS_COLUMN,), when=lambda s: s["precision_norm"] == "min_k")
#: trec_eval's bpref over the whole ranked list (:mod:`metrics_core.kernels.bpref`), computed once for bpref
#: and gm_bpref
BPREF = Derived(lambda i: _shared(i, "bpref_values", lambda: _bpref(i)))


# --------------------------------------------------------------------------- trec_eval's measures
#: trec_eval's floor of a per-query value before its logarithm (gm_map, gm_bpref: MIN_GEO_MEAN)
MIN_GEO_MEAN = 0.00001


def _shared(i: Inputs, name: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
    """``compute()`` once per prepared data, tie rule, relevance threshold and recall-level count: the
    families that read one table (the set measures' counts, the eleven recall levels, bpref) share it."""
    key = ("derived", name, i.settings["ties"], i.graded_threshold, i.settings["recall_level_count"])
    if key not in i.ranked._cache:
        i.ranked._cache[key] = compute()
    return i.ranked._cache[key]


def _set_counts(i: Inputs) -> np.ndarray:
    return _shared(i, "set_counts", lambda: set_counts(i.graded, i.graded_threshold))


def _counts(i: Inputs):
    """(num_ret, num_rel_ret, R) of every user code: the counts of trec_eval's set measures."""
    counts = _set_counts(i)
    return counts[:, NUM_RET], counts[:, NUM_REL_RET], i.lists.n_rel.astype(np.float64)


def _set(formula: Callable) -> Callable[[Inputs], np.ndarray]:
    return lambda i: formula(*_counts(i))


def _count(column: int) -> Callable[[Inputs], np.ndarray]:
    return lambda i: _set_counts(i)[:, column]


def _log_floor(values: np.ndarray) -> np.ndarray:
    """log(max(v, MIN_GEO_MEAN)): the per-query value of trec_eval's geometric means."""
    return np.log(np.maximum(values, MIN_GEO_MEAN))


def _gm_bpref(i: Inputs) -> np.ndarray:
    return _log_floor(_shared(i, "bpref_values", lambda: _bpref(i)))


def _rprec_mult(i: Inputs) -> np.ndarray:
    """Rprec_mult at the level's multiple of R (trec_eval's ten multiples in one pass, shared)."""
    def at(multiples):
        return rprec_mult_values(i.graded, i.graded_threshold, multiples, i.settings["ties"] == "average")
    standard = np.flatnonzero(TREC_MULTIPLES == i.level)
    if len(standard):
        return _shared(i, "multiples_of_r", lambda: at(TREC_MULTIPLES))[:, standard[0]]
    return at([i.level])[:, 0]


def _eleven_levels(i: Inputs) -> np.ndarray:
    """Interpolated precision at the eleven recall levels, one pass for all of them."""
    return _shared(i, "iprec_11", lambda: iprec_values(i.graded, i.graded_threshold, ELEVEN_LEVELS,
                                                        _add_point_nine(i)))


def _iprec(i: Inputs) -> np.ndarray:
    standard = np.flatnonzero(ELEVEN_LEVELS == i.level)
    if len(standard):
        return _eleven_levels(i)[:, standard[0]]
    return iprec_values(i.graded, i.graded_threshold, [i.level], _add_point_nine(i))[:, 0]


def _add_point_nine(i: Inputs) -> bool:
    return i.settings["recall_level_count"] == "add_0.9"


def _err(i: Inputs) -> np.ndarray:
    if i.ranked.rel_values.max(initial=0.0) > MAX_GRADE:
        raise MetricsError(f"ERR reads grades from 0 to {int(MAX_GRADE)} (gdeval's scale); the ground truth has "
                           f"{float(i.ranked.rel_values.max())}: map the grades onto 0..{int(MAX_GRADE)}")
    return err_values(i.graded, i.k, i.settings["ties"] == "average")


def _rbp(which: int) -> Callable[[Inputs], np.ndarray]:
    return lambda i: rank_biased_values(i.graded, i.graded_threshold, i.settings["rbp_persistence"], i.k,
                                        i.settings["ties"] == "average", which)


def _sdcg(i: Inputs) -> np.ndarray:
    """SDCG@k with relevances scaled between ``min_relevance`` and ``max_relevance`` (0: the largest relevance
    of the ground truth)."""
    if i.k > MAX_SDCG_K:
        raise MetricsError(f"sdcg@k divides by the discounts of k positions: k must be at most {MAX_SDCG_K:,}, "
                           f"got {i.k:,}")
    lo = float(i.settings["min_relevance"])
    hi = float(i.settings["max_relevance"]) or float(i.ranked.rel_values.max(initial=0.0))
    if not hi > lo:
        raise MetricsError(f"sdcg scales relevances between min_relevance ({lo:g}) and max_relevance ({hi:g}, "
                           f"0 takes the largest relevance of the ground truth): the maximum must be above the "
                           f"minimum; pass max_relevance (ir_measures' max_rel)")
    return scaled_dcg_values(i.graded, lo, hi, i.k, i.settings["ties"] == "average")


INFAP = Derived(lambda i: infap_values(i.graded, i.graded_threshold))
IPREC_AT_RECALL = Derived(_iprec)
ELEVEN_POINT = Derived(lambda i: _eleven_levels(i).mean(axis=1))
RPREC_MULT = Derived(_rprec_mult)
SET_PRECISION = Derived(_set(set_measures.set_precision))
SET_RECALL = Derived(_set(set_measures.set_recall))
SET_F = Derived(_set(set_measures.set_f))
SET_MAP = Derived(_set(set_measures.set_map))
SET_RELATIVE_PRECISION = Derived(_set(set_measures.set_relative_precision))
UTILITY = Derived(_set(set_measures.utility))
NUM_RET_COUNT = Derived(_count(NUM_RET))
NUM_REL_RET_COUNT = Derived(_count(NUM_REL_RET))
NUM_NONREL_JUDGED_RET_COUNT = Derived(_count(NUM_NONREL_JUDGED_RET))
NUM_REL_COUNT = Derived(lambda i: i.lists.n_rel.astype(np.float64))
NUM_Q_COUNT = Derived(lambda i: np.ones(i.lists.offsets.shape[0] - 1))
GM_MAP = Derived(lambda i: _log_floor(i.columns[KERNEL_FAMILIES[AP]]), (KERNEL_FAMILIES[AP],))
GM_BPREF = Derived(_gm_bpref)
#: relative_P@k: hits@k over min(k, R) (precision_norm="min_k" under any convention)
RELATIVE_PRECISION = Derived(_precision_min_k, (HITS_COLUMN,))
G = Derived(lambda i: g_values(i.graded))
BIN_G = Derived(lambda i: bin_g_values(i.graded, i.graded_threshold))
NDCG_REL = Derived(lambda i: ndcg_rel_values(i.graded))
RNDCG = Derived(lambda i: rndcg_values(i.graded))
RBP = Derived(_rbp(RBP_BINARY))
RBP_RESIDUAL = Derived(_rbp(RESIDUAL))
RBP_GRADED = Derived(_rbp(GRADED))
SDCG = Derived(_sdcg)
ERR = Derived(_err)
JUDGED = Derived(lambda i: judged_values(i.lists, i.k, i.settings["ties"] == "average"))


#: ranking family (:attr:`metrics_core.metrics.registry.Metric.family`) -> the derivation that fills it: the
#: families the ranking kernel does not compute, and the kernel columns replaced under some conventions
BY_FAMILY: dict[str, Derived] = {
    "accuracy": ACCURACY,
    "bin_g": BIN_G,
    "bpref": BPREF,
    "err": ERR,
    "fbeta": FBETA,
    "gain_g": G,
    "gm_bpref": GM_BPREF,
    "gm_map": GM_MAP,
    "infap": INFAP,
    "iprec_11pt": ELEVEN_POINT,
    "iprec_at_recall": IPREC_AT_RECALL,
    "judged": JUDGED,
    "mcc": MCC,
    "ndcg_rel": NDCG_REL,
    "num_nonrel_judged_ret": NUM_NONREL_JUDGED_RET_COUNT,
    "num_q": NUM_Q_COUNT,
    "num_rel": NUM_REL_COUNT,
    "num_rel_ret": NUM_REL_RET_COUNT,
    "num_ret": NUM_RET_COUNT,
    "pap": PARTIAL_AP,
    "pauc": PARTIAL_AUC,
    "precision": PRECISION_MIN_K,
    "rbp": RBP,
    "rbp_residual": RBP_RESIDUAL,
    "rbp_graded": RBP_GRADED,
    "sdcg": SDCG,
    "relative_precision": RELATIVE_PRECISION,
    "rndcg": RNDCG,
    "rprec_mult": RPREC_MULT,
    "set_f": SET_F,
    "set_map": SET_MAP,
    "set_precision": SET_PRECISION,
    "set_recall": SET_RECALL,
    "set_relative_precision": SET_RELATIVE_PRECISION,
    "utility": UTILITY,
}
