"""The access family's design-level commands: check a workflow config, estimate its cost.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

import click

from incognita.access.cells import CARDS_DIR


@click.command()
@click.option("--config", "config_path", default="config/config.yaml", show_default=True)
def check_config(config_path: str) -> None:
    """Validate a workflow config against the schema."""
    from incognita.access.workflow_config import load_config

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
    default=CARDS_DIR,
    show_default=True,
    help="task cards, for the share of tasks the judge sees (if absent: the paper's 7 of 18)",
)
def estimate_cmd(config_path: str, prices_path: str | None, assumptions_path: str | None, cards_dir: str) -> None:
    """Expected model calls, tokens and cost of a config, per role and arm, before anything is paid for."""
    from incognita.access.cost_estimate import Assumptions, Estimator
    from incognita.access.workflow_config import load_config
    from incognita.common.prices import load_prices, resolve_path

    cfg = load_config(config_path)
    table = load_prices(resolve_path(prices_path or cfg.get("prices")))
    est = Estimator(cfg, table, Assumptions.load(assumptions_path), cards_dir)
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
    for arm, ln in by_arm.items():
        click.echo(
            f"arm {arm:<9} {episodes} episodes, {ln.calls:.0f} calls, ${ln.cost_usd:.2f} "
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


COMMANDS = [check_config, estimate_cmd]
