"""Commands of the figures stage.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option("--stats-dir", default="results/stats", show_default=True, help="the statistics stage's CSVs")
@click.option("--out-dir", default="results/figures", show_default=True)
@click.option(
    "--domains",
    "domains_csv",
    default=None,
    help="the design's domains, comma-separated; with several, each domain's figures (from STATS_DIR/<domain>/) "
    "go under OUT_DIR/<domain>/ and Figure 9 sets them side by side",
)
def figures(stats_dir: str, out_dir: str, domains_csv: str | None) -> None:
    """Draw every figure (PNG and SVG) and Tables 1-2 from the statistics stage's CSVs."""
    from incognita.access.figures.paper_figures import make_figures  # matplotlib: imported only when drawing

    domains = [d for d in (domains_csv or "").split(",") if d]
    paths = make_figures(Path(stats_dir), Path(out_dir), domains)
    click.echo(f"{out_dir}: {len(paths)} files")
    if len(domains) < 2:
        # Figure 9 sets domains side by side; with one there is nothing beside it.
        click.echo("Figure 9 (the domains side by side) not drawn: a design of one domain has nothing to set beside it")


COMMANDS = [figures]
