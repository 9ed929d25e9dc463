"""One episode page's data: the record's events laid out in lanes, the outcome, the reader's
row and failure rule, and the coordination reference ticked off against the events."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from incognita.access.episodes.loop.records import EpisodeRecord, event_to_dict
from incognita.access.reader import trial_reading as reader
from incognita.access.reader.trial_reading import CallKeys
from incognita.common.io import InputError, read_json
from incognita.viewer.checklist import checklist
from incognita.viewer.failure_rule import explain

ENVIRONMENT = "ENVIRONMENT"


def service_side(partition_path: str | Path, registry_path: str | Path) -> dict[str, list[str]]:
    """Per registered arm, who holds its tools: the agent, Vega, or all six desks. Every episode
    of an arm gets these lanes, so its layout does not depend on who happened to act."""
    from incognita.access.arm_registry import arm_registry
    from incognita.access.reference.partition import load_partition

    partition = load_partition(partition_path)
    return {name: sorted(arm.owners(partition)) for name, arm in arm_registry(registry_path).arms.items()}


def lanes(record: EpisodeRecord, service: list[str]) -> list[str]:
    """The participants in the order the timeline draws them: the agent, the customer, the
    arm's service side (Vega or the desks, alphabetically) with anyone else the events name,
    and ENVIRONMENT, which runs the tools and receives FINAL."""
    seen = set(service)
    for e in record.events:
        seen.update(
            getattr(e, name, None) for name in ("sender", "recipient", "proposer", "actor", "referrer", "holder")
        )
    middle = sorted(p for p in seen if p and p not in (reader.AGENT, reader.USER, ENVIRONMENT))
    return [reader.AGENT, reader.USER, *middle, ENVIRONMENT]


def episode_key(arm: str, model: str, task: str, rep: int) -> str:
    """The stable link of a trial (`#arm/model/task/rep`), also the data file's key."""
    return f"{arm}/{model}/{task}/{rep}"


def _record(path: Path) -> EpisodeRecord:
    try:
        return EpisodeRecord.from_dict(read_json(path))
    except (ValueError, TypeError) as exc:
        raise InputError(f"{path}: not an episode record ({exc})") from None


def episode_page(path: Path, trial: dict, reference_task: dict, service: list[str] = ()) -> dict:
    """Everything the episode page shows, from the record at `path`, its row of the trials
    table (`trial`), its task's entry in the coordination reference and the arm's service side
    (`service_side`)."""
    record = _record(path)
    findings = trial.get("participant_findings")
    trial = {k: v for k, v in trial.items() if k != "participant_findings"}  # shown once, parsed
    cell = record.cell
    arm = cell["arm"]
    calls = CallKeys.of(str(cell["task"]))
    return {
        "kind": "episode",
        "key": episode_key(arm, str(cell["model"]), str(cell["task"]), int(cell["rep"])),
        "cell": cell,
        "seed": record.seed,
        "models": record.models,
        "lanes": lanes(record, service),
        "events": [event_to_dict(e) for e in record.events],
        "outcome": {
            "termination": record.termination,
            "turns": record.turns,
            "success": record.success,
            "database_only_success": record.database_only_success,
            "channels": record.channels,
            "information_channel": record.information_channel,
            "judgements": record.judgements,
            "final_db_hash": record.final_db_hash,
            "gold_hash": (record.reference or {}).get("gold_hash"),
            "error": record.error,
        },
        "usage": {role: asdict(u) for role, u in record.usage.items()},
        "wall_time_s": record.wall_time_s,
        "ground_truth": record.ground_truth,
        "versions": {"code": record.code_version, "card": record.card, "schema": record.schema_version},
        "trial": trial,
        "failure": explain(record.events, reference_task, arm, trial.get("failure_type"), calls),
        # The participant audit's findings as the reader recorded them (null: the table has none).
        "findings": None if findings is None else json.loads(findings),
        "reference": checklist(record.events, reference_task, arm, calls, str(cell["task"])),
    }
