"""What the two whole-domain checks share (the do-nothing check, incognita.access.selection.idle,
and the oracle check, incognita.access.selection.oracle): each runs one scripted profile on every
task of a domain that has a card and writes one TSV table, whose outcome columns read alike.

Who reads it: those two modules and their commands (incognita.access.selection.commands).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from incognita.access.domain import id_order
from incognita.access.paths import cards_dir as default_cards
from incognita.access.paths import golden_dir as default_golden
from incognita.common.io import InputError, atomic_write_text


@dataclass(frozen=True)
class TaskSet:
    """Every task of one domain that has a card, with what a profile's episodes need."""

    domain: str
    cards_dir: str
    golden_dir: str
    inputs: object  # the harness's DomainInputs
    tasks: list[str]  # upstream ids, in their natural order
    prompts_dir: str
    scripted_agents: str

    @classmethod
    def of(
        cls,
        domain: str,
        *,
        cards_dir: str | None = None,
        golden_dir: str | None = None,
        db_path: str | None = None,
        partition_path: str | None = None,
        vocabulary: str | None = None,
        prompts_dir: str,
        domain_prompts: str | None = None,
        scripted_agents: str,
    ) -> TaskSet:
        """A path left out is the domain's usual one."""
        from incognita.access.episodes.harness import DomainInputs

        cards_dir = cards_dir or str(default_cards(domain))
        tasks = sorted((p.stem for p in Path(cards_dir).glob("*.json")), key=id_order)
        if not tasks:
            raise InputError(f"{cards_dir}: no task cards")
        inputs = DomainInputs.of(
            domain, db=db_path, partition=partition_path, vocabulary=vocabulary, prompts=domain_prompts
        )
        return cls(
            domain=domain,
            cards_dir=cards_dir,
            golden_dir=golden_dir or str(default_golden(domain)),
            inputs=inputs,
            tasks=tasks,
            prompts_dir=prompts_dir,
            scripted_agents=scripted_agents,
        )


def flag(value) -> str:
    """A table's boolean cell: true, false, or empty where the evaluation gave none."""
    return "" if value is None else str(bool(value)).lower()


def outcome_columns(record: dict) -> dict[str, str]:
    """An episode record's success and its two channels, as table cells."""
    return {
        "success": flag(record["success"]),
        "channel_db": flag(record["channels"]["db"]),
        "channel_communicate": flag(record["channels"]["communicate"]),
    }


def write_tsv(rows: list[dict], header: list[str], out: str | Path) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=header, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(out, buf.getvalue())
