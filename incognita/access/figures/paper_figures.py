"""Figures and tables of the results, drawn only from the statistics stage's CSVs.

`make_figures(stats_dir, out_dir)` reads `results/stats/*.csv` (the contract is in
docs/figures.md) and writes Figures 2-7 as PNG + SVG and Tables 1-2 as CSV + Markdown.
Matplotlib is used through `Figure` objects, never pyplot, so no global backend or figure
registry is touched and rendering is the same on a headless machine.

This module lists the outputs and writes them; the inputs are read in figure_inputs, each
figure is drawn in its group's module (success_figures: 2 and 5, breakdown_figures: 3,
separation_figures: 4 and 7, cost_figures: 6) and the tables in figure_tables. Figure 8
(unbundle_figures) is drawn only when the statistics include the unbundling table.

A design of several domains (`domains`): the figures and tables above from the pooled statistics
(the domain a stratum) under `out_dir`, each domain's from its own statistics under
`out_dir/<domain>/`, every title naming its tasks; and Figure 9 (domain_figures), the domains side
by side. A design of one domain draws the figures once, titled as before, and no Figure 9.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from incognita.access.figures.breakdown_figures import fig3_breakdown
from incognita.access.figures.cost_figures import fig6_cost
from incognita.access.figures.domain_figures import STEM as DOMAINS_STEM
from incognita.access.figures.domain_figures import fig9_domains
from incognita.access.figures.figure_inputs import Stats, load_stats
from incognita.access.figures.figure_tables import write_tables
from incognita.access.figures.separation_figures import fig4_separability, fig7_split_half
from incognita.access.figures.success_figures import fig2_success, fig5_native
from incognita.access.figures.unbundle_figures import fig8_unbundle, read_unbundling
from incognita.access.paths import domain_figures_dir, domain_stats_dir
from incognita.common.plotting import FIGURE_FORMATS, RC, save_figure

FIGURE_STEMS = ("fig2_success", "fig3_breakdown", "fig4_separability", "fig5_native", "fig6_cost", "fig7_split_half")
TABLE_STEMS = ("table1", "table2")
FIGURES: list[str] = [f"{stem}.{ext}" for stem in FIGURE_STEMS for ext in FIGURE_FORMATS] + [
    f"{stem}.{ext}" for stem in TABLE_STEMS for ext in ("csv", "md")
]

FIGURE_BUILDERS: dict[str, Callable[[Stats], Figure]] = {
    "fig2_success": fig2_success,
    "fig3_breakdown": fig3_breakdown,
    "fig4_separability": fig4_separability,
    "fig5_native": fig5_native,
    "fig6_cost": fig6_cost,
    "fig7_split_half": fig7_split_half,
}


def make_figures(stats_dir: Path, out_dir: Path, domains: list[str] | None = None) -> list[Path]:
    """Render every figure and table of `FIGURES` from `stats_dir` into `out_dir`; with several
    `domains`, each domain's too and Figure 9 (module docstring). Returns the paths."""
    if not domains or len(domains) < 2:
        return _draw(load_stats(Path(stats_dir)), Path(stats_dir), Path(out_dir))
    pooled = load_stats(Path(stats_dir), f"pooled over {', '.join(domains)}, domain as stratum")
    per_domain = {d: load_stats(domain_stats_dir(d, stats_dir), f"domain {d}") for d in domains}
    written = _draw(pooled, Path(stats_dir), Path(out_dir))
    for domain, stats in per_domain.items():
        written += _draw(stats, domain_stats_dir(domain, stats_dir), domain_figures_dir(domain, out_dir))
    with matplotlib.rc_context(RC):
        written += save_figure(fig9_domains(pooled, per_domain), Path(out_dir), DOMAINS_STEM)
    return written


def _draw(stats, stats_dir: Path, out_dir: Path) -> list[Path]:
    """Figures 2-7 and Tables 1-2 (and Figure 8 when there is an unbundling table) of one `stats`."""
    unbundling = read_unbundling(stats_dir)  # a design with an exploratory block only; checked before drawing
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with matplotlib.rc_context(RC):
        for stem in FIGURE_STEMS:
            written += save_figure(FIGURE_BUILDERS[stem](stats), out_dir, stem)
    written += write_tables(stats, out_dir)
    assert [p.name for p in written] == FIGURES, "FIGURES and the writers disagree"
    if unbundling is not None:
        with matplotlib.rc_context(RC):
            written += save_figure(fig8_unbundle(stats, unbundling), out_dir, "fig8_unbundle")
    return written
