"""Commands of the statistics stage: every statistic from the trials table, and the power check.

Kept free of pandas/scipy at import time: the CLI imports this module at start-up.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from incognita.access.cells import design_models
from incognita.access.paths import STATS_DIR, TRIALS_TABLE
from incognita.access.stats.power import parse_gap, required_tasks


def read_config(config_path: str | Path) -> dict:
    """A workflow config as written ({} when the file does not exist: the options it gives are optional)."""
    from incognita.common.io import read_yaml

    path = Path(config_path)
    return (read_yaml(path) or {}) if path.exists() else {}


def config_model_order(config: dict) -> list[str] | None:
    """Model order of a workflow config: its design's models (incognita.access.cells)."""
    return list(design_models(config)) or None


def check_design_arms(trials, arms: list[str] | None, where: str) -> None:
    """Every arm of the trials table is an arm of the design: a trials table from another
    design, or a misspelt arm, stops here."""
    from incognita.common.io import InputError

    unknown = sorted(set(trials["arm"].astype(str)) - set(arms or ()))
    if arms and unknown:
        raise InputError(f"trials: arm: {', '.join(unknown)} not in {where} ({', '.join(arms)})")


def config_arms(config: dict) -> list[str] | None:
    """design.arms of a workflow config, None when it has none."""
    from incognita.access.cells import design_arms

    return list(design_arms(config)) if "design" in config else None


def _exploratory(text: str | None, config: dict):
    """The exploratory spec from --exploratory, else from the config's `exploratory` block."""
    from incognita.access.stats.exploratory_spec import spec_from_doc
    from incognita.common.io import InputError

    if text:
        try:
            return spec_from_doc(json.loads(text), None, "--exploratory")
        except json.JSONDecodeError as exc:
            raise InputError(f"--exploratory: not JSON ({exc.msg}): {text[:120]!r}") from None
    return spec_from_doc(config.get("exploratory"), None)


def _domains(text: str | None, config: dict) -> list[str] | None:
    """The design's domains from --domains, else --config's, else None (the trials table's)."""
    from incognita.access.cells import design_domains

    if text:
        return [d for d in text.split(",") if d]
    return list(design_domains(config)) if "domains" in config else None


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
@click.option(
    "--interpretation",
    "interpretation_paths",
    multiple=True,
    help="each design domain's interpretation table, paired in order with --locks (default: the --config's domains')",
)
@click.option(
    "--locks", "locks_paths", multiple=True, help="the domain's locks file of the --interpretation at its position"
)
@click.option(
    "--config",
    "config_path",
    default="config/config.yaml",
    show_default=True,
    help="model order of the tables (design.models, else models) and the design's arms; ignored if absent",
)
@click.option("--models", "models_csv", default=None, help="the design's models, in order (overrides --config's)")
@click.option("--arms", "arms_csv", default=None, help="the design's arms (overrides --config's)")
@click.option(
    "--exploratory",
    "exploratory_json",
    default=None,
    help="JSON of the config's exploratory block (contrasts, unbundle); default: --config's, if any",
)
@click.option(
    "--domains",
    "domains_csv",
    default=None,
    help="the design's domains, comma-separated (default: --config's, else the trials table's); with several, "
    "each domain's own tables go under OUT/<domain>/ beside the pooled ones",
)
@click.option("--out", "out_dir", default=STATS_DIR, show_default=True)
@click.option("--splits", type=int, default=4000, show_default=True, help="split-half splits")
@click.option("--seed", type=int, default=20260820, show_default=True, help="split-half seed")
def stats_command(
    trials_path: str,
    interpretation_paths: tuple[str, ...],
    locks_paths: tuple[str, ...],
    config_path: str,
    models_csv: str | None,
    arms_csv: str | None,
    exploratory_json: str | None,
    domains_csv: str | None,
    out_dir: str,
    splits: int,
    seed: int,
) -> None:
    """Every statistic of the paper from the trials table, as CSV and Markdown under OUT."""
    from incognita.access.stats.stats_stage import run_stats

    trials, config = load_trials(trials_path), read_config(config_path)
    # The workflow passes the design's models and arms (a --configfile may change them); by
    # hand, a config file gives them.
    if arms_csv:
        check_design_arms(trials, [a for a in arms_csv.split(",") if a], "--arms")
    else:
        check_design_arms(trials, config_arms(config), f"{config_path}'s design.arms")
    order = [m for m in models_csv.split(",") if m] if models_csv else config_model_order(config)
    if order:
        present = set(trials["model"].astype(str))
        order = [m for m in order if m in present] or None
    if len(interpretation_paths) != len(locks_paths):
        raise click.UsageError(
            f"{len(interpretation_paths)} --interpretation but {len(locks_paths)} --locks: pair them"
        )
    tables = list(zip(map(Path, interpretation_paths), map(Path, locks_paths)))
    if not tables:
        from incognita.access.cells import design_files

        tables = [(f.interpretation, f.locks) for f in design_files(config).values()] if "domains" in config else []
    paths = run_stats(
        trials,
        tables,
        Path(out_dir),
        models=order,
        splits=splits,
        seed=seed,
        exploratory=_exploratory(exploratory_json, config),
        domains=_domains(domains_csv, config),
    )
    click.echo(f"{out_dir}: {len(paths)} files from {len(trials)} trials")


@click.command("power")
@click.option("--sd", type=float, default=None, help="SD of the per-task paired differences")
@click.option("--gap", "gap_text", default=None, help="gap to detect: a decimal (0.093) or a fraction (5/54)")
@click.option(
    "--trials",
    "trials_path",
    default=None,
    help="instead of --sd and --gap: Table 2 per arm from this trials table, every design domain's tasks "
    "pooled with the domain as a stratum",
)
@click.option(
    "--config",
    "config_path",
    default="config/config.yaml",
    show_default=True,
    help="with --trials: the design's domains and model order",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="two-sided level")
@click.option("--power", "power_", type=float, default=0.8, show_default=True)
@click.option(
    "--resolution",
    type=int,
    default=None,
    help="snap a decimal gap to the nearest multiple of 1/RESOLUTION (54 for 18 tasks x 3 reps)",
)
def power_command(
    sd: float | None,
    gap_text: str | None,
    trials_path: str | None,
    config_path: str,
    alpha: float,
    power_: float,
    resolution: int | None,
) -> None:
    """Print the number of tasks needed to resolve GAP (paired-t approximation, Table 2); with
    --trials, Table 2 itself (per arm: gap SD, largest gap, tasks) from a trials table."""
    if trials_path is not None:
        if sd is not None or gap_text is not None:
            raise click.UsageError("give either --trials or --sd with --gap, not both")
        click.echo(_power_from_trials(trials_path, config_path, alpha, power_), nl=False)
        return
    if sd is None or gap_text is None:
        raise click.UsageError("give --sd and --gap (or --trials)")
    try:
        gap = parse_gap(gap_text, resolution)
        n = required_tasks(sd, gap, alpha, power_)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    click.echo(n)


def _power_from_trials(trials_path: str, config_path: str, alpha: float, power_: float) -> str:
    """Table 2 from a trials table as the statistics stage computes it (paper_tables.power_table):
    every task of the design's domains, the domain a stratum of each pairwise SD."""
    from incognita.access.stats import paper_tables as T
    from incognita.access.stats.estimator import arms_present, model_order, task_means, validate_trials
    from incognita.access.stats.stats_stage import split_domains
    from incognita.common.tables import to_markdown

    config = read_config(config_path)
    trials = validate_trials(load_trials(trials_path), trials_path)
    by_domain = split_domains(trials, _domains(None, config))  # refuses a task of no design domain
    order = config_model_order(config)
    models = model_order(trials, [m for m in order if m in set(trials["model"].astype(str))] if order else None)
    table = T.power_table(trials, task_means(trials, T.SUCCESS), arms_present(trials), models, alpha, power_)
    domains = ", ".join(f"{d or '(no domain)'} {part['task'].nunique()}" for d, part in by_domain.items())
    head = f"{trials_path}: tasks per domain {domains}; {power_:.0%} power, two-sided alpha {alpha:g}\n\n"
    return head + to_markdown(table)


COMMANDS = [stats_command, power_command]
