"""The access family's design-level commands: check a workflow config, estimate its cost and
time, and follow a run's model calls against that estimate (`incognita progress`; the call log
itself is common, incognita.common.progress, but the expected calls come from this family's
estimate, and common imports neither family).

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

import math
from pathlib import Path

import click

from incognita.access.paths import CARDS_ROOT
from incognita.access.stats.commands import config_model_order, load_trials, read_config


@click.command()
@click.option("--config", "config_path", default="config/config.yaml", show_default=True)
def check_config(config_path: str) -> None:
    """Validate a workflow config (or an overlay, read over config.yaml beside it): the schema,
    the design (arms, models, tasks) and every model entry, as the workflow does when it is
    parsed. A problem is one line naming the file that sets the key, and the key."""
    from incognita.access.planning.workflow_config import load_config

    load_config(config_path)
    click.echo(f"{config_path}: ok")


def _fmt_tokens(n: float) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k"


@click.command("estimate")
@click.option("--config", "config_path", default="config/config.yaml", show_default=True)
@click.option(
    "--prices", "prices_path", default=None, help="price table (default: the config's, else config/prices.yaml)"
)
@click.option("--assumptions", "assumptions_path", default=None, help="YAML overriding per-episode assumptions")
@click.option(
    "--cards-dir",
    default=CARDS_ROOT,
    show_default=True,
    help="task cards, for the share of tasks the judge sees (if absent: the paper's 7 of 18)",
)
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None, help="requests per minute allowed")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True), default=None, help="tokens per minute allowed")
@click.option(
    "--latency",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="mean seconds per call, for the wall time with --rpm/--tpm",
)
@click.option(
    "--from",
    "from_path",
    default=None,
    help="fit the assumptions first: to a run's trials table (results/trials.parquet) or to published "
    "figures (config/cost_calibration.yaml)",
)
@click.option(
    "--write-assumptions",
    "write_path",
    default=None,
    help="with --from: write the fitted assumptions to this YAML file (for --assumptions)",
)
def estimate_cmd(
    config_path: str,
    prices_path: str | None,
    assumptions_path: str | None,
    cards_dir: str,
    rpm: float | None,
    tpm: float | None,
    latency: float,
    from_path: str | None,
    write_path: str | None,
) -> None:
    """Expected model calls, tokens and cost of a config, per role and arm, before anything is paid for.

    With --rpm and/or --tpm, also the shortest wall time at those limits (one limit for all the calls).
    With --from, the assumptions are first fitted to observed agent actions and prices per arm.
    """
    from incognita.access.cost_assumptions import Assumptions
    from incognita.access.planning.cost_estimate import Estimator
    from incognita.access.planning.workflow_config import load_config
    from incognita.common.io import InputError
    from incognita.common.prices import load_prices, resolve_path

    if write_path and not from_path:
        raise InputError("--write-assumptions needs --from (there is nothing fitted to write)")
    cfg = load_config(config_path)
    table = load_prices(resolve_path(prices_path or cfg.get("prices")))
    est = Estimator(cfg, table, Assumptions.load(assumptions_path), cards_dir)
    if from_path:
        _fit_assumptions(est, config_path, from_path, write_path)
    lines, by_arm = est.run()
    design = est.design
    click.echo(
        f"{config_path}: {len(design.tasks)} tasks x {len(design.models)} models x {design.repetitions} repetitions; "
        f"arms {', '.join(by_arm)}"
    )
    click.echo(f"prices: {table.path} version {table.version} (retrieved {table.retrieved})")
    click.echo(f"{'role':<20}{'model':<26}{'calls':>9}{'prompt':>10}{'output':>10}{'cost USD':>12}")
    for ln in lines:
        note = "  (offline)" if ln.offline else ("  (no price)" if table.lookup(ln.model) is None else "")
        prompt, output = (
            ("-", "-") if ln.offline else (_fmt_tokens(ln.prompt_tokens), _fmt_tokens(ln.completion_tokens))
        )
        click.echo(
            f"{ln.label[:19]:<20}{ln.model[:25]:<26}{ln.calls:>9.0f}{prompt:>10}{output:>10}{ln.cost_usd:>12.2f}{note}"
        )
    episodes = len(design.tasks) * len(design.models) * design.repetitions
    width = max(map(len, by_arm), default=9)
    for arm, ln in by_arm.items():
        click.echo(
            f"arm {arm:<{width}} {episodes} episodes, {ln.calls:.0f} calls, ${ln.cost_usd:.2f} "
            f"(${ln.cost_usd / max(episodes, 1):.3f} per episode)"
        )
    total = sum(ln.cost_usd for ln in lines)
    click.echo(
        f"total: {sum(ln.calls for ln in lines):.0f} model calls, "
        f"{_fmt_tokens(sum(ln.prompt_tokens + ln.completion_tokens for ln in lines))} tokens, ${total:.2f}"
    )
    if cfg["participants"].get("judge"):
        click.echo(
            f"judge: {est.nl_share:.0%} of the tasks have something for the judge to decide "
            f"({'from ' + cards_dir if est.nl_share_from_cards else 'assumed'})"
        )
    skipped = [arm for arm in design.rotation if arm not in design.episode_arms]
    if skipped:
        click.echo(f"not estimated: {', '.join(skipped)} (run by the upstream harness)")
    click.echo("assumptions: docs/models.md (override with --assumptions FILE); cache hits are not counted")
    if any(not ln.offline for ln in lines):
        _echo_reserve(cfg, cards_dir)
    if rpm or tpm:
        _echo_wall_time(est, lines, rpm, tpm, latency)


def _fit_assumptions(est, config_path: str, from_path: str, write_path: str | None) -> None:
    """Fit `est`'s assumptions to what `from_path` observed (incognita.access.planning.cost_calibration), print
    the fit, and leave the fitted assumptions in `est` for the estimate that follows."""
    import yaml

    from incognita.access.planning.cost_calibration import fit, observations
    from incognita.common.io import InputError, atomic_write_text

    obs = observations(from_path)
    if obs.models and set(obs.models) != set(est.design.models):
        raise InputError(
            f"{from_path}: measured models {', '.join(obs.models)}; {config_path}'s design has "
            f"{', '.join(est.design.models)} (fit a run on the config it was made with)"
        )
    if obs.config and Path(obs.config) != Path(config_path):
        click.echo(f"note: {from_path} was recorded with {obs.config}; fitting on {config_path}")
    result = fit(est, obs)
    click.echo(f"fit to {from_path}:")
    click.echo(f"  {'arm':<10}{'episodes':>9}{'actions':>9}{'observed':>10}{'before':>10}{'fitted':>10}  assumption")
    for r in result.rows:
        n = "-" if r.observed.episodes is None else str(r.observed.episodes)
        what = f"{r.assumption} ({r.meaning}): {r.before_value:.3g} -> {r.after_value:.3g}" if r.assumption else "-"
        click.echo(
            f"  {r.arm:<10}{n:>9}{r.observed.agent_actions:>9.1f}{'$' + format(r.observed.usd_per_episode, '.3f'):>10}"
            f"{'$' + format(r.before_usd, '.3f'):>10}{'$' + format(r.after_usd, '.3f'):>10}  {what}"
        )
    for why in result.skipped:
        click.echo(f"  not fitted: {why}")
    if write_path:
        header = f"# Assumptions fitted by `incognita estimate --config {config_path} --from {from_path}`\n"
        atomic_write_text(write_path, header + yaml.safe_dump(result.overrides(), sort_keys=True))
        click.echo(f"  wrote {write_path} (use with --assumptions)")


def _echo_reserve(cfg: dict, cards_dir: str) -> None:
    """What the workflow's pace does with its reserve for the longest chains (docs/models.md)."""
    from incognita.access.planning.cost_estimate import CHAIN_SHARE, FORECAST_LATENCY, reserve_forecast

    f = reserve_forecast(cfg, cards_dir)
    if not f.run_seconds:
        click.echo("pace: no API entry sets a rate limit, so nothing is held back for the longest chains")
        return
    share = f.chain_seconds / f.run_seconds
    verdict = (
        "the pace keeps its reserve of requests for the longest chains"
        if f.pays
        else f"under {CHAIN_SHARE:.0%}, so the workflow sets each API entry's `reserve` to 0 (an entry's own is kept)"
    )
    click.echo(
        f"pace: the longest episode takes {_minutes(f.chain_seconds)} at {FORECAST_LATENCY:g} s a call, "
        f"{share:.0%} of the run's {_minutes(f.run_seconds)} at the entries' limits; {verdict}"
    )


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:,.1f} min" + (f" ({seconds / 3600:.1f} h)" if seconds >= 3600 else "")


def _echo_wall_time(est, lines, rpm: float | None, tpm: float | None, latency: float) -> None:
    from incognita.access.planning.cost_estimate import wall_time

    w = wall_time(est, lines, rpm=rpm, tpm=tpm, latency=latency)
    if not w.calls:
        click.echo("wall time: no call goes to an API (every role is offline)")
        return
    terms, binding = w.terms, w.binding
    limits = ", ".join(x for x in (rpm and f"{rpm:,.0f} requests/min", tpm and f"{_fmt_tokens(tpm)} tokens/min") if x)
    click.echo(f"wall time at {limits}, {latency:g} s per call: at least {_minutes(w.seconds)} ({binding} bound)")
    explain = {
        "requests": f"{w.calls:,.0f} calls / {rpm:,.0f} per min",
        "tokens": f"{_fmt_tokens(w.tokens)} tokens / {_fmt_tokens(tpm or 0)} per min",
        "chain": (
            f"{w.chain_calls:.1f} calls one after another in the longest episode "
            f"({' '.join(w.chain_cell or ())}) x {latency:g} s"
        ),
    }
    for name, seconds in terms.items():
        click.echo(f"  {name:<9}{explain[name]} = {_minutes(seconds)}{'  <- binds' if name == binding else ''}")
    click.echo(f"  reaching it takes about {w.in_flight:,.0f} episodes running at once (calls x latency / wall time)")
    # A job runs one model's block of one task (its arms x repetitions) at once; Snakemake's local
    # executor runs at most --cores + 5 jobs at once (docs/models.md, "Across jobs").
    per_job = max(1, len(est.design.episode_arms) * est.design.repetitions)
    jobs = max(1, math.ceil(w.in_flight / per_job))
    click.echo(
        f"  in jobs of {per_job} episodes (one model and task), {jobs} jobs at once: "
        f"snakemake --cores {max(2, jobs - 5)} --resources api_calls={jobs}"
    )


def _parse_since(text: str | None) -> float | None:
    """--since: unix seconds, or an ISO date/time (local time unless it names a zone)."""
    if text is None:
        return None
    import datetime

    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected unix seconds or an ISO date/time", param_hint="--since") from None


@click.command("progress")
@click.option("--dir", "dir_opt", default=None, help="progress logs (default: $INCOGNITA_PROGRESS_DIR, logs/progress)")
@click.option("--config", "config_path", default=None, help="workflow config whose estimate gives the expected calls")
@click.option("--since", default=None, help="count from this time (unix or ISO; default: the current run's start)")
@click.option("--watch", type=click.FloatRange(min=0, min_open=True), default=None, help="refresh every N seconds")
@click.option(
    "--per-minute",
    is_flag=True,
    help="instead, each model's calls and tokens in each minute of the run (which model was at its limit, when)",
)
def progress_cmd(
    dir_opt: str | None, config_path: str | None, since: str | None, watch: float | None, per_minute: bool
) -> None:
    """Model calls of the running (or last) run so far: calls, cache hits, tokens, dollars, retries,
    rates and, with --config, an ETA.

    The current run starts at the first call after the last 30-minute gap without any call.
    """
    import sys
    import time

    from incognita.common import progress

    directory = progress.resolve_dir(dir_opt)
    start = _parse_since(since)
    if per_minute:
        minutes = progress.by_minute(directory, since=start)
        for problem in minutes.problems:
            click.echo(problem, err=True)
        for line in progress.minute_lines(minutes):
            click.echo(line)
        return
    expected = None
    if config_path:
        from incognita.access.planning.cost_estimate import expected_api_calls
        from incognita.common.io import InputError

        try:
            expected = expected_api_calls(config_path)
        except (InputError, OSError, KeyError) as exc:  # not an access config, or not readable
            reason = " ".join(str(exc).splitlines()[:2])  # a schema error lists every problem: the first says enough
            click.echo(
                f"expected: unknown ({reason if config_path in reason else f'{config_path}: {reason}'})", err=True
            )
    reported: set[str] = set()

    def current() -> progress.Summary:
        s = progress.summarise(directory, since=start, expected_calls=expected)
        for problem in s.problems:
            if problem not in reported:  # each once, not once a refresh
                reported.add(problem)
                click.echo(problem, err=True)
        return s

    if watch is None:
        for line in progress.describe(current()):
            click.echo(line)
        return
    try:
        if sys.stdout.isatty():
            from rich.live import Live

            with Live(progress.rich_view(current()), auto_refresh=False) as live:
                while True:
                    time.sleep(watch)
                    live.update(progress.rich_view(current()), refresh=True)
        while True:
            click.echo(progress.one_line(current()))
            time.sleep(watch)
    except KeyboardInterrupt:
        pass


def _registered_arms(config: dict) -> tuple[str, ...]:
    """The arms a plan may name: the config's arm registry's, and native."""
    from incognita.access.arm_registry import arm_registry, registry_path
    from incognita.access.taxonomy import NATIVE

    return (*arm_registry(registry_path(config)).names, NATIVE)


def _int_list(text: str, option: str, low: int) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {text!r}", param_hint=option) from None
    if not values or min(values) < low:
        raise click.BadParameter(f"expected integers of at least {low}, got {text!r}", param_hint=option)
    return sorted(set(values))


@click.command("plan")
@click.option("--trials", "trials_path", default=None, help="pilot trials table: resample its tasks and repetitions")
@click.option(
    "--assume", "assume_path", default=None, help="assumed success rates (YAML, config/plan_assumptions.yaml)"
)
@click.option("--config", "config_path", default="config/config.yaml", show_default=True, help="the design to price")
@click.option(
    "--prices", "prices_path", default=None, help="price table (default: the config's, else config/prices.yaml)"
)
@click.option("--cards-dir", default=CARDS_ROOT, show_default=True, help="task cards, for the judge's share of tasks")
@click.option(
    "--domain",
    default=None,
    help="whose interpretation table the contrasts come from (default: the config's domains, whose tables must agree)",
)
@click.option("--tasks", "tasks_text", default="6,12,18,24,36", show_default=True, help="task counts to try")
@click.option("--reps", "reps_text", default="1,2,3,4", show_default=True, help="repetition counts to try")
@click.option("--sims", type=click.IntRange(min=100), default=2000, show_default=True, help="simulations per design")
@click.option("--seed", type=int, default=20260820, show_default=True)
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None, help="requests per minute allowed")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True), default=None, help="tokens per minute allowed")
@click.option("--latency", type=click.FloatRange(min=0), default=5.0, show_default=True, help="mean seconds per call")
@click.option("--out", "out_dir", default="results/plan", show_default=True)
def plan_command(
    trials_path: str | None,
    assume_path: str | None,
    config_path: str,
    prices_path: str | None,
    cards_dir: str,
    domain: str | None,
    tasks_text: str,
    reps_text: str,
    sims: int,
    seed: int,
    rpm: float | None,
    tpm: float | None,
    latency: float,
    out_dir: str,
) -> None:
    """Power of each pre-specified contrast, expected separated pairs and price of every design
    (tasks x repetitions), by simulation from a pilot trials table or from assumed success rates.

    Writes plan.csv, plan.md, plan.png and plan.pdf under OUT.
    """
    import time

    from incognita.access.domain import domain_files
    from incognita.access.figures.planner_figure import save_plan_figure
    from incognita.access.planning import design_planner as dp
    from incognita.access.planning.population import load_assumptions, pilot_population
    from incognita.access.stats.interpretation import load_design_interpretation

    if (trials_path is None) == (assume_path is None):
        raise click.UsageError("give exactly one of --trials (a pilot trials table) and --assume (a YAML file)")
    tasks = _int_list(tasks_text, "--tasks", 2)
    reps = _int_list(reps_text, "--reps", 1)
    config = read_config(config_path)
    if domain is None and not config.get("domains"):
        raise click.UsageError(f"{config_path} names no domains: give --domain (whose interpretation table to use)")
    tables = [(f.interpretation, f.locks) for f in map(domain_files, [domain] if domain else config["domains"])]
    interp = load_design_interpretation(tables)
    interpretation_path = tables[0][0]  # the first of equal tables
    check = None
    known = _registered_arms(config)
    if trials_path:
        # Every design domain's tasks, resampled within domains (a domain of the pilot outside the
        # design, or a design domain without trials, is refused).
        design = [domain] if domain else list(config["domains"])
        pop = pilot_population(load_trials(trials_path), config_model_order(config), trials_path, known, design)
        header = [f"source: pilot trials {trials_path} ({'; '.join(pop.notes)}); tasks and repetitions resampled"]
    else:
        pop, check = load_assumptions(assume_path, known)
        header = [
            f"source: assumed success rates {assume_path} (tau {pop.tau:g}, interaction {pop.interaction:g} "
            "on the log-odds scale)"
        ]
    pricing = dp.price_unit(config_path, pop.models, prices_path, cards_dir)
    started = time.perf_counter()
    table = dp.plan(pop, interp, tasks, reps, sims, seed, pricing, {"rpm": rpm, "tpm": tpm, "latency": latency})
    agreement = dp.agreement_table(pop, check, interp, sims, seed) if check else None
    elapsed = time.perf_counter() - started
    limits = ", ".join(x for x in (rpm and f"{rpm:,.0f} requests/min", tpm and f"{tpm:,.0f} tokens/min") if x)
    header += [
        f"{len(tasks) * len(reps)} designs x {sims} simulations, seed {seed}; contrasts and {interp.confidence:.0%} "
        f"t intervals from {interpretation_path} (version {interp.version})",
        f"priced with {config_path}: models {', '.join(pricing.models)}; arms {', '.join(pricing.arms)}; "
        + "; ".join(pricing.notes),
        f"wall time at {limits}, {latency:g} s per call (as `incognita estimate`)"
        if limits
        else "wall time: not computed (give --rpm and/or --tpm)",
    ]
    out = Path(out_dir)
    paths = dp.write_plan(table, out, header, agreement) + save_plan_figure(table, out)
    _echo_plan(table, agreement)
    click.echo(f"{out_dir}: {', '.join(p.name for p in paths)} ({len(tasks) * len(reps)} designs, {elapsed:.1f} s)")


def _echo_plan(table, agreement) -> None:
    from incognita.access.planning.design_planner import designs_table
    from incognita.common.tables import to_markdown

    click.echo(to_markdown(designs_table(table), digits=2), nl=False)
    if agreement is not None:
        cols = ["arm", "gap_sd", "largest_gap", "tasks", "analytic_power", "simulated_power", "mc_se"]
        click.echo(to_markdown(agreement[cols], digits=4), nl=False)


COMMANDS = [check_config, estimate_cmd, progress_cmd, plan_command]
