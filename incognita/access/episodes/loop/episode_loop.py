"""One episode: the evaluated agent, the customer behind the gate, and the arm's service side.

The termination contract: the agent sends one directed message (or, in the direct arm,
makes one tool call) per turn; a message never ends the episode; only FINAL to
ENVIRONMENT does, and ENVIRONMENT never replies. A turn budget ends it otherwise, and the
record says so. Participants see only their own conversation with the agent. Malformed
agent output, an unknown recipient, a tool call with text, a tool the agent does not
hold: each is logged as an event with its reason, the agent is told, and the episode
goes on. Evaluation happens after termination, on the final state only.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass

from incognita.access.episodes.loop.disclosure_gate import RELEASE_TOOL, DisclosureGate, release_field_schema
from incognita.access.episodes.loop.evaluation import evaluate
from incognita.access.episodes.loop.prompts import PromptSet
from incognita.access.episodes.loop.records import (
    EpisodeRecord,
    Message,
    ProtocolError,
    Referral,
    ToolProposal,
    Truncation,
    Usage,
)
from incognita.access.episodes.loop.tool_gateway import Gateway
from incognita.common.backends.base import (
    Backend,
    BackendError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Turn,
)

AGENT, USER, ENVIRONMENT = "agent", "USER", "ENVIRONMENT"
MAX_PARTICIPANT_STEPS = 8  # tool calls a participant may make before it must reply


@dataclass
class Participant:
    name: str
    backend: Backend
    system: str
    history: list[Turn]


@dataclass(frozen=True)
class AgentAction:
    kind: str  # message | tool | error
    recipient: str = ""
    text: str = ""
    message_type: str = "MESSAGE"
    call: ToolCall | None = None
    reason: str = ""


def agent_output_schema(allowed: list[str]) -> dict:
    """The message half of the output contract below as a JSON schema, for a model entry with
    `structured_output` (docs/models.md). A tool call (direct arm) stays outside it: tools travel
    in their own request field. `schema` has the shape strict modes take (a closed object, every
    key required), which cannot tie FINAL to ENVIRONMENT; `grammar_schema` adds that rule (a MESSAGE
    to a recipient, or FINAL to ENVIRONMENT) for servers that compile the schema to a grammar."""

    def message(recipients: list[str], types: list[str]) -> dict:
        return {
            "type": "object",
            "properties": {
                "recipient": {"type": "string", "enum": recipients},
                "message": {"type": "string"},
                "message_type": {"type": "string", "enum": types},
            },
            "required": ["recipient", "message", "message_type"],
            "additionalProperties": False,
        }

    return {
        "name": "agent_message",
        "schema": message([*allowed, ENVIRONMENT], ["MESSAGE", "FINAL"]),
        "grammar_schema": {"anyOf": [message(list(allowed), ["MESSAGE"]), message([ENVIRONMENT], ["FINAL"])]},
    }


def parse_agent_output(resp: ModelResponse, allowed: list[str]) -> AgentAction:
    """Check one agent turn against the output contract; never raises."""
    text = (resp.text or "").strip()
    if resp.tool_calls:
        if text:
            return AgentAction("error", reason="a tool call and text in the same turn")
        if len(resp.tool_calls) > 1:
            return AgentAction("error", reason=f"{len(resp.tool_calls)} tool calls in one turn (one is allowed)")
        return AgentAction("tool", call=resp.tool_calls[0])
    if not text:
        return AgentAction("error", reason="empty output")
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        return AgentAction("error", reason=f"output is not a JSON object ({exc.msg})")
    if not isinstance(obj, dict):
        return AgentAction("error", reason="output is JSON but not an object")
    missing = [k for k in ("recipient", "message", "message_type") if k not in obj]
    if missing:
        return AgentAction("error", reason=f"missing key(s): {', '.join(missing)}")
    recipient, message, mtype = obj["recipient"], obj["message"], obj["message_type"]
    if not isinstance(message, str) or not isinstance(recipient, str):
        return AgentAction("error", reason="recipient and message must be strings")
    if mtype == "FINAL":
        if recipient != ENVIRONMENT:
            return AgentAction("error", reason=f"FINAL must go to ENVIRONMENT, not {recipient!r}")
        return AgentAction("message", recipient=ENVIRONMENT, text=message, message_type="FINAL")
    if mtype != "MESSAGE":
        return AgentAction("error", reason=f"unknown message_type {mtype!r} (MESSAGE or FINAL)")
    if recipient == ENVIRONMENT:
        return AgentAction("error", reason="ENVIRONMENT takes only message_type FINAL")
    if recipient not in allowed:
        return AgentAction("error", reason=f"unknown recipient {recipient!r} (allowed: {', '.join(allowed)})")
    return AgentAction("message", recipient=recipient, text=message)


class Episode:
    """Runs one cell. Build with the arm's participants; call run() once."""

    def __init__(
        self,
        *,
        arm_entry,
        recipients: list[str],
        card: dict,
        gold_hash: str,
        gateway: Gateway,
        prompts: PromptSet,
        agent: Backend,
        customer: Backend,
        service: dict[str, Backend],
        seed: int,
        budget: int,
        record: EpisodeRecord,
        judge: Backend | None = None,
        information_channel: str = "substring",
    ):
        # arm_entry: an arm_registry.Arm; recipients: whom the agent may write to (Harness.recipients)
        self.arm, self.card, self.gold_hash, self.gateway = arm_entry, card, gold_hash, gateway
        self.prompts, self.seed, self.budget, self.record = prompts, seed, budget, record
        self.judge, self.information_channel = judge, information_channel
        self.allowed = list(recipients)
        self.gate = DisclosureGate(card)
        self.agent = Participant(AGENT, agent, prompts.agent(arm_entry, self.allowed), [])
        every_tool = gateway.tools_of(AGENT) | frozenset().union(*(gateway.tools_of(n) for n in service))
        self.agent_schema = agent_output_schema(self.allowed)
        self.customer = Participant(USER, customer, "", [])
        self.service = {
            name: Participant(
                name, b, prompts.service(arm_entry, name, gateway.tools_of(name) == every_tool, list(service)), []
            )
            for name, b in service.items()
        }
        self.events: list = []
        self.turn = 0

    # ------------------------------------------------------------------ plumbing
    def _ask(self, p: Participant, system: str, tools: list[dict], output_schema: dict | None = None) -> ModelResponse:
        resp = p.backend.respond(
            ModelRequest(
                role=p.name,
                system=system,
                messages=tuple(p.history),
                tools=tuple(tools),
                seed=self.seed,
                output_schema=output_schema,
            )
        )
        usage = self.record.usage.setdefault(p.name, Usage())
        usage.add(resp.usage)
        usage.calls += 1  # counted here, once per model call, whatever the backend reports
        return resp

    def _log(self, event) -> None:
        self.events.append(event)

    def _drain(self) -> None:
        """Move gate and gateway events into the episode log in the order they happened."""
        self.events.extend(self.gate.events)
        self.gate.events.clear()
        self.events.extend(self.gateway.events)
        self.gateway.events.clear()

    # ------------------------------------------------------------------ participants
    def _customer_reply(self, text: str) -> str:
        c = self.customer
        c.history.append(Turn("user", text))
        tools = [release_field_schema(self.gate.tokens)]
        with self.gate.reply_to_agent():
            for _ in range(MAX_PARTICIPANT_STEPS):
                system = self.prompts.customer(self.card, self.gate.memory(), self.gate.tokens)
                resp = self._ask(c, system, tools)
                if not resp.tool_calls:
                    c.history.append(Turn("assistant", resp.text or ""))
                    return resp.text or ""
                c.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
                for call in resp.tool_calls:
                    c.history.append(Turn("tool", json.dumps(self._release(call)), tool_call_id=call.id))
                    self._drain()
        self._log(ProtocolError(turn=self.turn, actor=USER, reason="no reply after the step limit", raw=""))
        return ""

    def _release(self, call: ToolCall) -> dict:
        token = call.arguments.get("token") if isinstance(call.arguments, dict) else None
        if call.name != RELEASE_TOOL or not isinstance(token, str):
            reason = f"customer called {call.name!r} with {call.arguments!r}; only release_field(token) exists"
            self._log(
                ProtocolError(turn=self.turn, actor=USER, reason=reason, raw=json.dumps(call.arguments, default=str))
            )
            return {"status": "error", "reason": reason}
        event = self.gate.request(token, self.turn)
        return {
            "token": token,
            "status": event.status,
            "value": event.value,
            **({"reason": event.reason} if event.reason else {}),
        }

    def _service_reply(self, p: Participant, text: str) -> str:
        p.history.append(Turn("user", text))
        tools = self.gateway.openai_tools(p.name)
        for _ in range(MAX_PARTICIPANT_STEPS):
            resp = self._ask(p, p.system, tools)
            if not resp.tool_calls:
                p.history.append(Turn("assistant", resp.text or ""))
                return resp.text or ""
            p.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
            for call in resp.tool_calls:
                d = self.gateway.propose(p.name, call.name, call.arguments, self.turn)
                self._drain()
                p.history.append(
                    Turn(
                        "tool",
                        json.dumps({"status": d.status, "reason": d.reason, "result": d.result}),
                        tool_call_id=call.id,
                    )
                )
        self._log(ProtocolError(turn=self.turn, actor=p.name, reason="no reply after the step limit", raw=""))
        return ""

    # ------------------------------------------------------------------ the loop
    def run(self) -> EpisodeRecord:
        start = time.perf_counter()
        self._earlier_conversation()
        opening = self.card["opening_line"]
        self._log(Message(turn=0, sender=USER, recipient=AGENT, text=opening))
        self.customer.history.append(Turn("assistant", opening))
        self.agent.history.append(Turn("user", f"From USER: {opening}"))
        agent_tools = self.gateway.openai_tools(AGENT)
        termination = "truncated"
        try:
            while self.turn < self.budget:
                self.turn += 1
                if self._agent_turn(agent_tools):
                    termination = "final"
                    break
            else:
                self._log(Truncation(turn=self.turn, budget=self.budget))
        except BackendError as exc:
            # Breakage outside the agent's control: recorded, never scored as an agent failure.
            termination = "error"
            self.record.error = str(exc)
        self._drain()
        self._finish(termination, time.perf_counter() - start)
        return self.record

    def _earlier_conversation(self) -> None:
        """A task that starts from a message history (upstream's initial state) continues that
        conversation: the agent is shown it, in its own words and the results of the calls made
        in it (whoever holds the tools now); the customer keeps its own side of it. The state
        those calls made is already in the database (the gateway starts from it)."""
        history = (self.card.get("initial_state") or {}).get("message_history") or []
        if not history:
            return
        lines = []
        for m in history:
            if m.get("role") == "user" and m.get("content"):
                lines.append(f"- USER said: {m['content']}")
                self.customer.history.append(Turn("assistant", m["content"]))
            elif m.get("role") == "assistant":
                for call in m.get("tool_calls") or []:
                    lines.append(f"- {call['name']} was called with {json.dumps(call.get('arguments') or {})}")
                if m.get("content"):
                    lines.append(f"- you told USER: {m['content']}")
                    self.customer.history.append(Turn("user", m["content"]))
            elif m.get("role") == "tool":
                lines.append(f"  and returned: {m.get('content')}")
        self.agent.history.append(Turn("user", "From HARNESS: this conversation began earlier:\n" + "\n".join(lines)))

    def _agent_turn(self, agent_tools: list[dict]) -> bool:
        """Run one agent turn; True when the agent ended the episode."""
        a = self.agent
        resp = self._ask(a, a.system, agent_tools, self.agent_schema)
        action = parse_agent_output(resp, self.allowed)
        a.history.append(Turn("assistant", resp.text, tool_calls=resp.tool_calls))
        if action.kind == "error":
            raw = resp.text or json.dumps([c.__dict__ for c in resp.tool_calls], default=str)
            self._log(ProtocolError(turn=self.turn, actor=AGENT, reason=action.reason, raw=raw))
            for call in resp.tool_calls:  # every tool call needs an answer in the chat format
                a.history.append(
                    Turn("tool", json.dumps({"status": "rejected", "reason": action.reason}), tool_call_id=call.id)
                )
            if not resp.tool_calls:
                a.history.append(
                    Turn(
                        "user",
                        f"From HARNESS: your last output was rejected: {action.reason}. "
                        "Follow the output format in your instructions.",
                    )
                )
            return False
        if action.kind == "tool":
            d = self.gateway.propose(AGENT, action.call.name, action.call.arguments, self.turn)
            self._drain()
            # Like upstream: the result as JSON, or "Error: ..." when the call did not go through.
            content = json.dumps(d.result) if d.status == "accepted" else f"Error: {d.status}: {d.reason}"
            a.history.append(Turn("tool", content, tool_call_id=action.call.id))
            return False
        self._log(
            Message(
                turn=self.turn,
                sender=AGENT,
                recipient=action.recipient,
                text=action.text,
                message_type=action.message_type,
            )
        )
        if action.message_type == "FINAL":
            return True
        if action.recipient == USER:
            reply = self._customer_reply(action.text)
        else:
            reply = self._service_reply(self.service[action.recipient], action.text)
        self._log(Message(turn=self.turn, sender=action.recipient, recipient=AGENT, text=reply))
        if self.arm.referral and action.recipient != USER:
            self._note_referral(action.recipient, reply)
        a.history.append(Turn("user", f"From {action.recipient}: {reply}"))
        return False

    def _note_referral(self, referrer: str, reply: str) -> None:
        """A reply naming exactly one other holder (as a word) refers the agent to it."""
        named = [h for h in self.service if h != referrer and re.search(rf"\b{re.escape(h)}\b", reply)]
        if len(named) == 1:
            self._log(Referral(turn=self.turn, referrer=referrer, holder=named[0]))

    def _finish(self, termination: str, wall: float) -> None:
        r = self.record
        r.events = self.events
        r.termination = termination
        r.turns = self.turn
        r.wall_time_s = round(wall, 4)
        assertions = self.card.get("env_assertions")
        held = self.gateway.assertions_hold(assertions) if assertions and termination != "error" else None
        r.final_db_hash = self.gateway.final_hash()
        if termination == "error":
            return
        dialogue = [
            (e.sender, e.text)
            for e in self.events
            if isinstance(e, Message) and USER in (e.sender, e.recipient) and e.message_type == "MESSAGE"
        ]
        to_user = [text for sender, text in dialogue if sender == AGENT]
        try:
            outcome = evaluate(
                r.final_db_hash,
                self.gold_hash,
                self.card,
                to_user,
                channel=self.information_channel,
                judge=self.judge,
                judge_prompt=self.prompts.read("judge.md") if self.judge else "",
                transcript=[("agent" if s == AGENT else "customer", t) for s, t in dialogue],
                assertions_held=held,
                proposed=[(e.tool, e.arguments) for e in self.events if isinstance(e, ToolProposal)],
            )
        except BackendError as exc:
            r.termination, r.error = "error", f"evaluation: {exc}"
            return
        r.channels, r.success, r.database_only_success = (
            outcome.channels,
            outcome.success,
            outcome.database_only_success,
        )
        r.information_channel = self.information_channel
        if outcome.judgements:  # each verdict with its assertion and the judge prompt it answered
            prompt_sha = hashlib.sha256(self.prompts.read("judge.md").encode()).hexdigest()
            r.judgements = [{**j, "judge_prompt_sha256": prompt_sha} for j in outcome.judgements]
