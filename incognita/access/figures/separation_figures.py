"""Figures 4 and 7: does a condition tell the models apart? Every model pair's paired difference
per arm (Figure 4), and split-half reproducibility of the model-pair orderings against the
null of exchanged model labels (Figure 7).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from incognita.access.figures.figure_drawing import figure_title, interval_rows, new_figure, no_data, zero_line
from incognita.access.figures.figure_inputs import Stats, ordered
from incognita.access.figures.figure_style import arm_label

# --- Figure 4: every model pair per arm ----------------------------------------------------


def fig4_separability(stats: Stats) -> Figure:
    sep = stats["separability"]
    arms = list(ordered(sep["arm"], stats.arms))
    pairs = list(dict.fromkeys(zip(sep["model_a"], sep["model_b"])))
    fig = new_figure((3.4 * max(len(arms), 1) + 3.4, 1.6 + 0.45 * max(len(pairs), 4)))
    axes = fig.subplots(1, max(len(arms), 1), squeeze=False, sharex=True)[0]
    figure_title(
        fig,
        stats,
        "Figure 4. Does each condition separate the models? Every model pair, per-task paired "
        "difference in success with its 95% t interval",
        fontweight="bold",
    )
    if not arms:
        no_data(axes[0], "model pairs")
        return fig
    for i, arm in enumerate(arms):
        _pair_panel(sep[sep["arm"] == arm], axes[i], arm, pairs, first=i == 0)
    handles = [
        Line2D([], [], color="#D55E00", marker="o", lw=2, label="interval excludes zero"),
        Line2D([], [], color="0.55", marker="o", lw=2, label="interval includes zero"),
        Line2D(
            [],
            [],
            color="0.4",
            marker="o",
            mfc="white",
            lw=1.2,
            label="discriminating tasks only\n(drops tasks all models solve or all fail)",
        ),
    ]
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    return fig


def _pair_panel(part: pd.DataFrame, ax: Axes, arm: str, pairs: list[tuple[str, str]], first: bool) -> None:
    y_of = {p: i for i, p in enumerate(pairs)}
    counts = []
    for subset, filled, shift in (("all", True, -0.13), ("discriminating", False, 0.13)):
        rows = part[part["subset"] == subset]
        if rows.empty:
            continue
        y = np.array([y_of[(a, b)] for a, b in zip(rows["model_a"], rows["model_b"])]) + shift
        for excl, color in ((True, "#D55E00"), (False, "0.55")):
            sel = (rows["excludes_zero"] == excl).to_numpy()
            if sel.any():
                interval_rows(ax, y[sel], rows[sel], color, filled)
        n = int(rows["n_tasks"].max()) if rows["n_tasks"].notna().any() else 0
        counts.append(
            f"{int(rows['excludes_zero'].sum())} of {len(rows)} separate on {n} {subset} tasks".replace(
                " all tasks", " tasks"
            )
        )
    zero_line(ax)
    ax.set_yticks(np.arange(len(pairs)), [f"{a} − {b}" for a, b in pairs] if first else [])
    ax.set_ylim(len(pairs) - 0.5, -0.5)
    ax.set_title(arm_label(arm) + "\n" + "\n".join(counts), fontsize=9)
    ax.set_xlabel("Success difference,\nfirst − second model")
    if first:
        ax.set_ylabel("Model pair")
    ax.grid(axis="x", color="0.9")


# --- Figure 7: split-half reproducibility -------------------------------------------------------


def fig7_split_half(stats: Stats) -> Figure:
    sh = stats["split_half"]
    arms = list(ordered(sh["arm"], stats.arms))
    n = max(len(arms), 1)
    cols = min(n, 2)
    rows = math.ceil(n / cols)
    fig = new_figure((11, 1.6 + 3.4 * rows))
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    figure_title(
        fig,
        stats,
        "Figure 7. Split-half reproducibility: how often two random halves of the tasks order the "
        "model pairs the same way",
        fontweight="bold",
    )
    k = len(stats.models) * (len(stats.models) - 1) // 2
    for ax, arm in zip(axes, arms):
        _split_panel(ax, sh[sh["arm"] == arm], arm, k)
    for ax in axes[len(arms) :]:
        ax.set_visible(False)
    if not arms:
        axes[0].set_visible(True)
        no_data(axes[0], "split-half draws")
    handles = [Patch(color=c, alpha=0.8, label=lab) for lab, c in SPLIT_KINDS.values()]
    handles.append(Line2D([], [], color="0.3", ls="--", lw=2, label="mean of each distribution"))
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    return fig


def _split_panel(ax: Axes, part: pd.DataFrame, arm: str, k: int) -> None:
    obs = part[part["kind"] == "observed"]["concordance"].dropna().to_numpy()
    null = part[part["kind"] == "null"]["concordance"].dropna().to_numpy()
    both = np.concatenate([obs, null]) if len(obs) + len(null) else np.array([0.0])
    bins = _concordance_bins(both)
    peak = 0.0
    lines = []
    centers, width = (bins[:-1] + bins[1:]) / 2, np.diff(bins)
    for kind, data, side in (("null", null, -1), ("observed", obs, 1)):
        color = SPLIT_KINDS[kind][1]
        if len(data):
            shares = np.histogram(data, bins=bins)[0] / len(data)
            # the two distributions side by side within each bin, so neither hides the other
            ax.bar(centers + side * width * 0.2, shares, width=width * 0.4, color=color, alpha=0.8)
            peak = max(peak, float(shares.max()))
            ax.axvline(data.mean(), color=color, lw=2, ls="--")
            lines.append(f"{kind} mean {data.mean():.2f} ({len(data)} splits)")
    if len(obs) and len(null):
        lines.append(f"null splits reaching the observed mean: {np.mean(null >= obs.mean() - 1e-12):.1%}")
    ax.text(
        0.02,
        0.97,
        "\n".join(lines) or "no draws",
        transform=ax.transAxes,
        va="top",
        fontsize=8,
        bbox={"fc": "white", "ec": "0.8", "alpha": 0.9},
    )
    ax.set_ylim(0, max(peak, 0.01) * 1.45)  # headroom keeps the summary box clear of the bars
    ax.set_title(arm_label(arm))
    unit = "share of the pairwise orderings" if both.max() <= 1 else f"pairwise orderings, of {k}"
    ax.set_xlabel(f"Model-pair orderings on which the two halves agree ({unit})")
    ax.set_ylabel("Share of splits")
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)


SPLIT_KINDS = {
    "null": ("null: model labels exchanged within each task", "0.55"),
    "observed": ("observed: random halves of the real tasks", "#0072B2"),
}


def _concordance_bins(values: np.ndarray) -> np.ndarray:
    """One bar per attainable value when the statistic is discrete, otherwise 30 even bins."""
    distinct = np.unique(values)
    if len(distinct) <= 30:
        step = np.min(np.diff(distinct)) if len(distinct) > 1 else 1.0
        return np.arange(distinct.min() - step / 2, distinct.max() + step, step)
    return np.linspace(values.min(), values.max(), 31)
