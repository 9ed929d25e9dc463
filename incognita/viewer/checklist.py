"""The coordination reference of one task and arm, ticked off against one episode.

Each required holder, information item, call and (social arm) role assignment is marked with
the first event at which the episode satisfied it, or left open. "Satisfied" means what the
reader counts (incognita.access.reader.trial_reading): the checks below use the reader's own keys, facts and
matching, so the ticks add up to the reader's process measures for the same trial.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from incognita.access.episodes.loop.records import Disclosure, GatewayDecision, Message
from incognita.access.reader import trial_reading as reader

# The gate statuses under which the reader counts a customer fact as obtained.
_OBTAINED = ("released", "already_released")


def _first(events: list, test: Callable[[Any], bool]) -> dict | None:
    """Where the first event passing `test` sits: its position in the record and its turn."""
    for i, event in enumerate(events):
        if test(event):
            return {"event": i, "turn": event.turn}
    return None


def _accepted(event: Any) -> bool:
    return isinstance(event, GatewayDecision) and event.status == "accepted"


def _agent_message_to(who: str) -> Callable[[Any], bool]:
    return lambda e: (
        isinstance(e, Message) and e.sender == reader.AGENT and e.recipient == who and e.message_type == "MESSAGE"
    )


def _call_key(tool: str, arguments: Any, calls: reader.CallKeys) -> tuple[str, str]:
    return tool, calls.key(tool, arguments)


def _value(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def differences(call: dict, attempt: GatewayDecision, calls: reader.CallKeys) -> list[dict]:
    """How an attempt differs from a required call: the executor, each argument the two do not
    share the value of (`got` None: the attempt left it out), and the gateway's verdict."""
    out = []
    if attempt.proposer != call["executor"]:
        out.append({"what": "executor", "want": call["executor"], "got": attempt.proposer})
    want = call["arguments"] if isinstance(call["arguments"], dict) else {}
    got = attempt.arguments if isinstance(attempt.arguments, dict) else {}
    free = reader.HANDOFF_FREE_TEXT if call["name"] in calls.handoffs else None
    for name in [*want, *(k for k in got if k not in want)]:
        if name != free and _value(want.get(name)) != _value(got.get(name)):
            out.append({"what": name, "want": want.get(name), "got": got.get(name)})
    if attempt.status != "accepted":
        out.append({"what": "status", "want": "accepted", "got": attempt.status, "reason": attempt.reason})
    return out


def closest_attempt(call: dict, events: list, taken: set[int], calls: reader.CallKeys) -> dict | None:
    """The decision on a call of the same tool that comes nearest a required call no decision
    matched: the fewest differences (executor, arguments, verdict), the latest among equals;
    decisions matched to another required call are left out. None: the tool was never proposed."""
    tried = [
        (i, e, differences(call, e, calls))
        for i, e in enumerate(events)
        if isinstance(e, GatewayDecision) and e.tool == call["name"] and i not in taken
    ]
    if not tried:
        return None
    i, e, diff = min(tried, key=lambda t: (len(t[2]), -t[0]))
    return {
        "event": i,
        "turn": e.turn,
        "proposer": e.proposer,
        "status": e.status,
        "reason": e.reason,
        "differences": diff,
    }


def required_calls(events: list, spec: dict, calls: reader.CallKeys) -> list[dict]:
    """Each required call with the accepted decision matched to it, one to one and in order:
    by its expected executor, with the reference arguments (the reader's `execution`). A call
    left unmatched names its closest attempt (`closest_attempt`), so a failed episode points at
    the decision that went wrong."""
    accepted = [(i, e) for i, e in enumerate(events) if _accepted(e)]
    used: set[int] = set()
    out = []
    for call in spec["required_calls"]:
        want = (call["executor"], *_call_key(call["name"], call["arguments"], calls))
        match = next(
            (
                (i, e)
                for i, e in accepted
                if i not in used and (e.proposer, *_call_key(e.tool, e.arguments, calls)) == want
            ),
            None,
        )
        if match is not None:
            used.add(match[0])
        out.append(
            {
                "index": call["index"],
                "tool": call["name"],
                "arguments": call["arguments"],
                "tool_type": call["tool_type"],
                "executor": call["executor"],
                "at": None if match is None else {"event": match[0], "turn": match[1].turn},
            }
        )
    for call, item in zip(spec["required_calls"], out):  # after matching: every match is known
        if item["at"] is None:
            item["closest"] = closest_attempt(call, events, used, calls)
    return out


def information_items(events: list, task: dict, arm: str, trace: reader.Trace) -> list[dict]:
    """The reader's facts (customer tokens and service reads), each with where it was obtained
    and, when it never was, whether its source was approached (what the failure rule asks)."""
    out = []
    for fact in reader.required_facts(task, arm, trace.calls):
        if fact.kind == "customer":
            at = _first(
                events, lambda e, t=fact.key: isinstance(e, Disclosure) and e.token == t and e.status in _OBTAINED
            )
            item = {"kind": "customer", "token": fact.key, "holder": fact.holder}
        else:
            at = _first(events, lambda e, k=fact.key: _accepted(e) and _call_key(e.tool, e.arguments, trace.calls) == k)
            item = {
                "kind": "service",
                "tool": fact.key[0],
                "arguments": _arguments_of(task, fact.key, trace.calls),
                "holder": fact.holder,
            }
        obtained = reader._obtained(fact, trace)
        item.update(at=at, obtained=obtained, approached=None if obtained else reader._approached(fact, trace))
        out.append(item)
    return out


def _arguments_of(task: dict, key: tuple[str, str], calls: reader.CallKeys) -> Any:
    """The reference arguments of a service fact's read (the fact holds only their canonical key)."""
    for item in task["information_items"]["service"]:
        if _call_key(item["name"], item["arguments"], calls) == key:
            return item["arguments"]
    return None


def holders(events: list, spec: dict) -> list[dict]:
    """Each participant that must execute a required call: when the agent first wrote to it
    and when it first got a call accepted (the agent itself holds everything in direct)."""
    out = []
    for who in spec["executors"]:
        acted = _first(events, lambda e, w=who: _accepted(e) and e.proposer == w)
        contacted = None if who == reader.AGENT else _first(events, _agent_message_to(who))
        out.append({"holder": who, "contacted": contacted, "acted": acted})
    return out


def role_assignments(events: list, spec: dict) -> list[dict] | None:
    """Social arm only: each desk-tool pair, executed (an accepted call of that tool by that
    desk, any arguments) and contacted, as the reader's role identification counts them."""
    roles = spec.get("role_assignments")
    if roles is None:
        return None
    return [
        {
            "desk": r["desk"],
            "tool": r["tool"],
            "calls": r["calls"],
            "executed": _first(
                events, lambda e, d=r["desk"], t=r["tool"]: _accepted(e) and e.proposer == d and e.tool == t
            ),
            "contacted": _first(events, _agent_message_to(r["desk"])),
        }
        for r in roles
    ]


def checklist(events: list, task: dict, arm: str, calls: reader.CallKeys, task_id: str) -> dict:
    """The whole reference panel of an episode page (`task`: its entry in its domain's reference;
    `calls`: how the domain's calls compare; `task_id`: its qualified id)."""
    spec = task["arms"][arm]
    trace = reader.Trace(events, calls)
    return {
        "task": task_id,
        "level": task.get("level"),
        "desks_engaged": task.get("desks_engaged", []),
        "holders": holders(events, spec),
        "role_assignments": role_assignments(events, spec),
        "items": information_items(events, task, arm, trace),
        "calls": required_calls(events, spec, calls),
    }
