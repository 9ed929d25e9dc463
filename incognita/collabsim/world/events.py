"""The event log: everything that happens in a run, in order, on the simulated clock.

An event is a message, an action, a rejected message or action, a state change, a phase
change, or the run's start and end. Each carries an id, the step and simulated second it
happened at, its actor, who could see it (`visibility`: "all" or a list of agent ids) and a
payload. Metrics are computed from these events alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from incognita.common.io import InputError

KINDS = (
    "run_start",
    "private",
    "phase",
    "message",
    "message_rejected",
    "action",
    "invalid_action",
    "state",
    "probe",
    "probe_error",
    "run_end",
)
SYSTEM = "system"
ALL = "all"


@dataclass(frozen=True)
class Event:
    id: int
    step: int
    t: int  # simulated seconds since the start
    kind: str
    actor: str
    visibility: str | tuple[str, ...]
    payload: dict

    def to_dict(self) -> dict:
        vis = self.visibility if self.visibility == ALL else list(self.visibility)
        return {
            "id": self.id,
            "step": self.step,
            "t": self.t,
            "kind": self.kind,
            "actor": self.actor,
            "visibility": vis,
            "payload": self.payload,
        }

    def visible_to(self, agent: str) -> bool:
        return self.visibility == ALL or agent in self.visibility


class EventLog:
    """Append-only; ids are positions, so a replay that diverges shows where."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(
        self,
        step: int,
        t: int,
        kind: str,
        actor: str,
        payload: dict,
        visibility: str | list[str] | tuple[str, ...] = ALL,
    ) -> Event:
        if kind not in KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
        vis = ALL if visibility == ALL else tuple(sorted(set(visibility)))
        event = Event(len(self.events), step, t, kind, actor, vis, payload)
        self.events.append(event)
        return event

    def since(self, first_id: int, agent: str) -> list[Event]:
        return [e for e in self.events[first_id:] if e.visible_to(agent)]

    def dicts(self) -> list[dict]:
        return [e.to_dict() for e in self.events]


def canonical(obj: Any) -> str:
    """One line of JSON with sorted keys: the byte form of events and hashed states."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def to_jsonl(events: list[dict]) -> str:
    return "".join(canonical(e) + "\n" for e in events)


def state_hash(state: Any) -> str:
    return hashlib.sha256(canonical(state).encode("utf-8")).hexdigest()


def read_events(path: str | Path) -> list[dict]:
    """A run's events.jsonl; a line that is not a JSON event object stops with its line number."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read events ({exc.strerror})") from None
    events = []
    for n, line in enumerate(lines, 1):
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{n}: not a JSON event ({exc.msg})") from None
        if not isinstance(event, dict) or event.get("kind") not in KINDS:
            raise InputError(f"{path}:{n}: not an event (expected an object with a known 'kind')")
        events.append(event)
    if not events or events[-1]["kind"] != "run_end":
        raise InputError(f"{path}: incomplete run (the last event is not run_end)")
    return events
