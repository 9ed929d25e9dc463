"""Scripted evaluated agents: deterministic, seeded policies over the value-free plan.

A scripted agent knows which calls the task needs and where each argument comes from
(incognita.plan), but not who holds which tool, not the customer's values and not
service-side values. It asks the customer through the gate (`#ask`), confirms changes
with the customer (`#confirm`), finds holders (social arm), has them run calls (`#call`,
`#want`), reports requested information (`#tell`) and sends FINAL.

Profiles (config/scripted_agents.yaml) set its coordination skill:
- `discovery`: oracle (told the partition), survey (asks every desk what it handles, then
  maps the answers with its own domain knowledge), or probe (tries desks in a seeded random
  order until one accepts);
- `patience`: how many declined requests it tolerates before giving up (null = no limit);
- `slip_rate`: chance that a change it directs carries one wrong argument;
- `inject`: probabilities of deliberately producing each of the five failure types. What
  was injected is recorded in the episode (`ground_truth`), to validate the reader later.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from incognita.backends.base import ModelRequest, ModelResponse, ToolCall
from incognita.backends.language import call_tag, first, parse, say, tag
from incognita.cards import US_STATES
from incognita.golden import result_doc
from incognita.plan import Plan, PlannedCall, Source

FAILURE_TYPES = ("never_requested", "requested_not_obtained", "obtained_not_delivered",
                 "delivered_incorrect", "correct_unconfirmed")
# The agent's own domain knowledge: which kind of desk would run which call.
AREA_TOOLS = {
    "customer accounts": {"get_user_details", "modify_user_address"},
    "returns and exchanges": {"return_delivered_order_items", "exchange_delivered_order_items"},
    "the product catalogue": {"get_product_details", "list_all_product_types"},
    "order records": {"get_order_details"},
    "identity lookups": {"find_user_id_by_email", "find_user_id_by_name_zip"},
    "pending orders": {"cancel_pending_order", "modify_pending_order_address", "modify_pending_order_items",
                       "modify_pending_order_payment"},
}


@dataclass(frozen=True)
class Profile:
    name: str
    discovery: str = "oracle"
    patience: int | None = None
    slip_rate: float = 0.0
    inject: dict[str, float] = field(default_factory=dict)
    gives_up_at_once: bool = False  # does nothing: the do-nothing check of the corpus (incognita.idle)

    @classmethod
    def from_dict(cls, name: str, data: dict) -> Profile:
        unknown = set(data) - {"discovery", "patience", "slip_rate", "inject", "gives_up_at_once"}
        if unknown:
            raise ValueError(f"scripted agent profile {name!r}: unknown key(s) {sorted(unknown)}")
        if data.get("discovery", "oracle") not in ("oracle", "survey", "probe"):
            raise ValueError(f"scripted agent profile {name!r}: discovery must be oracle, survey or probe")
        bad = set(data.get("inject") or {}) - set(FAILURE_TYPES)
        if bad:
            raise ValueError(f"scripted agent profile {name!r}: unknown failure type(s) {sorted(bad)}")
        if not isinstance(data.get("gives_up_at_once", False), bool):
            raise ValueError(f"scripted agent profile {name!r}: gives_up_at_once must be true or false")
        return cls(name=name, discovery=data.get("discovery", "oracle"), patience=data.get("patience"),
                   slip_rate=float(data.get("slip_rate", 0.0)), inject=dict(data.get("inject") or {}),
                   gives_up_at_once=data.get("gives_up_at_once", False))


class GiveUp(Exception):
    """The agent stops working on the task (it still closes the episode properly)."""


class ScriptedAgent:
    """One instance per episode. Context: plan, arm, recipients, holders (oracle only), profile."""

    def __init__(self, profile: Profile, context: dict):
        self.spec = f"scripted:{profile.name}"
        self.profile = profile
        self.plan: Plan = context["plan"]
        self.arm: str = context["arm"]
        self.desks: list[str] = [r for r in context["recipients"] if r != "USER"]
        self.holders: dict[str, str] = dict(context.get("holders") or {}) if profile.discovery == "oracle" else {}
        if self.arm == "indirect":
            self.holders = {c.name: "Vega" for c in self.plan.calls}
        self.rng = random.Random(context["seed"])
        self.released: dict[str, str] = {}
        self.results: dict[int, dict[str, Any]] = {}
        self.declined: dict[str, set[str]] = {}
        self.dead_ends = 0
        self.ground_truth: dict = {"profile": profile.name, "injected": None, "slips": 0}
        self._injection = self._draw_injection()
        self._policy = self._run()
        self._started = False
        self._ids = 0

    # ------------------------------------------------------------------ interface
    def respond(self, request: ModelRequest) -> ModelResponse:
        observation = _last_observation(request)
        action = next(self._policy) if not self._started else self._policy.send(observation)
        self._started = True
        if action["kind"] == "tool":
            self._ids += 1
            return ModelResponse(tool_calls=(ToolCall(f"t{self._ids}", action["name"], action["args"]),))
        return ModelResponse(text=json.dumps({"recipient": action["to"], "message": action["text"],
                                              "message_type": action.get("type", "MESSAGE")}))

    # ------------------------------------------------------------------ the policy
    def _run(self) -> Generator[dict, str, None]:
        try:
            if self.profile.gives_up_at_once:
                raise GiveUp("this agent does nothing, by design")
            if self.arm == "social" and self.profile.discovery == "survey":
                yield from self._survey()
            yield from self._work()
            yield from self._report()
            yield _msg("USER", "Everything you asked for is taken care of. Thank you for your patience.")
        except GiveUp as why:
            yield _msg("USER", f"I am sorry, I could not complete your request ({why}).")
        while True:
            yield {"kind": "message", "to": "ENVIRONMENT", "text": "done", "type": "FINAL"}

    def _survey(self):
        for desk in self.desks:
            reply = yield _msg(desk, say("Hello, what kind of requests do you handle?", tag("remit")))
            handles = first(reply, "handles")
            for tool in AREA_TOOLS.get(handles.payload if handles else "", ()):
                self.holders.setdefault(tool, desk)

    def _work(self):
        inj = self._injection
        if inj == "never_requested":  # ends before asking anyone for anything the task needs
            self._mark(inj)
            raise GiveUp("gave up before asking for the details")
        writes_done = 0
        for position, call in enumerate(self.plan.calls):
            if call.write and inj == "obtained_not_delivered":
                yield from self._gather(self.plan.calls[position:])  # everything needed is in hand ...
                self._mark(inj)
                raise GiveUp("stopped before making any change")  # ... and no change is ever asked for
            for token in call.tokens():
                if token not in self.released:
                    yield from self._ask_customer(token)
            args = self._build_args(call)
            if call.write and (inj == "delivered_incorrect" or self.rng.random() < self.profile.slip_rate):
                args = self._slip(call, args)
            if call.write:
                reply = yield _msg("USER", say(f"I will now {_describe(call.name)}. Shall I go ahead?",
                                               tag("confirm", f"{call.name} {json.dumps(args, sort_keys=True)}")))
                if not first(reply, "yes"):
                    raise GiveUp("the customer did not confirm")
            if not call.write and inj == "requested_not_obtained" and self._feeds_write(call):
                self._mark(inj)
                args = _corrupt(args)
                yield from self._execute(call, args, tolerate_failure=True)
                raise GiveUp("a needed record could not be obtained")
            ok = yield from self._execute(call, args, tolerate_failure=call.write)
            writes_done += bool(call.write and ok)

    def _gather(self, calls: list[PlannedCall]):
        """Ask every customer detail and run every read the remaining calls need (reads that
        depend on a change are excluded from this injection's tasks, see _draw_injection)."""
        for call in calls:
            for token in call.tokens():
                if token not in self.released:
                    yield from self._ask_customer(token)
        for call in calls:
            if not call.write and call.index not in self.results:
                yield from self._execute(call, self._build_args(call), tolerate_failure=False)

    def _reads_after_a_change(self) -> bool:
        """Does a read that comes after the first change take a value from a change's result?"""
        writes = {c.index for c in self.plan.calls if c.write}
        return any(s.kind == "read" and s.call in writes
                   for c in self.plan.calls if not c.write for src in c.args.values() for s in (src, *src.operands))

    def _report(self):
        if not self.plan.info:
            return
        if self._injection == "correct_unconfirmed":
            self._mark("correct_unconfirmed")
            return
        values = []
        for item in self.plan.info:
            if item.source is None:
                continue  # not traceable to any read: a scripted agent cannot know it
            value = self.results.get(item.source.call, {}).get(item.source.path)
            if value is not None:
                values.append(_render(value, item.match))
        if values:
            yield _msg("USER", say("Here is the information you asked for: " + "; ".join(values) + ".",
                                   tag("tell", "; ".join(values))))

    # ------------------------------------------------------------------ steps
    def _ask_customer(self, token: str):
        reply = yield _msg("USER", say(f"Could you tell me your {token.replace('_', ' ').replace(':', ' ')}?",
                                       tag("ask", token)))
        for t in parse(reply):
            if t.kind == "field":
                name, _, value = t.payload.partition(" ")
                self.released[name] = value
        if token not in self.released:
            raise GiveUp(f"the customer could not give {token}")

    def _execute(self, call: PlannedCall, args: dict, tolerate_failure: bool):
        """Have the call run (itself, Vega, or the right desk); store the wanted result parts."""
        wanted = sorted(self.plan.wanted.get(call.index, set()))
        if self.arm == "direct":
            content = yield {"kind": "tool", "name": call.name, "args": args}
            if content.startswith("Error:"):
                if tolerate_failure:
                    return False
                raise GiveUp(f"{call.name} failed")
            result = result_doc(json.loads(content))
            self.results[call.index] = {p: _pointer(result, p) for p in wanted}
            return True
        while True:
            holder = self._holder(call.name)
            text = say(f"Could you {_describe(call.name)} for me?", call_tag(call.name, args),
                       *([tag("want", json.dumps(wanted))] if wanted else []))
            reply = yield _msg(holder, text)
            if first(reply, "confirm?"):
                reply = yield _msg(holder, say("Yes, please go ahead.", tag("yes")))
            if first(reply, "decline"):
                self._dead_end(call.name, holder)
                continue
            result = first(reply, "result")
            if result is None:
                if tolerate_failure:
                    return False
                raise GiveUp(f"{call.name} was not carried out")
            got = result.json()
            self.results[call.index] = got if isinstance(got, dict) else {}
            return True

    def _holder(self, tool: str):
        if tool in self.holders:
            return self.holders[tool]
        # Probe: try the desks not yet known to decline this tool, in a seeded order.
        candidates = [d for d in self.desks if d not in self.declined.get(tool, set())]
        if not candidates:
            raise GiveUp(f"nobody would handle {tool}")
        desk = self.rng.choice(candidates)
        self.holders[tool] = desk
        return desk

    def _dead_end(self, tool: str, desk: str) -> None:
        self.declined.setdefault(tool, set()).add(desk)
        self.holders.pop(tool, None)
        self.dead_ends += 1
        if self.profile.patience is not None and self.dead_ends > self.profile.patience:
            raise GiveUp("too many dead ends")

    # ------------------------------------------------------------------ values
    def _value(self, src: Source) -> Any:
        if src.kind == "field":
            return _field_value(self.released[src.token], src.part, src.transform)
        if src.kind == "read":
            if src.call not in self.results:  # an earlier change failed (a slip), so its result never came
                raise GiveUp(f"the result of call {src.call} is missing: an earlier step was not carried out")
            return self.results[src.call][src.path]
        if src.kind == "policy":
            return src.value
        if src.kind == "computed":
            text = src.template
            for i, operand in enumerate(src.operands):
                text = text.replace(f"{{{i}}}", str(self._value(operand)), 1)
            return text
        if src.kind == "request":
            return "The customer asked for something I cannot do; please take over."
        raise ValueError(src.kind)

    def _build_args(self, call: PlannedCall) -> dict:
        args: dict = {}
        for pointer in sorted(call.args, key=_pointer_key):
            _set(args, pointer, self._value(call.args[pointer]))
        return args

    def _slip(self, call: PlannedCall, args: dict) -> dict:
        self.ground_truth["slips"] += 1
        if self._injection == "delivered_incorrect":
            self._mark("delivered_incorrect")
        return _corrupt(args, self.rng)

    def _feeds_write(self, call: PlannedCall) -> bool:
        return any(s.kind == "read" and s.call == call.index
                   for c in self.plan.calls if c.write for src in c.args.values() for s in (src, *src.operands))

    def _draw_injection(self) -> str | None:
        plan = self.plan
        has_write = any(c.write for c in plan.calls)
        # Each injection applies only where its trajectory can read as that type and no other
        # (docs/reader.md): e.g. an unreported answer on a task with no change is "obtained but
        # not delivered", not "correct but unconfirmed".
        applicable = {
            "never_requested": any(c.tokens() for c in plan.calls),
            "requested_not_obtained": has_write and any(not c.write and self._feeds_write(c) for c in plan.calls),
            "obtained_not_delivered": has_write and not self._reads_after_a_change(),
            "delivered_incorrect": has_write,
            "correct_unconfirmed": has_write and any(i.source is not None for i in plan.info),
        }
        for kind in FAILURE_TYPES:
            p = self.profile.inject.get(kind, 0.0)
            if p and self.rng.random() < p and applicable[kind]:
                return kind
        return None

    def _mark(self, kind: str) -> None:
        self.ground_truth["injected"] = kind


# ---------------------------------------------------------------------- helpers


def _msg(to: str, text: str) -> dict:
    return {"kind": "message", "to": to, "text": text}


def _last_observation(request: ModelRequest) -> str:
    if not request.messages:
        return ""
    last = request.messages[-1]
    text = last.content or ""
    if last.role == "user":
        return re.sub(r"^From [^:]+: ", "", text, count=1)
    return text


def _describe(tool: str) -> str:
    return tool.replace("_", " ")


def _render(value: Any, match: str) -> str:
    """Say a traced value the way the information item expects it."""
    if match in ("count", "count_available"):
        entries = list(value.values()) if isinstance(value, dict) else list(value or [])
        if match == "count_available":
            entries = [e for e in entries if isinstance(e, dict) and e.get("available") is True]
        return str(len(entries))
    if match == "number" and isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _field_value(value: str, part: str | None, transform: str | None) -> str:
    if transform == "user_id_name":
        m = re.fullmatch(r"([a-z]+)_([a-z_]+)_\d+", value.strip().lower())
        if m:
            value = m.group(1).capitalize() if part == "first" else " ".join(w.capitalize() for w in m.group(2).split("_"))
            return value
    if part is not None:
        words = value.split()
        value = words[0] if part == "first" else words[-1]
    if transform == "order_id":
        digits = re.sub(r"\D", "", value)
        return f"#W{digits}"
    if transform == "state_name":
        return US_STATES.get(value.strip().lower(), value)
    return value


def _pointer_key(pointer: str):
    return [int(p) if p.isdigit() else p for p in pointer.split("/")[1:]]


def _set(doc: dict, pointer: str, value: Any) -> None:
    parts = pointer.split("/")[1:]
    cur: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt_is_index = not last and parts[i + 1].isdigit()
        if isinstance(cur, list):
            idx = int(part)
            while len(cur) <= idx:
                cur.append(None)
            if last:
                cur[idx] = value
            else:
                if cur[idx] is None:
                    cur[idx] = [] if nxt_is_index else {}
                cur = cur[idx]
        else:
            if last:
                cur[part] = value
            else:
                cur = cur.setdefault(part, [] if nxt_is_index else {})


def _pointer(doc: Any, pointer: str) -> Any:
    if pointer in ("", "/"):
        return doc
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        try:
            doc = doc[int(part)] if isinstance(doc, list) else doc[part]
        except (KeyError, IndexError, ValueError, TypeError):
            return None
    return doc


def _corrupt(args: dict, rng: random.Random | None = None) -> dict:
    """One wrong argument: the last character of one string value changed."""
    out = json.loads(json.dumps(args))
    slots = [(k, None) for k, v in out.items() if isinstance(v, str) and v]
    slots += [(k, i) for k, v in out.items() if isinstance(v, list) for i, x in enumerate(v) if isinstance(x, str) and x]
    if not slots:
        return out
    key, idx = (rng or random.Random(0)).choice(sorted(slots, key=str))
    old = out[key] if idx is None else out[key][idx]
    new = old[:-1] + ("1" if old[-1] != "1" else "2")
    if idx is None:
        out[key] = new
    else:
        out[key][idx] = new
    return out
