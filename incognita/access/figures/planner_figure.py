"""The design planner's figure (`incognita plan`, incognita.access.planning.design_planner): the power
of the primary contrast against the number of tasks, one panel per model and one line per
repetition count, with the design's cost (cold, from `incognita estimate`) on a second axis.

It reads only the plan table (plan.csv's columns), so it imports nothing from the statistics.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from incognita.access.figures.figure_drawing import new_figure, no_data
from incognita.access.figures.figure_style import MODEL_COLORS, ZERO_COST_NOTE, fmt_usd
from incognita.common.io import atomic_write_bytes
from incognita.common.plotting import DPI, RC, save_figure

TARGET_POWER = 0.8  # the paper's conventional power (Appendix B.3), drawn as a reference line


def plan_figure(table: pd.DataFrame) -> Figure:
    primary = table[table["role"] == "primary"]
    models = list(dict.fromkeys(primary["model"])) or ["(no model)"]
    reps = sorted(table["reps"].unique())
    colors = {r: MODEL_COLORS[i % len(MODEL_COLORS)] for i, r in enumerate(reps)}
    cost = table.drop_duplicates(["tasks", "reps"]).set_index(["tasks", "reps"])["usd"]
    known = np.isfinite(cost.to_numpy(dtype=float)).any()
    top = float(np.nanmax(cost.to_numpy(dtype=float))) if known else 0.0
    priced = top > 0  # an all-$0 (offline) design gets a note instead of a flat cost axis

    fig = new_figure((0.6 + 2.9 * len(models), 3.4))
    axes = fig.subplots(1, len(models), sharey=True, squeeze=False)[0]
    for i, (ax, model) in enumerate(zip(axes, models)):
        sub = primary[(primary["model"] == model) & primary["available"].astype(bool)]
        if sub.empty:
            no_data(ax, "primary contrast for this model")
            continue
        ax.axhline(TARGET_POWER, color="0.6", lw=0.8, ls="--", zorder=0)
        right = ax.twinx() if priced else None
        for r in reps:
            line = sub[sub["reps"] == r].sort_values("tasks")
            ax.plot(line["tasks"], line["value"], "o-", color=colors[r], ms=3.5, lw=1.4)
            if right is not None:
                usd = cost.xs(r, level="reps").sort_index()
                right.plot(usd.index, usd.to_numpy(), ":", color=colors[r], lw=1.1)
        if right is not None:
            right.set_ylim(0, top * 1.05)
            right.spines["right"].set_visible(True)
            right.yaxis.set_major_formatter(lambda v, _pos: fmt_usd(v))
            if i == len(models) - 1:
                right.set_ylabel("cost of the design (USD, cold)")
            else:
                right.tick_params(labelright=False)
        ax.set_title(model)
        ax.set_xlabel("tasks")
        ax.set_ylim(0, 1.02)
    axes[0].set_ylabel("power (share of simulated designs)")
    target = primary["target"].iloc[0] if len(primary) else "primary contrast"
    handles = [Line2D([], [], color=colors[r], marker="o", ms=3.5, label=f"{r} rep.") for r in reps]
    if priced:
        handles.append(Line2D([], [], color="0.4", ls=":", label="cost (right axis)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)
    note = f"\n{ZERO_COST_NOTE}" if known and not priced else ""
    fig.suptitle(f"Power of the primary contrast {target} against tasks (dashed: {TARGET_POWER:.0%}){note}")
    return fig


def save_plan_figure(table: pd.DataFrame, out_dir: Path) -> list[Path]:
    """plan.png and plan.pdf, drawn and saved in the project's figure style."""
    out_dir = Path(out_dir)
    with matplotlib.rc_context(RC):
        fig = plan_figure(table)
        paths = save_figure(fig, out_dir, "plan", ("png",))
        # The PDF's own date key (save_figure's "Date" is the SVG's): without it the bytes change per run.
        buf = io.BytesIO()
        fig.savefig(buf, format="pdf", dpi=DPI, metadata={"CreationDate": None, "Creator": None})
    atomic_write_bytes(out_dir / "plan.pdf", buf.getvalue())
    return [*paths, out_dir / "plan.pdf"]
