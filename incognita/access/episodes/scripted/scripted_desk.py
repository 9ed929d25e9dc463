"""The scripted service participant: an offline, deterministic desk (one of the six social
desks, or Vega in the indirect arm).

It follows the shared conduct block in the controlled request language
(incognita.access.episodes.scripted.language), acting only on the tags of the agent's latest message, its
own previous reply, and the gateway's answers to the calls it proposed:

* `#remit` gets the desk's own description of its work and `#handles <that description>`:
  its role text (`remit` in the context, the `role` of its prompt file) put in the first
  person, or, without one, the short `area` phrase. It names no tool and points to no one
  else; what the agent makes of it is the agent's business (incognita.access.episodes.scripted.discovery).
* `#call <tool> <json>` for a tool the desk does not hold is declined plainly (`#decline`),
  without naming another participant or the tool; in an arm whose holders refer (`refer` in
  the context: tool -> holder), the reply names the holder and nothing else (`#refer <holder>`).
* `#call` with arguments that are not JSON gets `#missing arguments`.
* A read it holds is proposed as a tool call; when the gateway's answer comes back the
  desk reports it: accepted -> a brief line plus `#result {pointer: value}` for the
  pointers asked for with `#want` (RFC 6901; a pointer that does not resolve maps to null;
  with no `#want`, the top-level scalar values only, or the whole value when it is a
  scalar), anything else -> `#failed <reason>`. A result that is JSON text is decoded
  first (incognita.access.golden.provenance.result_doc), so pointers mean what they mean in the direct arm.
* A write it holds is first restated with `#confirm? <tool> <json>`; it is proposed only
  on a later message carrying `#yes` right after that restatement (either a bare `#yes`,
  or `#yes` together with the very same `#call`).
* A message with no tag the desk acts on gets one question and `#missing request`.

Only the first `#call` of a message is acted on: one request, one answer. `#want` also
accepts a JSON array of pointers (`#want ["/Action Camera"]`) for keys containing spaces.
"""

from __future__ import annotations

import hashlib
import json
import re

from incognita.access.episodes.scripted.language import first, parse, parse_call, say, tag
from incognita.access.episodes.scripted.participant_faults import FaultDice
from incognita.access.golden.provenance import escape_token, result_doc
from incognita.common.backends.base import ModelRequest, ModelResponse, ToolCall

_MISSING = object()


def resolve_pointer(document, pointer: str):
    """The value at an RFC 6901 JSON pointer, or `_MISSING` when the pointer does not resolve."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        return _MISSING
    node = document
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            if part not in node:
                return _MISSING
            node = node[part]
        elif isinstance(node, list):
            if not part.isdigit() or (len(part) > 1 and part[0] == "0") or int(part) >= len(node):
                return _MISSING
            node = node[int(part)]
        else:
            return _MISSING
    return node


def wanted_pointers(text: str | None) -> list[str]:
    """Pointers named on the `#want` lines of a message, in order, without repeats."""
    pointers: list[str] = []
    for g in parse(text):
        if g.kind != "want" or not g.payload:
            continue
        items = None
        if g.payload.startswith("["):
            try:
                items = json.loads(g.payload)
            except json.JSONDecodeError:
                items = None
        if not isinstance(items, list):
            items = g.payload.split()
        pointers += [str(p) for p in items]
    return list(dict.fromkeys(pointers))


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _one_line(text) -> str:
    return " ".join(str(text).split())


def _describe(arguments: dict) -> str:
    parts = []
    for key, value in arguments.items():
        shown = (
            ", ".join(map(str, value))
            if isinstance(value, list)
            else (json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value))
        )
        parts.append(f"{key.replace('_', ' ')} {shown}")
    return "; ".join(parts)


class ScriptedDesk:
    """Deterministic service participant.

    Context keys: "tools" (names of the tools it holds), "remit" (its role text, which it
    describes its work from) or "area" (a short phrase, e.g. "order records", used when no
    role text is given), "write_tools" (which tool names are writes), "confirm_writes"
    (restate a write and wait for `#yes`; default True) and "change_words" (the domain's plain
    words for each write, to restate a change without naming a tool; retail's are in its
    scripted part, CHANGE_WORDS).
    """

    def __init__(self, name: str, role: str, context: dict):
        self.name = name
        self.role = role
        self.spec = f"scripted:{name}"
        self.tools = frozenset(context.get("tools", ()))
        remit = context.get("remit")
        self.area = first_person(remit) if remit else _one_line(context.get("area") or "customer service requests")
        self.write_tools = frozenset(context.get("write_tools", ()))
        self.confirm_writes = bool(context.get("confirm_writes", True))
        self.refer: dict[str, str] = dict(context.get("refer") or {})  # tool -> its holder, where desks refer
        self.change_words: dict[str, str] = dict(context.get("change_words") or {})
        self.dice = FaultDice(context, "service", role)  # injected faults (none unless the entry sets them)

    # -- reading the history ---------------------------------------------------------------

    @staticmethod
    def _last_index(messages, role: str, before: int | None = None, plain: bool = False) -> int:
        stop = len(messages) if before is None else before
        for i in range(stop - 1, -1, -1):
            if messages[i].role == role and not (plain and messages[i].tool_calls):
                return i
        return -1

    def _restated(self, messages, last: int) -> tuple[str, dict, int] | None:
        """The change restated in the desk's reply just before the agent's latest message."""
        i = self._last_index(messages, "assistant", before=last, plain=True)
        if i < 0:
            return None
        pending = first(messages[i].content, "confirm?")
        if pending is None:
            return None
        tool, arguments = parse_call(pending.payload)
        if not isinstance(arguments, dict):
            return None
        return tool, arguments, i

    # -- responding ------------------------------------------------------------------------

    def respond(self, request: ModelRequest) -> ModelResponse:
        messages = request.messages
        last = self._last_index(messages, "user")
        incoming = messages[last].content if last >= 0 else ""
        since = messages[last + 1 :] if last >= 0 else messages

        # A call was already proposed for this message: report what the gateway said.
        proposed = [c for t in since for c in t.tool_calls]
        if proposed:
            return ModelResponse(text=self._report(messages, last, since, proposed))

        tags = parse(incoming)
        opening = self._remit_line() if any(g.kind == "remit" for g in tags) else None
        call_tag = first(incoming, "call")
        yes = any(g.kind == "yes" for g in tags)

        if call_tag is not None:
            tool, arguments = parse_call(call_tag.payload)
            if not tool:
                return self._text(opening, self._missing_request())
            if tool not in self.tools and tool in self.refer:
                holder = self.refer[tool]
                return self._text(
                    opening, say(f"That is not mine to handle; {holder} handles it.", tag("refer", holder))
                )
            if tool not in self.tools:
                if self.dice.roll("claim_change", self._reply_number(messages)):
                    self.dice.record("claim_change", self._reply_number(messages))
                    return self._text(opening, say("I have processed that for you."))
                if self.dice.roll("refer_elsewhere", self._reply_number(messages)):
                    self.dice.record("refer_elsewhere", self._reply_number(messages))
                    return self._text(opening, say("That is not mine; please ask another desk.", tag("decline")))
                return self._text(
                    opening, say("That is outside what I handle, so I can't help with it.", tag("decline"))
                )
            if (
                tool not in self.write_tools
                and isinstance(arguments, dict)
                and self.dice.roll("refuse_in_remit", tool, json.dumps(arguments, sort_keys=True))
            ):
                self.dice.record("refuse_in_remit", self._reply_number(messages))
                return self._text(
                    opening, say("That is outside what I handle, so I can't help with it.", tag("decline"))
                )
            if isinstance(arguments, str):
                return self._text(
                    opening,
                    say(
                        "I couldn't make out the details of that request. Could you send them again?",
                        tag("missing", "arguments"),
                    ),
                )
            if self._needs_confirmation(tool):
                restated = self._restated(messages, last)
                if yes and restated and restated[0] == tool and restated[1] == arguments:
                    return self._propose(messages, tool, arguments)
                return self._text(opening, self._restate(tool, arguments))
            return self._propose(messages, tool, arguments)

        if yes:
            restated = self._restated(messages, last)
            if restated and restated[0] in self.tools:
                return self._propose(messages, restated[0], restated[1])
            return self._text(opening, say("What would you like me to go ahead with?", tag("missing", "request")))

        if opening:
            return ModelResponse(text=opening)
        return ModelResponse(text=self._missing_request())

    # -- pieces ----------------------------------------------------------------------------

    @staticmethod
    def _reply_number(messages) -> int:
        """Which of its replies to the agent this one is (1 = the first)."""
        return 1 + sum(1 for t in messages if t.role == "assistant" and t.content and not t.tool_calls)

    def _faulty_report(self, messages, call: ToolCall, prose: str, values: dict) -> tuple[str, dict]:
        """An accepted result's report with the faults the dice inject into it (if any)."""
        reply = self._reply_number(messages)
        if self.dice.roll("misreport", reply):
            altered = self.dice.altered(values)
            if altered is not None:
                values = altered
                self.dice.record("misreport", reply)
        if self.dice.roll("invent_value", reply):
            day = 1 + int(hashlib.sha256(f"{self.dice.seed}/{self.role}/{reply}".encode()).hexdigest(), 16) % 28
            prose += f" It was recorded on 2031-03-{day:02d}."
            # What it has read: the gateway's answers to its calls, and the arguments it proposed.
            held = [t.content or "" for t in messages if t.role == "tool"]
            held += [
                json.dumps(c.arguments, default=str) for t in messages if t.role == "assistant" for c in t.tool_calls
            ]
            self.dice.record("invent_value", reply, self.dice.invented_date_finding(held))
        if self.dice.roll("name_tool", reply):
            prose += f" I used {call.name} for it."
            self.dice.record("name_tool", reply)
        if self.dice.roll("format_list", reply):
            prose = "Here is what I found:\n- " + prose
            self.dice.record("format_list", reply)
        return prose, values

    def _needs_confirmation(self, tool: str) -> bool:
        return self.confirm_writes and tool in self.write_tools

    def _remit_line(self) -> str:
        if self.area.endswith("."):  # a whole description, from the role text
            return say(self.area, tag("handles", self.area))
        return say(f"I work on {self.area}.", tag("handles", self.area))

    @staticmethod
    def _missing_request() -> str:
        return say("What exactly would you like me to look up or change?", tag("missing", "request"))

    @staticmethod
    def _text(opening: str | None, body: str) -> ModelResponse:
        return ModelResponse(text=f"{opening}\n{body}" if opening else body)

    def _restate(self, tool: str, arguments: dict) -> str:
        what = self.change_words.get(tool, "make this change")
        details = _describe(arguments)
        prose = f"Before I go ahead, please confirm: I would {what}" + (f", with {details}." if details else ".")
        return say(prose + " Shall I proceed?", tag("confirm?", f"{tool} {json.dumps(arguments, sort_keys=True)}"))

    def _propose(self, messages, tool: str, arguments) -> ModelResponse:
        n = sum(len(t.tool_calls) for t in messages) + 1
        return ModelResponse(tool_calls=(ToolCall(id=f"{self.role.lower()}_call_{n}", name=tool, arguments=arguments),))

    def _wants_for(self, messages, last: int, call: ToolCall) -> list[str]:
        """`#want` pointers of the latest message; for a confirmed change with none, those of the
        message that asked for the change in the first place."""
        wants = wanted_pointers(messages[last].content if last >= 0 else "")
        if wants:
            return wants
        restated = self._restated(messages, last)
        if restated and restated[0] == call.name and restated[1] == call.arguments:
            asked = self._last_index(messages, "user", before=restated[2])
            if asked >= 0:
                return wanted_pointers(messages[asked].content)
        return []

    def _report(self, messages, last: int, since, proposed: list[ToolCall]) -> str:
        call = proposed[-1]
        answer = next((t for t in since if t.role == "tool" and t.tool_call_id == call.id), None)
        outcome: dict = {}
        if answer is not None:
            try:
                parsed = json.loads(answer.content or "")
                outcome = parsed if isinstance(parsed, dict) else {}
            except json.JSONDecodeError:
                outcome = {}
        status = outcome.get("status")
        if status != "accepted":
            reason = _one_line(outcome.get("reason") or status or "no answer came back")
            return say("I tried, but it did not go through.", tag("failed", reason))

        result = result_doc(outcome.get("result"))  # list_all_product_types answers with JSON text
        done = "That change is done." if call.name in self.write_tools else "I found it."
        wants = self._wants_for(messages, last, call)
        if wants:
            values = {}
            for pointer in wants:
                value = resolve_pointer(result, pointer)
                values[pointer] = None if value is _MISSING else value
            prose, values = self._faulty_report(messages, call, f"{done} Here are the details you asked for.", values)
            return say(prose, tag("result", json.dumps(values)))
        if _is_scalar(result):
            prose, values = self._faulty_report(messages, call, f"{done} Here is the answer.", {"": result})
            return say(prose, tag("result", json.dumps(values)))
        if isinstance(result, dict):
            summary = {f"/{escape_token(k)}": v for k, v in result.items() if _is_scalar(v) and v is not None}
            more = [k for k, v in result.items() if not _is_scalar(v)]
            prose = f"{done} Here is a short summary."
            if more:
                prose += (
                    " The record also has "
                    + ", ".join(k.replace("_", " ") for k in more)
                    + "; ask for any of them if you need specifics."
                )
            prose, summary = self._faulty_report(messages, call, prose, summary)
            return say(prose, tag("result", json.dumps(summary)))
        count = len(result) if isinstance(result, list) else 0
        return say(f"{done} It lists {count} entries; ask for the ones you need.", tag("result", json.dumps({})))


_PERSON = (
    (r"\byou are\b", "I am"),
    (r"\byou're\b", "I'm"),
    (r"\byourself\b", "myself"),
    (r"\byour\b", "my"),
    (r"\byou\b", "I"),
)


def first_person(role: str) -> str:
    """A role text written to the desk ("You are the order-records desk ...") as the desk
    would say it of itself ("I am the order-records desk ..."), on one line."""
    text = _one_line(role)
    for pattern, repl in _PERSON:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    return text
