"""Faults injected into the scripted participants, as ground truth for the participant audit.

A scripted desk or customer is faithful by construction. Given `faults` in its config entry
(`participants.service: {spec: scripted:desk, faults: {misreport: 0.3}}`), it departs from
that on purpose, each time with the fault's probability, and records each departure (which
fault, which participant, which of its replies) so that the audit's findings
(incognita.access.reader.participant_audit) can be scored against it: recall and precision
per finding kind (docs/fidelity.md). config/fidelity.yaml runs a design with them.

Draws are a hash of (cell seed, participant, reply, fault): the same episode injects the same
faults, and one fault's draw never shifts another's.
"""

from __future__ import annotations

import hashlib

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

    def __bool__(self) -> bool:
        return bool(self.faults)

    def roll(self, fault: str, *key: object) -> bool:
        """Inject `fault` here? `key` names the occasion (the reply, or a request for sticky faults)."""
        p = self.faults.get(fault, 0.0)
        return p > 0 and _uniform(self.seed, self.participant, fault, *key) < p

    def record(self, fault: str, reply: int) -> None:
        """`reply`: which of the participant's replies to the agent carries it (1 = its first)."""
        finding = FAULTS[self.side][fault]
        self.injected.append({"participant": self.participant, "fault": fault, "finding": finding, "reply": reply})
