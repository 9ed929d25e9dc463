"""The paper's layout of CollabSim results (incognita.collabsim.paper_outputs), on small tables
whose expected numbers are worked out by hand here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from incognita.collabsim.metrics import communication_metrics
from incognita.collabsim.paper_outputs import (
    PAPER_METRICS,
    alignment_by_question,
    more_metrics,
    population,
    results_table,
    write_paper_outputs,
)
from incognita.collabsim.probe_analysis import PROBE_MEASURES
from incognita.collabsim.world.task import TASKS, task_class
from incognita.common.io import InputError

CONDITIONS = (("baseline", 3, "baseline"), ("group_size_6", 6, "group_size"))
# As a design may list them: not the paper's order (baseline, C.B., G.S. by size, I.V.).
SHUFFLED = (
    ("group_size_9", 9, "group_size"),
    ("communication_bandwidth", 3, "communication_bandwidth"),
    ("group_size_6", 6, "group_size"),
    ("baseline", 3, "baseline"),
)


def runs_frame(scripted=(True, True), conditions=CONDITIONS) -> pd.DataFrame:
    rows = []
    for model, is_scripted in zip(("gpt-5.5", "claude"), scripted):
        for condition, n_agents, variable in conditions:
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
                        "messages": 12.0,
                        "average_message_words": 7.0,
                        "rejected_messages": 0.0,
                        "invalid_actions": 1.0,
                        "confidence": 0.8,
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
    # Section 4.2's DayTrader metrics in its order, total messages included, then probe confidence
    assert table.columns[2:7].tolist() == [
        "baseline: average_wealth",
        "baseline: cooperation_rate",
        "baseline: average_pool",
        "baseline: messages",
        "baseline: confidence",
    ]
    assert table.loc[0, "baseline: average_wealth"] == 200.0  # (100 + 300) / 2
    assert table.loc[0, "group_size_6: average_wealth"] == 250.0
    assert table.loc[0, "baseline: messages"] == 12.0 and table.loc[0, "baseline: confidence"] == 0.8


def test_the_metrics_the_paper_does_not_report_are_in_a_second_table():
    assert more_metrics("daytrader") == [
        "net_return",
        "rounds_played",
        "rejected_messages",
        "invalid_actions",
        "average_message_words",
    ]
    table = results_table(runs_frame(), "daytrader", ["net_return", "rounds_played"])
    assert table.columns[2:].tolist() == [
        "baseline: net_return",
        "baseline: rounds_played",
        "group_size_6: net_return",
        "group_size_6: rounds_played",
    ]


def test_conditions_come_in_the_papers_order_whatever_order_the_runs_came_in():
    table = results_table(runs_frame(conditions=SHUFFLED), "daytrader")
    conditions = list(dict.fromkeys(c.split(": ")[0] for c in table.columns[2:]))
    assert conditions == ["baseline", "communication_bandwidth", "group_size_6", "group_size_9"]


def test_every_task_has_the_papers_metrics_and_each_is_one_a_run_measures():
    measured = set(communication_metrics([])) | set(PROBE_MEASURES)
    for task in TASKS:
        metrics = [m for m, _ in PAPER_METRICS[task]]
        assert len(metrics) == 5 and metrics[-1] == "confidence"  # an outcome, three process metrics
        assert set(metrics) <= set(task_class(task).METRICS) | measured, task
    assert "messages" in dict(PAPER_METRICS["map_task"]) and "average_message_words" in dict(
        PAPER_METRICS["hidden_profile"]
    )


def test_a_missing_metric_column_is_named():
    with pytest.raises(InputError, match="no column confidence for task daytrader"):
        results_table(runs_frame().drop(columns="confidence"), "daytrader")


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
    assert "Group sizes: daytrader 3/6." in (out / "figure4_group_size.svg").read_text()
    more = (out / "results_daytrader_more.md").read_text()
    assert more.count("net_return") == 2 and "layout of `results_daytrader`" in more  # two conditions


def test_runs_without_probes_still_give_the_tables(tmp_path):
    runs, conv = runs_frame(), convergence_frame().iloc[0:0]
    probes = conv.rename(columns={"similarity": "confidence"})
    for name, frame in (("runs", runs), ("probes", probes), ("convergence", conv)):
        frame.to_parquet(tmp_path / f"{name}.parquet")
    written = write_paper_outputs(*(tmp_path / f"{n}.parquet" for n in ("runs", "probes", "convergence")), tmp_path)
    assert {p.name for p in written} == {
        "results_daytrader.csv",
        "results_daytrader.md",
        "results_daytrader_more.csv",
        "results_daytrader_more.md",
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
