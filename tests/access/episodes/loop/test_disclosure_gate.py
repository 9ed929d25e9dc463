"""The disclosure gate is mechanical: one new field per agent message, only in reply to one,
only fields of this card; every other attempt refused and logged."""

from __future__ import annotations

from incognita.access.episodes.loop.disclosure_gate import DisclosureGate

CARD = {"fields": [{"token": "email", "value": "ada@example.com"}, {"token": "zip", "value": "10001"}]}


def statuses(gate: DisclosureGate) -> list[tuple[str, str]]:
    return [(e.token, e.status) for e in gate.events]


def test_one_new_field_per_agent_message():
    gate = DisclosureGate(CARD)
    with gate.reply_to_agent():
        assert gate.request("email", 1).value == "ada@example.com"
        second = gate.request("zip", 1)
        assert second.status == "refused" and second.value is None and "one new field" in second.reason
        assert gate.request("email", 1).status == "already_released"  # recalling a released field is fine
    with gate.reply_to_agent():
        assert gate.request("zip", 2).status == "released"
    assert gate.memory() == {"email": "ada@example.com", "zip": "10001"}
    assert statuses(gate) == [
        ("email", "released"),
        ("zip", "refused"),
        ("email", "already_released"),
        ("zip", "released"),
    ]


def test_nothing_is_released_outside_a_reply_and_unknown_fields_never_are():
    gate = DisclosureGate(CARD)
    refused = gate.request("email", 0)
    assert refused.status == "refused" and "not in reply" in refused.reason and gate.memory() == {}
    with gate.reply_to_agent():
        assert gate.request("phone", 1).status == "unknown"  # not a field of this card
        assert gate.request("email", 1).status == "released"  # an unknown request does not use the reply
    assert statuses(gate) == [("email", "refused"), ("phone", "unknown"), ("email", "released")]
