"""The plan a scripted agent is given: the golden calls with every value, identifier and
list index removed.

Per call the plan keeps the tool name and, per argument, only where its value comes from:

* `field`: a customer detail, by gate token (the agent must `#ask` for it);
* `read`: a part of an earlier call's result, as a value-free path: the field names along
  the golden JSON pointer, with every key that is an identifier (a number, an item or
  payment id, a product name) and every list index replaced by `PICK`, "the entry these
  customer facts select" (`selected_by`, tokens) or, when nothing selects, the entry the
  agent must work out itself (or the only one);
* `policy`: the name of a policy vocabulary (`config/vocabulary.yaml`): the term itself is
  public policy the agent knows, so the plan does not carry it; the tokens the customer
  picks it with are in `selected_by`;
* `computed`: an expression template whose operands are themselves sources;
* `request`: free text the agent writes from the customer's request.
* `derived`: a value a rule of the domain (`rule`, the golden rules' `DERIVATIONS`) computes from
  its operands, themselves sources (fields and reads). It is known to whoever holds the inputs:
  the agent obtains the operands as it would for any argument, then applies the rule, which the
  domain's scripted agent supplies (`ScriptedAgent.derive`); one without it gives up.
* `unsourced`: a value no participant can supply (upstream's gold invents it, or an intended
  failure's made-up id). The plan carries the kind and why, never the gold's value: the agent
  cannot build that argument and gives up, so the failure is recorded, not hidden.

Which entries the golden solution took, and which values it used, never enter the plan:
the agent reads, matches what the customer released against the entries and chooses
(incognita.access.episodes.scripted.scripted_agent). For an entry that is only an identifier (an order id
in a profile's order list) the selecting facts are those that select inside the reads of
that entry, e.g. the item names that pick lines of the order: the order holding the named
items. Intended failures and exploration-only reads are left out: the agent decides itself
what it must read to choose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from incognita.access.golden.provenance import pointer_parts, resolve_pointer, result_doc
from incognita.access.golden.upstream_replay import INITIAL_STATE

PICK = "*"  # a path step that selects one entry of a collection
# A key is a field name (kept in the path) when it is a lower-case name (words, underscores,
# spaces, slashes) with no run of digits; anything else (an item id, "credit_card_9513926", "T-Shirt", a list index) is an
# identifier or a position and becomes PICK.
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_ /-]*")  # option names too: "battery life", "bagged/bagless"


@dataclass(frozen=True)
class Source:
    kind: str  # field | read | policy | computed | request | derived | unsourced
    token: str | None = None
    part: str | None = None
    transform: str | None = None
    call: int | None = None
    steps: tuple[str, ...] = ()  # read: field names and PICK, from the result's root
    vocabulary: str | None = None  # policy: which vocabulary (the argument name)
    template: str | None = None  # computed: expression with {0}, {1}... for operands
    operands: tuple[Source, ...] = ()  # computed, derived: the sources of the inputs
    rule: str | None = None  # derived: the domain rule's name; unsourced: why
    selected_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedCall:
    index: int
    name: str
    write: bool
    args: dict[str, Source]  # pointer into the call's own arguments -> where its value comes from

    def tokens(self) -> list[str]:
        """Customer tokens this call needs: its field arguments and its selectors."""
        seen: dict[str, None] = {}
        for src in self.args.values():
            for s in (src, *src.operands):
                if s.kind == "field" and s.token:
                    seen.setdefault(s.token)
                seen.update(dict.fromkeys(s.selected_by))
        return list(seen)


@dataclass(frozen=True)
class InfoItem:
    source: Source | None
    match: str = "exact"


@dataclass
class Plan:
    calls: list[PlannedCall]
    info: list[InfoItem]
    # Results the agent already has: the calls of the task's message history (golden origin
    # initial_state), call index -> result. The conversation the agent is shown holds them.
    history: dict[int, Any] = field(default_factory=dict)

    def tokens(self) -> list[str]:
        """Customer tokens the plan consumes, in first-use order (selectors included)."""
        tokens = [t for call in self.calls for t in call.tokens()]
        tokens += [t for item in self.info if item.source for t in item.source.selected_by]
        return list(dict.fromkeys(tokens))


def value_free_steps(pointer: str) -> tuple[str, ...]:
    """The field names along a JSON pointer, identifiers and list indices replaced by PICK."""
    parts = pointer_parts(pointer)
    return tuple(p if _FIELD_NAME.fullmatch(p) and not re.search(r"\d{3,}", p) else PICK for p in parts)


def _source(prov: dict, pointer: str) -> Source:
    kind = prov["kind"]
    selected = tuple(prov.get("selected_by") or ())
    if kind == "field":
        return Source("field", token=prov["token"], part=prov.get("part"), transform=prov.get("transform"))
    if kind == "read":
        return Source("read", call=prov["call"], steps=value_free_steps(prov.get("path", "")), selected_by=selected)
    if kind == "policy":
        return Source("policy", vocabulary=prov["vocabulary"], selected_by=selected)
    if kind == "request":
        return Source("request")
    if kind == "derived":
        operands = tuple(_source(part, pointer) for part in prov.get("from") or ())
        return Source("derived", rule=prov["rule"], operands=operands, selected_by=selected)
    if kind == "unsourced":
        return Source("unsourced", rule=prov.get("why"))
    raise ValueError(f"golden provenance kind {kind!r} at {pointer} has no value-free source")


def _computed(prov: dict, expression: str, pointer: str) -> Source:
    """The expression with each operand replaced by {i}; its operands' sources in order."""
    operands, template = [], expression
    for i, part in enumerate(prov["from"]):
        template = re.sub(r"(?<![\d.])" + re.escape(part["operand"]) + r"(?![\d.])", f"{{{i}}}", template, count=1)
        operands.append(_source(part, pointer))
    if re.search(r"\d", re.sub(r"\{\d+\}", "", template)):
        raise ValueError(f"golden computed expression at {pointer} keeps a number that is no operand: {template!r}")
    return Source("computed", template=template, operands=tuple(operands))


def _entry_selectors(golden: dict) -> dict[tuple[int, str], tuple[str, ...]]:
    """(call, path) of a pick whose entry is a bare identifier (an order id in a profile) ->
    the tokens that select inside the reads run on that entry (the items of that order)."""
    out: dict[tuple[int, str], list[str]] = {}
    for c in golden["calls"]:
        if not c["counted"] or c["tool_type"] == "write":
            continue
        for prov in c["provenance"].values():
            if prov["kind"] != "read" or prov.get("selected_by") or PICK not in value_free_steps(prov.get("path", "")):
                continue
            key = (prov["call"], prov.get("path", ""))
            inside = [
                t
                for other in golden["calls"]
                if other["counted"]
                for p in other["provenance"].values()
                for q in (p, *(p.get("from") or ()))
                if q.get("kind") == "read" and q.get("call") == c["index"]
                for t in q.get("selected_by") or ()
            ]
            # A record whose values a later call takes beside details the customer states (an
            # order's street address, next to the city and state the customer names) is the
            # record those details describe: they select it too.
            beside = [
                q["token"]
                for other in golden["calls"]
                if other["counted"]
                and any(
                    q.get("kind") == "read" and q.get("call") == c["index"]
                    for p in other["provenance"].values()
                    for q in (p, *(p.get("from") or ()))
                )
                for p in other["provenance"].values()
                for q in (p, *(p.get("from") or ()))
                if q.get("kind") == "field" and q.get("token")
            ]
            if inside or beside:
                out.setdefault(key, []).extend(inside + beside)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def plan_from_golden(golden: dict) -> Plan:
    through = _entry_selectors(golden)

    def source(prov: dict, arguments: dict, pointer: str) -> Source:
        if prov["kind"] == "computed":
            return _computed(prov, str(resolve_pointer(arguments, pointer)), pointer)
        src = _source(prov, pointer)
        extra = through.get((prov.get("call"), prov.get("path", ""))) if prov["kind"] == "read" else None
        if extra and not src.selected_by:
            src = Source("read", call=src.call, steps=src.steps, selected_by=extra)
        return src

    calls = []
    for c in golden["calls"]:
        if not c["counted"]:
            continue
        args = {ptr: source(prov, c["arguments"], ptr) for ptr, prov in c["provenance"].items()}
        calls.append(PlannedCall(index=c["index"], name=c["name"], write=c["tool_type"] == "write", args=args))
    info = []
    for item in golden["information_channel"]:
        prov = item["provenance"]
        info.append(
            InfoItem(
                source=_source(prov, "") if prov and prov["kind"] == "read" else None,
                match=(prov or {}).get("match", "exact"),
            )
        )
    history = {c["index"]: result_doc(c["result"]) for c in golden["calls"] if c["origin"] == INITIAL_STATE}
    return Plan(calls=calls, info=info, history=history)
