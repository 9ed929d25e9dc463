"""Commands of the figures stage.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option("--stats-dir", default="results/stats", show_default=True, help="the statistics stage's CSVs")
@click.option("--out-dir", default="results/figures", show_default=True)
def figures(stats_dir: str, out_dir: str) -> None:
    """Draw every figure (PNG and SVG) and Tables 1-2 from the statistics stage's CSVs."""
    from incognita.access.figures.paper_figures import make_figures  # matplotlib: imported only when drawing

    paths = make_figures(Path(stats_dir), Path(out_dir))
    click.echo(f"{out_dir}: {len(paths)} files")


COMMANDS = [figures]
