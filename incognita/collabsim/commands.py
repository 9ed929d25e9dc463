"""`incognita collabsim ...`: the commands the CollabSim rules call, and that users call."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from incognita.collabsim import paths
from incognita.common.fan_out import workers_option
from incognita.common.io import InputError
from incognita.common.pacing import pacing_option


def parse_seeds(text: str) -> list[int]:
    """'1-5' or '1,2,7' -> seeds."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            seeds += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    except ValueError:
        raise InputError(f"--seeds: expected '1-5' or '1,2,7', got {text!r}") from None
    return seeds


def parse_models(text: str | None, pacing: dict | None = None) -> dict | None:
    """--models: {role or "*": ModelEntry}, each entry with its settings from --pacing put back
    (incognita.common.backends.entry); None for "none"."""
    from incognita.common.backends.entry import ModelEntry

    if text in (None, "", "none", "null"):
        return None
    try:
        models = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"--models: not JSON ({exc.msg})") from None
    if not isinstance(models, dict):
        raise InputError('--models: expected a JSON object {role or "*": model entry}')
    return {role: ModelEntry.parse(e, f"--models {role}").with_pacing(pacing or {}) for role, e in models.items()}


@click.group("collabsim")
def collabsim() -> None:
    """CollabSim: four collaboration paradigms under controlled conditions (docs/collabsim.md)."""


@collabsim.command("run")
@click.argument("experiment", type=click.Path(dir_okay=False))
@click.option("--seeds", default="1-5", show_default=True, help="'1-5' or '1,2,7'")
@click.option(
    "--models", "models_json", default=None, help='JSON {role or "*": model entry} replacing the file\'s models'
)
@click.option("--model-label", default="scripted", show_default=True, help="the models' label in the run path")
@click.option(
    "--design",
    type=click.Choice(["persona", "theory"]),
    default=None,
    help="agent design (default: the file's, else persona)",
)
@click.option(
    "--out-root",
    default=paths.RESULTS,
    show_default=True,
    help="runs go to <out-root>/runs/<task>/<condition>/<model label>/<design>/s<seed>/",
)
@workers_option("model calls of a run")
@pacing_option()
def run_cmd(
    experiment: str,
    seeds: str,
    models_json: str | None,
    model_label: str,
    design: str | None,
    out_root: str,
    workers: int,
    pacing: dict,
) -> None:
    """Run one experiment file (a baseline or a condition) for each seed."""
    from incognita.collabsim.run import RunFailed, default_workers, refuse_failed, simulate, write_error, write_run
    from incognita.collabsim.world.experiment import load_experiment

    exp = load_experiment(experiment, parse_models(models_json, pacing), design)
    cell = paths.Cell(exp.task, exp.condition, model_label, exp.design)
    workers = workers or default_workers(exp)
    for seed in parse_seeds(seeds):  # before any call: a retried job stops at once
        refuse_failed(cell.run(seed).dir(out_root))
    for seed in parse_seeds(seeds):
        start = time.perf_counter()
        out = cell.run(seed).dir(out_root)
        try:
            result = simulate(exp, seed, model_label=model_label, workers=workers)
        except RunFailed as exc:
            record = write_error(exc, exp, cell.run(seed), out)
            click.echo(
                f"error: {exp.task}/{exp.condition} s{seed} stopped at step {exc.step} after {exc.answered} answered "
                f"calls: {exc.error} (error record: {record}; the run is not retried while it is there)",
                err=True,
            )
            raise SystemExit(2) from None
        write_run(result, out)
        click.echo(
            f"{exp.task}/{exp.condition} s{seed}: {len(result.events)} events, {result.manifest['steps']} steps, "
            f"state {result.manifest['state_hash'][:12]}, {time.perf_counter() - start:.2f} s -> {out}"
        )


@collabsim.command("check")
@click.option("--config", "config_path", default="config/config.yaml", show_default=True)
def check_cmd(config_path: str) -> None:
    """Load every experiment of the config's CollabSim design (schemas, models, prompts)."""
    from incognita.collabsim.design import design_from_config
    from incognita.common.io import read_yaml

    design = design_from_config(read_yaml(config_path) or {})
    for cell in design.cells():
        exp = design.load(cell)
        click.echo(
            f"{cell.task}/{cell.condition}/{cell.model}/{cell.design}: {len(exp.agents)} agents, "
            f"{exp.variable}, probe {exp.probe.cadence}, config {exp.config_hash[:12]}"
        )


@collabsim.command("estimate")
@click.option("--config", "config_path", default="config/collabsim/paper.yaml", show_default=True)
@click.option(
    "--prices", "prices_path", default=None, help="price table (default: the config's, else config/prices.yaml)"
)
def estimate_cmd(config_path: str, prices_path: str | None) -> None:
    """Model calls (turns and probes), tokens and cost of the config's CollabSim design, per model
    label and task, before anything is paid (the design is simulated with scripted stand-ins)."""
    from incognita.collabsim.call_estimate import estimate
    from incognita.collabsim.design import design_from_config
    from incognita.common.io import read_yaml
    from incognita.common.prices import load_prices, resolve_path

    cfg = read_yaml(config_path) or {}
    design = design_from_config(cfg)
    table = load_prices(resolve_path(prices_path or cfg.get("prices")))
    runs = sum(len(c) for c in design.conditions.values()) * len(design.designs) * len(design.seeds)
    click.echo(
        f"{config_path}: {runs} runs per label ({sum(len(c) for c in design.conditions.values())} conditions x "
        f"{len(design.designs)} designs x {len(design.seeds)} seeds), {len(design.models)} labels; "
        f"stand_ins {'on: the workflow runs them offline' if design.stand_ins else 'off'}"
    )
    click.echo(f"prices: {table.path} version {table.version} (retrieved {table.retrieved})")
    lines, elapsed = estimate(design, table)
    click.echo(
        f"{'label':<20}{'task':<16}{'runs':>5}{'turns':>8}{'probes':>8}{'repeats':>8}{'prompt':>9}{'output':>9}"
        f"{'USD':>10}{'cached':>10}"
    )
    for ln in lines:
        note = "  (offline)" if ln.offline else (f"  (no price: {', '.join(ln.unpriced)})" if ln.unpriced else "")
        click.echo(
            f"{ln.label[:19]:<20}{ln.task:<16}{ln.runs:>5}{ln.turn_calls:>8}{ln.probe_calls:>8}{ln.cache_hits:>8}"
            f"{_tokens(ln.prompt_tokens):>9}{_tokens(ln.output_tokens):>9}{ln.cost_usd:>10.2f}"
            f"{ln.cached_cost_usd:>10.2f}{note}"
        )
    click.echo(
        "repeats: requests identical to an earlier one of the design (an agent probed twice with nothing new "
        "between, at temperature 0); the response cache answers them, so they are not sent and not billed"
    )
    for label in design.models:
        mine = [ln for ln in lines if ln.label == label]
        click.echo(
            f"label {label}: {sum(ln.turn_calls + ln.probe_calls for ln in mine)} calls "
            f"(and {sum(ln.cache_hits for ln in mine)} repeats from the cache), "
            f"{_tokens(sum(ln.prompt_tokens + ln.output_tokens for ln in mine))} tokens, "
            f"${sum(ln.cost_usd for ln in mine):.2f} cold, ${sum(ln.cached_cost_usd for ln in mine):.2f} with the "
            "provider's prefix caching"
        )
    click.echo(
        f"total: {sum(ln.turn_calls + ln.probe_calls for ln in lines)} model calls, "
        f"{_tokens(sum(ln.prompt_tokens + ln.output_tokens for ln in lines))} tokens, "
        f"${sum(ln.cost_usd for ln in lines):.2f} cold, ${sum(ln.cached_cost_usd for ln in lines):.2f} with prefix "
        f"caching (stand-ins simulated in {elapsed:.1f} s; "
        "method and limits: docs/collabsim.md, 'Cost estimate')"
    )


def _tokens(n: float) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k"


@collabsim.command("table")
@click.argument("runs", nargs=-1, type=click.Path(file_okay=False))
@click.option("--out", default=paths.RUNS_TABLE, show_default=True)
@click.option("--probes-out", default=paths.PROBES_TABLE, show_default=True)
@click.option("--convergence-out", default=paths.CONVERGENCE_TABLE, show_default=True)
def table_cmd(runs: tuple[str, ...], out: str, probes_out: str, convergence_out: str) -> None:
    """Finished runs -> runs, probe answers and convergence tables (answers encoded with SBERT,
    cached by text hash)."""
    from incognita.collabsim.table import build_tables
    from incognita.common.io import atomic_write

    tables = build_tables([Path(r) for r in runs])
    for df, path in zip(tables, (out, probes_out, convergence_out)):
        atomic_write(path, lambda tmp, df=df: df.to_parquet(tmp, index=False))
        click.echo(f"{path}: {len(df)} rows")


@collabsim.command("stats")
@click.option("--runs", "runs_path", default=paths.RUNS_TABLE, show_default=True)
@click.option("--probes", "probes_path", default=paths.PROBES_TABLE, show_default=True)
@click.option("--convergence", "convergence_path", default=paths.CONVERGENCE_TABLE, show_default=True)
@click.option("--out-dir", default=paths.STATS_DIR, show_default=True)
def stats_cmd(runs_path: str, probes_path: str, convergence_path: str, out_dir: str) -> None:
    """Summaries, condition and design effects with 95% intervals, probe measures over time."""
    import pandas as pd

    from incognita.collabsim.condition_stats import run_stats

    paths = run_stats(
        pd.read_parquet(runs_path), pd.read_parquet(probes_path), pd.read_parquet(convergence_path), Path(out_dir)
    )
    click.echo(f"{out_dir}: {len(paths)} files")


@collabsim.command("figures")
@click.option("--stats-dir", default=paths.STATS_DIR, show_default=True)
@click.option("--runs", "runs_path", default=paths.RUNS_TABLE, show_default=True)
@click.option("--out-dir", default=paths.FIGURES_DIR, show_default=True)
def figures_cmd(stats_dir: str, runs_path: str, out_dir: str) -> None:
    """One figure per task (PNG and SVG): each metric against condition, with intervals."""
    from incognita.collabsim.condition_figures import make_figures

    paths = make_figures(Path(stats_dir), Path(runs_path), Path(out_dir))
    click.echo(f"{out_dir}: {len(paths)} files")


@collabsim.command("paper")
@click.option("--runs", "runs_path", default=paths.RUNS_TABLE, show_default=True)
@click.option("--probes", "probes_path", default=paths.PROBES_TABLE, show_default=True)
@click.option("--convergence", "convergence_path", default=paths.CONVERGENCE_TABLE, show_default=True)
@click.option("--out-dir", default=paths.PAPER_DIR, show_default=True)
def paper_cmd(runs_path: str, probes_path: str, convergence_path: str, out_dir: str) -> None:
    """The paper's layout: a results table per task, alignment by probing question (Table 3),
    confidence over task progress (Figure 3) and alignment against group size (Figure 4)."""
    from incognita.collabsim.paper_outputs import write_paper_outputs

    paths = write_paper_outputs(Path(runs_path), Path(probes_path), Path(convergence_path), Path(out_dir))
    click.echo(f"{out_dir}: {len(paths)} files")


@collabsim.command("personas")
@click.option("--count", type=int, default=60, show_default=True)
@click.option("--seed", type=int, default=20261130, show_default=True)
@click.option("--out", default="config/collabsim/personas.yaml", show_default=True)
def personas_cmd(count: int, seed: int, out: str) -> None:
    """Build the persona library (two layers: attributes, then a description from them)."""
    import yaml

    from incognita.collabsim.personas import build_library
    from incognita.common.io import atomic_write_text

    header = (
        f"# The CollabSim persona library: built by `incognita collabsim personas --count {count} --seed {seed}`\n"
        "# (incognita/collabsim/personas.py). Each agent with persona: true gets the profile its seed draws.\n"
    )
    body = yaml.safe_dump({"profiles": build_library(count, seed)}, sort_keys=False, width=100, allow_unicode=True)
    atomic_write_text(out, header + body)
    click.echo(f"{out}: {count} profiles")


@collabsim.command("replay")
@click.argument("run", type=click.Path(file_okay=False))
def replay_cmd(run: str) -> None:
    """Re-run a finished run from its manifest and compare the event log byte for byte
    (exit 1 on any difference; model calls come back from the response cache)."""
    from incognita.collabsim.replay import replay

    ok, message = replay(Path(run))
    click.echo(message)
    if not ok:
        raise SystemExit(1)


COMMANDS = [collabsim]
