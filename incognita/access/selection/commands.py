"""Commands of the selection stage: the corpus, the idle check, the oracle check, and the check of
every frozen artifact against its lock (the corpus is the last artifact frozen before episodes run).

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.domain import domain_files
from incognita.access.paths import coordination_file, idle_table, oracle_table
from incognita.access.taxonomy import DIRECT, HARNESS_ARMS

DOMAIN = click.option("--domain", required=True, help="a registered benchmark domain (incognita.access.domain)")


@click.command()
@DOMAIN
@click.option(
    "--reference", "reference_path", default=None, help="default: results/reference/<domain>/coordination.json"
)
@click.option("--out", default=None, help="default: config/domains/<domain>/corpus.yaml")
@click.option("--locks", "locks_path", default=None, help="default: config/domains/<domain>/locks.yaml")
@click.option("--force", is_flag=True, help="replace a committed corpus whose selection differs")
@click.option(
    "--idle",
    "idle_path",
    default=None,
    help="the do-nothing table (`incognita idle`): tasks it passes are excluded; default results/reference/<domain>/idle.tsv",
)
@click.option("--dry-run", is_flag=True, help="print the selection, write nothing")
@click.option("--no-verify", is_flag=True, help="development only: accept an unfrozen reference")
def corpus(
    domain: str,
    reference_path: str | None,
    out: str | None,
    locks_path: str | None,
    idle_path: str | None,
    force: bool,
    dry_run: bool,
    no_verify: bool,
) -> None:
    """Select a domain's stratified task corpus from its reference, by the rule of its domain.yaml,
    and write its corpus.yaml."""
    from incognita.access.reference.coordination import format_totals, load_reference
    from incognita.access.selection import corpus as cp
    from incognita.access.selection.idle import passed

    files = domain_files(domain)
    cfg = files.corpus_rule()
    out, locks_path = out or str(files.corpus), locks_path or str(files.locks)
    reference_path = reference_path or str(coordination_file(domain))
    idle_path = idle_path or str(idle_table(domain))
    built = load_reference(reference_path, locks=locks_path, verify=not no_verify)
    selection = cp.select(
        built,
        seed=cfg["seed"],
        per_level=cfg["per_level"],
        levels=cfg["levels"],
        include=cfg["include"],
        idle=passed(idle_path),
    )
    published = files.published_totals()
    version = cp.current_version(out, locks_path)
    doc = cp.corpus_document(selection, built, reference_path, version, idle_path, published)
    for row in cp.summary_rows(doc):
        click.echo(row)
    click.echo(f"{len(doc['tasks'])} tasks: {format_totals(doc['totals'])}")
    if published:
        click.echo(f"paper ({published['tasks']} tasks): {format_totals(published)}")
    if dry_run:
        click.echo("(dry run: nothing written)")
        return
    changed = cp.write_corpus(doc, out, force=force)
    click.echo(
        f"{out}: {f'written; review, then run `incognita freeze --domain {domain} --bump` and commit' if changed else 'unchanged'}"
    )


def _every_task_inputs(command):
    """The inputs of a check that runs one scripted profile on every task of a domain (idle, oracle),
    passed on as keywords of incognita.access.selection.profile_check.TaskSet.of."""
    for option in reversed(
        [
            DOMAIN,
            click.option("--cards-dir", default=None, help="default: results/cards/<domain>"),
            click.option("--golden-dir", default=None, help="default: results/golden/<domain>"),
            click.option("--db", "db_path", default=None, help="default: data/source/<domain>/db.json"),
            click.option("--partition", "partition_path", default=None, help="default: the domain's partition.yaml"),
            click.option("--vocabulary", default=None, help="default: the domain's vocabulary.yaml"),
            click.option("--prompts", "prompts_dir", default="config/prompts", show_default=True),
            click.option("--domain-prompts", default=None, help="default: the domain's prompts folder"),
            click.option("--scripted-agents", default="config/scripted_agents.yaml", show_default=True),
        ]
    ):
        command = option(command)
    return command


@click.command()
@click.option("--out", default=None, help="default: results/reference/<domain>/idle.tsv")
@_every_task_inputs
@click.option(
    "--native/--no-native", "with_native", default=True, show_default=True, help="also run it in the upstream harness"
)
@click.option(
    "--tasks-json", default=None, help="default: data/source/<domain>/tasks.json (its folder is the source copy)"
)
def idle(out, with_native, tasks_json, **given) -> None:
    """The do-nothing check: run the idle profile on every task of a domain with a card, in every arm."""
    from incognita.access.selection import idle as idl
    from incognita.access.selection.profile_check import TaskSet

    ts = TaskSet.of(**given)
    domain, tasks = ts.domain, ts.tasks
    out = out or str(idle_table(domain))
    rows = idl.run_arms(
        tasks,
        ts.cards_dir,
        ts.golden_dir,
        inputs=ts.inputs,
        prompts_dir=ts.prompts_dir,
        scripted_agents=ts.scripted_agents,
    )
    if with_native:
        source = Path(tasks_json).parent if tasks_json else domain_files(domain).source
        rows += idl.run_native(
            domain, tasks, ts.cards_dir, ts.golden_dir, source_dir=source, scripted_agents=ts.scripted_agents
        )
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
@click.option("--out", default=None, help="default: results/reference/<domain>/oracle.tsv")
@_every_task_inputs
@click.option("--corpus", "corpus_path", default=None, help="default: the domain's corpus.yaml")
@click.option("--arm", default=DIRECT, show_default=True, type=click.Choice(list(HARNESS_ARMS)))
def oracle(out, corpus_path, arm, **given) -> None:
    """The oracle check: the oracle profile on every task of a domain with a card; the first wrong
    argument of each failure."""
    from incognita.access.cells import load_corpus
    from incognita.access.selection import oracle as orc
    from incognita.access.selection.profile_check import TaskSet

    ts = TaskSet.of(**given)
    domain = ts.domain
    out = out or str(oracle_table(domain))
    corpus = {str(t) for t in load_corpus(corpus_path or domain_files(domain).corpus, verify=False)["tasks"]}
    rows = orc.run_tasks(
        ts.tasks,
        ts.cards_dir,
        ts.golden_dir,
        corpus=corpus,
        inputs=ts.inputs,
        prompts_dir=ts.prompts_dir,
        scripted_agents=ts.scripted_agents,
        arm=arm,
    )
    orc.write_table(rows, out)
    click.echo(f"{out}: {orc.summary(rows)}")


def _artifact_paths(ctx, param, values: tuple[str, ...]) -> dict[str, str]:
    """--artifact NAME=PATH, repeatable, as {name: path}."""
    paths = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"{value!r}: expected NAME=PATH", ctx, param)
        if name in paths:
            raise click.BadParameter(f"{value!r}: artifact {name!r} given twice", ctx, param)
        paths[name] = path
    return paths


@click.command("verify-locks")
@click.option("--locks", "locks_path", required=True, help="a domain's locks.yaml (config/domains/<domain>/locks.yaml)")
@click.option(
    "--artifact",
    "artifact_paths",
    multiple=True,
    callback=_artifact_paths,
    metavar="NAME=PATH",
    help="check the artifact NAME at PATH instead of the path its lock records (repeatable); "
    "the workflow passes each artifact where its job sees it",
)
def verify_locks(locks_path: str, artifact_paths: dict[str, str]) -> None:
    """Check every frozen artifact of a domain against its lock; exit 2 on the first mismatch.
    Each line names the artifact's recorded path, wherever it was checked."""
    from incognita.access import freeze as fz

    results = fz.verify_all(locks_path, artifact_paths)
    for name, entry in results:
        click.echo(f"{name} v{entry['version']}: ok ({entry['path']}, frozen {entry['frozen']})")
    locked = dict(results)
    if "corpus" in locked and "coordination" in locked:
        from incognita.access.cells import load_corpus
        from incognita.access.selection.corpus import check_against_reference
        from incognita.common.io import read_json

        def where(name: str) -> str:
            return artifact_paths.get(name, locked[name]["path"])

        doc = load_corpus(where("corpus"), verify=False)
        if doc.get("selected_from", {}).get("reference_sha256") != locked["coordination"]["sha256"]:
            click.echo("note: the corpus was selected from an earlier version of the reference", err=True)
            for note in check_against_reference(doc, read_json(where("coordination"))):
                click.echo(f"note: {note}", err=True)


COMMANDS = [corpus, idle, oracle, verify_locks]
