"""CollabSim figures (PNG and SVG), from the statistics stage's tables.

- `<task>`: each metric against condition, mean over seeds with its 95% interval; the baseline in
  grey, each condition in its variable's colour; persona-based agents as circles, theory-informed
  as squares; a filled marker means the condition-minus-baseline difference excludes zero.
- `confidence_time`, `convergence_time`: probe confidence and teammates' answer similarity
  (SBERT) over the run, per task and condition, with 95% bands.
- `design_effects`: theory-informed minus persona-based agents on each task's outcome metrics,
  per condition, with 95% intervals (paired by seed).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from incognita.collabsim.world.task import task_class  # noqa: E402
from incognita.common.io import InputError  # noqa: E402
from incognita.common.plotting import RC, save_figure  # noqa: E402

COLORS = {
    "baseline": "#777777",
    "communication_bandwidth": "#1b6ca8",
    "information_visibility": "#d17a22",
    "group_size": "#2a9d5c",
    "agent_design": "#8e44ad",
}
MARKERS = {"persona": "o", "theory": "s"}
LINES = {"persona": "-", "theory": "--"}
FIGURES = ("confidence_time", "convergence_time", "design_effects")


def _read(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise InputError(f"{path}: missing (run the collabsim stats stage first)") from None
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _note(scripted: bool) -> str:
    return " (scripted agents: offline default)" if scripted else ""


def _grid(n: int, width: float = 3.1, height: float = 2.5):
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows + 0.7), squeeze=False, layout="constrained"
    )
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat)[:n]


def task_figure(task: str, summary: pd.DataFrame, effects: pd.DataFrame, scripted: bool):
    metrics = list(dict.fromkeys(summary["metric"]))
    fig, axes = _grid(len(metrics))
    conditions = list(dict.fromkeys(summary["condition"]))
    designs = list(dict.fromkeys(summary["design"]))
    offsets = {d: (i - (len(designs) - 1) / 2) * 0.18 for i, d in enumerate(designs)}
    for ax, metric in zip(axes, metrics):
        part = summary[summary.metric == metric]
        sig = effects[(effects.metric == metric) & effects.excludes_zero] if len(effects) else effects
        for _, row in part.iterrows():
            x = conditions.index(row["condition"]) + offsets[row["design"]]
            color = COLORS.get(row["variable"], "#333333")
            if np.isfinite(row["ci_low"]) and np.isfinite(row["ci_high"]):
                ax.plot([x, x], [row["ci_low"], row["ci_high"]], color=color, lw=1.4)
            filled = row["condition"] == "baseline" or (
                len(sig)
                and (
                    (sig.condition == row["condition"]) & (sig.design == row["design"]) & (sig.model == row["model"])
                ).any()
            )
            ax.plot(
                [x], [row["mean"]], MARKERS.get(row["design"], "o"), color=color, ms=5, mfc=color if filled else "white"
            )
        ax.set_title(metric.replace("_", " "))
        ax.set_xticks(range(len(conditions)), [c.replace("_", "\n") for c in conditions], fontsize=7)
    fig.suptitle(
        f"{task_class(task).title}: metrics by condition, mean and 95% interval over seeds "
        f"(circles persona-based, squares theory-informed){_note(scripted)}"
    )
    return fig


def time_figure(table: pd.DataFrame, what: str, scripted: bool):
    tasks = list(dict.fromkeys(table["task"])) if len(table) else []
    fig, axes = _grid(max(len(tasks), 1), width=3.6, height=2.8)
    if not tasks:
        axes[0].text(0.5, 0.5, "no probe data", ha="center", va="center", transform=axes[0].transAxes)
    palette = plt.get_cmap("tab10")
    for ax, task in zip(axes, tasks):
        part = table[table.task == task]
        for i, condition in enumerate(dict.fromkeys(part["condition"])):
            for (design, _model), line in part[part.condition == condition].groupby(["design", "model"], sort=False):
                line = line.sort_values("progress")
                color = "#555555" if condition == "baseline" else palette(i % 10)
                ax.plot(
                    line["progress"],
                    line["mean"],
                    LINES.get(design, "-"),
                    color=color,
                    lw=1.3,
                    label=f"{condition} ({design})",
                )
                band = line.dropna(subset=["ci_low", "ci_high"])
                ax.fill_between(band["progress"], band["ci_low"], band["ci_high"], color=color, alpha=0.12, lw=0)
        ax.set_title(task_class(task).title)
        ax.set_xlabel("share of the run")
        ax.set_xlim(0, 1)
        ax.legend(fontsize=6, frameon=False)
    fig.suptitle(f"{what} over the run, mean over seeds with 95% band{_note(scripted)}")
    return fig


def design_figure(design_effects: pd.DataFrame, scripted: bool):
    """Rows: tasks; columns: the task's outcome metrics; in each panel one interval per condition."""
    tasks = list(dict.fromkeys(design_effects["task"])) if len(design_effects) else []
    width = max([len(task_class(t).METRICS) for t in tasks] or [1])
    fig, axes = plt.subplots(
        max(len(tasks), 1),
        width,
        figsize=(2.3 * width, 1.9 * max(len(tasks), 1) + 0.7),
        squeeze=False,
        layout="constrained",
    )
    for ax in axes.flat:
        ax.set_visible(False)
    if not tasks:
        axes[0][0].set_visible(True)
        axes[0][0].text(
            0.5, 0.5, "one design only: no design effects", ha="center", va="center", transform=axes[0][0].transAxes
        )
    for r, task in enumerate(tasks):
        part = design_effects[design_effects.task == task]
        conditions = list(dict.fromkeys(part["condition"]))
        for c, metric in enumerate(task_class(task).METRICS):
            ax = axes[r][c]
            ax.set_visible(True)
            for _, row in part[part.metric == metric].iterrows():
                y = conditions.index(row["condition"])
                color = COLORS.get(row["variable"], "#333333")
                if np.isfinite(row["ci_low"]) and np.isfinite(row["ci_high"]):
                    ax.plot([row["ci_low"], row["ci_high"]], [y, y], color=color, lw=1.4)
                ax.plot([row["diff"]], [y], "o", color=color, ms=4, mfc=color if row["excludes_zero"] else "white")
            ax.axvline(0, color="#999999", lw=0.8, ls="--")
            ax.set_yticks(range(len(conditions)), conditions if c == 0 else [""] * len(conditions), fontsize=6)
            ax.set_ylim(len(conditions) - 0.5, -0.5)
            ax.set_title(f"{task_class(task).title}: {metric.replace('_', ' ')}", fontsize=7)
            ax.tick_params(axis="x", labelsize=6)
    fig.suptitle(
        f"Theory-informed minus persona-based agents on each task's outcome metrics, paired by seed, "
        f"95% intervals{_note(scripted)}"
    )
    return fig


def make_figures(stats_dir: Path, runs_path: Path, out_dir: Path) -> list[Path]:
    summary, effects = _read(stats_dir / "summary.csv"), _read(stats_dir / "effects.csv")
    runs = pd.read_parquet(runs_path, columns=["task", "scripted"])
    scripted = bool(runs["scripted"].all())
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with matplotlib.rc_context(RC):
        for task in dict.fromkeys(summary["task"]):
            eff = effects[effects.task == task] if len(effects) else effects
            written += _save(
                task_figure(task, summary[summary.task == task], eff, bool(runs[runs.task == task]["scripted"].all())),
                out_dir,
                task,
            )
        written += _save(
            time_figure(_read(stats_dir / "confidence_time.csv"), "Probe confidence", scripted),
            out_dir,
            "confidence_time",
        )
        written += _save(
            time_figure(
                _read(stats_dir / "convergence_time.csv"), "Teammates' answer similarity (SBERT cosine)", scripted
            ),
            out_dir,
            "convergence_time",
        )
        written += _save(design_figure(_read(stats_dir / "design_effects.csv"), scripted), out_dir, "design_effects")
    return written


def _save(fig, out_dir: Path, stem: str) -> list[Path]:
    paths = save_figure(fig, out_dir, stem)
    plt.close(fig)
    return paths
