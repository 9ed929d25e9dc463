"""`incognita plan` and `incognita power` on a pilot of several domains: tasks resampled within
each domain in proportion to its pilot tasks, analysed with the domain as a stratum as the
statistics stage pools domains."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from incognita.access.planning import design_planner as dp
from incognita.access.planning import population as pp
from incognita.access.planning.commands import plan_command
from incognita.access.stats.commands import power_command
from incognita.access.stats.estimator import stratified
from incognita.access.stats.synthetic import synthetic_trials
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]


def _pilot(n_retail: int = 6, n_mock: int = 3) -> pd.DataFrame:
    """A synthetic pilot whose first tasks are retail's and the rest mock's; in the direct arm every
    retail task always succeeds and every mock task always fails (so a draw shows its domain)."""
    trials = synthetic_trials(seed=2, n_tasks=n_retail + n_mock, reps=2)
    n = trials["task"].astype(int)
    trials["task"] = np.where(n < n_retail, "retail/" + trials["task"], "mock/t" + trials["task"])
    direct = trials["arm"] == "direct"
    trials.loc[direct, "success"] = trials.loc[direct, "task"].str.startswith("retail/").astype(float)
    return trials


def test_allocation_is_proportional_with_largest_remainders():
    pop = pp.pilot_population(_pilot(6, 3))
    assert pop.domains == ("mock", "retail")
    assert pop.allocation(6) == {"mock": 2, "retail": 4}
    # 5 tasks: 5/3 = 1.67 mock and 3.33 retail; the remainder goes to the larger fraction, mock's.
    assert pop.allocation(5) == {"mock": 2, "retail": 3}
    assert pop.task_strata(5) == ("mock", "mock", "retail", "retail", "retail")
    assert pp.pilot_population(synthetic_trials(seed=2, n_tasks=4, reps=1)).task_strata(4) is None


def test_a_simulated_design_draws_each_domains_share_from_its_own_tasks():
    pop = pp.pilot_population(_pilot(6, 3))
    p = pop.draw(np.random.default_rng(1), 400, 6)
    direct, model = pop.arms.index("direct"), 0
    # The first two simulated tasks are mock's (never succeed in direct), the next four retail's.
    assert (p[:, :2, direct, model] == 0).all() and (p[:, 2:, direct, model] == 1).all()


def test_stratified_intervals_equal_the_estimators():
    rng = np.random.default_rng(8)
    strata = ("mock",) * 3 + ("retail",) * 5
    d = rng.integers(-3, 4, size=(200, 8)) / 3.0
    d[rng.random(d.shape) < 0.1] = np.nan
    d[0, :3] = np.nan  # a design with no mock task left: one stratum in that row
    iv = dp.paired_intervals(d, 0.95, strata)
    tasks = [f"mock/t{i}" for i in range(3)] + [f"retail/{i}" for i in range(5)]
    for i, row in enumerate(d):
        ref = stratified(pd.Series(row, index=tasks), 0.95)
        assert iv.n[i] == ref.n_tasks and iv.mean[i] == pytest.approx(ref.mean_diff, abs=1e-12)
        if np.isfinite(ref.ci_low):
            assert (iv.low[i], iv.high[i]) == pytest.approx((ref.ci_low, ref.ci_high), abs=1e-12)
        else:
            assert np.isnan(iv.low[i])
    # Without strata the same rows give the plain intervals.
    assert not np.allclose(dp.paired_intervals(d, 0.95).high[1:], iv.high[1:], equal_nan=True)


def test_the_pilot_must_cover_the_design_domains():
    trials = _pilot()
    with pytest.raises(InputError, match="task 'mock/t6' is of no design domain \\(retail\\)"):
        pp.pilot_population(trials, domains=["retail"])
    with pytest.raises(InputError, match="design domain\\(s\\) airline have no scored trials"):
        pp.pilot_population(trials, domains=["retail", "mock", "airline"])
    pop = pp.pilot_population(trials, domains=["retail", "mock"])
    assert "tasks per domain mock 3, retail 6, resampled within domains" in pop.notes[0]


def test_plan_command_draws_from_every_design_domain(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    pilot = tmp_path / "trials.csv"
    _pilot().to_csv(pilot, index=False)
    config = tmp_path / "config.yaml"
    default = (ROOT / "config" / "config.yaml").read_text()
    assert "domains: [retail, airline]" in default
    config.write_text(default.replace("domains: [retail, airline]", "domains: [retail, mock]"))
    args = ["--trials", str(pilot), "--tasks", "6,9", "--reps", "1", "--sims", "200", "--config", str(config)]
    res = CliRunner().invoke(plan_command, [*args, "--out", str(tmp_path / "plan")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "tasks per domain mock 3, retail 6" in (tmp_path / "plan" / "plan.md").read_text()
    # The default design (retail and airline) refuses a pilot with mock tasks instead of pooling them.
    with pytest.raises(InputError, match="of no design domain"):
        CliRunner().invoke(
            plan_command, [*args[:-2], "--config", "config/config.yaml", "--out", str(tmp_path / "p2")],
            catch_exceptions=False,
        )  # fmt: skip


def test_power_command_gives_table_2_from_every_design_domains_tasks(tmp_path):
    pilot = tmp_path / "trials.csv"
    _pilot().to_csv(pilot, index=False)
    config = tmp_path / "config.yaml"
    config.write_text("domains: [retail, mock]\n")
    res = CliRunner().invoke(power_command, ["--trials", str(pilot), "--config", str(config)])
    assert res.exit_code == 0, res.output
    assert "tasks per domain retail 6, mock 3" in res.output
    assert "| arm | gap_sd | largest_gap | tasks |" in res.output and "mock=3;retail=6" in res.output
    res = CliRunner().invoke(power_command, ["--trials", str(pilot), "--sd", "0.3", "--gap", "0.1"])
    assert res.exit_code == 2 and "not both" in res.output
    res = CliRunner().invoke(power_command, ["--sd", "0.334"])
    assert res.exit_code == 2 and "give --sd and --gap" in res.output
    assert CliRunner().invoke(power_command, ["--sd", "0.334", "--gap", "5/54"]).output.strip() == "104"
