"""Figures 2 and 5: task success per model and condition, and the paired differences between
conditions (indirect − social, direct − indirect; native − direct for the native anchor),
each with its 95% interval and the frozen decision of the statistics stage.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import blended_transform_factory

from incognita.access.figures.figure_drawing import (
    figure_title,
    interval_rows,
    model_color,
    new_figure,
    no_data,
    zero_line,
)
from incognita.access.figures.figure_inputs import Stats, ordered
from incognita.access.figures.figure_style import ARM_ORDER, CONDITIONS, CONTRASTS, arm_label, arm_tick, fmt_signed
from incognita.access.taxonomy import DIRECT, INDIRECT, NATIVE, SOCIAL, arm_record

# --- Figure 2: success and the paired differences ------------------------------------------------


def fig2_success(stats: Stats) -> Figure:
    fig = new_figure((14, 5.6))
    ax_s, ax_d = fig.subplots(1, 2, width_ratios=[1, 1.25])
    figure_title(
        fig,
        stats,
        "Figure 2. Task success by model and access condition, and the paired differences between "
        "neighbouring conditions",
        fontweight="bold",
    )
    _success_slopes(stats, ax_s)
    _contrast_forest(stats, ax_d, (f"{INDIRECT}-{SOCIAL}", f"{DIRECT}-{INDIRECT}"))
    ax_d.set_title("B. Paired differences per model (per-task differences, 95% t interval)")
    return fig


def _success_slopes(stats: Stats, ax: Axes) -> None:
    succ = stats["success"]
    # The conditions first, then any other registered arm; native is drawn in its own panel.
    arms = [a for a in ordered(succ["arm"], CONDITIONS) if a != NATIVE] or list(ordered(succ["arm"], ARM_ORDER))
    table = succ.pivot_table(index="model", columns="arm", values="success", aggfunc="first")
    x = np.arange(len(arms))
    for m in [m for m in stats.models if m in table.index]:
        ax.plot(x, table.loc[m].reindex(arms).to_numpy(), "-o", color=model_color(stats, m), lw=2, ms=7, label=m)
    ax.set_xticks(x, [arm_tick(a) for a in arms])
    ax.set_xlim(-0.3, len(arms) - 0.7)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("Task success rate (mean over tasks of repetition means)")
    ax.set_xlabel("Access condition")
    ax.set_title("A. Success per model (no error bars: see B)")
    ax.grid(axis="y", color="0.9")
    ax.legend(title="Evaluated model", loc="best", frameon=True, framealpha=0.9)


def _contrast_forest(stats: Stats, ax: Axes, contrasts: Sequence[str]) -> None:
    con = stats["contrasts"]
    con = con[con["contrast"].isin(contrasts)]
    models = [m for m in stats.models if m in set(con["model"])]
    if not models:
        no_data(ax, " / ".join(contrasts) + " contrasts")
        return
    step = 0.8 / max(len(contrasts), 1)
    handles, db_drawn = [], False
    for k, name in enumerate(contrasts):
        label, color = CONTRASTS.get(name, (name, "0.3"))
        drawn = False
        for scope, filled, shift in (("all", True, -step * 0.18), ("db_only", False, step * 0.22)):
            part = con[(con["contrast"] == name) & (con["scope"] == scope)].set_index("model").reindex(models)
            y = np.arange(len(models)) + (k - (len(contrasts) - 1) / 2) * step + shift
            ok = part["mean_diff"].notna().to_numpy()
            if ok.any():
                interval_rows(ax, y[ok], part[ok], color, filled)
                drawn = True
                db_drawn |= not filled
                if filled:
                    _annotate_intervals(ax, y[ok], part[ok], color)
        if drawn:
            handles.append(Line2D([], [], color=color, marker="o", lw=2, label=label))
    if db_drawn:
        handles.append(
            Line2D([], [], color="0.4", marker="o", mfc="white", lw=1.2, label="same contrast, database checks only")
        )
    zero_line(ax)
    ax.set_yticks(np.arange(len(models)), models)
    ax.set_ylim(len(models) - 0.5, -0.5)
    ax.set_ylabel("Evaluated model")
    ax.set_xlabel("Difference in task success rate (positive: the first condition succeeds more)")
    ax.grid(axis="x", color="0.9")
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=len(handles), frameon=False, fontsize=8
    )


def short_decision(text: str) -> str:
    """The head of a decision ("insufficient evidence (the interval ...)" -> "insufficient evidence").

    The full wording stays in contrasts.csv and primary.md; the figure has room for the verdict only.
    """
    return str(text).split(" (")[0].split(";")[0].strip()


def _annotate_intervals(ax: Axes, y: np.ndarray, df: pd.DataFrame, color: str) -> None:
    """Estimate, interval and the frozen table's decision, printed right of the plot area."""
    where = blended_transform_factory(ax.transAxes, ax.transData)
    for yi, r in zip(y, df.itertuples()):
        decision = "" if pd.isna(r.decision) else f"  {short_decision(r.decision)}"
        ax.text(
            1.02,
            yi,
            f"{fmt_signed(r.mean_diff, 2)} [{fmt_signed(r.ci_low, 2)}, {fmt_signed(r.ci_high, 2)}]{decision}",
            transform=where,
            va="center",
            fontsize=7.5,
            color=color,
        )


# --- Figure 5: the native anchor ---------------------------------------------------------------


def fig5_native(stats: Stats) -> Figure:
    fig = new_figure((13, 2.4 + 0.6 * max(len(stats.models), 3)))
    ax_s, ax_d = fig.subplots(1, 2, width_ratios=[1, 1.2])
    figure_title(
        fig,
        stats,
        "Figure 5. The native anchor: the unmodified upstream harness against centralized direct access, per model",
        fontweight="bold",
    )
    succ = stats["success"]
    table = succ.pivot_table(index="model", columns="arm", values="success", aggfunc="first")
    models = [m for m in stats.models if m in table.index]
    y = np.arange(len(models))
    # the two settings sit slightly apart so equal values stay visible
    for arm, marker, dy in ((DIRECT, "s", -0.12), (NATIVE, "D", 0.12)):
        color = arm_record(arm).color
        if arm in table.columns:
            ax_s.plot(table[arm].reindex(models), y + dy, marker, color=color, ms=8, ls="none", label=arm_label(arm))
            for yi, v in zip(y + dy, table[arm].reindex(models)):
                if np.isfinite(v):
                    ax_s.annotate(
                        f"{v:.2f}",
                        (v, yi),
                        xytext=(-8, 0),
                        textcoords="offset points",
                        ha="right",
                        va="center",
                        fontsize=7.5,
                        color=color,
                    )
    ax_s.set_yticks(y, models)
    ax_s.set_ylim(len(models) - 0.5, -0.5)
    ax_s.set_xlim(-0.02, 1.02)
    ax_s.set_xlabel("Task success rate (mean over tasks of repetition means)")
    ax_s.set_ylabel("Evaluated model")
    ax_s.set_title("A. Success in each setting")
    ax_s.grid(axis="x", color="0.9")
    ax_s.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2, frameon=False, fontsize=8)
    _contrast_forest(stats, ax_d, (f"{NATIVE}-{DIRECT}",))
    ax_d.set_title("B. Native − direct, per-task paired difference (95% t interval)")
    ax_d.set_ylabel("")
    return fig
