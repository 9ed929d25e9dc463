"""Figure 9: the design's domains side by side, task success per access condition and model.

One panel per domain, then the pooled tasks (each task weighing the same, the domain a stratum
of the intervals: docs/statistics.md, "Several domains"), on one success axis: bars grouped by arm,
one bar per model in the model colours of the other figures. Drawn from each domain's own
success.csv and the pooled one; no interval, as in Figure 2A (an endpoint carries none). A design
of one domain has nothing to set side by side, so the figure is drawn only for several
(`make_figures` says so in its output).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from matplotlib.figure import Figure

from incognita.access.figures.figure_drawing import figure_title, model_color, model_legend, new_figure
from incognita.access.figures.figure_inputs import Stats, ordered
from incognita.access.figures.figure_style import ARM_ORDER, arm_tick

STEM = "fig9_domains"
POOLED = "pooled"


def _panel(ax, stats: Stats, colours: Stats, arms: list[str], title: str) -> None:
    succ = stats["success"]
    table = succ.pivot_table(index="arm", columns="model", values="success", aggfunc="first")
    models = [m for m in colours.models if m in table.columns]
    x = np.arange(len(arms))
    width = 0.8 / max(len(models), 1)
    for j, model in enumerate(models):
        values = table[model].reindex(arms).to_numpy(dtype=float)
        ax.bar(x + (j - (len(models) - 1) / 2) * width, values, width, color=model_color(colours, model))
    for i, arm in enumerate(arms):
        if arm not in table.index:  # an arm this domain did not run: said, not drawn as zero
            ax.text(i, 0.02, "not run", ha="center", va="bottom", rotation=90, color="0.4", fontsize=8)
    tasks = int(succ["n_tasks"].max()) if len(succ) else 0
    ax.set_title(f"{title} ({tasks} task{'' if tasks == 1 else 's'})")
    ax.set_xticks(x, [arm_tick(a) for a in arms])
    ax.set_ylim(0, 1.02)
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)


def fig9_domains(pooled: Stats, domains: dict[str, Stats]) -> Figure:
    """Success per arm and model: one panel per domain of `domains` (in its order), then pooled."""
    if len(domains) < 2:
        raise ValueError(f"Figure 9 sets several domains side by side; got {len(domains)}")
    arms = list(ordered([a for s in (pooled, *domains.values()) for a in s["success"]["arm"]], ARM_ORDER))
    panels = [*domains.items(), (POOLED, pooled)]
    fig = new_figure((1.2 + (1.0 + 0.75 * len(arms)) * len(panels), 5.2))
    axes = fig.subplots(1, len(panels), sharey=True)
    for ax, (name, stats) in zip(axes, panels):
        title = "every domain's tasks pooled" if name == POOLED else f"domain {name}"
        _panel(ax, stats, pooled, arms, title)
    axes[0].set_ylabel("Task success rate (mean over tasks of repetition means)")
    fig.legend(handles=model_legend(pooled, list(pooled.models)), title="Evaluated model", loc="outside right upper")
    # Its panels name their tasks; the title names none (the pooled statistics' scope is one panel's).
    title = "Figure 9. Task success per access condition and model, domain by domain"
    figure_title(fig, replace(pooled, scope=""), title, fontweight="bold")
    return fig
