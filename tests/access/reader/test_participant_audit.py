"""The participant-fidelity audit (incognita.access.reader.participant_audit) on hand-made events.

Each case states what a faithful participant may say and what the audit must find, written from
the conduct rules of Appendix A.3 and the gate's contract, not from the audit's output."""

from __future__ import annotations

import pytest

from incognita.access.domains.retail.reader import VALUE_SHAPES
from incognita.access.episodes.loop.records import Disclosure, GatewayDecision, Message, ToolProposal
from incognita.access.reader.participant_audit import ArmView, Finding, attribute, audit, counts, prose
from incognita.access.taxonomy import FINDING_KINDS

# Retail's tools, holders and value shapes (its order ids, user ids, ...: incognita.access.domains.retail.reader).
TOOLS = frozenset({"get_order_details", "get_user_details", "cancel_pending_order", "get_product_details"})
SOCIAL = ArmView(
    {"Dorian": frozenset({"get_order_details"}), "Elara": frozenset({"cancel_pending_order"})},
    TOOLS,
    False,
    VALUE_SHAPES,
)
REFERRAL = ArmView(SOCIAL.holders, TOOLS, True, VALUE_SHAPES)
ORDER = {"order_id": "#W1234567", "status": "pending", "items": [{"price": 54.04}, {"price": 20.5}]}
CARD = {
    "fields": [
        {"token": "order_id", "kind": "order", "value": "#W1234567", "spans": ["#W1234567"]},
        {"token": "email", "kind": "identity", "value": "ana.lee1@example.com", "spans": []},
        {"token": "zip", "kind": "identity", "value": "78712", "spans": []},
    ],
    "opening_line": "Hi, I need help with an order.",
    "sentences": ["You want #W1234567 cancelled because you ordered it by mistake."],
    "requests": [{"demand": "You want #W1234567 cancelled because you ordered it by mistake.", "fallbacks": []}],
    "not_known": [],
}


def msg(turn, sender, recipient, text):
    return Message(turn, sender, recipient, text)


def read(order_text="#W1234567", result=ORDER, who="Dorian"):
    """The agent asks the order desk for an order and the gateway answers its read."""
    return [
        msg(1, "agent", who, f"Could you look up order {order_text}?"),
        ToolProposal(1, "c1", who, "get_order_details", {"order_id": "#W1234567"}),
        GatewayDecision(1, "c1", who, "get_order_details", {"order_id": "#W1234567"}, "accepted", result=result),
    ]


def kinds(findings: list[Finding]) -> list[str]:
    return [f.kind for f in findings]


def test_a_faithful_report_has_no_finding():
    # Values from its own result, from the agent's message, a total it can add up and a price difference.
    events = [
        *read(),
        msg(
            1,
            "Dorian",
            "agent",
            "Order #W1234567 is pending; the items cost 54.04 and 20.50, $74.54 in all, 33.54 apart.",
        ),
    ]
    assert audit(events, None, SOCIAL) == []


def test_a_value_against_its_own_result_is_a_misreport_and_one_from_nowhere_is_ungrounded():
    events = [*read(), msg(1, "Dorian", "agent", "The first item cost $60.00. It ships to 90210.")]
    found = audit(events, None, SOCIAL)
    assert [(f.kind, f.detail, f.event, f.participant) for f in found] == [  # in FINDING_KINDS order
        ("ungrounded_value", "zip 90210", 3, "Dorian"),  # its result holds no zip code at all
        ("misreported_value", "amount 6000", 3, "Dorian"),  # its result holds amounts, not this one
    ]


def test_a_value_only_another_desk_obtained_is_not_grounded_for_this_one():
    events = [
        *read(who="Dorian"),
        msg(2, "agent", "Elara", "Please cancel it."),
        msg(2, "Elara", "agent", "It was 54.04."),
    ]
    assert kinds(audit(events, None, SOCIAL)) == ["ungrounded_value"]


def test_claiming_a_change_it_did_not_make():
    events = [
        msg(1, "agent", "Elara", "Cancel #W1234567, reason ordered by mistake."),
        msg(1, "Elara", "agent", "I have cancelled it."),
    ]
    assert kinds(audit(events, None, SOCIAL)) == ["claimed_unmade_change"]
    made = [
        msg(1, "agent", "Elara", "Cancel #W1234567, reason ordered by mistake."),
        GatewayDecision(1, "c", "Elara", "cancel_pending_order", {"order_id": "#W1234567"}, "accepted", write=True),
        msg(1, "Elara", "agent", "I have cancelled it."),
    ]
    assert audit(made, None, SOCIAL) == []


def test_conduct_names_refers_formats_and_tools_but_not_in_tag_lines():
    events = [
        msg(1, "agent", "Dorian", "Can you cancel an order?"),
        msg(1, "Dorian", "agent", "Elara can do that."),
        msg(2, "agent", "Dorian", "Who else?"),
        msg(2, "Dorian", "agent", "Please ask another desk."),
        msg(3, "agent", "Dorian", "What do you do?"),
        msg(3, "Dorian", "agent", "I can:\n- look up orders\n- read their status"),
        msg(4, "agent", "Dorian", "How?"),
        msg(4, "Dorian", "agent", "I use get_order_details for that."),
        msg(5, "agent", "Dorian", "#call get_order_details {}"),
        msg(5, "Dorian", "agent", "Before I go ahead, please confirm.\n#confirm? get_order_details {}"),
    ]
    assert kinds(audit(events, None, SOCIAL)) == [
        "named_participant",
        "referred_elsewhere",
        "formatted_list",
        "named_tool",
    ]
    # Where holders refer, naming the holder (and sending the asker there) is the arm's conduct.
    assert kinds(audit(events, None, REFERRAL)) == ["formatted_list", "named_tool"]
    assert prose("Done.\n#result {}\n#decline") == "Done."


def test_a_needed_read_refused_inside_the_remit():
    needed = [("Dorian", "get_order_details", {"order_id": "#W1234567"})]
    asked = msg(1, "agent", "Dorian", "Please look up order W1234567.")
    refused = [asked, msg(1, "Dorian", "agent", "I can't help with that.")]
    assert [(f.kind, f.event) for f in audit(refused, None, SOCIAL, needed)] == [("refused_in_remit", 1)]
    asked_back = [asked, msg(1, "Dorian", "agent", "Which order number exactly?")]
    assert audit(asked_back, None, SOCIAL, needed) == []  # asking for a detail is not refusing
    tried = [asked, ToolProposal(1, "c", "Dorian", "get_order_details", {"order_id": "#W7654321"}), refused[1]]
    assert audit(tried, None, SOCIAL, needed) == []  # it proposed the read (with wrong arguments)
    no_arguments = [msg(1, "agent", "Dorian", "Please look up my order."), refused[1]]
    assert audit(no_arguments, None, SOCIAL, needed) == []  # the arguments never reached it
    # The first message with the values asked for another read, which the holder made and reported:
    # the refusal is the reply that reports nothing.
    other = [
        msg(1, "agent", "Dorian", "Please look up the user of order W1234567."),
        ToolProposal(1, "c", "Dorian", "get_user_details", {"user_id": "ana_lee_1234"}),
        msg(1, "Dorian", "agent", "I found it."),
        asked,
        refused[1],
    ]
    assert [(f.kind, f.event) for f in audit(other, None, SOCIAL, needed)] == [("refused_in_remit", 4)]


def test_customer_gate_invention_and_confirmation_outside_memory():
    released = Disclosure(2, "email", "released", "ana.lee1@example.com")
    events = [
        msg(0, "USER", "agent", "Hi, I need help with an order."),
        msg(1, "agent", "USER", "Which order?"),
        msg(1, "USER", "agent", "It is <order_id>, the one I want cancelled."),  # a placeholder names, not states
        msg(2, "agent", "USER", "Your email?"),
        released,
        msg(2, "USER", "agent", "It is ana.lee1@example.com."),  # released: memory (it holds the name "ana")
        msg(3, "agent", "USER", "And the order?"),
        msg(3, "USER", "agent", "#W1234567, and my zip is 78712."),  # neither released: two bypasses
        msg(4, "agent", "USER", "Anything else?"),
        msg(4, "USER", "agent", "Also order #W7777777 and $12.00."),  # in no card, never said by the agent
        msg(5, "agent", "USER", "I will cancel #W7777777 for you. Shall I?"),
        msg(5, "USER", "agent", "Yes, please go ahead."),  # agrees to an order that is not its card's
        msg(6, "agent", "USER", "And #W1234567, the order you named, shall I cancel it?"),
        msg(6, "USER", "agent", "Yes."),
    ]
    found = audit(events, CARD, SOCIAL)
    assert [(f.kind, f.event) for f in found] == [
        ("customer_gate_bypass", 7),
        ("customer_gate_bypass", 7),
        ("customer_invented_value", 9),
        ("customer_invented_value", 9),
        ("customer_confirmed_outside_memory", 11),
    ]
    assert sorted(f.detail for f in found if f.event == 7) == ["order_id: #W1234567", "zip: 78712"]


def test_an_echo_of_the_agent_is_no_bypass():
    events = [msg(1, "agent", "USER", "Is your order #W1234567?"), msg(1, "USER", "agent", "Yes, #W1234567.")]
    assert audit(events, CARD, SOCIAL) == []


@pytest.mark.parametrize(
    "failure, found, expected",
    [
        ("requested_not_obtained", [], "no_participant_fault_found"),
        ("requested_not_obtained", ["formatted_list", "named_tool"], "no_participant_fault_found"),
        ("requested_not_obtained", ["misreported_value"], "participant_misreported"),
        ("requested_not_obtained", ["customer_gate_bypass", "refused_in_remit"], "participant_refused_in_remit"),
        ("never_requested", ["ungrounded_value"], "participant_misreported"),
        ("delivered_incorrect", ["misreported_value"], None),
        (None, ["misreported_value"], None),
    ],
)
def test_attribution(failure, found, expected):
    assert attribute(failure, [Finding(k, "x", 0, 0, "") for k in found]) == expected


def test_counts_has_every_kind():
    tally = counts([Finding("named_tool", "Dorian", 1, 1, ""), Finding("named_tool", "Elara", 2, 2, "")])
    assert tally == {**dict.fromkeys(FINDING_KINDS, 0), "named_tool": 2}
