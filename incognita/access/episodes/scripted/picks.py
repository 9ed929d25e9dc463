"""How a scripted agent of any domain takes values out of what it has read, and what a domain's
own knowledge of its records replaces.

The scripted agent (incognita.access.episodes.scripted.scripted_agent.ScriptedAgent) follows the
plan's value-free paths through the results it has read; at a `*` step (incognita.access.
episodes.agent_plan.PICK) it must choose one entry of a collection itself. How to choose is what
a domain knows about its records (retail: the order line the customer described, the variant
whose options it prefers; incognita.access.domains.retail.scripted), so a domain's scripted part
gives the agent class that knows it (`Domain.part("scripted").AGENT`). A domain that gives none
gets the plain agent (scripted_agent.PlainAgent): `PlainPicking` chooses the entry that states the
most of what the customer released (the only entry when there is one), and `PlainTelling` tells
the customer each traced information item as it reads it. Both are general: no rule names a
domain, a task or an id.

Who uses it: ScriptedAgent's core calls `_read_value`, `_report` and `_known_value`; a domain's
agent class overrides them (retail: EntryPicker, Telling, same_line_value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from incognita.access.episodes.loop.agent_plan import PICK, Source
from incognita.access.episodes.scripted.language import say, tag
from incognita.access.taxonomy import CORRECT_UNCONFIRMED


class GiveUp(Exception):
    """The agent stops working on the task (it still closes the episode properly)."""


@dataclass
class Choosing:
    """What one argument's picks are made for: the consuming call, the argument, and the
    entries already taken by the call's earlier arguments (two item slots name two items)."""

    call: str
    arg: str | None
    slot: str = ""  # the argument's pointer without list positions: the same slot in another call
    taken: dict = field(default_factory=dict)
    values: set = field(default_factory=set)  # values already placed in the call's arguments
    picked: list = field(default_factory=list)  # texts of the entries the call's arguments took
    lines: dict = field(default_factory=dict)  # list position -> the entry taken there (retail: an order line)
    position: int = 0  # the argument's place in its list (new_item_ids/1 replaces item_ids/1)
    record: str | None = None  # the record the call acts on (its first subject argument), once chosen
    sources: frozenset = frozenset()  # the earlier calls whose results the call's arguments come from
    index: int | None = None  # the consuming call's place in the plan
    pointer: str = ""  # the argument's own pointer (item_ids/1)
    relation: dict = field(default_factory=dict)  # key -> what stated relations give it (a domain's rules)
    args: dict = field(default_factory=dict)  # the call's arguments built so far (a derivation reads them)


def _leaves(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [t for v in node.values() for t in _leaves(v)]
    if isinstance(node, list):
        return [t for v in node for t in _leaves(v)]
    return [] if node is None else [str(node).lower()]


class PlainPicking:
    """Choosing by what the customer released: at each `*` the entry whose own values hold the
    most of the released values (ties: the first); relies on the agent's `results`, `released`."""

    def _read_value(self, src: Source, choosing: Choosing):
        if src.call not in self.results:
            raise GiveUp(f"the result of call {src.call} is missing: an earlier step was not carried out")
        node = self.results[src.call]
        said = {v.lower() for v in self.released.values()}
        for step in src.steps:
            if step == PICK:
                entries = list(node.values()) if isinstance(node, dict) else list(node or [])
                if not entries:
                    raise GiveUp(f"nothing to choose from in the result of call {src.call}")
                node = max(entries, key=lambda e: len(said & set(_leaves(e))))
            elif isinstance(node, dict) and step in node:
                node = node[step]
            else:
                raise GiveUp(f"the result of call {src.call} has no {step!r}")
        return node
        yield  # a generator, as the domain pickers are (they may ask or read to choose)

    def _known_value(self, src: Source, choosing: Choosing) -> Any | None:
        """A value the agent already knows without reading (none here; a domain's rules may know one)."""
        return None


def render(value: Any, match: str) -> str:
    """Say a traced value the way the information item expects it (its golden `match`)."""
    if match in ("count", "count_available"):
        entries = list(value.values()) if isinstance(value, dict) else list(value or [])
        if match == "count_available":
            entries = [e for e in entries if isinstance(e, dict) and e.get("available") is True]
        return str(len(entries))
    if match == "number" and isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def tell(values: list[str]) -> dict:
    """The agent's message that tells the customer `values`."""
    text = "; ".join(values)
    return {
        "kind": "message",
        "to": "USER",
        "text": say(f"Here is the information you asked for: {text}.", tag("tell", text)),
    }


class PlainTelling:
    """Telling the customer each information item the plan traces to a read, as read (an
    injected unconfirmed result tells nothing: the reader must read it as such).

    `_report` is the whole procedure; a domain that knows more of its records overrides its four
    steps (retail: incognita.access.domains.retail.scripted.telling): what it gathers before
    telling, an item the records settle without a read, the choice an item's read is made
    for, and the values no single read holds."""

    def _report(self):
        if not self.plan.info:
            return
        if self._injection == CORRECT_UNCONFIRMED:
            self._mark(CORRECT_UNCONFIRMED)
            return
        gathered = self._telling_gathered()
        values = []
        for item in self.plan.info:
            if item.source is None or item.source.call not in self.results:
                continue  # not traceable to any read, or its read never came: it cannot know it
            for token in item.source.selected_by:
                if token not in self.released:
                    yield from self._ask_customer(token)
            value = self._told_from_records(item.source, gathered)
            if value is None:
                try:
                    value = yield from self._read_value(item.source, self._telling_choice(item.source))
                except GiveUp:
                    continue  # that part of the record is not there: nothing to tell
            if value is not None:
                values.append(render(value, item.match))
        values += yield from self._untraced_values(gathered)
        if values:
            yield tell(values)

    def _telling_gathered(self) -> Any:
        """What the domain's rules read once before telling (nothing, here)."""
        return None

    def _told_from_records(self, src: Source, gathered: Any) -> Any:
        """A value the records settle without reading along the item's path (none, here)."""
        return None

    def _telling_choice(self, src: Source) -> Choosing:
        """What the picks of an item's read are made for."""
        return Choosing(call="", arg=None)

    def _untraced_values(self, gathered: Any):
        """Values of the items no single read holds (none, here: the plain agent cannot know them)."""
        return []
        yield  # a step of the agent's generator, like the others


def has_path(node: Any, steps: tuple[str, ...]) -> bool:
    """Does a value-free path lead through this node (PICK steps through any entry)?"""
    for i, step in enumerate(steps):
        if step == PICK:
            children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
            return any(has_path(child, steps[i + 1 :]) for child in children)
        if not isinstance(node, dict) or step not in node:
            return False
        node = node[step]
    return True
