"""Commands of the reader stage: the trials table.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

import click


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--episodes",
    "episodes_dir",
    default="results/episodes",
    show_default=True,
    help="read every {arm}/{model}/{task}/r{rep}.json here when no PATHS are given",
)
@click.option("--reference", "reference_path", default="results/reference/coordination.json", show_default=True)
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option("--out", default="results/trials.parquet", show_default=True)
@click.option("--csv", "csv_path", default="results/trials.csv", show_default=True)
@click.option("--validation", "validation_path", default="results/stats/reader_validation.csv", show_default=True)
@click.option(
    "--labelled",
    "labelled_dir",
    default="config/reader_validation",
    show_default=True,
    help="the hand-labelled trajectories the reader is checked against ('none' to skip)",
)
def trials(paths, episodes_dir, reference_path, locks_path, out, csv_path, validation_path, labelled_dir) -> None:
    """Read episode records and native results (PATHS, told apart by content) against the frozen
    reference: one row per trial, plus the reader's validation (hand-labelled trajectories, then
    the injected failure types of the scripted agents)."""
    from incognita.access.reader.reader_stage import run_reader

    labelled = None if labelled_dir == "none" else labelled_dir
    for line in run_reader(paths, episodes_dir, reference_path, locks_path, out, csv_path, validation_path, labelled):
        click.echo(line)


COMMANDS = [trials]
