"""The disclosure gate: the only way customer facts leave the task card.

It releases one field at a time, only the field asked for, and records every request
as a Disclosure event carrying the field's token. Fields stay released once released.
"""

from __future__ import annotations

from incognita.records import Disclosure

RELEASE_TOOL = "release_field"


def release_field_schema(tokens: list[str] | tuple[str, ...]) -> dict:
    """The customer's one tool: ask the disclosure gate for one field of its memory."""
    return {
        "type": "function",
        "function": {
            "name": RELEASE_TOOL,
            "description": ("Recall one detail of your own situation so that you can tell it to the agent. "
                            "Call it only for a detail the agent has asked you for; it returns the detail's "
                            "value, or nothing when you do not remember it."),
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

    @property
    def tokens(self) -> list[str]:
        """Field names (never values): what the customer may be asked about."""
        return list(self._values)

    def request(self, token: str, turn: int) -> Disclosure:
        """Release `token` if the card has it; log the request either way."""
        if token not in self._values:
            event = Disclosure(turn=turn, token=token, status="unknown")
        elif token in self.released:
            event = Disclosure(turn=turn, token=token, status="already_released", value=self._values[token])
        else:
            self.released[token] = self._values[token]
            event = Disclosure(turn=turn, token=token, status="released", value=self._values[token])
        self.events.append(event)
        return event

    def memory(self) -> dict[str, str]:
        """What the customer may use in answers right now: the released fields only."""
        return dict(self.released)
