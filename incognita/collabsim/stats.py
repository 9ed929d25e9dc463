"""Condition effects: per task and metric, each condition minus its task's baseline, with a 95%
interval over seeds.

Every condition runs the same seeds, and a seed fixes the task's materials and the scripted
agents' draws, so a condition and its baseline are paired by seed: the interval is a t interval
on the per-seed differences. Group-size conditions change who is in the run, so the same seed
does not give matched materials there; those use Welch's interval on the two sets of runs.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from incognita.collabsim.table import ID_COLUMNS
from incognita.collabsim.tasks import task_class
from incognita.common.intervals import Paired, paired, welch
from incognita.common.io import InputError
from incognita.common.tables import write_table

COMMUNICATION = ("messages", "rejected_messages", "invalid_actions", "average_message_words")
UNPAIRED = ("group_size",)
OUTPUTS = ("summary", "effects")


def task_metrics(runs: pd.DataFrame, task: str) -> list[str]:
    """The metrics a task's runs carry: its own (as its module lists them) then communication."""
    own = list(getattr(task_class(task), "METRICS", ()))
    present = [c for c in runs.columns if c not in ID_COLUMNS and runs[c].notna().any()]
    ordered = [m for m in own if m in present] + [m for m in COMMUNICATION if m in present]
    return ordered or [m for m in present if m not in ("n_agents",) and runs[m].dtype.kind == "f"]


def _interval(p: Paired) -> dict:
    return {"n": p.n_tasks, "ci_low": p.ci_low, "ci_high": p.ci_high}


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (task, condition), part in runs.groupby(["task", "condition"], sort=False):
        for metric in task_metrics(runs[runs.task == task], task):
            p = paired(part[metric])
            rows.append({"task": task, "condition": condition, "variable": part["variable"].iloc[0],
                         "metric": metric, "mean": p.mean_diff, "sd": p.sd, **_interval(p)})
    return pd.DataFrame(rows)


def effects_table(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for task, part in runs.groupby("task", sort=False):
        base = part[part.condition == "baseline"].set_index("seed")
        if base.empty:
            raise InputError(f"collabsim runs: task {task} has no baseline runs to compare with")
        for condition, cond in part[part.condition != "baseline"].groupby("condition", sort=False):
            cond = cond.set_index("seed")
            variable = cond["variable"].iloc[0]
            for metric in task_metrics(part, task):
                if variable in UNPAIRED:
                    p, how = welch(cond[metric], base[metric]), "welch"
                else:
                    joined = pd.concat([cond[metric].rename("c"), base[metric].rename("b")], axis=1, join="inner")
                    p, how = paired(joined["c"] - joined["b"]), "paired_by_seed"
                rows.append({"task": task, "condition": condition, "variable": variable, "metric": metric,
                             "baseline_mean": base[metric].mean(), "condition_mean": cond[metric].mean(),
                             "diff": p.mean_diff, **_interval(p), "interval": how,
                             "excludes_zero": bool(p.ci_low > 0 or p.ci_high < 0)})
    return pd.DataFrame(rows)


def run_stats(runs: pd.DataFrame, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [*write_table(summary_table(runs), out_dir, "summary"),
            *write_table(effects_table(runs), out_dir, "effects")]
