"""The top k as a classifier of the catalogue: F-beta@k, MCC@k and accuracy@k from hits@k.

For one user: ``tp`` = hits@k (relevant items in the top k), ``fp = k - tp``
(empty places of a short list count as false positives, as RecTools does),
``fn = R - tp``, ``tn = N - k - fn`` over a catalogue of N items. Every value
below is linear in ``tp``, so the ranking kernel's expected hits under
``ties="average"`` gives the exact expectation over tie orders:

- F-beta@k = (1 + b^2) tp / (b^2 R + k)  (= (1 + b^2) P R / (b^2 P + R));
- MCC@k = (tp tn - fp fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn)) = (N tp - k R) / sqrt(k R (N - R) (N - k)),
  since the four margins are k, R, N - R and N - k (0 when one of them is 0);
- accuracy@k = (tp + tn) / N = (2 tp + N - k - R) / N.
"""

from __future__ import annotations

import numpy as np


def fbeta(hits: np.ndarray, n_rel: np.ndarray, k: int, beta: float = 1.0) -> np.ndarray:
    b2 = float(beta) ** 2
    return (1.0 + b2) * hits / (b2 * n_rel + k)


def mcc(hits: np.ndarray, n_rel: np.ndarray, k: int, catalogue: int) -> np.ndarray:
    n = float(catalogue)
    margins = k * n_rel * (n - n_rel) * (n - k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(margins > 0, (n * hits - k * n_rel) / np.sqrt(np.maximum(margins, 1e-300)), 0.0)


def accuracy(hits: np.ndarray, n_rel: np.ndarray, k: int, catalogue: int) -> np.ndarray:
    n = float(catalogue)
    return (2.0 * hits + n - k - n_rel) / n if n > 0 else np.zeros_like(hits)
