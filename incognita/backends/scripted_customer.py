"""The scripted customer: an offline, deterministic stand-in for the simulated USER.

It answers the agent in the controlled request language (incognita.backends.language) and
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
is not possible, ...", "If you cannot ...": see `is_refusal_condition`) are raised so;
other conditions ("If the agent asks for confirmation, ...") are not. With no such fallback
left, a `#cannot` gets a plain "I see." and the next demand follows as usual.

The customer keeps no state between calls: what it has raised so far is read back from its
own `#request` lines in the conversation, matched against the masked card texts.
"""

from __future__ import annotations

import json
import re

from incognita.backends.language import parse, say, tag
from incognita.common.backends.base import ModelRequest, ModelResponse, ToolCall, Turn
from incognita.gate import RELEASE_TOOL

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


# --------------------------------------------------------------------------- fallbacks

_REFUSAL = re.compile(
    r"""^\W*(?:but\s+)?(?:
        otherwise\b                                     # Otherwise, ...
      | (?:only\s+)?if\s+(?:
            not\b                                       # If not, ... / If not possible, ...
          | (?:[^,;]|,(?=\s*\d))*?                        # the condition, up to its comma ...
            (?:(?:n['’]t|\bnot)\s+(?:be\s+)?(?:possible|available|an\s+option|work)  # ... is not possible
              | \bcan(?:not|\s+not|['’]t|\s+only)\b      # you cannot / it can't / can only
              | \bcould(?:n['’]t|\s+not)\b
              | \brefuses?\b                             # it refuses
              | \bno\s+way\b | \bthere\s+is\s+no\b        # there is no (way) ...
              | \bno\b(?:[^,;]|,(?=\s*\d))*?\bavailable\b  # no ... is available
              | \bthere\s+are\s+(?:any\s+)?(?:issues|problems)\b
            )
        )
    )""",
    re.IGNORECASE | re.VERBOSE,
)


def is_refusal_condition(sentence: str) -> bool:
    """Whether a fallback's condition is a refusal of what came before it.

    Judged on the sentence's opening only: "Otherwise", "If not", or an "If" (also "But
    if", "Only if") whose condition (up to its first comma) says that something is not
    possible, not available or does not work, that someone cannot (or can only ...) do it,
    refuses, or that there is no (way to do) it. Conditions of any other kind ("If the agent
    asks for confirmation", "When asked for the order ID", "If multiple colors are
    available", "If so") are not refusals; those are answered through fields and `#yes`.
    """
    return _REFUSAL.match(sentence) is not None


# --------------------------------------------------------------------------- the customer


def _one_line(value) -> str:
    return " ".join(str(value).split())


class ScriptedCustomer:
    """Deterministic customer. Context: {"card": card} (the task card as built by incognita.cards)."""

    def __init__(self, name: str, context: dict):
        if "card" not in context:
            raise ValueError("the scripted customer needs the task card in its context ({'card': ...})")
        self.name = name
        self.spec = f"scripted:{name}"
        card = context["card"]
        rules = masking_rules(card)
        blocks = [r for r in card.get("requests", []) if r.get("demand")]
        # The demands, masked, in card order; for each, its refusal fallbacks, masked, in card order.
        self.requests = [mask(r["demand"], rules) for r in blocks]
        self.fallbacks = [[mask(f, rules) for f in r.get("fallbacks", []) if is_refusal_condition(f)] for r in blocks]

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

    def _raised(self, messages: tuple[Turn, ...]) -> tuple[int, int | None, int]:
        """What the customer has raised so far, read back from its own `#request` lines.

        Returns (demands raised, index of the request raised most recently or None, refusal
        fallbacks of that request raised). A raised text that is the next refusal fallback
        of the current request (or a later one) counts as that fallback; any other raised
        text counts as the next demand.
        """
        demands, current, fallbacks = 0, None, 0
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
                current = demands if demands < len(self.requests) else None
                demands, fallbacks = demands + 1, 0
        return demands, current, fallbacks

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

        return ModelResponse(text=self._reply(tags, asks, released_before, answered_now, messages))

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

        if any(g.kind == "confirm" for g in tags):
            prose.append("Yes, please go ahead.")
            lines.append(tag("yes"))

        if any(g.kind == "tell" for g in tags):
            prose.append("Thanks for letting me know.")

        raised, current, fallbacks = self._raised(messages)
        if any(g.kind == "cannot" for g in tags):
            left = self.fallbacks[current][fallbacks:] if current is not None else []
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
