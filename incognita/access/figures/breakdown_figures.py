"""Figure 3: where the trajectories break. The outcome of every trial (success, failure types 1-5,
excluded) per arm and model, and the completion of the coordination processes as a heat map
(grey where the arm does not contain the process).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Patch

from incognita.access.figures.figure_drawing import figure_title, new_figure, no_data
from incognita.access.figures.figure_inputs import Stats, ordered
from incognita.access.figures.figure_style import ABSENT, MEASURES, OTHER_OUTCOME, OUTCOMES, arm_label, text_color
from incognita.access.taxonomy import EXCLUDED, FAILED_UNLABELLED

# --- Figure 3: outcome composition and process completion ---------------------------------------


def fig3_breakdown(stats: Stats) -> Figure:
    comp, proc = stats["composition"], stats["process"]
    arms = list(ordered(list(comp["arm"]) + list(proc["arm"]), stats.arms)) or list(stats.arms)
    fig = new_figure((3.4 * len(arms) + 3.2, 10.5))
    figure_title(
        fig,
        stats,
        "Figure 3. Where the trajectories break: the outcome of every trial and the completion of the "
        "coordination processes",
        fontweight="bold",
    )
    sub_top, sub_bottom = fig.subfigures(2, 1, height_ratios=[1.25, 1])
    top_axes = sub_top.subplots(1, len(arms), squeeze=False, sharey=True)[0]
    sub_top.suptitle(
        "A. Outcome of every trial: success, failure type 1-5 (the stage where the trajectory stopped), or excluded",
        fontsize=10,
    )
    top = max(comp.groupby(["arm", "model"])["count"].sum().max() if len(comp) else 1, 1)
    for i, arm in enumerate(arms):
        _composition_panel(stats, top_axes[i], arm, top, first=i == 0)
    sub_top.legend(
        handles=_outcome_legend(set(comp["outcome"])), title="Outcome", loc="outside right center", frameon=False
    )
    bottom_axes = sub_bottom.subplots(1, len(arms), squeeze=False)[0]
    sub_bottom.suptitle(
        "B. Process completion: mean share of the required items a trial satisfied "
        "(grey 'absent': the condition does not contain that process)",
        fontsize=10,
    )
    images = [_process_panel(stats, bottom_axes[i], arm, first=i == 0) for i, arm in enumerate(arms)]
    image = next((im for im in images if im is not None), None)
    if image is not None:
        sub_bottom.colorbar(image, ax=list(bottom_axes), label="Mean completion (0-1)", shrink=0.9)
    return fig


def _outcome_legend(present: set[str]) -> list[Patch]:
    """Success and the five types always; the native and excluded rows and any unknown label only when present."""
    handles = [
        Patch(color=c, label=lab)
        for key, (lab, c) in OUTCOMES.items()
        if key in present or key not in (FAILED_UNLABELLED, EXCLUDED)
    ]
    extra = sorted(present - set(OUTCOMES))
    if extra:
        handles.append(Patch(color=OTHER_OUTCOME[1], label=f"{OTHER_OUTCOME[0]}:\n{', '.join(extra)}"))
    return handles


def _composition_panel(stats: Stats, ax: Axes, arm: str, top: float, first: bool) -> None:
    comp = stats["composition"]
    part = comp[comp["arm"] == arm]
    models = [m for m in stats.models if m in set(part["model"])]
    ax.set_title(arm_label(arm))
    if not models:
        no_data(ax, "outcome counts")
        return
    counts = part.pivot_table(index="model", columns="outcome", values="count", aggfunc="sum").reindex(models)
    counts = counts.fillna(0)
    x = np.arange(len(models))
    bottom = np.zeros(len(models))
    for outcome in list(OUTCOMES) + sorted(set(counts.columns) - set(OUTCOMES)):
        if outcome not in counts.columns:
            continue
        vals = counts[outcome].to_numpy()
        color = OUTCOMES.get(outcome, OTHER_OUTCOME)[1]
        ax.bar(
            x,
            vals,
            bottom=bottom,
            color=color,
            width=0.75,
            edgecolor="white",
            lw=0.5,
            hatch="//" if outcome == EXCLUDED else None,
        )
        for xi, v, b in zip(x, vals, bottom):
            if v >= 0.06 * top:  # label only segments tall enough to hold the number
                ax.text(
                    xi,
                    b + v / 2,
                    f"{v:.0f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color=text_color(color),
                )
        bottom += vals
    ax.set_xticks(x, models, rotation=30, ha="right")
    ax.set_ylim(0, top * 1.04)
    if first:
        ax.set_ylabel("Trials (count)")
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)


def process_matrix(process: pd.DataFrame, arm: str, models: Sequence[str]) -> pd.DataFrame:
    """Measures (rows) x models (columns) for one arm; NaN where the arm lacks the process."""
    part = process[process["arm"] == arm]
    table = part.pivot_table(index="measure", columns="model", values="mean", aggfunc="first", dropna=False)
    measures = ordered(list(part["measure"]), list(MEASURES))
    return table.reindex(index=list(measures), columns=[m for m in models if m in set(part["model"])])


def _process_panel(stats: Stats, ax: Axes, arm: str, first: bool) -> AxesImage | None:
    proc = stats["process"]
    all_measures = ordered(list(proc["measure"]), list(MEASURES))
    matrix = process_matrix(proc, arm, stats.models).reindex(index=list(all_measures))
    ax.set_title(arm_label(arm))
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    if matrix.empty or matrix.isna().all().all():
        no_data(ax, "process measures")
        return None
    values = matrix.to_numpy(dtype=float)
    cmap = matplotlib.colormaps["YlGnBu"].with_extremes(bad="#f2f2f2")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (r, c), v in np.ndenumerate(values):
        text = ABSENT if np.isnan(v) else f"{v:.2f}"
        ax.text(
            c,
            r,
            text,
            ha="center",
            va="center",
            fontsize=7.5,
            color="0.45" if np.isnan(v) else ("white" if v > 0.6 else "black"),
            style="italic" if np.isnan(v) else "normal",
        )
    ax.set_xticks(np.arange(len(matrix.columns)), matrix.columns, rotation=30, ha="right")
    ax.set_yticks(np.arange(len(matrix.index)), [MEASURES.get(m, m) for m in matrix.index] if first else [])
    ax.tick_params(length=0)
    return image
