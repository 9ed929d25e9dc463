"""The design planner (`incognita plan`): simulated power and separated pairs, its agreement with
the analytic `incognita power`, the pilot's resampling, the assumptions file and the command.

Every simulation is seeded; tolerances are stated in multiples of the Monte Carlo standard
error (`mc_se`, the binomial SE of a share over the simulations).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from incognita.access.planning import design_planner as dp
from incognita.access.planning import population as pp
from incognita.access.planning.commands import plan_command
from incognita.access.stats.estimator import cell_mean, task_matrix, task_means, validate_trials
from incognita.access.stats.interpretation import parse_interpretation
from incognita.access.stats.paper_tables import contrasts_table, separability_tables
from incognita.access.stats.power import required_tasks
from incognita.access.stats.synthetic import synthetic_trials
from incognita.common.intervals import paired
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
INTERPRETATION = ROOT / "config" / "domains" / "retail" / "interpretation.yaml"
ASSUMPTIONS = ROOT / "config" / "plan_assumptions.yaml"


@pytest.fixture(scope="module")
def interp():
    return parse_interpretation(INTERPRETATION)


def assumed(tmp_path: Path, text: str) -> pp.Population:
    path = tmp_path / "assume.yaml"
    path.write_text(text, encoding="utf-8")
    return pp.load_assumptions(path)[0]


def value(table: pd.DataFrame, quantity: str, target: str, model: str = "", **where) -> pd.Series:
    sel = (table["quantity"] == quantity) & (table["target"] == target) & (table["model"] == model)
    for key, v in where.items():
        sel &= table[key] == v
    return table[sel]


# --- the interval and the decisions mirror the statistics stage ---------------------------------


def test_paired_intervals_equal_the_estimators_interval():
    rng = np.random.default_rng(5)
    d = rng.integers(-3, 4, size=(300, 9)) / 3.0
    d[rng.random(d.shape) < 0.15] = np.nan
    d[0] = 0.0  # no spread at all: must not "exclude zero"
    d[1, 1:] = np.nan  # one task: no interval
    iv = dp.paired_intervals(d, 0.95)
    for i, row in enumerate(d):
        ref = paired(row, 0.95)
        assert iv.n[i] == ref.n_tasks
        assert iv.excludes_zero[i] == ref.excludes_zero
        if ref.n_tasks >= 2:
            assert iv.low[i] == pytest.approx(ref.ci_low, abs=1e-12)
            assert iv.high[i] == pytest.approx(ref.ci_high, abs=1e-12)
    assert not iv.excludes_zero[0] and np.isnan(iv.low[1])


def _as_series(means: np.ndarray, models: tuple[str, ...]) -> pd.Series:
    """One simulated design (tasks, arms, models) as the estimator's task-means series."""
    idx = pd.MultiIndex.from_product(
        [pp.ARMS, models, [str(t) for t in range(means.shape[0])]], names=["arm", "model", "task"]
    )
    return pd.Series(np.transpose(means, (1, 2, 0)).ravel(), index=idx).dropna()


def test_decisions_and_separated_pairs_match_the_stage_tables(interp):
    """Per simulated design, the planner's hits are the stage's own decisions and counts."""
    trials = validate_trials(synthetic_trials(seed=11, n_tasks=8, reps=2))
    pop = pp.pilot_population(trials)
    means = dp.simulate_task_means(pop, np.random.default_rng(3), 25, 8, 2)
    models = list(pop.models)
    hits = {(c.name, m): dp.contrast_hits(means, interp, c, j) for c in interp.contrasts for j, m in enumerate(models)}
    pairs = {arm: dp.separated_pairs(means, arm, interp.confidence) for arm in pp.ARMS}
    for s in range(len(means)):
        series = _as_series(means[s], pop.models)
        table = contrasts_table({"all": series}, models, interp)
        for row in table.itertuples():
            wanted = interp.decisions["supports" if row.role == "primary" else "supporting_excludes_zero"]
            assert hits[(row.contrast, row.model)][s] == (row.decision == wanted)
        _, summary = separability_tables(series, list(pp.ARMS), models, interp.confidence)
        for row in summary[summary["subset"] == "all"].itertuples():
            assert pairs[row.arm][s] == row.pairs_excluding_zero


# --- power ---------------------------------------------------------------------------------------

ONE_MODEL = """
heterogeneity: {tau: 1.0, interaction: 0.5}
success:
  m1: {direct: %s, indirect: %s, social: %s}
"""


def test_power_increases_with_tasks(tmp_path, interp):
    pop = assumed(tmp_path, ONE_MODEL % (0.8, 0.75, 0.6))
    table = dp.plan(pop, interp, [6, 12, 24, 48, 96], [2], sims=2000, seed=1)
    rows = value(table, "power", "indirect-social", "m1").sort_values("tasks")
    power, se = rows["value"].to_numpy(), rows["mc_se"].to_numpy()
    assert (np.diff(power) > 3 * np.hypot(se[1:], se[:-1])).all(), power
    assert power[-1] > 0.8 > power[0]


def test_power_increases_with_repetitions(tmp_path, interp):
    pop = assumed(tmp_path, ONE_MODEL % (0.8, 0.75, 0.6))
    rows = value(dp.plan(pop, interp, [12], [1, 3, 6], sims=2000, seed=2), "power", "indirect-social", "m1")
    assert rows.sort_values("reps")["value"].is_monotonic_increasing


def test_no_true_gap_gives_about_half_alpha_on_the_hypothesised_side(tmp_path, interp):
    sims = 8000
    pop = assumed(tmp_path, ONE_MODEL % (0.7, 0.7, 0.7))
    table = dp.plan(pop, interp, [18], [3], sims=sims, seed=3)
    alpha = 1 - interp.confidence
    for contrast, share in [("indirect-social", alpha / 2), ("direct-indirect", alpha)]:
        # the primary counts one side (about alpha/2); a supporting contrast either side (about alpha)
        power = value(table, "power", contrast, "m1")["value"].item()
        assert abs(power - share) < 4 * math.sqrt(share * (1 - share) / sims), (contrast, power)


def test_unavailable_contrasts_and_arms_are_not_zero(tmp_path, interp):
    pop = assumed(tmp_path, ONE_MODEL % (0.8, 0.7, 0.5))  # no native rates
    table = dp.plan(pop, interp, [6], [1], sims=200, seed=4)
    native = value(table, "power", "native-direct", "m1")
    assert not native["available"].item() and np.isnan(native["value"].item())
    pairs = value(table, "separated_pairs", "native")
    assert not pairs["available"].item() and np.isnan(pairs["value"].item())
    assert value(table, "power", "indirect-social", "m1")["available"].item()


def test_seeded(tmp_path, interp):
    pop = assumed(tmp_path, ONE_MODEL % (0.8, 0.75, 0.6))
    a = dp.plan(pop, interp, [6, 12], [1, 2], sims=300, seed=7)
    b = dp.plan(pop, interp, [12, 6], [2, 1], sims=300, seed=7)  # a point's draws do not depend on the grid
    key = ["tasks", "reps", "quantity", "target", "model"]
    pd.testing.assert_frame_equal(a.sort_values(key, ignore_index=True), b.sort_values(key, ignore_index=True))
    c = dp.plan(pop, interp, [6, 12], [1, 2], sims=300, seed=8)
    assert not np.allclose(a["value"].fillna(0), c["value"].fillna(0))


# --- issue #28 item 6: agreement with `incognita power` on Table 2 -----------------------------


def test_agrees_with_analytic_power_on_table_2(interp):
    """At the task count `incognita power` gives for each row of Table 2, the simulated power of
    two models with that gap and that per-task SD is the analytic power within 4 Monte Carlo SEs
    (0.025 at 4,000 simulations); the six-task social row, where binomial task means are least
    normal, within 0.03."""
    pop, check = pp.load_assumptions(ASSUMPTIONS)
    table = dp.agreement_table(pop, check, interp, sims=4000, seed=20260820)
    assert table["tasks"].tolist() == [104, 249, 6]
    for row in table.itertuples():
        assert row.tasks == required_tasks(row.gap_sd, row.largest_gap)
        assert row.model_sd == pytest.approx(row.gap_sd, abs=1e-6)  # the SD was matched
        assert 0.78 < row.analytic_power < 0.8
        tolerance = 0.03 if row.tasks < 10 else 4 * row.mc_se
        assert abs(row.simulated_power - row.analytic_power) < tolerance, row


def test_analytic_power_inverts_required_tasks():
    for sd, gap in [(0.334, 5 / 54), (0.312, 3 / 54), (0.369, 28 / 54)]:
        n = required_tasks(sd, gap)
        assert dp.analytic_power(sd, gap, n, 0.05) == pytest.approx(0.8, abs=0.015)
        assert dp.analytic_power(sd, gap, n - 1, 0.05) < dp.analytic_power(sd, gap, n, 0.05)
        assert dp.analytic_power(sd, -gap, n, 0.05) < 0.001  # the wrong side never counts


def test_assumed_rates_are_cell_success_averaged_over_tasks(tmp_path):
    pop = assumed(tmp_path, ONE_MODEL % (0.8, 0.9, 0.2))
    p = pop.draw(np.random.default_rng(0), 400, 100)
    ind, soc = pp.ARMS.index("indirect"), pp.ARMS.index("social")
    assert p[:, :, ind, 0].mean() == pytest.approx(0.9, abs=0.005)
    assert p[:, :, soc, 0].mean() == pytest.approx(0.2, abs=0.005)
    # the task effect is shared across arms: a task hard in one arm is hard in the other
    assert np.corrcoef(p[:, :, ind, 0].ravel(), p[:, :, soc, 0].ravel())[0, 1] > 0.5


# --- the pilot source ----------------------------------------------------------------------------


def test_pilot_resampling_reproduces_observed_success_in_expectation():
    trials = validate_trials(synthetic_trials(seed=4))
    pop = pp.pilot_population(trials)
    sims = 4000
    means = dp.simulate_task_means(pop, np.random.default_rng(9), sims, 18, 3)
    observed = task_means(trials, "success")
    for a, arm in enumerate(pp.ARMS):
        matrix = task_matrix(observed, arm, list(pop.models))
        for j, model in enumerate(pop.models):
            cell = np.nanmean(means[:, :, a, j], axis=1)  # each simulated design's cell success
            target = cell_mean(matrix[model])
            assert abs(cell.mean() - target) < 4 * cell.std() / math.sqrt(sims) + 1e-12, (arm, model)


def test_pilot_keeps_each_task_paired_across_arms(interp):
    """Identical arms on every task give identical simulated arms: the same tasks are drawn for
    every arm, so the contrast between them is exactly zero and never 'resolved'."""
    trials = synthetic_trials(seed=2, arms=("direct", "indirect"))
    direct = trials[trials["arm"] == "direct"]
    trials = pd.concat([direct, direct.assign(arm="indirect")], ignore_index=True)
    pop = pp.pilot_population(trials)
    p = pop.draw(np.random.default_rng(1), 500, 12)  # success probabilities of the drawn tasks
    direct, indirect = pp.ARMS.index("direct"), pp.ARMS.index("indirect")
    assert np.array_equal(p[:, :, direct], p[:, :, indirect])
    table = dp.plan(pop, interp, [12], [3], sims=2000, seed=1)
    same = value(table, "power", "direct-indirect", "m1")
    assert same["available"].item() and same["value"].item() < 0.1  # only the repetitions differ
    assert not value(table, "power", "indirect-social", "m1")["available"].item()  # no social arm


def test_pilot_table_errors_name_the_column():
    trials = synthetic_trials(seed=1, n_tasks=3, reps=1)
    with pytest.raises(InputError, match="pilot.csv: missing column.*success"):
        pp.pilot_population(trials.drop(columns=["success"]), source="pilot.csv")
    with pytest.raises(InputError, match="arm: unknown value.*socail"):
        pp.pilot_population(trials.replace({"arm": {"social": "socail"}}), known_arms=KNOWN)
    # Without a registry to check against, any arm is an arm of its own (a registered one, say).
    pop = pp.pilot_population(trials.replace({"arm": {"social": "social+map"}}))
    assert pop.arms[-1] == "social+map" and pop.has_any("social+map") and not pop.has_any("social")


# --- the assumptions file ------------------------------------------------------------------------

KNOWN = ("direct", "indirect", "social", "native")  # what the command passes: the registry's arms


def test_the_example_assumptions_file_loads():
    pop, check = pp.load_assumptions(ASSUMPTIONS)
    assert pop.models == ("gpt-5.2", "gpt-5.4", "gpt-5.5", "gpt-5.6-sol")
    assert all(pop.has_any(arm) for arm in pp.ARMS)
    social = pop.rates[pp.ARMS.index("social")]
    assert social.max() - social.min() == pytest.approx(28 / 54)  # Table 2's largest social gap
    assert [r.arm for r in check.rows] == ["direct", "indirect", "social"]


@pytest.mark.parametrize(
    "text,key",
    [
        ("success: {m1: {direct: 1.3}}", "success.m1.direct"),
        ("success: {m1: {socail: 0.5}}", "success.m1.socail"),
        ("success: {m1: {social: high}}", "success.m1.social"),
        ("success: {m1: {social: 0.5}}\nheterogeneity: {tau: -1}", "heterogeneity.tau"),
        ("success: {m1: {social: 0.5}}\nheterogeneity: {spread: 1}", "heterogeneity"),
        ("sucess: {m1: {social: 0.5}}", "sucess"),
        ("heterogeneity: {tau: 1}", "success"),
        (
            "success: {m1: {social: 0.5}}\nanalytic_check: {arms: {direct: {largest_gap: 5/54}}}",
            "analytic_check.arms.direct.gap_sd",
        ),
        (
            "success: {m1: {social: 0.5}}\nanalytic_check: {arms: {direct: {gap_sd: 0.3, largest_gap: big}}}",
            "analytic_check.arms.direct.largest_gap",
        ),
    ],
)
def test_bad_assumptions_name_the_key(tmp_path, text, key):
    path = tmp_path / "bad.yaml"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        pp.load_assumptions(path, KNOWN)
    assert str(path) in str(err.value) and key in str(err.value)


# --- the command ---------------------------------------------------------------------------------

SMALL = ["--tasks", "6,12", "--reps", "1,2", "--sims", "200", "--config", str(ROOT / "config" / "config.yaml")]


def _run(args: list[str]):
    return CliRunner().invoke(
        plan_command,
        [*args, "--domain", "retail"],  # its interpretation table, verified against its locks
        catch_exceptions=False,
    )


def test_command_writes_the_plan_from_assumptions(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the config's relative paths (corpus, prompts)
    out = tmp_path / "plan"
    res = _run(["--assume", str(ASSUMPTIONS), *SMALL, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["plan.csv", "plan.md", "plan.pdf", "plan.png"]
    table = pd.read_csv(out / "plan.csv")
    assert len(table.drop_duplicates(["tasks", "reps"])) == 4
    assert set(table["target"]) >= {"indirect-social", "direct-indirect", "native-direct", "social"}
    assert (table["usd"] == 0).all()  # config/config.yaml is offline (scripted)
    md = (out / "plan.md").read_text(encoding="utf-8")
    assert "## Designs" in md and "## Agreement with `incognita power`" in md
    assert "How this differs from `incognita power`" in md


def test_command_resamples_a_pilot(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    pilot = tmp_path / "trials.csv"
    synthetic_trials(seed=6, n_tasks=10, arms=("indirect", "social")).to_csv(pilot, index=False)
    out = tmp_path / "plan"
    res = _run(["--trials", str(pilot), *SMALL, "--out", str(out)])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out / "plan.csv")
    assert table.loc[table["target"] == "indirect-social", "available"].all()
    assert not table.loc[table["target"] == "native-direct", "available"].any()  # unavailable, not 0


def test_command_needs_exactly_one_source(tmp_path):
    res = CliRunner().invoke(plan_command, ["--out", str(tmp_path)])
    assert res.exit_code == 2 and "exactly one of --trials" in res.output
    res = CliRunner().invoke(plan_command, ["--assume", str(ASSUMPTIONS), "--tasks", "6,x"])
    assert res.exit_code == 2 and "--tasks" in res.output
