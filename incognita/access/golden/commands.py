"""Commands of the golden stage: build golden trajectories and collect their replay check.

tau2 is imported inside the commands only (the domain's tools, never tau2.registry).

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.domain import domain_files, get_domain, id_order
from incognita.common.io import InputError


@click.command()
@click.option("--domain", required=True, help="the cards' benchmark domain (incognita.access.domain.REGISTRY)")
@click.option("--card", "card_paths", multiple=True, help="a task card; repeat, paired in order with --out")
@click.option("--out", "out_paths", multiple=True, help="output path for the card at the same position")
@click.option("--cards-dir", default=None, help="batch form: every {task}.json in this directory")
@click.option("--out-dir", default=None, help="batch form: write {task}.json here")
@click.option("--db", "db_path", default=None, help="default: data/source/<domain>/db.json")
@click.option("--vocabulary", "vocabulary_path", default=None, help="default: config/domains/<domain>/vocabulary.yaml")
@click.option(
    "--ambiguities",
    "ambiguities_path",
    default=None,
    help="arguments whose gold value upstream invents (a value there may have no source); "
    "default: config/domains/<domain>/upstream_ambiguities.yaml",
)
@click.option(
    "--allow-mismatch",
    is_flag=True,
    help="write a trajectory whose replay does not reproduce upstream's hash instead of failing",
)
def golden(
    domain: str,
    card_paths: tuple[str, ...],
    out_paths: tuple[str, ...],
    cards_dir: str | None,
    out_dir: str | None,
    db_path: str | None,
    vocabulary_path: str | None,
    ambiguities_path: str | None,
    allow_mismatch: bool,
) -> None:
    """Build golden trajectories from task cards and verify each by replay against upstream.

    One process can build many: pass several --card/--out pairs, or --cards-dir/--out-dir.
    Every card is attempted; failures are listed together at the end (exit code 2).
    """
    from incognita.access.cards.audit import load_ambiguities
    from incognita.access.domain import LOCAL_ID
    from incognita.access.golden import trajectory as gold
    from incognita.access.golden.provenance import load_vocabulary
    from incognita.access.golden.upstream_replay import World
    from incognita.common.io import read_json, sha256_file, write_json

    files = domain_files(domain)
    db_path, vocabulary_path = db_path or str(files.db), vocabulary_path or str(files.vocabulary)
    if bool(cards_dir) != bool(out_dir):
        raise InputError("--cards-dir and --out-dir go together")
    if len(card_paths) != len(out_paths):
        raise InputError(f"{len(card_paths)} --card but {len(out_paths)} --out: give one --out per --card")
    jobs = list(zip(card_paths, out_paths))
    if cards_dir:
        found = (
            sorted(
                (p for p in Path(cards_dir).iterdir() if p.suffix == ".json" and LOCAL_ID.fullmatch(p.stem)),
                key=lambda p: id_order(p.stem),
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
    ambiguities = load_ambiguities(ambiguities_path or files.ambiguities, get_domain(domain).write_tools())
    world = World(get_domain(domain), db_path)
    failures = []
    for card_path, out_path in jobs:
        try:
            card = read_json(card_path)
            gold.check_card(card, card_path)
            if LOCAL_ID.fullmatch(Path(out_path).stem) and Path(out_path).stem != card["task_id"]:
                raise InputError(f"{card_path}: card of task {card['task_id']} would be written to {out_path}")
            doc = gold.build_golden(
                card, world, vocabulary, card_sha256=sha256_file(card_path), where=card_path, ambiguities=ambiguities
            )
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
@click.option("--domain", default=None, help="the golden files' domain (needed with --verify)")
@click.option(
    "--cards-dir",
    default=None,
    help="with --verify: the cards (a task's initial state); default results/cards/<domain>",
)
@click.argument("golden_files", nargs=-1, required=True)
def replay_table(
    out_path: str, verify_db: str | None, domain: str | None, cards_dir: str | None, golden_files: tuple[str, ...]
) -> None:
    """Collect the replay check of one domain's GOLDEN_FILES into one table."""
    from incognita.access.golden.upstream_replay import REPLAY_HEADER, replay_rows
    from incognita.common.io import read_json, write_tsv

    docs = []
    world = None
    if verify_db:
        from incognita.access.golden.upstream_replay import World, reference_actions_of, verify
        from incognita.access.paths import cards_dir as default_cards

        if domain is None:
            raise InputError("--verify needs --domain: the database's domain")
        world = World(get_domain(domain), verify_db)
        cards_dir = cards_dir or str(default_cards(domain))
    for path in golden_files:
        doc = read_json(path)
        if not isinstance(doc, dict) or "calls" not in doc or "task_id" not in doc:
            raise InputError(f"{path}: not a golden trajectory (no task_id/calls)")
        if world is not None:
            card = read_json(Path(cards_dir) / f"{doc['task_id']}.json")
            doc["replay"] = verify(world, doc, reference_actions_of(doc), card.get("initial_state"))
        docs.append((path, doc))
    rows = replay_rows(docs)
    write_tsv(out_path, REPLAY_HEADER, rows)
    matched = sum(r[3] == "true" for r in rows)
    click.echo(f"{out_path}: {matched}/{len(rows)} tasks reproduce upstream's gold-state hash")


COMMANDS = [golden, replay_table]
