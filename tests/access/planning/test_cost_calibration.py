"""Fitting the estimate's assumptions to observed usage (`incognita estimate --from`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from incognita.access.cost_assumptions import Assumptions
from incognita.access.planning.commands import estimate_cmd
from incognita.access.planning.cost_calibration import (
    Observations,
    Observed,
    fit,
    measured,
    per_episode_usd,
    published,
    with_actions,
)
from incognita.access.planning.cost_estimate import Estimator
from incognita.access.planning.workflow_config import load_config
from incognita.cli import main
from incognita.common.io import InputError
from incognita.common.prices import load_prices

ROOT = Path(__file__).resolve().parents[3]
PAPER_FIGURES = ROOT / "config/cost_calibration.yaml"


@pytest.fixture(scope="module")
def paper():
    return load_config(str(ROOT / "config/paper.yaml"))


def estimator(cfg, assumptions=None) -> Estimator:
    return Estimator(cfg, load_prices(ROOT / "config/prices.yaml"), assumptions or Assumptions(), cards_root=None)


def test_the_default_assumptions_reproduce_the_papers_prices_per_arm(paper):
    # Table 2: $0.252, $0.467, $1.061 per episode; the issue asks for each within 15%.
    figures = published(PAPER_FIGURES)
    assert {arm: o.usd_per_episode for arm, o in figures.arms.items()} == {
        "direct": 0.252,
        "indirect": 0.467,
        "social": 1.061,
    }
    estimated = per_episode_usd(estimator(paper), Assumptions())
    for arm, o in figures.arms.items():
        assert estimated[arm] == pytest.approx(o.usd_per_episode, rel=0.02), arm
        assert Assumptions().agent_turns(arm) == pytest.approx(o.agent_actions), arm  # Section 6.3


def test_the_defaults_are_the_fit_to_the_papers_figures(paper):
    """Refitting from the defaults moves nothing: the defaults and config/cost_calibration.yaml agree."""
    result = fit(estimator(paper), published(PAPER_FIGURES))
    by_arm = {r.arm: r for r in result.rows}
    assert by_arm["direct"].after_value == pytest.approx(1.0, abs=0.02)  # the reasoning table's factor
    assert by_arm["indirect"].after_value == pytest.approx(Assumptions().service_steps["indirect"], rel=0.02)
    assert by_arm["social"].after_value == pytest.approx(Assumptions().service_steps["social"], rel=0.02)
    assert result.skipped == []


def test_the_fit_recovers_assumptions_it_did_not_start_from(paper):
    """Prices made by known assumptions (not the defaults) are fitted back to those assumptions."""
    base = Assumptions()
    truth = dataclasses.replace(
        with_actions(with_actions(base, "direct", 18.0), "social", 31.0),
        reasoning={k: v * 2.5 for k, v in base.reasoning.items()},
        service_steps={"indirect": 1.6, "social": 5.5},
    )
    prices = per_episode_usd(estimator(paper), truth)
    observed = Observations(
        "made up",
        {arm: Observed(truth.agent_turns(arm), prices[arm]) for arm in ("direct", "indirect", "social")},
    )
    result = fit(estimator(paper), observed)
    values = {r.arm: r.after_value for r in result.rows}
    assert values == pytest.approx({"direct": 2.5, "indirect": 1.6, "social": 5.5}, rel=1e-4)
    assert result.assumptions.agent_turns("social") == pytest.approx(31.0)
    assert result.assumptions.tool_calls["direct"] == pytest.approx(base.tool_calls["direct"] * 17 / 13.4)
    assert {r.arm: r.after_usd for r in result.rows} == pytest.approx(prices, rel=1e-4)


def test_a_price_no_value_can_reach_names_the_arm_and_the_range(paper, tmp_path):
    path = tmp_path / "figures.yaml"
    path.write_text(yaml.safe_dump({"arms": {"direct": {"agent_actions": 14.4, "usd_per_episode": 90.0}}}))
    with pytest.raises(InputError, match=r"arm direct costs \$90.000 per episode, outside what reasoning in \[0, 20\]"):
        fit(estimator(paper), published(path))


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"arms": {}}, "expected a mapping"),
        ({"arms": {"direct": {"agent_actions": 14.4}}}, r"arms.direct.usd_per_episode must be a positive number"),
        ({"arms": {"social": {"agent_actions": "many", "usd_per_episode": 1}}}, r"arms.social.agent_actions"),
    ],
)
def test_bad_published_figures_name_the_field(tmp_path, doc, message):
    path = tmp_path / "figures.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError, match=message):
        published(path)


# --------------------------------------------------------------------------- a run's trials table


def trials_table(rows: list[dict]) -> pd.DataFrame:
    base = {"model": "gpt-5.2", "error": None, "excluded": False}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_measured_means_leave_out_native_errors_and_exclusions(tmp_path):
    path = tmp_path / "trials.parquet"
    trials_table(
        [
            {"arm": "direct", "agent_actions": 10, "cost_episode_usd": 0.2},
            {"arm": "direct", "agent_actions": 20, "cost_episode_usd": 0.4},
            {"arm": "direct", "agent_actions": 99, "cost_episode_usd": 9.0, "error": "timeout"},
            {"arm": "social", "agent_actions": 30, "cost_episode_usd": 1.0},
            {"arm": "social", "agent_actions": 99, "cost_episode_usd": 9.0, "excluded": True},
            {"arm": "native", "agent_actions": 99, "cost_episode_usd": 9.0},
        ]
    ).to_parquet(path)
    obs = measured(path)
    assert obs.arms == {"direct": Observed(15.0, pytest.approx(0.3), 2), "social": Observed(30.0, 1.0, 1)}
    assert obs.models == ("gpt-5.2",)


def test_a_table_without_priced_usage_is_refused(tmp_path):
    path = tmp_path / "trials.parquet"
    trials_table([{"arm": "direct", "agent_actions": 12, "cost_episode_usd": 0.0}]).to_parquet(path)
    with pytest.raises(InputError, match="cost_episode_usd is 0 in every trial: no priced usage"):
        measured(path)
    pd.DataFrame({"arm": ["direct"]}).to_parquet(path)
    with pytest.raises(InputError, match="not a trials table"):
        measured(path)


def test_estimate_from_a_trials_table_fits_then_estimates(paper, tmp_path, monkeypatch):
    """A one-model run whose prices came from known assumptions: the command fits them back, prints
    the fit, estimates with them, and writes them as an --assumptions file."""
    monkeypatch.chdir(ROOT)
    cfg = {**paper, "design": {**paper["design"], "models": ["gpt-5.4"], "repetitions": 1}}
    config = tmp_path / "one.yaml"
    config.write_text(yaml.safe_dump(cfg))
    truth = dataclasses.replace(Assumptions(), service_steps={"indirect": 2.0, "social": 3.0})
    prices = per_episode_usd(estimator(cfg), truth)
    path = tmp_path / "trials.parquet"
    rows = [
        {"arm": arm, "model": "gpt-5.4", "agent_actions": Assumptions().agent_turns(arm), "cost_episode_usd": usd}
        for arm, usd in prices.items()
    ]
    trials_table(
        rows + [{"arm": "native", "model": "gpt-5.4", "agent_actions": 3, "cost_episode_usd": 0.1}]
    ).to_parquet(path)
    written = tmp_path / "fitted.yaml"
    base = ["--config", str(config), "--cards-dir", "/nonexistent"]
    out = CliRunner().invoke(estimate_cmd, [*base, "--from", str(path), "--write-assumptions", str(written)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == f"fit to {path}:"
    assert "service_steps.indirect (the holder's calls per message): 2.93 -> 2" in out.output
    assert "service_steps.social (a desk's calls per message): 3.87 -> 3" in out.output
    assert "arm social   18 episodes" in out.output and f"(${prices['social']:.3f} per episode)" in out.output
    refit = Assumptions.load(str(written))
    assert refit.service_steps == pytest.approx({"indirect": 2.0, "social": 3.0}, rel=1e-3)
    # The written file gives the same estimate without --from.
    again = CliRunner().invoke(estimate_cmd, [*base, "--assumptions", str(written)])
    assert again.exit_code == 0 and again.output in out.output


def test_estimate_from_refuses_a_run_of_other_models_and_a_lone_write(paper, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = tmp_path / "trials.parquet"
    trials_table([{"arm": "direct", "agent_actions": 12, "cost_episode_usd": 0.3}]).to_parquet(path)
    out = CliRunner().invoke(main, ["estimate", "--config", "config/paper.yaml", "--from", str(path)])
    assert out.exit_code != 0 and "measured models gpt-5.2; config/paper.yaml's design has" in out.output
    out = CliRunner().invoke(main, ["estimate", "--config", "config/paper.yaml", "--write-assumptions", "x.yaml"])
    assert out.exit_code != 0 and "--write-assumptions needs --from" in out.output
    assert not (ROOT / "x.yaml").exists()
    out = CliRunner().invoke(
        main, ["estimate", "--config", "config/paper.yaml", "--from", str(tmp_path / "none.parquet")]
    )
    assert out.exit_code != 0 and "no such file" in out.output
