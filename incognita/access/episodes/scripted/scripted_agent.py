"""Scripted evaluated agents: deterministic, seeded policies over the value-free plan.

A scripted agent knows which calls the task needs, their argument names and where each
argument comes from (incognita.access.episodes.loop.agent_plan), but not who holds which tool, not the customer's
values, not service-side values and no identifier, pointer or list index of the golden
solution. It asks the customer through the gate (`#ask`), has reads run and takes the
whole result (`#want [""]`), picks the entry of a collection that matches what the
customer released (how is its domain's knowledge, incognita.access.episodes.scripted.picks:
retail's agent takes the variant whose options are the stated preferences, the order holding
the named items, the payment method of the named kind), takes policy terms from the
vocabulary it knows, confirms changes with the customer (`#confirm`), has holders run calls
(`#call`), reports requested information (`#tell`) and sends FINAL.

`ScriptedAgent` is the domain-free core; an agent is a class made of it and the picking and
telling of its domain (`agent_class`: the domain's scripted part, else `PlainAgent`).

Profiles (config/scripted_agents.yaml) set its coordination skill:
- `discovery`: oracle (told the partition), survey (asks every desk what it handles, then
  maps the replies onto the tools' names and descriptions, incognita.access.episodes.scripted.discovery;
  tools left unmapped are probed), or probe (tries desks in a seeded random order until
  one accepts);
- `patience`: how many dead ends it tolerates before giving up (null = no limit): a request
  declined without a referral, or declined by the holder a referral named; a referral is
  followed first, uncharged;
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

from incognita.access.episodes.loop.agent_plan import Plan, PlannedCall, Source
from incognita.access.episodes.scripted.discovery import content_words, map_replies, read_map
from incognita.access.episodes.scripted.language import (
    call_tag,
    first,
    parse,
    placeholders,
    say,
    strip_placeholders,
    tag,
)
from incognita.access.episodes.scripted.picks import Choosing, GiveUp, PlainPicking, PlainTelling
from incognita.access.episodes.scripted.reconsidering import Reconsidering, refusal_reason
from incognita.access.golden.provenance import result_doc
from incognita.access.taxonomy import (
    CORRECT_UNCONFIRMED,
    DELIVERED_INCORRECT,
    FAILURE_TYPES,
    NEVER_REQUESTED,
    OBTAINED_NOT_DELIVERED,
    REQUESTED_NOT_OBTAINED,
)
from incognita.common.backends.base import ModelRequest, ModelResponse, ToolCall

MAX_DEMANDS = 8  # how many times the agent lets the customer add a demand before starting


def tool_catalog(schemas: list[dict], writes: set[str] | frozenset[str] = frozenset()) -> dict[str, dict]:
    """What an agent of the domain knows of each tool, from OpenAI-style function schemas:
    its description, its parameter names and whether it changes anything."""
    out = {}
    for schema in schemas:
        fn = schema.get("function", schema)
        out[fn["name"]] = {
            "description": fn.get("description") or "",
            "params": list((fn.get("parameters") or {}).get("properties") or {}),
            "write": fn["name"] in writes,
        }
    return out


@dataclass(frozen=True)
class Profile:
    name: str
    discovery: str = "oracle"
    patience: int | None = None
    slip_rate: float = 0.0
    inject: dict[str, float] = field(default_factory=dict)
    gives_up_at_once: bool = False  # does nothing: the do-nothing check of the corpus (incognita.access.selection.idle)

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
        return cls(
            name=name,
            discovery=data.get("discovery", "oracle"),
            patience=data.get("patience"),
            slip_rate=float(data.get("slip_rate", 0.0)),
            inject=dict(data.get("inject") or {}),
            gives_up_at_once=data.get("gives_up_at_once", False),
        )


class ScriptedAgent:
    """The domain-free core of a scripted agent; one instance per episode. Context: the domain,
    plan, recipients, what the arm says (agent_executes: it holds the tools; holders_declared: it
    is told who does), holders, profile. The holders map is read only where it is declared, or
    by the oracle profile, which knows it by design. A domain's agent class mixes in how it picks
    entries and tells information (`_read_value`, `_report`, `_known_value`) and how it reads a
    demand's kind of change (`_action_words`)."""

    # How the domain's toolkit terms are said in everyday words, for reading a declared map
    # (discovery.read_map); a domain's agent class gives its own.
    TOOL_WORDS: dict[str, str] = {}

    def __init__(self, profile: Profile, context: dict):
        domain = context["domain"]
        self.spec = f"scripted:{profile.name}"
        self.profile = profile
        # What any agent of the domain knows: the arguments naming the record a call acts on,
        # and how a released value is written in the form the golden file names (golden part).
        self.subject_arguments: tuple[str, ...] = domain.subject_arguments
        self._field_value = domain.golden.field_value if "golden" in domain.parts else _plain_field_value
        self.plan: Plan = context["plan"]
        self.agent_executes: bool = context["agent_executes"]
        self.holders_declared: bool = context["holders_declared"]
        self.desks: list[str] = [r for r in context["recipients"] if r != "USER"]
        self.tools: dict[str, dict] = dict(context.get("tools") or {})
        self.holders: dict[str, str] = dict(context.get("holders") or {}) if profile.discovery == "oracle" else {}
        if self.holders_declared and "declared_roles" in context:
            # Several holders, each declared with its role text (the map its prompt shows): read
            # as a reader of the domain reads it, the tools' terms in everyday words (discovery.
            # read_map; the oracle keeps the true map).
            described = {name: tool["description"] for name, tool in self.tools.items()}
            for tool, desk in read_map(context["declared_roles"], described, self.TOOL_WORDS).items():
                self.holders.setdefault(tool, desk)
        elif self.holders_declared and not self.agent_executes:  # one holder, declared by being the only one
            known = context["holders"]
            self.holders = {c.name: known[c.name] for c in self.plan.calls}
        self.vocabulary: dict[str, list[str]] = {k: list(v) for k, v in (context.get("vocabulary") or {}).items()}
        self.rng = random.Random(context["seed"])
        self.released: dict[str, str] = {}
        self.requests: list[str] = []  # the customer's own demands, as raised (placeholders removed)
        self.demands: list[str] = []  # the same demands with their placeholders (sets.py, relations.py)
        self.mentioned: list[str] = []  # the tokens those demands name as placeholders (<item:...>)
        self.unsure: set[str] = set()  # tokens the customer said it is not sure of
        self.results: dict[int, Any] = dict(self.plan.history)  # call index -> its whole result
        self.explored: dict[str, Any] = {}  # (tool, arguments) -> result of a read made to choose
        self.chosen: dict[tuple, Any] = {}  # a pick, once made, holds for later calls ...
        self.used: dict[tuple, set] = {}  # ... except one that runs the same tool on the same slot again
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
        return ModelResponse(
            text=json.dumps(
                {"recipient": action["to"], "message": action["text"], "message_type": action.get("type", "MESSAGE")}
            )
        )

    # ------------------------------------------------------------------ the policy
    def _run(self) -> Generator[dict, str, None]:
        if self._injection == NEVER_REQUESTED:
            # Leaves without a word to anyone: the reader's "approached" is any contact with a
            # fact's source (the customer included), so even a goodbye would be an approach.
            self._mark(NEVER_REQUESTED)
            while True:
                yield {"kind": "message", "to": "ENVIRONMENT", "text": "done", "type": "FINAL"}
        try:
            if self.profile.gives_up_at_once:
                raise GiveUp("this agent does nothing, by design")
            if not self.holders_declared and self.profile.discovery == "survey":
                yield from self._survey()
            yield from self._listen()
            yield from self._work()
            yield from self._report()
            yield _msg("USER", "Everything you asked for is taken care of. Thank you for your patience.")
        except GiveUp as why:
            yield _msg("USER", f"I am sorry, I could not complete your request ({why}).")
        while True:
            yield {"kind": "message", "to": "ENVIRONMENT", "text": "done", "type": "FINAL"}

    def _survey(self):
        replies = {}
        for desk in self.desks:
            reply = yield _msg(desk, say("Hello, what kind of requests do you handle?", tag("remit")))
            handles = first(reply, "handles")
            prose = [line for line in (reply or "").splitlines() if not line.startswith("#")]
            replies[desk] = " ".join(prose + ([handles.payload] if handles and handles.payload else []))
        described = {name: tool["description"] for name, tool in self.tools.items()}
        for tool, desk in map_replies(replies, described).items():
            self.holders.setdefault(tool, desk)

    def _listen(self):
        """Let the customer say everything it needs before choosing anything: its demands are
        facts the choices are matched against (the scripted customer raises one per reply)."""
        text = say("How can I help you today? Please tell me everything you need.")
        for _ in range(MAX_DEMANDS):
            heard = len(self.requests)
            reply = yield _msg("USER", text)
            self._hear(reply)
            if len(self.requests) == heard:
                return
            text = say("How can I help you today? Please tell me everything you need.")
            if not self._can_do(self.requests[-1]):
                # A change the plan never makes is one this agent cannot do: saying so lets
                # the customer raise what it wants instead (its conditional fallback).
                text = say("I am afraid that is not something I can do.", tag("cannot"))

    def _can_do(self, demand: str) -> bool:
        """Does a demand ask for a kind of change that none of the planned calls makes? A
        demand is judged by its action words (cancel, return, exchange, modify and their
        everyday synonyms, address, payment) against the words of the planned calls' names;
        a demand with no action word (a question) is one the agent can answer."""
        wanted = self._action_words(demand)
        if not wanted:
            return True
        planned = (
            set().union(*(self._action_words(c.name) for c in self.plan.calls if c.write)) if self.plan.calls else set()
        )
        return bool(wanted & planned)

    def _action_words(self, text: str) -> set[str]:
        """The kinds of change a demand (or a tool's name) asks for. Plainly: the words it shares
        with the names of the tools that write; a domain may know its everyday words for them."""
        writes = {w for name, tool in self.tools.items() if tool.get("write") for w in re.findall(r"[a-z]+", name)}
        return set(re.findall(r"[a-z]+", text.lower().replace("_", " "))) & writes

    def _work(self):
        inj = self._injection
        writes_done = 0
        for position, call in enumerate(self.plan.calls):
            if call.write and inj == OBTAINED_NOT_DELIVERED:
                yield from self._gather(self.plan.calls[position:])  # everything needed is in hand ...
                self._mark(inj)
                raise GiveUp("stopped before making any change")  # ... and no change is ever asked for
            for token in call.tokens():
                if token not in self.released:
                    yield from self._ask_customer(token)
            picks = self._picks()
            args = yield from self._build_args(call)
            if call.write and (inj == DELIVERED_INCORRECT or self.rng.random() < self.profile.slip_rate):
                args = self._slip(call, args)
            if call.write:
                # Confirmed with the customer, who may change its mind there, and relayed to it
                # if refused as asked (incognita.access.episodes.scripted.reconsidering).
                writes_done += yield from self._settle_change(call, args, picks)
                continue
            if not call.write and inj == REQUESTED_NOT_OBTAINED and self._feeds_write(call):
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
                args = yield from self._build_args(call)
                yield from self._execute(call, args, tolerate_failure=False)

    def _reads_after_a_change(self) -> bool:
        """Does a read that comes after the first change take a value from a change's result?"""
        writes = {c.index for c in self.plan.calls if c.write}
        return any(
            s.kind == "read" and s.call in writes
            for c in self.plan.calls
            if not c.write
            for src in c.args.values()
            for s in (src, *src.operands)
        )

    # ------------------------------------------------------------------ steps
    def _ask_customer(self, token: str, required: bool = True):
        reply = yield _msg(
            "USER", say(f"Could you tell me your {token.replace('_', ' ').replace(':', ' ')}?", tag("ask", token))
        )
        self._hear(reply)
        if token not in self.released and required:
            raise GiveUp(f"the customer could not give {token}")

    def _hear(self, reply: str) -> None:
        """Keep what the customer said: released fields and any demand it raised."""
        for t in parse(reply):
            if t.kind == "field":
                name, _, value = t.payload.partition(" ")
                self.released[name] = value
            elif t.kind == "request" and t.payload:
                self.requests.append(strip_placeholders(t.payload))
                self.demands.append(t.payload)
                self.mentioned.extend(m for m in placeholders(t.payload) if m not in self.mentioned)
            elif t.kind == "notsure":
                self.unsure.add(t.payload.strip())

    def _explore(self, tool: str, args: dict):
        """A read made only to choose between entries (the agent's own looking), kept once: a
        domain's pickers make it to see the records an argument chooses among."""
        memo = f"{tool} {json.dumps(args, sort_keys=True)}"
        if memo not in self.explored:
            index = -1 - len(self.explored)
            ok = yield from self._execute(
                PlannedCall(index=index, name=tool, write=False, args={}), args, tolerate_failure=True
            )
            self.explored[memo] = self.results.pop(index, None) if ok else None
        return self.explored[memo]

    def _execute(self, call: PlannedCall, args: dict, tolerate_failure: bool):
        """Have the call run (itself, Vega, or the right desk); keep its whole result: which
        parts matter is decided afterwards, by matching them against what the customer said."""
        if self.agent_executes:
            content = yield {"kind": "tool", "name": call.name, "args": args}
            if content.startswith("Error:"):
                self.failure = refusal_reason(content)
                if tolerate_failure:
                    return False
                raise GiveUp(f"{call.name} failed")
            self.results[call.index] = result_doc(json.loads(content))
            return True
        while True:
            holder = self._holder(call.name)
            text = say(
                f"Could you {_describe(call.name)} for me?", call_tag(call.name, args), tag("want", json.dumps([""]))
            )
            reply = yield _msg(holder, text)
            if first(reply, "confirm?"):
                reply = yield _msg(holder, say("Yes, please go ahead.", tag("yes")))
            referred = first(reply, "refer")
            if referred and self._follows(call.name, holder, referred.payload):
                # Sent on to a named holder: a person goes there before counting the turn as a
                # dead end, so patience is charged only if that holder declines too.
                self.declined.setdefault(call.name, set()).add(holder)
                self.holders[call.name] = referred.payload
                continue
            if first(reply, "decline") or referred:
                self._dead_end(call.name, holder)
                continue
            result = first(reply, "result")
            if result is None:
                failed = first(reply, "failed")
                self.failure = failed.payload if failed else None
                if tolerate_failure:
                    return False
                raise GiveUp(f"{call.name} was not carried out")
            got = result.json()
            self.results[call.index] = result_doc(got.get("")) if isinstance(got, dict) and "" in got else got
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

    def _follows(self, tool: str, holder: str, named: str) -> bool:
        """Is a referral worth following: to another recipient, not one already known to decline
        this tool (a referral back to such a desk is a dead end, which ends a referral loop)?"""
        return named in self.desks and named != holder and named not in self.declined.get(tool, set())

    def _dead_end(self, tool: str, desk: str) -> None:
        self.declined.setdefault(tool, set()).add(desk)
        self.holders.pop(tool, None)
        self.dead_ends += 1
        if self.profile.patience is not None and self.dead_ends > self.profile.patience:
            raise GiveUp("too many dead ends")

    # ------------------------------------------------------------------ values
    def _value(self, src: Source, choosing: Choosing):
        if src.kind == "field":
            return self._field_value(self.released[src.token], src.part, src.transform)
        if src.kind == "read":
            known = self._known_value(src, choosing)
            return known if known is not None else (yield from self._read_value(src, choosing))
        if src.kind == "policy":
            return self._policy_term(src)
        if src.kind == "computed":
            text = src.template
            for i, operand in enumerate(src.operands):
                value = yield from self._value(operand, choosing)
                text = text.replace(f"{{{i}}}", str(value), 1)
            return text
        if src.kind == "request":
            return "The customer asked for something I cannot do; please take over."
        if src.kind == "derived":
            inputs = []
            for operand in src.operands:
                inputs.append((yield from self._value(operand, choosing)))
            return self.derive(src.rule, inputs, choosing)
        if src.kind == "unsourced":
            raise GiveUp(f"no participant can supply this value ({src.rule or 'unsourced'})")
        raise ValueError(src.kind)

    def derive(self, rule: str, inputs: list, choosing: Choosing):
        """The value a domain rule computes from its inputs (the operands' values, in order). A
        domain whose golden trajectories derive values gives its scripted agent the rules; the
        plain agent knows none, and gives up rather than guess."""
        raise GiveUp(f"no rule to derive {rule!r} is known")

    def _build_args(self, call: PlannedCall):
        args: dict = {}
        choosing = Choosing(
            call=call.name,
            index=call.index,
            arg=None,
            sources=frozenset(s.call for src in call.args.values() for s in (src, *src.operands) if s.kind == "read"),
            args=args,
        )

        # The record the call acts on (the order, the user) is chosen first: its other arguments
        # are parts of it (the lines of that order). Within one list argument, the entries the
        # customer described are chosen before those it did not (else an undescribed slot may
        # take the described entry first). A derived value comes last: a rule may weigh the
        # call's other arguments (the bags not free depend on the cabin and the passengers).
        def order(pointer: str):
            key = _pointer_key(pointer)
            derived = call.args[pointer].kind == "derived"
            return (derived, key[0] not in self.subject_arguments, key[:1], not call.args[pointer].selected_by, key)

        for pointer in sorted(call.args, key=order):
            choosing.arg = pointer.split("/")[1] if pointer.count("/") == 1 else None
            choosing.slot, choosing.pointer = re.sub(r"/\d+", "", pointer), pointer
            choosing.position = int(pointer.rsplit("/", 1)[1]) if pointer.rsplit("/", 1)[1].isdigit() else 0
            value = yield from self._value(call.args[pointer], choosing)
            if self.subject_arguments and pointer == "/" + self.subject_arguments[0]:
                choosing.record = str(value)  # the record the call acts on: its other arguments are parts of it
            _set(args, pointer, value)
            choosing.values.add(str(value))
        return args

    def _policy_term(self, src: Source) -> str:
        """A policy vocabulary term: the only one, or the one the customer's own answer (the
        selecting fields, asked through the gate) shares most words with; the vocabulary's
        first term, its default, when the card holds no such answer. (The demands the
        customer raises are not used: their incidental words, "ordered", would decide.)"""
        terms = self.vocabulary.get(src.vocabulary or "")
        if not terms:
            raise GiveUp(f"no policy vocabulary {src.vocabulary!r} is known")
        words = content_words(" ".join(self.released[t] for t in src.selected_by if t in self.released))
        return max(terms, key=lambda term: (len(content_words(term) & words), -terms.index(term)))

    def _slip(self, call: PlannedCall, args: dict) -> dict:
        self.ground_truth["slips"] += 1
        if self._injection == DELIVERED_INCORRECT:
            self._mark(DELIVERED_INCORRECT)
        return _corrupt(args, self.rng)

    def _feeds_write(self, call: PlannedCall) -> bool:
        return any(
            s.kind == "read" and s.call == call.index
            for c in self.plan.calls
            if c.write
            for src in c.args.values()
            for s in (src, *src.operands)
        )

    def _draw_injection(self) -> str | None:
        plan = self.plan
        has_write = any(c.write for c in plan.calls)
        # Each injection applies only where its trajectory can read as that type and no other
        # (docs/reader.md): e.g. an unreported answer on a task with no change is "obtained but
        # not delivered", not "correct but unconfirmed".
        applicable = {
            NEVER_REQUESTED: any(c.tokens() for c in plan.calls),
            REQUESTED_NOT_OBTAINED: has_write and any(not c.write and self._feeds_write(c) for c in plan.calls),
            OBTAINED_NOT_DELIVERED: has_write and not self._reads_after_a_change(),
            DELIVERED_INCORRECT: has_write,
            CORRECT_UNCONFIRMED: has_write and any(i.source is not None for i in plan.info),
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


def _plain_field_value(value: str, part: str | None, transform: str | None) -> str:
    """A released value in a generic form (a domain without golden rules of its own): one word of it."""
    if part is not None:
        words = value.split()
        value = words[0] if part == "first" else words[-1]
    return value


class PlainAgent(ScriptedAgent, PlainPicking, Reconsidering, PlainTelling):
    """The scripted agent of a domain whose knowledge gives no agent of its own (picks.py)."""


def agent_class(domain) -> type:
    """The scripted agent class of a domain: its scripted part's AGENT, else PlainAgent."""
    return domain.part("scripted").AGENT if "scripted" in domain.parts else PlainAgent


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


def _corrupt(args: dict, rng: random.Random | None = None) -> dict:
    """One wrong argument: the last character of one string value changed."""
    out = json.loads(json.dumps(args))
    slots = [(k, None) for k, v in out.items() if isinstance(v, str) and v]
    slots += [
        (k, i) for k, v in out.items() if isinstance(v, list) for i, x in enumerate(v) if isinstance(x, str) and x
    ]
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
