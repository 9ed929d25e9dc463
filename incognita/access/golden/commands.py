"""Commands of the golden stage: build golden trajectories and collect their replay check.

tau2 is imported inside the commands only (the retail tools, never tau2.registry).

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.common.io import InputError


@click.command()
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

    from incognita.access.golden import trajectory as gold
    from incognita.access.golden.provenance import load_vocabulary
    from incognita.access.golden.upstream_replay import RetailWorld
    from incognita.common.io import read_json, sha256_file, write_json

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

    vocabulary = load_vocabulary(vocabulary_path)
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


@click.command("replay-table")
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
    from incognita.access.golden.upstream_replay import REPLAY_HEADER, replay_rows
    from incognita.common.io import read_json, write_tsv

    docs = []
    world = None
    if verify_db:
        from incognita.access.golden.upstream_replay import RetailWorld, reference_actions_of, verify

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


COMMANDS = [golden, replay_table]
