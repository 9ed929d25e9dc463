"""The scripted customer: an offline, deterministic stand-in for the simulated USER.

It answers the agent in the controlled request language (incognita.access.episodes.scripted.language) and
acts only on the tags of the agent's latest message plus the results of its own
`release_field` calls. It never reads a field value off the card directly: every value it
states comes back from the disclosure gate, so each disclosure leaves a gate event.

One agent message is handled in up to two backend steps:

1. the latest turn is the agent's message: for every `#ask <token>` whose field has not
   been released to the customer yet, it calls `release_field` (all calls in one response);
2. once the gate's answers are in (or when nothing had to be asked), it replies: `#field`
   for each released field, `#notsure` for each field the card does not hold, `#yes` to a
   `#confirm`, a short thanks to a `#tell`, and otherwise a neutral line.

Besides answering, the customer raises its own demands (the card's request block) one per
reply, in order, as `#request <text>`. Field values in that text are replaced by their
tokens (`<order_id>`, `<item:mechanical_keyboard>`, ...), so a demand never carries a value
past the gate; the agent has to `#ask` for it.

Conditional fallbacks are raised when their condition is met. When the agent's message
carries `#cannot` (what the customer raised last cannot be done), the customer raises, in
place of its next demand, the next fallback of the request it raised most recently (after
the demand, or after the fallback raised last), in card order and masked the same way.
Only fallbacks whose condition is a refusal of what came before ("If not, ...", "If that
is not possible, ...", "If you cannot ...": see incognita.access.episodes.scripted.conditions) are raised
so. With no such fallback left, a `#cannot` gets a plain "I see." and the next demand
follows as usual. When the agent's message carries `#confirm`, the customer raises, instead
of its yes, the next fallback whose condition is that confirmation ("If the agent asks for
confirmation, only exchange the desk lamp"; "... again, ...": the second one at the second
confirmation): of the first raised request with one left, in card order. Fallbacks of the
other kinds (a question, several options, a value the records show) are answered through
the gate's fields or not raised at all. Which tags raise a fallback is
`conditions.fallback_events`: a confirmation fallback is raised at a `#confirm` only, never
at a `#cannot`, since the source's event is the confirmation; "If not, ..." after a
condition on the records negates that condition and is not raised at a `#cannot` either.

The customer keeps no state between calls: what it has raised so far is read back from its
own `#request` lines in the conversation, matched against the masked card texts.
"""

from __future__ import annotations

import json
import re

from incognita.access.episodes.loop.disclosure_gate import RELEASE_TOOL
from incognita.access.episodes.scripted.conditions import fallback_events, fallback_kinds
from incognita.access.episodes.scripted.language import parse, say, tag
from incognita.access.episodes.scripted.participant_faults import FaultDice
from incognita.common.backends.base import ModelRequest, ModelResponse, ToolCall, Turn

# --------------------------------------------------------------------------- masking


def _mask_pattern(text: str) -> str:
    """A case-blind, whitespace-tolerant pattern for `text` as a whole word (plurals allowed)."""
    words = [re.escape(w) for w in text.split()]
    return r"(?<![A-Za-z0-9])" + r"\s+".join(words) + r"(?:e?s)?(?![A-Za-z0-9])"


def _order_pattern(value: str) -> str:
    digits = re.sub(r"\D", "", value)
    return r"(?<![A-Za-z0-9#])#?[Ww]?" + digits + r"(?!\d)"


def masking_rules(card: dict) -> tuple[re.Pattern | None, dict[str, str]]:
    """One case-blind pattern matching every way a card field's value may show up in text.

    Covers the value, each of its spans, the parts of the customer's name, and order ids with
    or without their '#' and 'W'. Alternatives are tried longest first and the text is
    scanned once, so a placeholder is never masked again and a span inside a longer value
    does not split it. Returns the pattern and a map from its group names to placeholders.
    """
    pieces: list[tuple[int, str, str]] = []  # (length, pattern, placeholder)
    for f in card.get("fields", []):
        token, value = f["token"], str(f["value"])
        placeholder = f"<{token}>"
        if f.get("kind") == "order" and re.search(r"\d{5,}", value):
            pieces.append((len(value) + 1, _order_pattern(value), placeholder))
        texts = [value, *f.get("spans", [])]
        if token == "name":
            texts += [p for p in value.split() if len(p) > 1]
        pieces += [(len(t.strip()), _mask_pattern(t), placeholder) for t in texts if t and t.strip()]
    if not pieces:
        return None, {}
    pieces.sort(key=lambda p: p[0], reverse=True)
    groups = {f"f{i}": placeholder for i, (_, _, placeholder) in enumerate(pieces)}
    pattern = "|".join(f"(?P<f{i}>{pat})" for i, (_, pat, _) in enumerate(pieces))
    return re.compile(pattern, re.IGNORECASE), groups


def mask(text: str, rules: tuple[re.Pattern | None, dict[str, str]]) -> str:
    """`text` with every card field value replaced by its `<token>`."""
    pattern, groups = rules
    if pattern is not None:
        text = pattern.sub(lambda m: groups[m.lastgroup], text)
    return " ".join(text.split())


# --------------------------------------------------------------------------- the customer


def _one_line(value) -> str:
    return " ".join(str(value).split())


class ScriptedCustomer:
    """Deterministic customer. Context: {"card": card} (the task card as built by incognita.access.cards.card)."""

    def __init__(self, name: str, context: dict):
        if "card" not in context:
            raise ValueError("the scripted customer needs the task card in its context ({'card': ...})")
        self.name = name
        self.spec = f"scripted:{name}"
        card = context["card"]
        self.fields = [(f["token"], str(f["value"])) for f in card.get("fields", [])]
        self.dice = FaultDice(context, "customer", "USER")  # injected faults (none unless the entry sets them)
        rules = masking_rules(card)
        blocks = [r for r in card.get("requests", []) if r.get("demand")]
        # The demands, masked, in card order; for each, its refusal fallbacks, masked, in card order.
        self.requests = [mask(r["demand"], rules) for r in blocks]
        texts = [r.get("fallbacks", []) for r in blocks]
        events = [fallback_events(fs) for fs in texts]
        self.fallbacks = [[mask(f, rules) for f, on in zip(fs, ev) if "cannot" in on] for fs, ev in zip(texts, events)]
        # A refusal fallback that follows a confirmation fallback in the card answers a refusal
        # of what the customer says at that confirmation: it waits until that one is raised.
        self.waits_for = [
            [kinds[:i].count("confirmation") for i, on in enumerate(ev) if "cannot" in on]
            for kinds, ev in zip((fallback_kinds(fs) for fs in texts), events)
        ]
        # ... and its fallbacks raised when the agent asks for a confirmation, masked, in card order.
        self.at_confirm = [
            [mask(f, rules) for f, on in zip(fs, ev) if "confirm" in on] for fs, ev in zip(texts, events)
        ]

    # -- reading the history ---------------------------------------------------------------

    @staticmethod
    def _last_agent_index(messages: tuple[Turn, ...]) -> int:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].role == "user":
                return i
        return -1

    @staticmethod
    def _gate_answers(turns) -> list[dict]:
        """The gate's answers in `turns`: dicts with token, status and value."""
        asked = {c.id: c.arguments for t in turns for c in t.tool_calls}
        answers = []
        for t in turns:
            if t.role != "tool":
                continue
            try:
                out = json.loads(t.content or "")
            except json.JSONDecodeError:
                out = None
            if not isinstance(out, dict):
                args = asked.get(t.tool_call_id)
                out = {"token": args.get("token") if isinstance(args, dict) else None, "status": "unknown"}
            answers.append(out)
        return answers

    def _raised(self, messages: tuple[Turn, ...]) -> tuple[int, int | None, int, list[int]]:
        """What the customer has raised so far, read back from its own `#request` lines.

        Returns (demands raised, index of the request raised most recently or None, refusal
        fallbacks of that request raised, confirmation fallbacks raised per request). A
        raised text that is the next refusal fallback of the current request (or a later
        one) counts as that fallback; one that is the next confirmation fallback of a raised
        request counts as that one (and makes its request the current one); any other
        raised text counts as the next demand.
        """
        demands, current, fallbacks = 0, None, 0
        confirmed = [0] * len(self.requests)
        for t in messages:
            if t.role != "assistant":
                continue
            for g in parse(t.content):
                if g.kind != "request":
                    continue
                left = self.fallbacks[current][fallbacks:] if current is not None else []
                if g.payload in left:
                    fallbacks += left.index(g.payload) + 1
                    continue
                owner = next(
                    (
                        i
                        for i in range(min(demands, len(self.requests)))
                        if self.at_confirm[i][confirmed[i] :][:1] == [g.payload]
                    ),
                    None,
                )
                if owner is not None:
                    confirmed[owner] += 1
                    if owner != current:
                        current, fallbacks = owner, 0
                    continue
                current = demands if demands < len(self.requests) else None
                demands, fallbacks = demands + 1, 0
        return demands, current, fallbacks, confirmed

    def _change_of_mind(self, demands: int, confirmed: list[int]) -> str | None:
        """The fallback to raise when the agent asks for a confirmation: the next confirmation
        fallback of the first raised request (in card order) that has one left."""
        for i in range(min(demands, len(self.requests))):
            left = self.at_confirm[i][confirmed[i] :]
            if left:
                return left[0]
        return None

    # -- responding ------------------------------------------------------------------------

    def respond(self, request: ModelRequest) -> ModelResponse:
        messages = request.messages
        last = self._last_agent_index(messages)
        incoming = messages[last].content if last >= 0 else ""
        tags = parse(incoming)
        asks = list(dict.fromkeys(g.payload.split()[0] for g in tags if g.kind == "ask" and g.payload.strip()))

        # What the gate has told the customer before this message, and in answer to it.
        released_before = {
            a["token"]: a.get("value")
            for a in self._gate_answers(messages[: max(last, 0)])
            if a.get("status") in ("released", "already_released") and a.get("token")
        }
        since = messages[last + 1 :] if last >= 0 else ()
        answered_now = {a.get("token"): a for a in self._gate_answers(since) if a.get("token")}
        requested_now = {c.arguments.get("token") for t in since for c in t.tool_calls if isinstance(c.arguments, dict)}

        pending = [t for t in asks if t not in released_before and t not in answered_now and t not in requested_now]
        if pending:
            base = sum(len(t.tool_calls) for t in messages)
            calls = tuple(
                ToolCall(id=f"release_{base + i + 1}", name=RELEASE_TOOL, arguments={"token": token})
                for i, token in enumerate(pending)
            )
            return ModelResponse(text=None, tool_calls=calls)

        text = self._reply(tags, asks, released_before, answered_now, messages)
        if self.dice:
            text = self._faulty(text, messages, {*released_before, *answered_now})
        return ModelResponse(text=text)

    def _faulty(self, text: str, messages, released: set) -> str:
        """The reply with the faults the dice inject into it (if any), each a sentence of its own."""
        reply = 1 + sum(1 for t in messages if t.role == "assistant" and t.content and not t.tool_calls)
        if self.dice.roll("invent_value", reply):
            what, value = self.dice.invented(reply)
            text += f"\nMy other {what} is {value}."
            self.dice.record("invent_value", reply)
        if self.dice.roll("bypass_gate", reply):
            # A value that is not in its memory in any form: not said by the agent, sharing no word
            # with a released value (several fields may hold "most expensive"; a user id holds the
            # name, so an underscore parts words), and holding none ("certificates", "certificate").
            said = " ".join(t.content or "" for t in messages if t.role == "user").lower()
            known = [v.lower() for token, v in self.fields if token in released]
            memory = {w for v in known for w in re.findall(r"[^\W_]+", v)}
            value = next(
                (
                    v
                    for token, v in self.fields
                    if token not in released
                    and v.lower() not in said
                    and not memory & set(re.findall(r"[^\W_]+", v.lower()))
                    and not any(k in v.lower() for k in known if k)
                ),
                None,
            )
            if value is not None:
                text += f"\nIn case it helps: {value}."
                self.dice.record("bypass_gate", reply)
        return text

    def _reply(self, tags, asks, released_before, answered_now, messages) -> str:
        prose: list[str] = []
        lines: list[str] = []

        if asks:
            known, unsure = [], []
            for token in asks:
                if token in released_before:
                    known.append((token, released_before[token]))
                    continue
                answer = answered_now.get(token, {})
                if answer.get("status") in ("released", "already_released") and answer.get("value") is not None:
                    known.append((token, answer["value"]))
                else:
                    unsure.append(token)
            if known:
                prose.append("Sure, here is what you asked for.")
                lines += [tag("field", f"{token} {_one_line(value)}") for token, value in known]
            if unsure:
                prose.append(
                    "I'm not sure about that, I don't remember it."
                    if len(unsure) == 1
                    else "I'm not sure about some of that, I don't remember it."
                )
                lines += [tag("notsure", token) for token in unsure]

        raised, current, fallbacks, confirmed = self._raised(messages)
        if any(g.kind == "confirm" for g in tags):
            instead = self._change_of_mind(raised, confirmed)
            if instead is not None:
                # The card's condition "when the agent asks for confirmation" is met: no yes,
                # and what it wants now instead of (or besides) what the agent restated.
                prose.append("Wait, before you go ahead: I have changed my mind.")
                return say(" ".join(prose), *lines, tag("request", instead))
            prose.append("Yes, please go ahead.")
            lines.append(tag("yes"))

        if any(g.kind == "tell" for g in tags):
            prose.append("Thanks for letting me know.")

        if any(g.kind == "cannot" for g in tags):
            left = self.fallbacks[current][fallbacks:] if current is not None else []
            if left and self.waits_for[current][fallbacks] > confirmed[current]:
                left = []
            if left:
                prose.append("I understand, thank you for checking. In that case, here is what I would like instead.")
                return say(" ".join(prose), *lines, tag("request", left[0]))
            prose.append("I see.")

        if not prose:
            prose.append("Okay.")

        if raised < len(self.requests):
            prose.append("There is also something I need.")
            lines.append(tag("request", self.requests[raised]))

        return say(" ".join(prose), *lines)
