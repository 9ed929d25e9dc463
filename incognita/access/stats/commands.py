"""Commands of the statistics stage: every statistic from the trials table, and the power check.

Kept free of pandas/scipy at import time: the CLI imports this module at start-up.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.cells import TRIALS_TABLE, design_models
from incognita.access.stats.power import parse_gap, required_tasks


def config_model_order(config_path: str | Path) -> list[str] | None:
    """Model order of a workflow config: its design's models (incognita.access.cells)."""
    from incognita.common.io import read_yaml

    path = Path(config_path)
    if not path.exists():
        return None
    return list(design_models(read_yaml(path) or {})) or None


def load_trials(path: str | Path):
    """The trials table from Parquet (or CSV), with a clear error when it is missing or unreadable."""
    import pandas as pd

    from incognita.common.io import InputError

    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: trials table not found; build it with the reader stage first")
    try:
        return pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the trials table ({exc})") from None


@click.command("stats")
@click.option("--trials", "trials_path", default=TRIALS_TABLE, show_default=True)
@click.option("--interpretation", "interpretation_path", default="config/interpretation.yaml", show_default=True)
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option(
    "--config",
    "config_path",
    default="config/config.yaml",
    show_default=True,
    help="model order of the tables (design.models, else models); ignored if absent",
)
@click.option("--out", "out_dir", default="results/stats", show_default=True)
@click.option("--splits", type=int, default=4000, show_default=True, help="split-half splits")
@click.option("--seed", type=int, default=20260820, show_default=True, help="split-half seed")
def stats_command(
    trials_path: str, interpretation_path: str, locks_path: str, config_path: str, out_dir: str, splits: int, seed: int
) -> None:
    """Every statistic of the paper from the trials table, as CSV and Markdown under OUT."""
    from incognita.access.stats.stats_stage import run_stats

    trials = load_trials(trials_path)
    order = config_model_order(config_path)
    if order:
        present = set(trials["model"].astype(str))
        order = [m for m in order if m in present] or None
    paths = run_stats(
        trials, Path(interpretation_path), Path(out_dir), locks_path=locks_path, models=order, splits=splits, seed=seed
    )
    click.echo(f"{out_dir}: {len(paths)} files from {len(trials)} trials")


@click.command("power")
@click.option("--sd", type=float, required=True, help="SD of the per-task paired differences")
@click.option("--gap", "gap_text", required=True, help="gap to detect: a decimal (0.093) or a fraction (5/54)")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="two-sided level")
@click.option("--power", "power_", type=float, default=0.8, show_default=True)
@click.option(
    "--resolution",
    type=int,
    default=None,
    help="snap a decimal gap to the nearest multiple of 1/RESOLUTION (54 for 18 tasks x 3 reps)",
)
def power_command(sd: float, gap_text: str, alpha: float, power_: float, resolution: int | None) -> None:
    """Print the number of tasks needed to resolve GAP (paired-t approximation, Table 2)."""
    try:
        gap = parse_gap(gap_text, resolution)
        n = required_tasks(sd, gap, alpha, power_)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    click.echo(n)


COMMANDS = [stats_command, power_command]
