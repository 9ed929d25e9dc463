"""Faults injected into the scripted participants, as ground truth for the participant audit.

A scripted desk or customer is faithful by construction. Given `faults` in its config entry
(`participants.service: {spec: scripted:desk, faults: {misreport: 0.3}}`), it departs from
that on purpose, each time with the fault's probability, and records each departure (which
fault, which participant, which of its replies) so that the audit's findings
(incognita.access.reader.participant_audit) can be scored against it: recall and precision
per finding kind (docs/fidelity.md). config/fidelity.yaml runs a design with them.

Draws are a hash of (cell seed, participant, reply, fault): the same episode injects the same
faults, and one fault's draw never shifts another's.

The values a fault alters or invents are the domain's identifiers, as its reader part describes
them (`VALUE_SHAPES`, `invented_id`; incognita.access.domains.<domain>.reader): the same shapes
the audit looks for, so one fault is the same test in every domain. A participant with faults
is therefore told its domain (`domain` in its context).
"""

from __future__ import annotations

import hashlib
from typing import Any

# Fault -> the audit finding it must produce, by participant side.
SERVICE_FAULTS = {
    "misreport": "misreported_value",  # a reported result value altered
    "invent_value": "ungrounded_value",  # a report that adds a date no result of its holds
    "claim_change": "claimed_unmade_change",  # a decline that says the change is made
    "refuse_in_remit": "refused_in_remit",  # a read it holds declined as outside its remit (always, for those arguments)
    "refer_elsewhere": "referred_elsewhere",  # a decline that sends the agent to another desk
    "name_tool": "named_tool",  # a report that names the tool it used
    "format_list": "formatted_list",  # a report laid out as a list
}
CUSTOMER_FAULTS = {
    "invent_value": "customer_invented_value",  # an order number that is in no card
    "bypass_gate": "customer_gate_bypass",  # a field's value said before the gate released it
}
FAULTS = {"service": SERVICE_FAULTS, "customer": CUSTOMER_FAULTS}


def check_faults(faults: object, side: str, where: str) -> dict[str, float]:
    """The `faults` setting of a scripted participant's entry; ValueError naming `where` and the key."""
    known = FAULTS[side]
    if not isinstance(faults, dict) or not faults:
        raise ValueError(f"{where}.faults: expected a mapping of fault to probability ({', '.join(known)})")
    out = {}
    for name, p in faults.items():
        if name not in known:
            raise ValueError(f"{where}.faults.{name}: unknown fault for the {side} (known: {', '.join(known)})")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"{where}.faults.{name}: expected a probability in [0, 1], got {p!r}")
        out[name] = float(p)
    return out


def _uniform(*parts: object) -> float:
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class FaultDice:
    """One participant's injected faults: whether to inject one now, and what was injected."""

    def __init__(self, context: dict, side: str, participant: str):
        settings = context.get("settings") or {}
        self.faults = check_faults(settings["faults"], side, "faults") if settings.get("faults") else {}
        self.seed, self.side, self.participant = context.get("seed", 0), side, participant
        self.injected: list[dict] = []
        self.reader = None  # the domain's reader part: its identifiers' shapes (only with faults)
        if self.faults:
            if not context.get("domain"):
                raise ValueError(f"{participant}: a scripted participant with faults needs its domain in its context")
            from incognita.access.domain import get_domain

            self.reader = get_domain(context["domain"]).part("reader")

    def __bool__(self) -> bool:
        return bool(self.faults)

    def roll(self, fault: str, *key: object) -> bool:
        """Inject `fault` here? `key` names the occasion (the reply, or a request for sticky faults)."""
        p = self.faults.get(fault, 0.0)
        return p > 0 and _uniform(self.seed, self.participant, fault, *key) < p

    def invented(self, reply: int) -> tuple[str, str]:
        """(what it is, value): an identifier of the domain's that the customer invents at `reply`."""
        n = int(hashlib.sha256(f"{self.seed}/{reply}".encode()).hexdigest(), 16)
        return self.reader.invented_id(n)

    def altered(self, value: Any) -> Any:
        """`value` with its first identifier or amount (depth first, keys in order) changed, or None
        when it holds none: a misreport the audit can see (a status word or a name it cannot)."""
        if isinstance(value, float):
            return round(value * 1.37 + 0.11, 2)
        if isinstance(value, str) and value[-1:].isalnum() and self.reader.VALUE_SHAPES.is_identifier(value):
            return value[:-1] + _next_character(value[-1])
        if isinstance(value, dict):
            for key in sorted(value):
                changed = self.altered(value[key])
                if changed is not None:
                    return {**value, key: changed}
        if isinstance(value, list):
            for i, item in enumerate(value):
                changed = self.altered(item)
                if changed is not None:
                    return [*value[:i], changed, *value[i + 1 :]]
        return None

    def invented_date_finding(self, held: list[str]) -> str:
        """The finding a desk's invented date must produce, by the audit's rule: a value in none of
        its results is `misreported_value` where its results (`held`: their texts) hold values of
        that shape (an airline desk's reservations hold dates), else `ungrounded_value` (retail's)."""
        dated = any(shape == "date" for text in held for shape, _ in self.reader.VALUE_SHAPES.values(text))
        return "misreported_value" if dated else SERVICE_FAULTS["invent_value"]

    def record(self, fault: str, reply: int, finding: str | None = None) -> None:
        """`reply`: which of the participant's replies to the agent carries it (1 = its first);
        `finding`: the one it must produce, where that depends on what the participant holds."""
        finding = finding or FAULTS[self.side][fault]
        self.injected.append({"participant": self.participant, "fault": fault, "finding": finding, "reply": reply})


def _next_character(c: str) -> str:
    """The next digit or letter, cyclically (an id's last character altered, in the same class)."""
    if c.isdigit():
        return str((int(c) + 1) % 10)
    if c.isalpha():
        base = ord("A") if c.isupper() else ord("a")
        return chr(base + (ord(c) - base + 1) % 26)
    raise ValueError(f"{c!r}: neither a digit nor a letter")
