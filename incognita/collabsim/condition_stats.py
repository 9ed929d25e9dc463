"""CollabSim statistics: condition effects, design effects, and probe measures over time.

- `effects`: per task, model, design and metric, each condition minus its task's baseline, with a
  95% interval over seeds. Every condition runs the same seeds, and a seed fixes the task's
  materials and the scripted agents' draws, so a condition and its baseline are paired by seed (a
  t interval on the per-seed differences). Group-size conditions change who is in the run, so the
  same seed does not give matched materials there; they use Welch's interval.
- `design_effects`: per task, condition, model and metric, theory-informed minus persona-based
  agents, paired by seed (the same seed gives the same materials, draws and personas).
- `summary`: each cell's mean with its t interval over seeds.
- `confidence_agents`: each agent's probe confidence over the run and in its early, middle and
  late thirds (each run's mean, then the mean over seeds with its t interval).
- `confidence_time` and `convergence_time`: probe confidence and answer convergence in tenths of
  the run (each run's mean per tenth, then the mean over seeds with its t interval).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from incognita.collabsim.paths import CELL_FIELDS
from incognita.collabsim.probe_analysis import PROBE_MEASURES
from incognita.collabsim.world.task import task_class
from incognita.common.intervals import Paired, paired, welch
from incognita.common.io import InputError
from incognita.common.tables import write_table
from incognita.common.viewer_links import md_link, view_href

COMMUNICATION = ("messages", "rejected_messages", "invalid_actions", "average_message_words")
UNPAIRED = ("group_size",)
CELL = list(CELL_FIELDS)
BINS = 10


def task_metrics(runs: pd.DataFrame, task: str) -> list[str]:
    """The task's metrics in its own order (`Task.METRICS`), the communication counts, then the
    probe measures that the runs carry."""
    names = (*task_class(task).METRICS, *COMMUNICATION, *PROBE_MEASURES)
    return [m for m in names if m in runs.columns and runs.loc[runs.task == task, m].notna().any()]


def _interval(p: Paired) -> dict:
    return {"n": p.n_tasks, "ci_low": p.ci_low, "ci_high": p.ci_high}


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for keys, part in runs.groupby(CELL, sort=False):
        for metric in task_metrics(runs, keys[0]):
            p = paired(part[metric])
            rows.append(
                {
                    **dict(zip(CELL, keys)),
                    "variable": part["variable"].iloc[0],
                    "metric": metric,
                    "mean": p.mean_diff,
                    "sd": p.sd,
                    **_interval(p),
                }
            )
    return pd.DataFrame(rows)


def _compare(a: pd.DataFrame, b: pd.DataFrame, metric: str, pair: bool) -> tuple[Paired, str]:
    if not pair:
        return welch(a[metric], b[metric]), "welch"
    joined = pd.concat(
        [a.set_index("seed")[metric].rename("a"), b.set_index("seed")[metric].rename("b")], axis=1, join="inner"
    )
    return paired(joined["a"] - joined["b"]), "paired_by_seed"


def _row(
    keys: dict, metric: str, a: pd.DataFrame, b: pd.DataFrame, p: Paired, how: str, names: tuple[str, str]
) -> dict:
    return {
        **keys,
        "metric": metric,
        f"{names[1]}_mean": b[metric].mean(),
        f"{names[0]}_mean": a[metric].mean(),
        "diff": p.mean_diff,
        **_interval(p),
        "interval": how,
        "excludes_zero": bool(p.ci_low > 0 or p.ci_high < 0),
    }


def effects_table(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (task, model, design), part in runs.groupby(["task", "model", "design"], sort=False):
        base = part[part.condition == "baseline"]
        if base.empty:
            raise InputError(f"collabsim runs: task {task} ({model}, {design}) has no baseline runs to compare with")
        for condition, cond in part[part.condition != "baseline"].groupby("condition", sort=False):
            variable = cond["variable"].iloc[0]
            keys = {"task": task, "condition": condition, "variable": variable, "model": model, "design": design}
            for metric in task_metrics(runs, task):
                p, how = _compare(cond, base, metric, variable not in UNPAIRED)
                rows.append(_row(keys, metric, cond, base, p, how, ("condition", "baseline")))
    return pd.DataFrame(rows)


def design_effects_table(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (task, condition, model), part in runs.groupby(["task", "condition", "model"], sort=False):
        theory, persona = part[part.design == "theory"], part[part.design == "persona"]
        if theory.empty or persona.empty:
            continue
        keys = {"task": task, "condition": condition, "variable": part["variable"].iloc[0], "model": model}
        for metric in task_metrics(runs, task):
            p, how = _compare(theory, persona, metric, True)
            rows.append(_row(keys, metric, theory, persona, p, how, ("theory", "persona")))
    return pd.DataFrame(rows)


def confidence_by_agent(valid: pd.DataFrame) -> pd.DataFrame:
    cols = [*CELL, "agent", "role", "part", "mean", "n", "ci_low", "ci_high"]
    if valid.empty:
        return pd.DataFrame(columns=cols)
    per_run = pd.concat(
        [
            valid.groupby([*CELL, "agent", "role", "seed"], sort=True)["confidence"]
            .mean()
            .reset_index()
            .assign(part="all"),
            valid.groupby([*CELL, "agent", "role", "seed", "third"], sort=True)["confidence"]
            .mean()
            .reset_index()
            .rename(columns={"third": "part"}),
        ]
    )
    rows = []
    for keys, part in per_run.groupby([*CELL, "agent", "role", "part"], sort=True):
        p = paired(part["confidence"])
        rows.append({**dict(zip([*CELL, "agent", "role", "part"], keys)), "mean": p.mean_diff, **_interval(p)})
    order = {"all": 0, "early": 1, "middle": 2, "late": 3}
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(
        [*CELL, "agent", "part"], key=lambda c: c.map(order) if c.name == "part" else c, kind="stable"
    ).reset_index(drop=True)


def over_time(values: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per cell and tenth of the run: the mean over seeds of each run's mean, with its interval."""
    df = values.dropna(subset=[column]).copy()
    if df.empty:
        return pd.DataFrame(columns=[*CELL, "bin", "progress", "mean", "n", "ci_low", "ci_high"])
    df["bin"] = np.minimum((df["progress"] * BINS).astype(int), BINS - 1)
    per_run = df.groupby([*CELL, "seed", "bin"], sort=True)[column].mean().reset_index()
    rows = []
    for keys, part in per_run.groupby([*CELL, "bin"], sort=True):
        p = paired(part[column])
        rows.append(
            {
                **dict(zip([*CELL, "bin"], keys)),
                "progress": (keys[-1] + 0.5) / BINS,
                "mean": p.mean_diff,
                **_interval(p),
            }
        )
    return pd.DataFrame(rows)


def run_stats(runs: pd.DataFrame, probes: pd.DataFrame, convergence: pd.DataFrame, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    valid = probes[probes["valid"].astype(bool)] if len(probes) else probes
    tables = {
        "summary": summary_table(runs),
        "effects": effects_table(runs),
        "design_effects": design_effects_table(runs),
        "confidence_agents": confidence_by_agent(valid),
        "confidence_time": over_time(valid, "confidence"),
        "convergence_time": over_time(convergence, "similarity"),
    }
    return [p for name, df in tables.items() for p in write_table(df, out_dir, name, _with_run_links(name, df))]


# From results/collabsim/stats/ to the viewer's run list (docs/viewer.md): each row of these
# tables links to the runs behind it.
VIEWER = "../../viewer/index.html"


def _with_run_links(name: str, df: pd.DataFrame) -> pd.DataFrame | None:
    """The Markdown copy of a table with a `runs` column of links (None: as is)."""
    if df.empty or not set(CELL) <= set(df.columns) or name not in ("summary", "effects"):
        return None
    md = df.copy()

    def runs(row, condition: str, label: str) -> str:
        filters = {k: str(row[k]) for k in CELL} | {"condition": condition}
        return md_link(label, view_href(VIEWER, "collabsim", **filters))

    if name == "effects":  # a condition against its baseline: both sets of runs
        md["runs"] = [
            f"{runs(r, r['condition'], 'condition')}, {runs(r, 'baseline', 'baseline')}" for _, r in md.iterrows()
        ]
    else:
        md["runs"] = [runs(r, r["condition"], "runs") for _, r in md.iterrows()]
    return md
