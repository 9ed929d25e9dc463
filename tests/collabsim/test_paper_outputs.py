"""The paper's layout of CollabSim results (incognita.collabsim.paper_outputs), on small tables
whose expected numbers are worked out by hand here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from incognita.collabsim.paper_outputs import alignment_by_question, population, results_table, write_paper_outputs


def runs_frame(scripted=(True, True)) -> pd.DataFrame:
    rows = []
    for model, is_scripted in zip(("gpt-5.5", "claude"), scripted):
        for condition, n_agents, variable in (("baseline", 3, "baseline"), ("group_size_6", 6, "group_size")):
            for seed, wealth in ((1, 100.0), (2, 300.0)):
                rows.append(
                    {
                        "task": "daytrader",
                        "condition": condition,
                        "variable": variable,
                        "model": model,
                        "design": "persona",
                        "seed": seed,
                        "n_agents": n_agents,
                        "scripted": is_scripted,
                        "average_wealth": wealth + (50 if condition == "group_size_6" else 0),
                        "cooperation_rate": 0.5,
                        "net_return": 1.0,
                        "average_pool": 10.0,
                        "rounds_played": 30,
                    }
                )
    return pd.DataFrame(rows)


def convergence_frame() -> pd.DataFrame:
    rows = []
    for model in ("gpt-5.5", "claude"):
        for condition in ("baseline", "group_size_6"):
            for seed in (1, 2):
                for question, values in (("situation", (1.0, 0.8)), ("partners", (0.6, 0.6)), ("plan", (0.5, 0.7))):
                    for step, v in enumerate(values):
                        rows.append(
                            {
                                "task": "daytrader",
                                "condition": condition,
                                "model": model,
                                "design": "persona",
                                "seed": seed,
                                "question": question,
                                "step": step,
                                "progress": step / 2,
                                "pairs": 3,
                                "similarity": v - (0.1 if seed == 2 else 0.0),
                            }
                        )
    return pd.DataFrame(rows)


def test_the_results_table_has_a_row_per_label_and_design_and_a_column_per_condition_and_metric():
    table = results_table(runs_frame(), "daytrader")
    assert list(table["model"]) == ["gpt-5.5", "claude"] and list(table["design"]) == ["persona", "persona"]
    assert table.columns[2:7].tolist() == [
        "baseline: average_wealth",
        "baseline: net_return",
        "baseline: cooperation_rate",
        "baseline: average_pool",
        "baseline: rounds_played",
    ]
    assert table.loc[0, "baseline: average_wealth"] == 200.0  # (100 + 300) / 2
    assert table.loc[0, "group_size_6: average_wealth"] == 250.0


def test_alignment_by_question_is_the_mean_over_runs_of_each_runs_mean_over_probe_points():
    [row] = alignment_by_question(convergence_frame()).to_dict("records")
    # seed 1: situation 0.9, partners 0.6, plan 0.6; seed 2 each 0.1 lower; 8 runs, half of each seed
    assert row["Q1 task state"] == pytest.approx(0.85)
    assert row["Q2 partner intent"] == pytest.approx(0.55)
    assert row["Q3 own plan"] == pytest.approx(0.55)
    per_run = np.array([0.7, 0.6] * 4)  # each run's mean over the three questions
    assert row["mean"] == pytest.approx(per_run.mean()) and row["sd"] == pytest.approx(per_run.std(ddof=1))
    assert row["runs"] == 8


def test_the_population_is_named_in_every_caption(tmp_path):
    assert population(runs_frame()).startswith("Population: scripted stand-ins for every label")
    assert "except the scripted labels claude" in population(runs_frame((False, True)))
    assert population(runs_frame((False, False))) == "Population: real models."

    runs, conv = runs_frame(), convergence_frame()
    probes = conv.rename(columns={"similarity": "confidence"})
    for name, frame in (("runs", runs), ("probes", probes), ("convergence", conv)):
        frame.to_parquet(tmp_path / f"{name}.parquet")
    out = tmp_path / "paper"
    written = write_paper_outputs(*(tmp_path / f"{n}.parquet" for n in ("runs", "probes", "convergence")), out)
    assert {p.name for p in written} >= {
        "results_daytrader.md",
        "alignment_by_question.csv",
        "figure3_confidence.png",
        "figure4_group_size.svg",
    }
    for md in out.glob("*.md"):
        assert "Population: scripted stand-ins for every label" in md.read_text()
    assert "Population: scripted stand-ins" in (out / "figure4_group_size.svg").read_text()


def test_runs_without_probes_still_give_the_tables(tmp_path):
    runs, conv = runs_frame(), convergence_frame().iloc[0:0]
    probes = conv.rename(columns={"similarity": "confidence"})
    for name, frame in (("runs", runs), ("probes", probes), ("convergence", conv)):
        frame.to_parquet(tmp_path / f"{name}.parquet")
    written = write_paper_outputs(*(tmp_path / f"{n}.parquet" for n in ("runs", "probes", "convergence")), tmp_path)
    assert {p.name for p in written} == {
        "results_daytrader.csv",
        "results_daytrader.md",
        "alignment_by_question.csv",
        "alignment_by_question.md",
    }


def test_the_figures_are_the_same_bytes_every_time(tmp_path):
    runs, conv = runs_frame(), convergence_frame()
    for name, frame in (
        ("runs", runs),
        ("probes", conv.rename(columns={"similarity": "confidence"})),
        ("convergence", conv),
    ):
        frame.to_parquet(tmp_path / f"{name}.parquet")
    inputs = [tmp_path / f"{n}.parquet" for n in ("runs", "probes", "convergence")]
    first, second = write_paper_outputs(*inputs, tmp_path / "a"), write_paper_outputs(*inputs, tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
