"""`run_stats`: every table of the statistics stage, written as CSV and Markdown.

A design of several domains gets the tables twice over: pooled under the output folder, every
domain's tasks together with the domain as a stratum (incognita.access.stats.estimator), and each
domain's own under `<out>/<domain>/` (incognita.access.paths.domain_stats_dir). A design of one
domain writes the pooled tables only, which are then that domain's.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from incognita.access.paths import domain_stats_dir
from incognita.access.stats import paper_tables as T
from incognita.access.stats.estimator import (
    COUNT_MEASURES,
    PROCESS_MEASURES,
    arms_present,
    domain_of,
    model_order,
    task_means,
    validate_trials,
)
from incognita.access.stats.exploratory import exploratory_table, unbundling_table
from incognita.access.stats.exploratory_spec import ExploratorySpec
from incognita.access.stats.fidelity_tables import attribution_table, participant_fidelity_table
from incognita.access.stats.interpretation import load_design_interpretation
from incognita.access.stats.report import primary_markdown
from incognita.access.stats.splithalf import DEFAULT_SEED, DEFAULT_SPLITS
from incognita.access.stats.viewer_links import with_links
from incognita.common.io import InputError, atomic_write_text
from incognita.common.tables import write_table


def _split_half_md(split_half: pd.DataFrame) -> pd.DataFrame:
    """The split-half distributions as frequencies: one row per (arm, kind, concordance)."""
    freq = (
        split_half.astype({"concordance": int})
        .groupby(["arm", "kind", "concordance"], sort=False)
        .size()
        .rename("splits")
        .reset_index()
    )
    arm_order = {arm: i for i, arm in enumerate(dict.fromkeys(split_half["arm"]))}
    return freq.sort_values(
        ["arm", "kind", "concordance"],
        key=lambda c: c.map(arm_order) if c.name == "arm" else c,
        kind="stable",
        ignore_index=True,
    )


def build_tables(
    trials: pd.DataFrame,
    interp,
    models: list[str] | None = None,
    splits: int = DEFAULT_SPLITS,
    seed: int = DEFAULT_SEED,
    exploratory: ExploratorySpec | None = None,
) -> dict[str, pd.DataFrame | str]:
    """Every output in memory: table name -> DataFrame, plus `primary` -> the Markdown report;
    with an exploratory spec, its two tables too (incognita.access.stats.exploratory)."""
    trials = validate_trials(trials)
    if trials.empty:
        raise InputError("trials: the table has no rows")
    models = model_order(trials, models)
    arms = arms_present(trials)
    means = {scope: task_means(trials, col) for scope, col in T.SCOPES.items()}
    out: dict[str, pd.DataFrame | str] = {}
    out["success"] = T.success_table(trials, means, arms, models, interp)
    out["contrasts"] = T.contrasts_table(means, models, interp)
    out["separability"], out["separability_summary"] = T.separability_tables(
        means["all"], arms, models, interp.confidence
    )
    out["interactions"] = T.interactions_table(means["all"], models, interp)
    out["dispersion"] = T.dispersion_table(means["all"], models, interp)
    out["split_half"], out["split_half_summary"] = T.split_half_tables(means["all"], arms, models, splits, seed)
    out["composition"] = T.composition_table(trials, arms, models)
    out["process"] = T.measures_table(trials, arms, models, PROCESS_MEASURES)
    out["counts"] = T.measures_table(trials, arms, models, COUNT_MEASURES)
    out["cost"] = T.cost_table(trials, arms, models)
    out["power"] = T.power_table(trials, means["all"], arms, models)
    out["audit_reads"] = T.audit_reads_table(trials, arms, models)
    out["audit_approach"] = T.audit_approach_table(trials, arms, models)
    out["acquisition"] = T.acquisition_table(trials, arms, models)
    out["information_channel"] = T.information_channel_table(trials, arms, models)
    out["participant_fidelity"] = participant_fidelity_table(trials, arms, models)
    out["attribution"] = attribution_table(trials, arms, models)
    if exploratory is not None and not exploratory.empty:
        missing = sorted(exploratory.arms - set(arms))
        if missing:
            raise InputError(f"exploratory: arm(s) {', '.join(missing)} have no trials")
        out["exploratory"] = exploratory_table(means, models, interp.confidence, exploratory)
        out["unbundling"] = unbundling_table(means["all"], arms, models, interp.confidence, exploratory)
    out["primary"] = primary_markdown(
        interp,
        out["success"],
        out["contrasts"],
        out["separability_summary"],
        out["interactions"],
        out["dispersion"],
        out["split_half_summary"],
    )
    return out


def split_domains(trials: pd.DataFrame, domains: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """The trials of each domain, in the order of `domains` (default: the table's, by name).

    Every task must belong to one of `domains`, and every one of them must have trials: a trials
    table from another design stops here, naming the task or the domain."""
    found = trials["task"].astype(str).map(domain_of)
    if domains is None:
        domains = sorted(set(found))
    stray = trials.loc[~found.isin(domains), "task"]
    if len(stray):
        raise InputError(f"trials: task {stray.iloc[0]!r} is of no design domain ({', '.join(domains)})")
    empty = [d for d in domains if not (found == d).any()]
    if empty:
        raise InputError(f"trials: design domain(s) {', '.join(empty)} have no trials")
    return {d: trials[(found == d).to_numpy()] for d in domains}


def write_tables(tables: dict[str, pd.DataFrame | str], out_dir: Path, domain: str | None = None) -> list[Path]:
    """Write every table as CSV and Markdown (`domain`: they are that domain's own)."""
    paths: list[Path] = []
    for name, table in tables.items():
        if isinstance(table, str):
            path = out_dir / f"{name}.md"
            atomic_write_text(path, table)
            paths.append(path)
        else:
            # 8 x 4000 rows do not read as Markdown; other tables link their rows to the viewer.
            md = _split_half_md(table) if name == "split_half" else with_links(name, table, domain)
            paths += write_table(table, out_dir, name, md)
    return paths


def run_stats(
    trials: pd.DataFrame,
    interpretations: list[tuple[Path, Path]],
    out_dir: Path,
    *,
    models: list[str] | None = None,
    splits: int = DEFAULT_SPLITS,
    seed: int = DEFAULT_SEED,
    exploratory: ExploratorySpec | None = None,
    domains: list[str] | None = None,
) -> list[Path]:
    """Verify the interpretation tables' locks, compute every table, write them; return the paths.

    `interpretations`: each design domain's interpretation table and locks file (they must agree:
    interpretation.load_design_interpretation); `models` fixes the model order of every table
    (default: order of first appearance in `trials`); `domains`: the design's (default: those of
    the table's tasks). With several, each domain's tables go under `<out_dir>/<domain>/` too.
    """
    interp = load_design_interpretation(interpretations)
    trials = validate_trials(trials)
    by_domain = split_domains(trials, domains)
    out_dir = Path(out_dir)
    paths = write_tables(build_tables(trials, interp, models, splits, seed, exploratory), out_dir)
    if len(by_domain) > 1:
        for domain, part in by_domain.items():
            order = [m for m in models if m in set(part["model"].astype(str))] if models else None
            tables = build_tables(part, interp, order, splits, seed, exploratory)
            paths += write_tables(tables, domain_stats_dir(domain, out_dir), domain)
    return paths
