"""The disclosure gate: the only way customer facts leave the task card.

The gate is mechanical, whatever model plays the customer: a field is released only while
the customer is answering an agent message to it (`reply_to_agent`), at most one new field
per such message, and only a field of this card. Any other attempt is refused and logged;
a field already released may be recalled again. Every request is a Disclosure event
carrying the field's token (never anything else the customer wrote).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from incognita.access.episodes.loop.records import Disclosure

RELEASE_TOOL = "release_field"


def release_field_schema(tokens: list[str] | tuple[str, ...]) -> dict:
    """The customer's one tool: ask the disclosure gate for one field of its memory."""
    return {
        "type": "function",
        "function": {
            "name": RELEASE_TOOL,
            "description": (
                "Recall one detail of your own situation so that you can tell it to the agent. "
                "Call it only for a detail the agent has asked you for, at most one new detail "
                "per message of the agent; it returns the detail's value, or nothing when you "
                "do not remember it or may not recall it now."
            ),
            "parameters": {
                "type": "object",
                "properties": {"token": {"type": "string", "enum": list(tokens)}},
                "required": ["token"],
            },
        },
    }


class DisclosureGate:
    def __init__(self, card: dict):
        self._values = {f["token"]: f["value"] for f in card["fields"]}
        self.released: dict[str, str] = {}
        self.events: list[Disclosure] = []
        self._replying = False  # the customer is answering an agent message
        self._released_now = False  # a new field went out in this reply

    @contextmanager
    def reply_to_agent(self) -> Iterator[None]:
        """The span in which the customer answers one agent message: one new field at most."""
        self._replying, self._released_now = True, False
        try:
            yield
        finally:
            self._replying = False

    @property
    def tokens(self) -> list[str]:
        """Field names (never values): what the customer may be asked about."""
        return list(self._values)

    def request(self, token: str, turn: int) -> Disclosure:
        """Release `token` if the card has it and the rules allow it now; log the request either way."""
        if token not in self._values:
            event = Disclosure(turn=turn, token=token, status="unknown")
        elif token in self.released:
            event = Disclosure(turn=turn, token=token, status="already_released", value=self._values[token])
        elif not self._replying:
            event = Disclosure(turn=turn, token=token, status="refused", reason="not in reply to an agent message")
        elif self._released_now:
            event = Disclosure(
                turn=turn,
                token=token,
                status="refused",
                reason="one new field per agent message; this one was already used",
            )
        else:
            self.released[token] = self._values[token]
            self._released_now = True
            event = Disclosure(turn=turn, token=token, status="released", value=self._values[token])
        self.events.append(event)
        return event

    def memory(self) -> dict[str, str]:
        """What the customer may use in answers right now: the released fields only."""
        return dict(self.released)
