"""Ranking families filled after the ranking kernel, one function each with one signature.

The ranking kernel (:func:`metrics_core.kernels.ranking.ranking_families`)
computes the columns of ``KERNEL_FAMILIES`` in one pass. A family it does not
compute is a :class:`Derived`: a function of the kernel's columns it names
(``hits``), the ranked lists, the cutoff, the conventions and the catalogue
size. The registry's entries point at them (:attr:`metrics_core.registry.Metric.derive`),
so :func:`metrics_core.evaluate.ranking_table` fills every column by the same loop.

A derivation may apply only under some conventions (``when``): precision@k
divided by ``min(k, R)`` (``precision_norm="min_k"``) replaces the kernel's
precision column then, and only then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from .kernels import topk_confusion as topk
from .kernels.bpref import bpref_values
from .kernels.partial_auc import PAP, PAUC, partial_auc_values
from .kernels.ranking import HITS_COLUMN, RankedLists


@dataclass(frozen=True)
class Inputs:
    """What a derived family reads: the prepared data (:class:`~metrics_core.layout.Ranked`), the
    ranked lists as the kernels see them, the cutoff ``k``
    (0 = whole list), the kernel ``columns`` it asked for (name -> per-user values), the
    resolved conventions (:class:`metrics_core.conventions.Settings`), the relevance
    threshold the lists are read with (1 for the binary gain, whose relevances are 0/1) and
    ``catalogue``, a function giving N, the catalogue size (read only when asked)."""

    ranked: object
    lists: RankedLists
    k: int
    columns: Mapping[str, np.ndarray]
    settings: Mapping
    threshold: float
    catalogue: Callable[[], int]


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
    """bpref reads the relevances as given (not the binary gain's 0/1): a negative one is unjudged."""
    lists = i.lists._replace(rel_values=i.ranked.rel_values, ideal_rel=i.ranked.ideal_rel)
    return bpref_values(lists, i.settings["relevance_threshold"], i.settings["ties"] == "average")


#: F-beta@k, MCC@k and accuracy@k from hits@k (:mod:`metrics_core.kernels.topk_confusion`)
FBETA = Derived(_fbeta, (HITS_COLUMN,))
MCC = Derived(_mcc, (HITS_COLUMN,))
ACCURACY = Derived(_accuracy, (HITS_COLUMN,))
#: pAUC@k and pAp@k by their own kernel (:mod:`metrics_core.kernels.partial_auc`)
PARTIAL_AUC = Derived(_partial_auc(PAUC))
PARTIAL_AP = Derived(_partial_auc(PAP))
#: precision@k over min(k, R), under ``precision_norm="min_k"`` only
PRECISION_MIN_K = Derived(_precision_min_k, (HITS_COLUMN,), when=lambda s: s["precision_norm"] == "min_k")
#: trec_eval's bpref over the whole ranked list (:mod:`metrics_core.kernels.bpref`)
BPREF = Derived(_bpref)
