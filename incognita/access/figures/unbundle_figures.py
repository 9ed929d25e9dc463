"""Figure 8 (an addition to the paper, issue #28): the social arm unbundled. Each arm that
changes one component of the social bundle, placed between social (0) and indirect (1) by the
share of the gap it recovers, per model, with the paired interval of its difference from
social; beside it, separated model pairs per arm and the outcome composition per arm.

Drawn only when the statistics stage wrote `unbundling.csv` (a config with an `exploratory`
block; incognita.access.stats.exploratory). Every number on it is exploratory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from incognita.access.figures.figure_drawing import figure_title, model_color, new_figure, no_data
from incognita.access.figures.figure_inputs import Stats, read_stats_table
from incognita.access.figures.figure_style import OTHER_OUTCOME, OUTCOMES, arm_label

UNBUNDLING = "unbundling"
_NUMERIC = ("success", "diff", "diff_low", "diff_high", "gap", "gap_low", "gap_high")
_NUMERIC += ("recovered", "recovered_low", "recovered_high")
UNBUNDLING_INPUT = (("model", "arm", "from_arm", "to_arm", *_NUMERIC), _NUMERIC)  # (columns, numeric)


def read_unbundling(stats_dir: Path) -> pd.DataFrame | None:
    """The unbundling table, or None when the design has none."""
    path = Path(stats_dir) / f"{UNBUNDLING}.csv"
    return read_stats_table(path, *UNBUNDLING_INPUT) if path.is_file() else None


def fig8_unbundle(stats: Stats, table: pd.DataFrame) -> Figure:
    arms = list(dict.fromkeys(table["arm"]))
    ends = (str(table["from_arm"].iloc[0]), str(table["to_arm"].iloc[0])) if len(table) else ("from", "to")
    fig = new_figure((16, 1.1 * max(len(arms), 3) + 3.2))
    figure_title(
        fig,
        stats,
        f"Figure 8 (exploratory). The {ends[0]} arm unbundled: how much of the {ends[1]} - {ends[0]} gap "
        "each changed component recovers",
        fontweight="bold",
    )
    ax_gap, ax_sep, ax_comp = fig.subplots(1, 3, width_ratios=[2.2, 1, 1.6])
    _recovered(stats, ax_gap, table, arms, ends)
    order = [ends[0], *arms, ends[1]]
    _separated(stats, ax_sep, order)
    _composition(stats, ax_comp, order)
    return fig


XLIM = (-0.6, 1.6)  # the share axis: from (0) and to (1) with room on both sides


def _recovered(stats: Stats, ax, table: pd.DataFrame, arms: list[str], ends: tuple[str, str]) -> None:
    """Filled: the model's gap interval excludes zero. Hollow: it does not, so the share is not
    established (it can be very large or negative); a value off the axis is marked at its edge."""
    models = [m for m in stats.models if m in set(table["model"])]
    step = 0.8 / max(len(models), 1)
    for j, model in enumerate(models):
        rows = table[table["model"] == model].set_index("arm").reindex(arms)
        y = np.arange(len(arms)) - 0.4 + step * (j + 0.5)
        x, lo, hi = rows["recovered"].to_numpy(), rows["recovered_low"].to_numpy(), rows["recovered_high"].to_numpy()
        color = model_color(stats, model)
        established = ((rows["gap_low"] > 0) | (rows["gap_high"] < 0)).to_numpy()
        for k, face in ((established, color), (~established, "white")):
            ax.errorbar(
                np.clip(x[k], *XLIM), y[k], xerr=[np.clip(x[k], *XLIM) - np.clip(lo[k], *XLIM),
                np.clip(hi[k], *XLIM) - np.clip(x[k], *XLIM)], fmt="o", color=color, mfc=face, ms=6, capsize=2,
                label=model if face == color else None,
            )  # fmt: skip
        for yi, xi in zip(y, x):
            if not np.isfinite(xi):
                ax.text(0.5, yi, "no gap", color=color, fontsize=8, ha="center", va="center", style="italic")
            elif not XLIM[0] <= xi <= XLIM[1]:
                edge = XLIM[1] if xi > XLIM[1] else XLIM[0]
                ax.text(
                    edge, yi, f" {xi:+.1f} ", color=color, fontsize=7, va="center", ha="right" if xi > 0 else "left"
                )
    for x, text in ((0, arm_label(ends[0])), (1, arm_label(ends[1]))):
        ax.axvline(x, color="0.5", lw=1, ls="--")
        ax.text(x, -0.6, text, ha="center", va="bottom", fontsize=8, color="0.3")
    ax.set_xlim(*XLIM)
    ax.set_yticks(np.arange(len(arms)), [arm_label(a) for a in arms])
    ax.set_ylim(len(arms) - 0.5, -0.75)
    ax.set_xlabel("Share of the gap recovered, (arm - from) / (to - from); hollow: the gap itself is not established")
    ax.set_title(
        "A. Each component between the ends (bars: paired 95% interval of arm - from, over the gap)", fontsize=10
    )
    ax.legend(title="Evaluated model", loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=4, frameon=False)
    ax.grid(axis="x", color="0.9")


def _separated(stats: Stats, ax, order: list[str]) -> None:
    sep = stats["separability"]
    sep = sep[(sep["subset"] == "all") & sep["arm"].isin(order)]
    if sep.empty:
        no_data(ax, "separability")
        return
    pairs = sep.groupby("arm")["excludes_zero"].agg(["sum", "size"]).reindex(order).fillna(0)
    y = np.arange(len(order))
    ax.barh(y, pairs["sum"], color="#56B4E9")
    for yi, (got, total) in zip(y, pairs[["sum", "size"]].to_numpy()):
        ax.text(got, yi, f" {int(got)} of {int(total)}", va="center", fontsize=8)
    ax.set_yticks(y, [arm_label(a) for a in order])
    ax.invert_yaxis()
    ax.set_xlabel("Model pairs whose interval excludes zero")
    ax.set_title("B. Separated model pairs per arm", fontsize=10)


def _composition(stats: Stats, ax, order: list[str]) -> None:
    comp = stats["composition"]
    comp = comp[comp["arm"].isin(order)]
    if comp.empty:
        no_data(ax, "outcomes")
        return
    shares = comp.groupby(["arm", "outcome"])["count"].sum().unstack(fill_value=0).reindex(order).fillna(0)
    shares = shares.div(shares.sum(axis=1).replace(0, 1), axis=0)
    left = np.zeros(len(order))
    outcomes = [o for o in OUTCOMES if o in shares.columns] + [o for o in shares.columns if o not in OUTCOMES]
    for outcome in outcomes:
        label, color = OUTCOMES.get(outcome, OTHER_OUTCOME)
        width = shares[outcome].to_numpy()
        ax.barh(np.arange(len(order)), width, left=left, color=color, label=label if width.any() else None)
        left += width
    ax.set_yticks(np.arange(len(order)), [arm_label(a) for a in order])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("Share of trials (all models)")
    ax.set_title("C. Outcome of every trial per arm", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncols=2, fontsize=7, frameon=False)
