"""Lists shorter than R with R-precision stored beside a small cutoff: the ranking kernel's walk fills the
cutoff, then goes on towards R for R-precision and must stop at the end of each user's own list (never read
the next user's rows, or past the arrays' end for the last user). Expected values: the plain-Python
reference of tests/_ranking_reference.py, list by list."""

from __future__ import annotations

import numpy as np
import pytest
from _ranking_reference import list_metrics

from metrics_core.kernels.ranking import (FAMILIES, FAMILY_INDEX, RankedLists, RankingOptions, discount_table,
                                          ranking_families)

REFERENCE_NAME = {"ap": "map", "rr": "mrr", "hit": "hit_rate"}


@pytest.mark.parametrize("ties_average", [True, False])
def test_lists_shorter_than_R_read_only_their_own_rows(ties_average):
    rng = np.random.default_rng(11)
    lists, judged = [], []
    for _ in range(60):
        n = int(rng.integers(1, 6))
        rels = [int(x) for x in rng.integers(0, 3, n)]
        lists.append(rels)
        judged.append(sorted(rels + [1] * (n + int(rng.integers(1, 8))), reverse=True))  # R > n
    lists.append([2] * 40)  # a long, all-relevant list after them: what a walk past a list's end would count
    judged.append([2] * 40)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in lists])]).astype(np.int64)
    rel_values = np.array([0.0, 1.0, 2.0])
    codes = np.concatenate([np.array(r, dtype=np.uint8) for r in lists])
    tie_key = (np.arange(len(codes)) % 2).astype(np.uint8)  # every position its own group
    ideal_offsets = np.concatenate([[0], np.cumsum([len(j) for j in judged])]).astype(np.int64)
    ideal_rel = np.concatenate([np.array(j, dtype=np.float64) for j in judged])
    n_rel = np.array([float(sum(x >= 1 for x in j)) for j in judged])
    ranked = RankedLists(offsets, codes, rel_values, tie_key, n_rel, ideal_offsets, ideal_rel)
    options = RankingOptions(0, 0, 0, 1.0, ties_average, discount_table(64))
    columns = np.arange(len(FAMILIES), dtype=np.int64)
    k = 1
    out = np.full((len(FAMILIES), len(lists)), np.nan)
    ranking_families(ranked, k, options, columns, out)
    for u, (rels, truth) in enumerate(zip(lists, judged)):
        expected = list_metrics(rels, truth, k)
        for family in ("precision", "recall", "ndcg", "ap", "rr", "r_precision", "hits"):
            got = out[FAMILY_INDEX[family], u]
            assert got == pytest.approx(expected[REFERENCE_NAME.get(family, family)], abs=1e-12), (u, family)
