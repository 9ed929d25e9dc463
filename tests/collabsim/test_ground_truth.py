"""The scripted population's known directions, recovered by the statistics.

Each scripted policy's knobs were set so that the paper's expected effects follow from the
mechanics (word limits, message pacing, visibility, group size), never from the policy knowing
its condition. This test runs the conditions over enough seeds and asks the statistics stage
(`effects_table`) for condition minus baseline: each expected effect must have its sign and an
interval that excludes zero. It checks the metrics, the pairing and the intervals together.
"""

from __future__ import annotations

import pandas as pd
import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.condition_stats import effects_table
from incognita.collabsim.run import simulate
from incognita.collabsim.world.experiment import load_experiment

# (task, condition, metric, expected sign, seeds)
EXPECTED = [
    ("daytrader", "communication_bandwidth", "cooperation_rate", -1, 20),
    ("daytrader", "group_size_9", "cooperation_rate", -1, 20),
    ("shape_factory", "awareness_dashboard", "trade_accept_rate", +1, 20),
    ("shape_factory", "communication_bandwidth", "messages", -1, 20),
    ("shape_factory", "group_size_10", "average_wealth", +1, 20),
    ("shape_factory", "group_size_10", "order_fulfillment_rate", -1, 20),
    ("hidden_profile", "communication_bandwidth", "mention_rate", -1, 20),
    ("hidden_profile", "communication_bandwidth", "final_accuracy", -1, 20),
    ("map_task", "canvas_visibility", "revision_rate", +1, 30),
    ("map_task", "canvas_visibility", "route_score", +1, 30),
    ("map_task", "communication_bandwidth", "communication_efficiency", -1, 30),
]


@pytest.fixture(scope="module")
def effects() -> pd.DataFrame:
    seeds: dict[tuple[str, str], int] = {}
    for task, condition, _, _, n in EXPECTED:
        for cell in ((task, "baseline"), (task, condition)):
            seeds[cell] = max(seeds.get(cell, 0), n)
    rows = []
    for (task, condition), n in sorted(seeds.items()):
        exp = load_experiment(CONFIG / task / f"{condition}.yaml")
        for seed in range(1, n + 1):
            rows.append(
                {
                    "task": task,
                    "condition": condition,
                    "variable": exp.variable,
                    "model": "scripted",
                    "design": "persona",
                    "seed": seed,
                    **simulate(exp, seed).metrics,
                }
            )
    return effects_table(pd.DataFrame(rows))


@pytest.mark.parametrize("task, condition, metric, sign, n", EXPECTED, ids=lambda v: str(v))
def test_the_expected_direction_is_found_with_an_interval_that_excludes_zero(effects, task, condition, metric, sign, n):
    row = effects[(effects.task == task) & (effects.condition == condition) & (effects.metric == metric)].iloc[0]
    assert row["diff"] * sign > 0, f"{task}/{condition} {metric}: diff {row['diff']:.3f}"
    assert (row["ci_low"] > 0) if sign > 0 else (row["ci_high"] < 0), (row["ci_low"], row["ci_high"])
    assert row["interval"] == ("welch" if condition.startswith("group_size") else "paired_by_seed")


def test_every_task_reports_the_metrics_it_declares():
    from incognita.collabsim.world.task import TASK_MODULES, task_class

    for task in TASK_MODULES:
        exp = load_experiment(CONFIG / task / "baseline.yaml")
        assert list(simulate(exp, 1).metrics)[: len(task_class(task).METRICS)] == list(task_class(task).METRICS)
