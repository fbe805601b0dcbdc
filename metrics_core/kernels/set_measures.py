"""trec_eval's set measures: the retrieved list read as an unordered set (any tie rule gives them exactly).

With ``ret`` the retrieved rows, ``rel_ret`` the relevant ones among them and
``R`` the relevant items of the ground truth (each measure is 0 where its
denominator is 0):

- set_P = rel_ret / ret;  set_recall = rel_ret / R
- set_F = (beta + 1) P R / (beta P + R) (trec_eval's ``set_F``, beta = 1)
- set_map = rel_ret^2 / (ret R);  set_relative_P = rel_ret / min(ret, R)
- utility = a rel_ret + b (ret - rel_ret) + c (R - rel_ret), trec_eval's default (a, b, c) = (1, -1, 0)
  (its fourth coefficient needs the collection size, which neither file gives; trec_eval's default is 0)
"""

from __future__ import annotations

import numpy as np


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def set_precision(ret, rel_ret, R):
    return _ratio(rel_ret, ret)


def set_recall(ret, rel_ret, R):
    return _ratio(rel_ret, R)


def set_f(ret, rel_ret, R, beta: float = 1.0):
    P, Rc = set_precision(ret, rel_ret, R), set_recall(ret, rel_ret, R)
    return np.where(rel_ret > 0, _ratio((beta + 1.0) * P * Rc, beta * P + Rc), 0.0)


def set_map(ret, rel_ret, R):
    return _ratio(rel_ret * rel_ret, ret * R)


def set_relative_precision(ret, rel_ret, R):
    return np.where((ret > 0) & (R > 0), _ratio(rel_ret, np.minimum(ret, R)), 0.0)


def utility(ret, rel_ret, R, a: float = 1.0, b: float = -1.0, c: float = 0.0):
    return a * rel_ret + b * (ret - rel_ret) + c * (R - rel_ret)
