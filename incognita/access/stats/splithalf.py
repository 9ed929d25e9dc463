"""Split-half concordance of the model ordering (paper Section 6.1, Appendix Figure 7).

One split divides an arm's tasks at random into two halves (sizes floor(n/2) and the rest).
In each half every model gets its mean task-level success; a model pair *agrees* when the
two halves order it the same way, strictly (a tie in either half is no ordering, so it does
not agree). The concordance of a split is the number of agreeing pairs, 0 to K(K-1)/2.

The null keeps the same split but exchanges the model labels within each task, independently
per task and per split (the within-task exchangeability under which the interaction test is
run): whatever ordering survives that is what the task set alone produces. Ties make its mean
slightly below half the pairs. The reported tail is the share of null splits whose concordance
reaches the observed mean concordance.

Everything is seeded: the same seed, tasks and matrix give the same splits and the same null.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

DEFAULT_SPLITS = 4000
DEFAULT_SEED = 20260820
_TIE = 1e-12


@dataclass(frozen=True)
class SplitHalf:
    observed: np.ndarray  # concordance of each split, shape (splits,)
    null: np.ndarray  # concordance of each null split, shape (splits,)
    n_tasks: int
    n_pairs: int

    @property
    def observed_mean(self) -> float:
        return float(self.observed.mean()) if len(self.observed) else float("nan")

    @property
    def null_mean(self) -> float:
        return float(self.null.mean()) if len(self.null) else float("nan")

    @property
    def null_reach(self) -> float:
        """Share of null splits whose concordance is at least the observed mean."""
        if not len(self.null):
            return float("nan")
        return float((self.null >= self.observed_mean - _TIE).mean())


def concordance(half_a: np.ndarray, half_b: np.ndarray) -> np.ndarray:
    """Agreeing pairs between two (splits, models) arrays of half means."""
    k = half_a.shape[1]
    agree = np.zeros(half_a.shape[0], dtype=int)
    for i, j in combinations(range(k), 2):
        da = half_a[:, i] - half_a[:, j]
        db = half_b[:, i] - half_b[:, j]
        agree += ((da > _TIE) & (db > _TIE)) | ((da < -_TIE) & (db < -_TIE))
    return agree


def _half_means(in_a: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means of each half; `values` is (tasks, models) or (splits, tasks, models)."""
    w_a = in_a.astype(float)
    w_b = 1.0 - w_a
    if values.ndim == 2:
        return (w_a @ values) / w_a.sum(1, keepdims=True), (w_b @ values) / w_b.sum(1, keepdims=True)
    mean_a = np.einsum("st,stk->sk", w_a, values) / w_a.sum(1, keepdims=True)
    mean_b = np.einsum("st,stk->sk", w_b, values) / w_b.sum(1, keepdims=True)
    return mean_a, mean_b


def split_half(matrix: np.ndarray, splits: int = DEFAULT_SPLITS, seed: int = DEFAULT_SEED) -> SplitHalf:
    """Observed and null concordance over `splits` random halves of a (tasks, models) matrix.

    Tasks with a missing model are dropped first, so every half compares the same tasks.
    """
    m = np.asarray(matrix, dtype=float)
    m = m[~np.isnan(m).any(axis=1)]
    n, k = m.shape
    pairs = k * (k - 1) // 2
    if n < 2 or k < 2:
        empty = np.zeros(0, dtype=int)
        return SplitHalf(empty, empty, n, pairs)
    rng = np.random.default_rng(seed)
    ranks = np.argsort(rng.random((splits, n)), axis=1)
    in_a = ranks < n // 2  # a uniformly random subset of n // 2 tasks per split
    observed = concordance(*_half_means(in_a, m))
    perm = np.argsort(rng.random((splits, n, k)), axis=2)
    shuffled = np.take_along_axis(np.broadcast_to(m, (splits, n, k)), perm, axis=2)
    null = concordance(*_half_means(in_a, shuffled))
    return SplitHalf(observed, null, n, pairs)
