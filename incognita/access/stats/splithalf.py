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

Tasks of several domains (`strata`, each task's domain) are split within each domain: every
half takes floor(n_h/2) of domain h's tasks, and the halves' sizes are then evened out (floor(n/2)
and the rest, as with one domain) by one more task from the domains with an odd count, first by
name. Each half then holds the domains in the same proportions, so a concordance is not an
artefact of one half holding more of an easier domain. One domain: the splits as before.

Everything is seeded: the same seed, tasks and matrix give the same splits and the same null.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def halves(draws: np.ndarray, strata: Sequence[str] | None = None) -> np.ndarray:
    """Membership of half A per split, from uniform `draws` (splits, tasks): floor(n/2) tasks at
    random, or with `strata` (each task's domain) that many drawn within the domains (module
    docstring)."""
    n = draws.shape[1]
    if strata is None or len(set(strata)) <= 1:
        return np.argsort(draws, axis=1) < n // 2  # a uniformly random subset of n // 2 tasks
    labels = np.asarray(strata, dtype=object)
    domains = sorted(set(labels))
    take = {d: int((labels == d).sum()) // 2 for d in domains}
    short = n // 2 - sum(take.values())
    for d in [d for d in domains if (labels == d).sum() % 2][:short]:
        take[d] += 1
    in_a = np.zeros(draws.shape, dtype=bool)
    for d in domains:
        cols = np.flatnonzero(labels == d)
        in_a[:, cols] = np.argsort(draws[:, cols], axis=1) < take[d]
    return in_a


def split_half(
    matrix: np.ndarray,
    splits: int = DEFAULT_SPLITS,
    seed: int = DEFAULT_SEED,
    strata: Sequence[str] | None = None,
) -> SplitHalf:
    """Observed and null concordance over `splits` random halves of a (tasks, models) matrix;
    `strata`: each row's domain (the halves are then drawn within domains).

    Tasks with a missing model are dropped first, so every half compares the same tasks.
    """
    m = np.asarray(matrix, dtype=float)
    complete = ~np.isnan(m).any(axis=1)
    m = m[complete]
    if strata is not None:
        strata = [s for s, keep in zip(strata, complete) if keep]
    n, k = m.shape
    pairs = k * (k - 1) // 2
    if n < 2 or k < 2:
        empty = np.zeros(0, dtype=int)
        return SplitHalf(empty, empty, n, pairs)
    rng = np.random.default_rng(seed)
    in_a = halves(rng.random((splits, n)), strata)
    observed = concordance(*_half_means(in_a, m))
    perm = np.argsort(rng.random((splits, n, k)), axis=2)
    shuffled = np.take_along_axis(np.broadcast_to(m, (splits, n, k)), perm, axis=2)
    null = concordance(*_half_means(in_a, shuffled))
    return SplitHalf(observed, null, n, pairs)
