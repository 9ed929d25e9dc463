"""Paired differences with a two-sided t interval: the one interval estimate both families use."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

_DECIMALS = 12


@dataclass(frozen=True)
class Paired:
    """A paired comparison over units (tasks, seeds): mean of the per-task differences and its t interval."""

    n_tasks: int
    mean_diff: float
    ci_low: float
    ci_high: float
    sd: float

    @property
    def excludes_zero(self) -> bool:
        return bool(self.ci_low > 0 or self.ci_high < 0)

    @property
    def crosses_zero(self) -> bool:
        return not self.excludes_zero


def paired(diffs: np.ndarray | pd.Series, confidence: float = 0.95) -> Paired:
    """Mean of paired differences (per task, per seed, ...) with its two-sided t interval; NaN tasks dropped."""
    d = np.asarray(diffs, dtype=float)
    d = d[~np.isnan(d)]
    n = len(d)
    if n == 0:
        return Paired(0, float("nan"), float("nan"), float("nan"), float("nan"))
    mean = snap(d.mean())
    if n == 1:
        return Paired(1, mean, float("nan"), float("nan"), float("nan"))
    sd = snap(d.std(ddof=1))
    half = float(sps.t.ppf(0.5 + confidence / 2, n - 1)) * sd / np.sqrt(n)
    return Paired(n, mean, mean - half, mean + half, sd)


def snap(x: float) -> float:
    """Drop float residue (means of a few values, so sums like 1/3 - 2/3 + 1/3 leave 1e-17):
    without it a zero difference with zero spread would 'exclude zero'."""
    return float(round(float(x), _DECIMALS)) + 0.0


def welch(a: np.ndarray | pd.Series, b: np.ndarray | pd.Series, confidence: float = 0.95) -> Paired:
    """Difference of means a - b of two independent samples with Welch's t interval (for designs
    that cannot pair units); `n_tasks` holds the smaller sample size and `sd` is NaN."""
    x, y = (np.asarray(v, dtype=float) for v in (a, b))
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    n = min(len(x), len(y))
    if n == 0:
        return Paired(0, float("nan"), float("nan"), float("nan"), float("nan"))
    mean = snap(x.mean() - y.mean())
    if len(x) < 2 or len(y) < 2:
        return Paired(n, mean, float("nan"), float("nan"), float("nan"))
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = float(np.sqrt(vx + vy))
    if se == 0:
        return Paired(n, mean, mean, mean, float("nan"))
    df = (vx + vy) ** 2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1))
    half = float(sps.t.ppf(0.5 + confidence / 2, df)) * se
    return Paired(n, mean, mean - half, mean + half, float("nan"))
