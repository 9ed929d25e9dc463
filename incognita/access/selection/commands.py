"""Commands of the selection stage: the corpus, the idle check, the oracle check, and the check of
every frozen artifact against its lock (the corpus is the last artifact frozen before episodes run).

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.taxonomy import DIRECT, HARNESS_ARMS
from incognita.common.io import InputError


@click.command()
@click.option("--reference", "reference_path", default="results/reference/coordination.json", show_default=True)
@click.option("--config", "config_path", default="config/config.yaml", show_default=True)
@click.option("--out", default=None, help="default: corpus.file from the config (config/corpus.yaml)")
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option("--force", is_flag=True, help="replace a committed corpus whose selection differs")
@click.option(
    "--idle",
    "idle_path",
    default="results/reference/idle.tsv",
    show_default=True,
    help="the do-nothing table (`incognita idle`): tasks it passes are excluded",
)
@click.option("--dry-run", is_flag=True, help="print the selection, write nothing")
@click.option("--no-verify", is_flag=True, help="development only: accept an unfrozen reference")
def corpus(
    reference_path: str,
    config_path: str,
    out: str | None,
    locks_path: str,
    idle_path: str,
    force: bool,
    dry_run: bool,
    no_verify: bool,
) -> None:
    """Select the stratified task corpus from the reference and write config/corpus.yaml."""
    from incognita.access.reference.coordination import PAPER_TOTALS, format_totals, load_reference
    from incognita.access.selection import corpus as cp
    from incognita.access.selection.idle import passed
    from incognita.access.workflow_config import load_config

    cfg = load_config(config_path)["corpus"]
    out = out or cfg["file"]
    built = load_reference(reference_path, locks=locks_path, verify=not no_verify)
    selection = cp.select(
        built,
        seed=cfg["seed"],
        per_level=cfg["per_level"],
        levels=cfg["levels"],
        include=cfg["include"],
        idle=passed(idle_path),
    )
    doc = cp.corpus_document(selection, built, reference_path, cp.current_version(out, locks_path), idle_path)
    for row in cp.summary_rows(doc):
        click.echo(row)
    click.echo(f"{len(doc['tasks'])} tasks: {format_totals(doc['totals'])}")
    click.echo(f"paper ({PAPER_TOTALS['tasks']} tasks): {format_totals(PAPER_TOTALS)}")
    if dry_run:
        click.echo("(dry run: nothing written)")
        return
    changed = cp.write_corpus(doc, out, force=force)
    click.echo(f"{out}: {'written; review, then run `incognita freeze --bump` and commit' if changed else 'unchanged'}")


def _every_task_inputs(command):
    """The inputs of a check that runs one scripted profile on every task (idle, oracle)."""
    for option in reversed(
        [
            click.option("--cards-dir", default="results/cards", show_default=True),
            click.option("--golden-dir", default="results/golden", show_default=True),
            click.option("--db", "db_path", default="data/source/retail/db.json", show_default=True),
            click.option("--partition", "partition_path", default="config/partition.yaml", show_default=True),
            click.option("--prompts", "prompts_dir", default="config/prompts", show_default=True),
            click.option("--scripted-agents", default="config/scripted_agents.yaml", show_default=True),
        ]
    ):
        command = option(command)
    return command


@click.command()
@click.option("--out", default="results/reference/idle.tsv", show_default=True)
@_every_task_inputs
@click.option(
    "--native/--no-native", "with_native", default=True, show_default=True, help="also run it in the upstream harness"
)
@click.option("--tasks-json", default="data/source/retail/tasks.json", show_default=True)
def idle(
    out, cards_dir, golden_dir, db_path, partition_path, prompts_dir, scripted_agents, with_native, tasks_json
) -> None:
    """The do-nothing check: run the idle profile on every task with a card, in every arm."""
    from incognita.access.selection import idle as idl

    tasks = sorted((p.stem for p in Path(cards_dir).glob("*.json")), key=int)
    if not tasks:
        raise InputError(f"{cards_dir}: no task cards")
    rows = idl.run_arms(
        tasks,
        cards_dir,
        golden_dir,
        db_path=db_path,
        partition_path=partition_path,
        prompts_dir=prompts_dir,
        scripted_agents=scripted_agents,
    )
    if with_native:
        rows += idl.run_native(tasks, cards_dir, golden_dir, tasks_json=tasks_json, scripted_agents=scripted_agents)
    idl.write_table(rows, out)
    by_task = {}
    for row in rows:
        if row["success"] == "true":
            by_task.setdefault(row["task"], []).append(row["arm"])
    arms = sorted({r["arm"] for r in rows})
    click.echo(
        f"{out}: {len(tasks)} tasks x {len(arms)} arms ({', '.join(arms)}); passed by doing nothing: "
        + (", ".join(f"{t} ({'/'.join(a)})" for t, a in by_task.items()) or "none")
    )


@click.command()
@click.option("--out", default="results/reference/oracle.tsv", show_default=True)
@_every_task_inputs
@click.option("--vocabulary", default="config/vocabulary.yaml", show_default=True)
@click.option("--corpus", "corpus_path", default="config/corpus.yaml", show_default=True)
@click.option("--arm", default=DIRECT, show_default=True, type=click.Choice(list(HARNESS_ARMS)))
def oracle(
    out, cards_dir, golden_dir, db_path, partition_path, prompts_dir, scripted_agents, vocabulary, corpus_path, arm
) -> None:
    """The oracle check: the oracle profile on every task with a card; the first wrong argument of each failure."""
    from incognita.access.selection import oracle as orc
    from incognita.access.selection.corpus import load_corpus

    tasks = sorted((p.stem for p in Path(cards_dir).glob("*.json")), key=int)
    if not tasks:
        raise InputError(f"{cards_dir}: no task cards")
    corpus = {str(t) for t in load_corpus(corpus_path, verify=False)["tasks"]}
    rows = orc.run_tasks(
        tasks,
        cards_dir,
        golden_dir,
        corpus=corpus,
        db_path=db_path,
        partition_path=partition_path,
        prompts_dir=prompts_dir,
        scripted_agents=scripted_agents,
        vocabulary=vocabulary,
        arm=arm,
    )
    orc.write_table(rows, out)
    click.echo(f"{out}: {orc.summary(rows)}")


@click.command("verify-locks")
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
def verify_locks(locks_path: str) -> None:
    """Check every frozen artifact against its lock; exit 2 on the first mismatch."""
    from incognita.access.reference import freeze as fz

    results = fz.verify_all(locks_path)
    for name, entry in results:
        click.echo(f"{name} v{entry['version']}: ok ({entry['path']}, frozen {entry['frozen']})")
    locked = dict(results)
    if "corpus" in locked and "coordination" in locked:
        from incognita.access.selection.corpus import check_against_reference, load_corpus
        from incognita.common.io import read_json

        doc = load_corpus(locked["corpus"]["path"], verify=False)
        if doc.get("selected_from", {}).get("reference_sha256") != locked["coordination"]["sha256"]:
            click.echo("note: the corpus was selected from an earlier version of the reference", err=True)
            for note in check_against_reference(doc, read_json(locked["coordination"]["path"])):
                click.echo(f"note: {note}", err=True)


COMMANDS = [corpus, idle, oracle, verify_locks]
