"""The one adapter from :class:`metrics_core.metrics.conventions.Settings` to what the compiled kernels read.

The ranking kernels (:mod:`metrics_core.kernels.ranking`) take integer codes and plain arrays, never
settings. This module turns the frozen settings of one evaluation into them, and owns the mapping of
the binary gain:

- ``gain``, ``ideal``, ``ap_norm`` -> the codes of :class:`~metrics_core.kernels.ranking.RankingOptions`
  (:data:`GAINS`, :data:`IDEALS`, :data:`AP_NORMS`); ``ties="average"`` -> the exact expectation
  over tie orders; with the discount table, :func:`kernel_options`.
- ``gain="binary"`` is the linear gain of relevances read as 0/1: ``g = 1`` when
  ``rel >= relevance_threshold`` else 0. :func:`relevance_views` gives the lists twice: ``gain``,
  the relevances the gain reads (0/1 under the binary gain, with threshold 1), and ``graded``, the
  relevances as given with the user's threshold, which the measures defined on judgments read
  whatever the gain (bpref, trec_eval's set measures, the interpolated precisions, ERR, RBP, infAP,
  SDCG: a negative relevance is "in the pool, unjudged" and grades stay grades there). No other
  module tests ``gain == "binary"``.
- ``gain="exponential"`` (``2^rel - 1``) takes relevance up to
  :data:`~metrics_core.metrics.conventions.MAX_EXPONENTIAL_RELEVANCE`: :func:`check_relevance`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels.ranking import (AP_K, AP_MIN_K, AP_RELEVANT, AP_RETRIEVED, GAIN_EXPONENTIAL, GAIN_LINEAR, IDEAL_JUDGED,
                               IDEAL_K, IDEAL_RETRIEVED, RankedLists, RankingOptions)
from .conventions import Settings, check_exponential_relevance

#: ``gain`` -> the kernels' gain code ("binary" is the linear gain of 0/1 relevances: :func:`relevance_views`)
GAINS = {"linear": GAIN_LINEAR, "exponential": GAIN_EXPONENTIAL, "binary": GAIN_LINEAR}
#: ``ideal`` -> the kernels' code of the ideal DCG
IDEALS = {"judged": IDEAL_JUDGED, "retrieved": IDEAL_RETRIEVED, "k": IDEAL_K}
#: ``ap_norm`` -> the kernels' code of AP's denominator
AP_NORMS = {"relevant": AP_RELEVANT, "min_k": AP_MIN_K, "retrieved": AP_RETRIEVED, "k": AP_K}


class RelevanceViews(NamedTuple):
    """The ranked lists under one setting of the gain: ``gain`` / ``threshold``, the relevances the gain and
    every hit-based family read, with the threshold that makes an item relevant in them; ``graded`` /
    ``graded_threshold``, the relevances as given with the user's ``relevance_threshold`` (the same lists
    and threshold unless the gain is binary)."""

    gain: RankedLists
    threshold: float
    graded: RankedLists
    graded_threshold: float


def gain_threshold(settings: Settings) -> float:
    """The relevance threshold of the lists the gain reads: 1 under the binary gain (relevances are 0/1),
    else ``relevance_threshold``."""
    return 1.0 if settings.gain == "binary" else float(settings.relevance_threshold)


def relevance_views(graded: RankedLists, settings: Settings) -> RelevanceViews:
    """``graded`` (the lists with the relevances as given) and the lists the gain reads: under the binary gain
    relevances become 1 when ``rel >= relevance_threshold`` else 0 (run and ideal alike), otherwise the
    same lists."""
    threshold = float(settings.relevance_threshold)
    if settings.gain != "binary":
        return RelevanceViews(graded, threshold, graded, threshold)
    binary = graded._replace(rel_values=(graded.rel_values >= threshold).astype(np.float64),
                             ideal_rel=(graded.ideal_rel >= threshold).astype(np.float64))
    return RelevanceViews(binary, gain_threshold(settings), graded, threshold)


def kernel_options(settings: Settings, disc_table: np.ndarray) -> RankingOptions:
    """The conventions of ``settings`` as the ranking kernels' codes, with ``disc_table``
    (:func:`metrics_core.kernels.ranking.discount_table`)."""
    return RankingOptions(GAINS[settings.gain], IDEALS[settings.ideal], AP_NORMS[settings.ap_norm],
                          gain_threshold(settings), settings.ties == "average", disc_table)


def check_relevance(settings: Settings, relevance, column: str = "relevance") -> None:
    """Refuse, under the exponential gain, relevances whose gain ``2^rel - 1`` would overflow float64
    (one-line MetricsError naming ``column``); nothing to check under the other gains."""
    if settings.gain == "exponential":
        check_exponential_relevance(relevance, column)
