"""Figure 6: what an episode costs (USD, tokens, actions) by access condition and model, in two
scopes: the evaluated agent only, and the whole episode with every participant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import StrMethodFormatter

from incognita.access.figures.figure_drawing import figure_title, model_color, model_legend, new_figure, no_data
from incognita.access.figures.figure_inputs import Stats, ordered
from incognita.access.figures.figure_style import ZERO_COST_NOTE, arm_tick

# --- Figure 6: cost in both scopes ---------------------------------------------------------------

COST_METRICS = (
    ("usd_per_episode", "Cost per episode (USD)"),
    ("tokens_per_episode", "Tokens per episode"),
    ("actions_per_episode", "Actions per episode"),
)
COST_SCOPES = (("agent", "evaluated agent only"), ("episode", "whole episode, every participant"))


def fig6_cost(stats: Stats) -> Figure:
    cost = stats["cost"]
    fig = new_figure((14, 7.5))
    axes = fig.subplots(len(COST_SCOPES), len(COST_METRICS), squeeze=False)
    figure_title(
        fig, stats, "Figure 6. What an episode costs, by access condition and model, in two scopes", fontweight="bold"
    )
    arms = list(ordered(cost["arm"], stats.arms))
    models = [m for m in stats.models if m in set(cost["model"])]
    for r, (scope, scope_text) in enumerate(COST_SCOPES):
        for c, (col, label) in enumerate(COST_METRICS):
            ax = axes[r, c]
            _cost_panel(stats, ax, cost[cost["scope"] == scope], col, arms, models)
            ax.set_title(f"{label}\n{scope_text}")
            ax.set_ylabel(label)
    if len(cost) and (cost["usd_per_episode"].fillna(0) == 0).all():
        note = ZERO_COST_NOTE
        if (cost["tokens_per_episode"].fillna(0) == 0).all():
            note += " They use no model tokens either."
        # supxlabel, unlike a free text, gets its own room from the constrained layout
        fig.supxlabel(note, fontsize=10, style="italic", bbox={"boxstyle": "round", "fc": "#fff7d6", "ec": "#c9a400"})
    fig.legend(handles=model_legend(stats, models), title="Evaluated model", loc="outside right center", frameon=False)
    return fig


def _cost_panel(stats: Stats, ax: Axes, part: pd.DataFrame, col: str, arms: list[str], models: list[str]) -> None:
    if part.empty:
        no_data(ax, "rows for this scope")
        return
    table = part.pivot_table(index="arm", columns="model", values=col, aggfunc="first").reindex(
        index=arms, columns=models
    )
    width = 0.8 / max(len(models), 1)
    x = np.arange(len(arms))
    for j, m in enumerate(models):
        ax.bar(
            x + (j - (len(models) - 1) / 2) * width,
            table[m].fillna(0).to_numpy(),
            width=width * 0.95,
            color=model_color(stats, m),
            label=m,
        )
    ax.set_xticks(x, [arm_tick(a) for a in arms], fontsize=8)
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.2f}" if col == "usd_per_episode" else "{x:,.0f}"))
    peak = np.nanmax(table.to_numpy(dtype=float)) if table.notna().any().any() else 0
    if not peak > 0:
        ax.set_ylim(0, 1)  # all zero: keep a visible axis instead of a collapsed one
        ax.set_yticks([0])
        ax.text(
            0.5, 0.5, "every value is 0", transform=ax.transAxes, ha="center", color="0.35", style="italic", fontsize=10
        )
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)
