"""One figure per task: each metric against condition, mean over seeds with its 95% interval.

The baseline is drawn in grey and each condition in its variable's colour; a condition whose
difference from the baseline excludes zero (stats/effects.csv) gets a filled marker.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from incognita.common.io import InputError  # noqa: E402
from incognita.common.plotting import RC, save_figure  # noqa: E402

COLORS = {"baseline": "#777777", "communication_bandwidth": "#1b6ca8", "information_visibility": "#d17a22",
          "group_size": "#2a9d5c", "agent_design": "#8e44ad"}
TITLES = {"shape_factory": "Shape Factory", "daytrader": "DayTrader", "hidden_profile": "Hidden Profile",
          "map_task": "Map Task"}


def _read(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise InputError(f"{path}: missing (run the collabsim stats stage first)") from None


def task_figure(task: str, summary: pd.DataFrame, effects: pd.DataFrame, scripted: bool):
    metrics = list(dict.fromkeys(summary["metric"]))
    cols = min(4, len(metrics))
    rows = int(np.ceil(len(metrics) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.1 * cols, 2.5 * rows + 0.6), squeeze=False, layout="constrained")
    conditions = list(dict.fromkeys(summary["condition"]))
    for ax, metric in zip(axes.flat, metrics):
        part = summary[summary.metric == metric].set_index("condition").reindex(conditions)
        sig = set(effects[(effects.metric == metric) & effects.excludes_zero]["condition"]) if len(effects) else set()
        for x, (cond, row) in enumerate(part.iterrows()):
            color = COLORS.get(row["variable"], "#333333")
            lo, hi = row["ci_low"], row["ci_high"]
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([x, x], [lo, hi], color=color, lw=1.6)
            ax.plot([x], [row["mean"]], "o", color=color, mfc=color if cond in sig or cond == "baseline" else "white")
        ax.set_title(metric.replace("_", " "))
        ax.set_xticks(range(len(conditions)), [c.replace("_", "\n") for c in conditions], fontsize=7)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    note = " (scripted agents: offline default)" if scripted else ""
    fig.suptitle(f"{TITLES.get(task, task)}: metrics by condition, mean and 95% interval over seeds{note}")
    return fig


def make_figures(stats_dir: Path, runs_path: Path, out_dir: Path) -> list[Path]:
    summary, effects = _read(stats_dir / "summary.csv"), _read(stats_dir / "effects.csv")
    runs = pd.read_parquet(runs_path, columns=["task", "scripted"])
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with matplotlib.rc_context(RC):
        for task in dict.fromkeys(summary["task"]):
            scripted = bool(runs[runs.task == task]["scripted"].all())
            eff = effects[effects.task == task] if len(effects) else effects
            fig = task_figure(task, summary[summary.task == task], eff, scripted)
            written += save_figure(fig, out_dir, task)
            plt.close(fig)
    return written
