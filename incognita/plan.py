"""The plan a scripted agent is given: the golden trajectory with every value removed.

A scripted agent knows which calls the task needs and where each argument comes from
(a customer field by token, a part of an earlier call's result by JSON pointer, the
policy vocabulary, a sum of earlier results) but not the values themselves: it must still
ask the customer through the gate and obtain reads from whoever holds the tools. Policy
vocabulary values are public knowledge and stay in. Intended failures and
exploration-only reads are left out: they are not part of what must be done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    kind: str  # field | read | policy | computed | request
    token: str | None = None
    part: str | None = None
    transform: str | None = None
    call: int | None = None
    path: str = ""
    value: str | None = None  # policy vocabulary only
    template: str | None = None  # computed: expression with {0}, {1}... for operands
    operands: tuple["Source", ...] = ()
    selected_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedCall:
    index: int
    name: str
    write: bool
    args: dict[str, Source]  # JSON pointer into the arguments -> where its value comes from

    def tokens(self) -> list[str]:
        """Customer tokens this call needs: its field arguments and the selectors of its reads."""
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
    wanted: dict[int, set[str]] = field(default_factory=dict)  # call index -> result pointers later needed

    def tokens(self) -> list[str]:
        """Customer tokens the plan consumes, in first-use order (selectors included)."""
        return list(dict.fromkeys(t for call in self.calls for t in call.tokens()))


def _source(prov: dict, arguments: dict, pointer: str) -> Source:
    kind = prov["kind"]
    selected = tuple(prov.get("selected_by") or ())
    if kind == "field":
        return Source("field", token=prov["token"], part=prov.get("part"), transform=prov.get("transform"),
                      selected_by=selected)
    if kind == "read":
        return Source("read", call=prov["call"], path=prov.get("path", ""), selected_by=selected)
    if kind == "policy":
        return Source("policy", value=_at(arguments, pointer), selected_by=selected)
    if kind == "computed":
        expression = str(_at(arguments, pointer))
        operands, template = [], expression
        for i, part in enumerate(prov["from"]):
            template = re.sub(r"(?<![\d.])" + re.escape(part["operand"]) + r"(?![\d.])", "{%d}" % i, template, count=1)
            operands.append(_source(part, arguments, pointer))
        return Source("computed", template=template, operands=tuple(operands))
    if kind == "request":
        return Source("request", value=None)
    if kind == "opening":
        return Source("policy", value=_at(arguments, pointer))
    raise ValueError(f"unknown provenance kind {kind!r} at {pointer}")


def _at(doc, pointer: str):
    for part in [p for p in pointer.split("/")[1:]]:
        part = part.replace("~1", "/").replace("~0", "~")
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def plan_from_golden(golden: dict) -> Plan:
    calls = []
    for c in golden["calls"]:
        if not c["counted"]:
            continue
        args = {ptr: _source(prov, c["arguments"], ptr) for ptr, prov in c["provenance"].items()}
        calls.append(PlannedCall(index=c["index"], name=c["name"], write=c["tool_type"] == "write", args=args))
    info = []
    for item in golden["information_channel"]:
        prov = item["provenance"]
        info.append(InfoItem(source=_source(prov, {}, "") if prov and prov["kind"] == "read" else None,
                             match=(prov or {}).get("match", "exact")))
    plan = Plan(calls=calls, info=info)
    for call in calls:
        for src in call.args.values():
            for s in (src, *src.operands):
                if s.kind == "read":
                    plan.wanted.setdefault(s.call, set()).add(s.path)
    for item in info:
        if item.source is not None:
            plan.wanted.setdefault(item.source.call, set()).add(item.source.path)
    return plan
