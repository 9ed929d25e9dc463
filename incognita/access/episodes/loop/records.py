"""Typed, versioned episode records: the contract between the harness and the reader.

An episode is an ordered list of events plus the outcome. Events are small frozen
dataclasses with a `type` tag; `to_dict`/`event_from_dict` convert them for JSON. The
reader relies only on these structured events, never on free text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from incognita.common.usage import Usage

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Message:
    """One directed message. message_type is MESSAGE, or FINAL for the end signal."""

    type: ClassVar[str] = "message"
    turn: int
    sender: str
    recipient: str
    text: str
    message_type: str = "MESSAGE"


@dataclass(frozen=True)
class ToolProposal:
    """A participant (or the agent itself, in direct) proposes a tool call."""

    type: ClassVar[str] = "tool_proposal"
    turn: int
    call_id: str
    proposer: str
    tool: str
    arguments: Any


@dataclass(frozen=True)
class GatewayDecision:
    """What the gateway did with a proposal: accepted, not_owner, inadmissible or error."""

    type: ClassVar[str] = "gateway_decision"
    turn: int
    call_id: str
    proposer: str
    tool: str
    arguments: Any
    status: str
    reason: str | None = None
    result: Any = None
    write: bool = False


@dataclass(frozen=True)
class Disclosure:
    """The disclosure gate handled a request for one customer field."""

    type: ClassVar[str] = "disclosure"
    turn: int
    token: str
    status: str  # released | already_released | unknown | refused
    value: str | None = None
    reason: str | None = None  # why a request was refused (incognita.access.episodes.loop.disclosure_gate)


@dataclass(frozen=True)
class ProtocolError:
    """Output that breaks the protocol (malformed JSON, unknown recipient, ...); the episode goes on."""

    type: ClassVar[str] = "protocol_error"
    turn: int
    actor: str
    reason: str
    raw: str


@dataclass(frozen=True)
class Referral:
    """In an arm whose holders refer: a holder's reply to the agent named one other holder (the
    one it sends the agent to). Detected from the reply's words, whatever plays the holder."""

    type: ClassVar[str] = "referral"
    turn: int
    referrer: str
    holder: str


@dataclass(frozen=True)
class Truncation:
    type: ClassVar[str] = "truncation"
    turn: int
    budget: int


EVENT_TYPES = {
    cls.type: cls for cls in (Message, ToolProposal, GatewayDecision, Disclosure, ProtocolError, Referral, Truncation)
}
Event = Message | ToolProposal | GatewayDecision | Disclosure | ProtocolError | Referral | Truncation


def event_to_dict(event: Event) -> dict:
    return {"type": event.type, **asdict(event)}


def event_from_dict(data: dict) -> Event:
    try:
        cls = EVENT_TYPES[data["type"]]
    except KeyError:
        raise ValueError(f"unknown event type {data.get('type')!r}") from None
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class EpisodeRecord:
    """Everything about one trial. `error` is set only for breakage outside the agent's control."""

    cell: dict  # arm, model, task, rep
    seed: int
    models: dict[str, str]
    code_version: str
    card: dict  # version, sha256
    reference: dict  # golden sha256, gold hash
    events: list[Event] = field(default_factory=list)
    termination: str = "running"  # final | truncated | error
    turns: int = 0
    final_db_hash: str | None = None
    channels: dict[str, bool | None] = field(default_factory=dict)
    success: bool | None = None
    database_only_success: bool | None = None
    usage: dict[str, Usage] = field(default_factory=dict)
    wall_time_s: float = 0.0
    error: str | None = None
    ground_truth: dict = field(default_factory=dict)
    information_channel: str = (
        "substring"  # how the information channel was scored (incognita.access.episodes.loop.evaluation)
    )
    judgements: list[dict] = field(default_factory=list)  # the judge's verdict on each assertion
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["events"] = [event_to_dict(e) for e in self.events]
        out["usage"] = {role: asdict(u) for role, u in self.usage.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict) -> EpisodeRecord:
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"episode schema version {data.get('schema_version')} is not {SCHEMA_VERSION}")
        kwargs = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        kwargs["events"] = [event_from_dict(e) for e in data.get("events", [])]
        kwargs["usage"] = {role: Usage(**u) for role, u in data.get("usage", {}).items()}
        return cls(**kwargs)
