"""Scripted evaluated agents: deterministic, seeded policies over the value-free plan.

A scripted agent knows which calls the task needs, their argument names and where each
argument comes from (incognita.plan), but not who holds which tool, not the customer's
values, not service-side values and no identifier, pointer or list index of the golden
solution. It asks the customer through the gate (`#ask`), has reads run and takes the
whole result (`#want [""]`), picks the entry of a collection that matches what the
customer released (`_pick`: the variant whose options are the stated preferences, the
order holding the named items, the payment method of the named kind; an order list holds
bare ids, so it reads the orders to choose), takes policy terms from the vocabulary it
knows, confirms changes with the customer (`#confirm`), has holders run calls (`#call`),
reports requested information (`#tell`) and sends FINAL.

Profiles (config/scripted_agents.yaml) set its coordination skill:
- `discovery`: oracle (told the partition), survey (asks every desk what it handles, then
  maps the replies onto the tools' names and descriptions, incognita.backends.discovery;
  tools left unmapped are probed), or probe (tries desks in a seeded random order until
  one accepts);
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

from incognita.backends.discovery import content_words, map_replies
from incognita.backends.language import call_tag, first, parse, say, tag
from incognita.cards import US_STATES
from incognita.common.backends.base import ModelRequest, ModelResponse, ToolCall
from incognita.golden import result_doc
from incognita.plan import PICK, Plan, PlannedCall, Source

FAILURE_TYPES = (
    "never_requested",
    "requested_not_obtained",
    "obtained_not_delivered",
    "delivered_incorrect",
    "correct_unconfirmed",
)
# Reading every entry of a list of bare ids to choose one costs a turn each; beyond this many
# the agent judges the entries by what the list itself says.
MAX_EXPLORED = 12
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


@dataclass
class _Choosing:
    """What one argument's picks are made for: the consuming call, the argument, and the
    entries already taken by the call's earlier arguments (two item slots name two items)."""

    call: str
    arg: str | None
    slot: str = ""  # the argument's pointer without list positions: the same slot in another call
    taken: dict = field(default_factory=dict)
    values: set = field(default_factory=set)  # values already placed in the call's arguments
    picked: list = field(default_factory=list)  # texts of the entries the call's arguments took
    sources: frozenset = frozenset()  # the earlier calls whose results the call's arguments come from


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
        return cls(
            name=name,
            discovery=data.get("discovery", "oracle"),
            patience=data.get("patience"),
            slip_rate=float(data.get("slip_rate", 0.0)),
            inject=dict(data.get("inject") or {}),
            gives_up_at_once=data.get("gives_up_at_once", False),
        )


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
        self.tools: dict[str, dict] = dict(context.get("tools") or {})
        self.vocabulary: dict[str, list[str]] = {k: list(v) for k, v in (context.get("vocabulary") or {}).items()}
        self.rng = random.Random(context["seed"])
        self.released: dict[str, str] = {}
        self.requests: list[str] = []  # the customer's own demands, as raised (values masked)
        self.results: dict[int, Any] = {}  # call index -> its whole result
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
        if self._injection == "never_requested":
            # Leaves without a word to anyone: the reader's "approached" is any contact with a
            # fact's source (the customer included), so even a goodbye would be an approach.
            self._mark("never_requested")
            while True:
                yield {"kind": "message", "to": "ENVIRONMENT", "text": "done", "type": "FINAL"}
        try:
            if self.profile.gives_up_at_once:
                raise GiveUp("this agent does nothing, by design")
            if self.arm == "social" and self.profile.discovery == "survey":
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
        for _ in range(MAX_DEMANDS):
            heard = len(self.requests)
            reply = yield _msg("USER", say("How can I help you today? Please tell me everything you need."))
            self._hear(reply)
            if len(self.requests) == heard:
                return

    def _work(self):
        inj = self._injection
        writes_done = 0
        for position, call in enumerate(self.plan.calls):
            if call.write and inj == "obtained_not_delivered":
                yield from self._gather(self.plan.calls[position:])  # everything needed is in hand ...
                self._mark(inj)
                raise GiveUp("stopped before making any change")  # ... and no change is ever asked for
            for token in call.tokens():
                if token not in self.released:
                    yield from self._ask_customer(token)
            args = yield from self._build_args(call)
            if call.write and (inj == "delivered_incorrect" or self.rng.random() < self.profile.slip_rate):
                args = self._slip(call, args)
            if call.write:
                reply = yield _msg(
                    "USER",
                    say(
                        f"I will now {_describe(call.name)}. Shall I go ahead?",
                        tag("confirm", f"{call.name} {json.dumps(args, sort_keys=True)}"),
                    ),
                )
                self._hear(reply)
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

    def _report(self):
        if not self.plan.info:
            return
        if self._injection == "correct_unconfirmed":
            self._mark("correct_unconfirmed")
            return
        values = []
        for item in self.plan.info:
            if item.source is None or item.source.call not in self.results:
                continue  # not traceable to any read, or its read never came: it cannot know it
            for token in item.source.selected_by:
                if token not in self.released:
                    yield from self._ask_customer(token)
            try:
                value = yield from self._read_value(item.source, _Choosing(call="", arg=None))
            except GiveUp:
                continue  # that part of the record is not there: nothing to tell
            if value is not None:
                values.append(_render(value, item.match))
        if values:
            yield _msg(
                "USER",
                say(
                    "Here is the information you asked for: " + "; ".join(values) + ".", tag("tell", "; ".join(values))
                ),
            )

    # ------------------------------------------------------------------ steps
    def _ask_customer(self, token: str):
        reply = yield _msg(
            "USER", say(f"Could you tell me your {token.replace('_', ' ').replace(':', ' ')}?", tag("ask", token))
        )
        self._hear(reply)
        if token not in self.released:
            raise GiveUp(f"the customer could not give {token}")

    def _hear(self, reply: str) -> None:
        """Keep what the customer said: released fields and any demand it raised."""
        for t in parse(reply):
            if t.kind == "field":
                name, _, value = t.payload.partition(" ")
                self.released[name] = value
            elif t.kind == "request" and t.payload:
                self.requests.append(t.payload)

    def _execute(self, call: PlannedCall, args: dict, tolerate_failure: bool):
        """Have the call run (itself, Vega, or the right desk); keep its whole result: which
        parts matter is decided afterwards, by matching them against what the customer said."""
        if self.arm == "direct":
            content = yield {"kind": "tool", "name": call.name, "args": args}
            if content.startswith("Error:"):
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
            if first(reply, "decline"):
                self._dead_end(call.name, holder)
                continue
            result = first(reply, "result")
            if result is None:
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

    def _dead_end(self, tool: str, desk: str) -> None:
        self.declined.setdefault(tool, set()).add(desk)
        self.holders.pop(tool, None)
        self.dead_ends += 1
        if self.profile.patience is not None and self.dead_ends > self.profile.patience:
            raise GiveUp("too many dead ends")

    # ------------------------------------------------------------------ values
    def _value(self, src: Source, choosing: _Choosing):
        if src.kind == "field":
            return _field_value(self.released[src.token], src.part, src.transform)
        if src.kind == "read":
            return (yield from self._read_value(src, choosing))
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
        raise ValueError(src.kind)

    def _build_args(self, call: PlannedCall):
        args: dict = {}
        choosing = _Choosing(
            call=call.name,
            arg=None,
            sources=frozenset(s.call for src in call.args.values() for s in (src, *src.operands) if s.kind == "read"),
        )
        for pointer in sorted(call.args, key=_pointer_key):
            choosing.arg = pointer.split("/")[1] if pointer.count("/") == 1 else None
            choosing.slot = re.sub(r"/\d+", "", pointer)
            value = yield from self._value(call.args[pointer], choosing)
            _set(args, pointer, value)
            choosing.values.add(str(value))
        return args

    def _read_value(self, src: Source, choosing: _Choosing):
        """Follow a value-free path through an earlier result, choosing at each PICK."""
        if src.call not in self.results:  # an earlier change failed (a slip), so its result never came
            raise GiveUp(f"the result of call {src.call} is missing: an earlier step was not carried out")
        node = self.results[src.call]
        for depth, step in enumerate(src.steps):
            if step == PICK:
                node = yield from self._pick(node, src, depth, choosing)
            elif isinstance(node, dict) and step in node:
                node = node[step]
            else:
                raise GiveUp(f"the result of call {src.call} has no {step!r} where the plan expects it")
        return node

    def _pick(self, collection: Any, src: Source, depth: int, choosing: _Choosing):
        """The entry of a collection that best matches what the customer said.

        Facts: the released values of the selecting tokens, or, when none select, everything
        the customer released and asked for; the consuming call's name counts first (a change
        to a pending order wants the order whose status is pending). An entry is judged by
        its key and its text leaves; a list of bare ids is judged by reading each entry. An
        entry taken by the call's other arguments, or by an earlier run of the same tool on
        the same argument, is not taken again; on a tie an earlier call's choice from the
        same list wins (the order read is the order changed)."""
        if isinstance(collection, dict):
            entries = list(collection.items())
        elif isinstance(collection, list):
            entries = list(enumerate(collection))
        else:
            raise GiveUp(f"the result of call {src.call} has no collection where the plan expects one")
        if not entries:
            raise GiveUp(f"the result of call {src.call} lists nothing to choose from")
        where = (src.call, src.steps[: depth + 1])
        memo = (where, src.selected_by)
        taken = choosing.taken.setdefault(where, set())  # by this call's other arguments
        used = self.used.setdefault((where, choosing.call, choosing.slot), set())  # by earlier runs of this tool
        key = yield from self._best_entry(entries, src, choosing, taken | used, self.chosen.get(memo))
        self.chosen.setdefault(memo, key)
        taken.add(key)
        used.add(key)
        choosing.picked.append(_texts(collection[key]))
        return collection[key]

    def _best_entry(self, entries: list, src: Source, choosing: _Choosing, taken: set, earlier: Any):
        """Score: the consuming call's words, then the customer's facts, then likeness to the
        entries the call's other arguments took (a replacement keeps the options it does not
        change); on a tie, the entry an earlier call chose from the same list, else the first."""
        free = (
            [(k, e) for k, e in entries if k not in taken and not (set(_texts(e)) & choosing.values)]
            or [(k, e) for k, e in entries if k not in taken]
            or entries
        )
        # An entry the record marks unavailable is not one to choose while any other is.
        available = [(k, e) for k, e in free if not (isinstance(e, dict) and e.get("available") is False)]
        free = available or free
        if len(free) == 1:
            return free[0][0]
        facts = [self.released[t] for t in src.selected_by if t in self.released]
        if not facts:
            facts = list(self.released.values()) + self.requests
        # The consuming call's own words come first: a change to a pending order needs an
        # order whose status is pending, whatever else matches.
        call_words = sorted(content_words(choosing.call))
        best_key, best = free[0][0], None
        explore = (
            _reading_tool(self.tools, choosing.arg)
            if all(not isinstance(e, (dict, list)) for _, e in free) and len(free) <= MAX_EXPLORED and choosing.arg
            else None
        )
        near = self._context_texts(src.call, only=choosing.sources)  # the records this call acts on
        far = self._context_texts(src.call)
        for key, entry in free:
            texts = _texts(entry) + ([str(key)] if isinstance(key, str) else [])
            if explore and isinstance(entry, str):
                doc = yield from self._explore(explore, {choosing.arg: entry})
                texts += _texts(doc)
            likeness = max((len(set(texts) & set(other)) for other in choosing.picked), default=0)
            # What the case already points at (the payment method the order was paid with):
            # after the customer's words, the records of this case break the tie.
            mentioned = (key in near) * 2 + (key in far) if isinstance(key, str) else 0
            score = (_match_score(call_words, texts), _match_score(facts, texts), mentioned, likeness, key == earlier)
            if best is None or score > best:
                best_key, best = key, score
        if src.selected_by and best[1] == 0:
            # The customer described the entry and nothing matches: choosing blindly would act
            # on something it never asked about.
            raise GiveUp(f"nothing in the result of call {src.call} matches what the customer described")
        return best_key

    def _context_texts(self, exclude: int, only: frozenset | None = None) -> set[str]:
        """Every scalar in the results read so far (or in those of the calls `only`), but the
        one being chosen from."""
        return {
            t
            for index, doc in self.results.items()
            if index != exclude and (only is None or index in only)
            for t in _texts(doc)
        }

    def _explore(self, tool: str, args: dict):
        """A read made only to choose between entries (the agent's own looking), kept once."""
        memo = f"{tool} {json.dumps(args, sort_keys=True)}"
        if memo not in self.explored:
            index = -1 - len(self.explored)
            ok = yield from self._execute(
                PlannedCall(index=index, name=tool, write=False, args={}), args, tolerate_failure=True
            )
            self.explored[memo] = self.results.pop(index, None) if ok else None
        return self.explored[memo]

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
        if self._injection == "delivered_incorrect":
            self._mark("delivered_incorrect")
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
            value = (
                m.group(1).capitalize() if part == "first" else " ".join(w.capitalize() for w in m.group(2).split("_"))
            )
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


def _texts(node: Any) -> list[str]:
    """Every scalar leaf of a result, as text."""
    if isinstance(node, dict):
        return [t for v in node.values() for t in _texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return [] if node is None else [str(node)]


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _match_score(facts: list[str], texts: list[str]) -> int:
    """How many of the customer's facts (each part of a ';'-list on its own) an entry's texts
    state: the same text once case, spaces and punctuation are ignored ('tshirt' ~ 'T-Shirt'),
    contained in a longer text, or every content word of it among the texts' words."""
    squashed = [_squash(t) for t in texts]
    words = content_words(" ".join(texts))
    score = 0
    for fact in facts:
        for part in re.split(r"[;,]", fact):
            sq = _squash(part)
            if not sq:
                continue
            part_words = content_words(part)
            if any(sq == t or (len(sq) >= 4 and sq in t) for t in squashed) or (part_words and part_words <= words):
                score += 1
    # A long fact (a demand the customer raised) may name an entry's values in passing.
    said = " ".join(_squash(f) for f in facts if len(f.split()) > 3)
    score += sum(1 for t in set(squashed) if len(t) >= 3 and not t.isdigit() and t in said)
    return score


def _reading_tool(tools: dict[str, dict], arg: str | None) -> str | None:
    """The read tool that takes exactly this one argument (get_order_details for an order_id)."""
    found = [name for name, t in sorted(tools.items()) if not t.get("write") and t.get("params") == [arg]]
    return found[0] if len(found) == 1 else None


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
