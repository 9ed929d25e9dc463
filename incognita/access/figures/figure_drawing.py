"""Small drawing helpers every figure shares: the figure with its layout, its title (marked when
the agents are scripted), model colours and legends, the "no data" panel, interval rows and
the zero line. Matplotlib is used through `Figure` objects, never pyplot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D

from incognita.access.figures.figure_inputs import Stats
from incognita.access.figures.figure_style import MODEL_COLORS
from incognita.access.stats.report import scripted_population


def new_figure(size: tuple[float, float]) -> Figure:
    """A figure whose constrained layout leaves a margin at the edges for outside labels."""
    return Figure(figsize=size, layout=ConstrainedLayoutEngine(w_pad=0.12, h_pad=0.1))


def figure_title(fig: Figure, stats: Stats, title: str, **kwargs) -> None:
    """The figure's title; when any evaluated agent is scripted, a second line says so, so that a
    figure taken out of its report cannot be mistaken for a result about language models. A
    figure of one domain, or pooled over several, says which on the title line."""
    if stats.scope:
        title += f" [{stats.scope}]"
    if scripted_population(stats["success"]):
        title += "\nOffline scripted agents, not language models: this tests the pipeline, not any model."
    fig.suptitle(title, **kwargs)


def model_color(stats: Stats, model: str) -> str:
    return MODEL_COLORS[stats.models.index(model) % len(MODEL_COLORS)]


def no_data(ax: Axes, what: str) -> None:
    ax.text(
        0.5,
        0.5,
        f"no {what} in the statistics",
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="0.4",
        style="italic",
    )
    ax.set_xticks([])
    ax.set_yticks([])


def interval_rows(ax: Axes, y: np.ndarray, df: pd.DataFrame, color: str, filled: bool) -> None:
    """Point estimate with its 95% interval, one horizontal line per row; hollow for a secondary variant."""
    ax.hlines(y, df["ci_low"], df["ci_high"], color=color, lw=2 if filled else 1.2, alpha=1 if filled else 0.7)
    ax.plot(df["mean_diff"], y, "o", color=color, mfc=color if filled else "white", ms=6 if filled else 5, ls="none")


def zero_line(ax: Axes) -> None:
    ax.axvline(0, color="0.3", lw=0.9, ls="--", zorder=0)


def model_legend(stats: Stats, models: Sequence[str]) -> list[Line2D]:
    return [Line2D([], [], color=model_color(stats, m), marker="o", lw=2, label=m) for m in models]
