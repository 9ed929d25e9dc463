"""Corpus-size extrapolation: the paper's Table 2 and the `power` command."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from scipy import stats

from incognita.access.stats.commands import power_command
from incognita.access.stats.power import parse_gap, required_tasks, resolvable_gap

# Table 2: (gap SD, largest gap as k/54, tasks, $/episode, implied cost in whole dollars)
TABLE_2 = [(0.334, 5, 104, 0.252, 314), (0.312, 3, 249, 0.467, 1395), (0.369, 28, 6, 1.061, 76)]


@pytest.mark.parametrize("sd,k,tasks,usd,cost", TABLE_2)
def test_reproduces_table_2(sd, k, tasks, usd, cost):
    n = required_tasks(sd, k / 54)
    assert n == tasks
    assert math.floor(n * 4 * 3 * usd) == cost  # four models, three repetitions


@pytest.mark.parametrize("sd,k,tasks,usd,cost", TABLE_2)
def test_command_prints_table_2_counts(sd, k, tasks, usd, cost):
    runner = CliRunner()
    res = runner.invoke(power_command, ["--sd", str(sd), "--gap", f"{k}/54"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == str(tasks)
    decimal = f"{k / 54:.3f}"  # the table's printed gap, snapped back onto the 1/54 grid
    res = runner.invoke(power_command, ["--sd", str(sd), "--gap", decimal, "--resolution", "54"])
    assert res.output.strip() == str(tasks)


def test_count_is_the_integer_part_of_the_t_fixed_point():
    sd, gap = 0.334, 5 / 54
    n = required_tasks(sd, gap)

    def rhs(m):
        return ((stats.t.ppf(0.975, m - 1) + stats.t.ppf(0.8, m - 1)) * sd / gap) ** 2

    assert math.floor(rhs(n)) <= n and math.floor(rhs(n - 1)) > n - 1
    # at that n the noncentral-t power is close to, not far from, the target
    df, delta = n - 1, gap / sd * math.sqrt(n)
    crit = stats.t.ppf(0.975, df)
    achieved = stats.nct.sf(crit, df, delta) + stats.nct.cdf(-crit, df, delta)
    assert abs(achieved - 0.8) < 0.01


def test_monotone_in_inputs_and_sign_of_gap():
    assert required_tasks(0.3, 0.1) < required_tasks(0.4, 0.1)
    assert required_tasks(0.3, 0.2) < required_tasks(0.3, 0.1)
    assert required_tasks(0.3, 0.1, power=0.9) > required_tasks(0.3, 0.1)
    assert required_tasks(0.3, 0.1, alpha=0.01) > required_tasks(0.3, 0.1)
    assert required_tasks(0.3, -0.1) == required_tasks(0.3, 0.1)
    assert required_tasks(0.01, 5.0) == 2


def test_resolvable_gap_inverts_required_tasks():
    for sd in (0.25, 0.334, 0.4):
        for n in (6, 18, 60):
            assert required_tasks(sd, resolvable_gap(sd, n)) <= n
            assert required_tasks(sd, resolvable_gap(sd, n) * 0.9) > n


@pytest.mark.parametrize(
    "args,needle",
    [
        ({"sd": 0.0, "gap": 0.1}, "sd"),
        ({"sd": 0.3, "gap": 0.0}, "gap"),
        ({"sd": 0.3, "gap": 0.1, "alpha": 1.5}, "alpha"),
        ({"sd": 0.3, "gap": 0.1, "power": 1.0}, "power"),
    ],
)
def test_bad_inputs_are_named(args, needle):
    with pytest.raises(ValueError, match=needle):
        required_tasks(**args)


def test_gap_parsing_and_bad_gap_on_the_command():
    assert parse_gap("5/54") == 5 / 54
    assert parse_gap("0.093", 54) == 5 / 54
    assert parse_gap("0.093") == 0.093
    res = CliRunner().invoke(power_command, ["--sd", "0.3", "--gap", "five"])
    assert res.exit_code == 2 and "gap" in res.output and "five" in res.output
