"""Exact task-blocked sign-flip test and Holm adjustment."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from incognita.access.stats.signflip import holm, pattern_sums, signflip_p


def _brute_force(d: list[float]) -> float:
    """Every sign pattern in a Python loop: the definition, written out."""
    observed = abs(sum(d))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, d))) >= observed - 1e-12
        for signs in itertools.product((1, -1), repeat=len(d))
    )
    return hits / 2 ** len(d)


def _scipy_exact(d: np.ndarray) -> float:
    res = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    return float(res.pvalue)


@pytest.mark.parametrize("seed", range(6))
def test_matches_scipy_exact_permutation_test(seed):
    rng = np.random.default_rng(seed)
    n = 5 + seed
    # quarters are exact in binary, so scipy's own float comparison cannot blur a tie; values
    # repeat and tie, and an exact zero is included
    d = rng.integers(-4, 5, n) / 4.0
    d[0] = 0.0
    assert signflip_p(d) == pytest.approx(_scipy_exact(d), abs=1e-12)


def test_float_residue_of_a_zero_mean_is_a_zero_mean():
    # thirds summing to zero leave ~1e-16 in floating point; every pattern is then as extreme
    d = np.array([0.0, 0.0, 2 / 3, 1.0, -1.0, -2 / 3])
    assert d.sum() != 0.0
    assert signflip_p(d) == 1.0 == _brute_force(d.tolist())


def test_matches_scipy_paired_samples_form():
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 5, 9) / 4.0, rng.integers(0, 5, 9) / 4.0
    res = stats.permutation_test(
        (x, y), lambda a, b: np.mean(a - b), permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    )
    assert signflip_p(x - y) == pytest.approx(res.pvalue, abs=1e-12)


@pytest.mark.parametrize(
    "d",
    [
        [0.5, 0.25, -0.25, 1 / 3, 2 / 3, -2 / 3, 0.0, 1.0],
        [1 / 3] * 7 + [-1 / 3],
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, -1.0, 0.05],
    ],
)
def test_matches_brute_force_loop(d):
    assert signflip_p(d) == pytest.approx(_brute_force(d), abs=1e-12)


def test_all_equal_positive_differences():
    # only the all-plus and all-minus patterns reach the observed |mean|
    assert signflip_p([0.5] * 10) == 2 / 2**10


def test_zero_mean_gives_one_and_symmetry():
    assert signflip_p([0.5, -0.5, 1 / 3, -1 / 3]) == 1.0
    d = np.array([1, 2 / 3, -1 / 3, 1 / 3, 0, 1, -2 / 3])
    assert signflip_p(d) == signflip_p(-d)


def test_eighteen_tasks_is_exact_on_the_2_pow_18_grid():
    rng = np.random.default_rng(3)
    d = rng.integers(-3, 4, 18) / 3.0
    p = signflip_p(d)
    count = p * 2**18
    assert count == pytest.approx(round(count), abs=1e-9)  # an exact share of 262144 patterns
    sums = pattern_sums(d)
    assert len(sums) == 2**18
    assert p == pytest.approx(np.mean(np.abs(sums) >= abs(d.sum()) - 1e-9), abs=0)


def test_nan_tasks_are_dropped_and_empty_is_nan():
    assert signflip_p([0.5, np.nan, 0.5]) == signflip_p([0.5, 0.5])
    assert np.isnan(signflip_p([]))


def test_holm_reproduces_table_1():
    # the paper's exact p-values are shares of 2^18 patterns; Holm must give its last column
    exact = np.array([1536, 160, 692, 35456, 44288, 262144]) / 2**18
    assert np.round(exact, 5).tolist() == [0.00586, 0.00061, 0.00264, 0.13525, 0.16895, 1.0]
    assert np.round(holm(exact), 5).tolist() == [0.02344, 0.00366, 0.0132, 0.40576, 0.40576, 1.0]


def test_holm_textbook_values():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> 0.06 (monotone)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1


def test_holm_keeps_nan_out_of_the_family():
    out = holm([0.01, np.nan, 0.02])
    assert np.isnan(out[1])
    assert out[[0, 2]] == pytest.approx([0.02, 0.02])
    assert len(holm([])) == 0
