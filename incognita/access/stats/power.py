"""Post-hoc corpus-size extrapolation (paper Appendix B.3, Table 2) and the `power` command.

The paired-t approximation: to detect a mean paired difference `gap` with per-task SD `sd`
at two-sided level alpha and the given power, n tasks must satisfy

    n >= ((t_{1-alpha/2, n-1} + t_{power, n-1}) * sd / gap) ** 2

where the t quantiles have n - 1 degrees of freedom, so n appears on both sides. The count
is the smallest n whose right-hand side, truncated to an integer, is at most n (the fixed
point of n = floor(rhs(n))). Truncation, not rounding up, is what reproduces all three rows
of the paper's Table 2 from its inputs with the gaps at their exact values k/54 (18 tasks x
3 repetitions): 5/54 -> 104, 3/54 -> 249, 28/54 -> 6. Rounding up instead gives 105, 250, 6,
and no variant reproduces the table with the gaps rounded to three decimals; see
docs/statistics.md for the comparison. At the truncated n the power is a hair under the
target (0.7997 for the first row by the noncentral t), so the count is "about" n, as the
paper says.
"""

from __future__ import annotations

import math
from fractions import Fraction

_EPS = 1e-9  # keeps a right-hand side that is an integer up to float error on that integer


def _rhs(n: int, sd: float, gap: float, alpha: float, power: float) -> float:
    from scipy.stats import t

    df = n - 1
    return ((t.ppf(1 - alpha / 2, df) + t.ppf(power, df)) * sd / gap) ** 2


def _check(sd: float, gap: float, alpha: float, power: float) -> None:
    if not (sd > 0 and math.isfinite(sd)):
        raise ValueError(f"sd: expected a positive number, got {sd!r}")
    if not (gap != 0 and math.isfinite(gap)):
        raise ValueError(f"gap: expected a non-zero number, got {gap!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha: expected a value in (0, 1), got {alpha!r}")
    if not 0 < power < 1:
        raise ValueError(f"power: expected a value in (0, 1), got {power!r}")


def required_tasks(sd: float, gap: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Tasks needed to detect a paired gap `gap` with per-task SD `sd` (paired-t approximation)."""
    _check(sd, gap, alpha, power)
    from scipy.stats import norm

    gap = abs(gap)
    # For power >= 0.5 the normal approximation is a lower bound on the t right-hand side, so
    # no n below it qualifies and the search can start there.
    z = ((norm.ppf(1 - alpha / 2) + norm.ppf(power)) * sd / gap) ** 2
    n = max(2, int(z)) if power >= 0.5 else 2
    while math.floor(_rhs(n, sd, gap, alpha, power) + _EPS) > n:
        n += 1
    return n


def resolvable_gap(sd: float, n_tasks: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest paired gap that `n_tasks` tasks resolve at the given power (same approximation)."""
    if n_tasks < 2 or not sd > 0:
        return float("nan")
    from scipy.stats import t

    df = n_tasks - 1
    return float((t.ppf(1 - alpha / 2, df) + t.ppf(power, df)) * sd / math.sqrt(n_tasks))


def parse_gap(text: str, resolution: int | None = None) -> float:
    """A gap given as a decimal (0.093) or a fraction (5/54); with `resolution` r, a decimal is
    snapped to the nearest multiple of 1/r (task means over 18 tasks x 3 reps move in 1/54)."""
    try:
        value = float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"gap: expected a number or a fraction like 5/54, got {text!r}") from None
    if resolution:
        value = round(value * resolution) / resolution
    return value
