"""Commands of the reference stage: the coordination reference and the hash locks.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.arm_registry import DEFAULT_PATH as ARM_REGISTRY
from incognita.access.domain import domain_files

DOMAIN = click.option("--domain", required=True, help="a registered benchmark domain (incognita.access.domain)")


@click.command()
@DOMAIN
@click.option("--golden-dir", default=None, help="golden trajectories {task}.json; default results/golden/<domain>")
@click.option("--cards-dir", default=None, help="task cards {task}.json; default results/cards/<domain>")
@click.option("--partition", "partition_path", default=None, help="default: config/domains/<domain>/partition.yaml")
@click.option("--arm-registry", default=ARM_REGISTRY, show_default=True, help="the arms to project onto")
@click.option("--out", default=None, help="default: results/reference/<domain>/coordination.json")
@click.option("--locks", "locks_path", default=None, help="default: config/domains/<domain>/locks.yaml")
@click.option(
    "--corpus",
    "corpus_path",
    default=None,
    help="if this file exists, also print totals over its tasks; default config/domains/<domain>/corpus.yaml",
)
@click.option("--no-verify", is_flag=True, help="development only: do not check the result against its lock")
def reference(
    domain: str,
    golden_dir: str | None,
    cards_dir: str | None,
    partition_path: str | None,
    arm_registry: str,
    out: str | None,
    locks_path: str | None,
    corpus_path: str | None,
    no_verify: bool,
) -> None:
    """Project a domain's golden trajectories onto the arms: its coordination reference (hash-locked)."""
    from incognita.access import paths
    from incognita.access.reference import coordination as ref
    from incognita.common.io import read_yaml

    files = domain_files(domain)
    golden_dir = golden_dir or str(paths.golden_dir(domain))
    cards_dir = cards_dir or str(paths.cards_dir(domain))
    partition_path = partition_path or str(files.partition)
    out = out or str(paths.coordination_file(domain))
    locks_path, corpus_path = locks_path or str(files.locks), corpus_path or str(files.corpus)

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
            published = files.published_totals()
            if published:
                click.echo(f"paper ({published['tasks']} tasks): {ref.format_totals(published)}")
    if no_verify:
        click.echo("lock check skipped (--no-verify)", err=True)
        return
    from incognita.access.freeze import verify_lock

    entry = verify_lock("coordination", out, locks_path=locks_path)
    click.echo(f"{out}: matches lock 'coordination' version {entry['version']}")


@click.command()
@DOMAIN
@click.option("--bump", is_flag=True, help="give every changed artifact the next version and re-lock it")
@click.option("--locks", "locks_path", default=None, help="default: config/domains/<domain>/locks.yaml")
@click.option("--only", "names", multiple=True, help="artifact name (coordination, corpus, interpretation); repeatable")
def freeze(domain: str, bump: bool, locks_path: str | None, names: tuple[str, ...]) -> None:
    """Record sha256 locks of a domain's frozen artifacts in its locks.yaml."""
    from incognita.access import freeze as fz

    files = domain_files(domain)
    artifacts = fz.domain_artifacts(files)
    for row in fz.freeze(locks_path or str(files.locks), bump=bump, names=list(names) or None, extra=artifacts):
        version = "" if row["version"] is None else f" v{row['version']}"
        click.echo(f"{row['artifact']}{version}: {row['action']} ({row['path']})")


COMMANDS = [reference, freeze]
