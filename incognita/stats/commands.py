"""Click commands of the statistics stage, for the CLI group to register.

Kept free of pandas/scipy at import time: the CLI imports this module at start-up.
    from incognita.stats.commands import power_command, stats_command
    main.add_command(stats_command); main.add_command(power_command)
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.stats.power import power_command

__all__ = ["power_command", "stats_command"]


def config_model_order(config_path: str | Path) -> list[str] | None:
    """Model order of a workflow config: `design.models` if set, else the keys of `models`."""
    from incognita.common.io import read_yaml

    path = Path(config_path)
    if not path.exists():
        return None
    cfg = read_yaml(path) or {}
    chosen = (cfg.get("design") or {}).get("models")
    return [str(m) for m in (chosen or list(cfg.get("models") or {}))] or None


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
@click.option("--trials", "trials_path", default="results/trials.parquet", show_default=True)
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
    from incognita.stats.run import run_stats

    trials = load_trials(trials_path)
    order = config_model_order(config_path)
    if order:
        present = set(trials["model"].astype(str))
        order = [m for m in order if m in present] or None
    paths = run_stats(
        trials, Path(interpretation_path), Path(out_dir), locks_path=locks_path, models=order, splits=splits, seed=seed
    )
    click.echo(f"{out_dir}: {len(paths)} files from {len(trials)} trials")
