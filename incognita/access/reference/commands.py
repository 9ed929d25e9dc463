"""Commands of the reference stage: the coordination reference and the hash locks.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option("--golden-dir", default="results/golden", show_default=True, help="golden trajectories {task}.json")
@click.option("--cards-dir", default="results/cards", show_default=True, help="task cards {task}.json")
@click.option("--partition", "partition_path", default="config/partition.yaml", show_default=True)
@click.option("--arm-registry", default="config/arms.yaml", show_default=True, help="the arms to project onto")
@click.option("--out", default="results/reference/coordination.json", show_default=True)
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option(
    "--corpus",
    "corpus_path",
    default="config/corpus.yaml",
    show_default=True,
    help="if this file exists, also print totals over its tasks",
)
@click.option("--no-verify", is_flag=True, help="development only: do not check the result against its lock")
def reference(
    golden_dir: str,
    cards_dir: str,
    partition_path: str,
    arm_registry: str,
    out: str,
    locks_path: str,
    corpus_path: str,
    no_verify: bool,
) -> None:
    """Project golden trajectories onto the arms: the coordination reference (hash-locked)."""
    from incognita.access.reference import coordination as ref
    from incognita.common.io import read_yaml

    built = ref.build_reference(golden_dir, cards_dir, partition_path, arm_registry)
    ref.write_reference(built, out)
    t = built["totals"]
    levels = ", ".join(f"{k}:{v}" for k, v in t["levels"].items())
    click.echo(f"{out}: {t['tasks']} tasks: {ref.format_totals(t)} (desks engaged -> tasks {levels})")
    if Path(corpus_path).exists():
        ids = [str(x) for x in (read_yaml(corpus_path) or {}).get("tasks", [])]
        present = [x for x in ids if x in built["tasks"]]
        if present:
            c = ref.totals(built, present)
            click.echo(f"corpus {corpus_path} ({c['tasks']} tasks): {ref.format_totals(c)}")
            click.echo(f"paper ({ref.PAPER_TOTALS['tasks']} tasks): {ref.format_totals(ref.PAPER_TOTALS)}")
    if no_verify:
        click.echo("lock check skipped (--no-verify)", err=True)
        return
    from incognita.access.reference.freeze import verify_lock

    entry = verify_lock("coordination", out, locks_path=locks_path)
    click.echo(f"{out}: matches lock 'coordination' version {entry['version']}")


@click.command()
@click.option("--bump", is_flag=True, help="give every changed artifact the next version and re-lock it")
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option("--only", "names", multiple=True, help="artifact name (coordination, corpus); repeatable")
def freeze(bump: bool, locks_path: str, names: tuple[str, ...]) -> None:
    """Record sha256 locks of the frozen artifacts in config/locks.yaml."""
    from incognita.access.reference import freeze as fz

    for row in fz.freeze(locks_path, bump=bump, names=list(names) or None):
        version = "" if row["version"] is None else f" v{row['version']}"
        click.echo(f"{row['artifact']}{version}: {row['action']} ({row['path']})")


COMMANDS = [reference, freeze]
