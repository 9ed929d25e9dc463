"""The scripted customer and service desks, driven the way the episode loop drives them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from incognita.access.cards.card import build_card
from incognita.access.domain import domain_files, get_domain
from incognita.access.domains.retail.scripted.agent import CHANGE_WORDS
from incognita.access.episodes.loop.disclosure_gate import DisclosureGate, release_field_schema
from incognita.access.episodes.loop.tool_gateway import Gateway
from incognita.access.episodes.scripted.conditions import is_refusal_condition
from incognita.access.episodes.scripted.language import call_tag, first, parse, say, tag
from incognita.access.episodes.scripted.scripted_customer import ScriptedCustomer, mask, masking_rules
from incognita.access.episodes.scripted.scripted_desk import (
    _MISSING,
    ScriptedDesk,
    resolve_pointer,
    wanted_pointers,
)
from incognita.access.golden.upstream_replay import World
from incognita.access.reference.partition import load_partition
from incognita.common.backends.base import ModelRequest, ToolCall, Turn

ROOT = Path(__file__).resolve().parents[4]
RETAIL = domain_files("retail", ROOT / "config/domains")
SOCIAL_DESKS = load_partition(RETAIL.partition).desks("social")
(INDIRECT_HOLDER,) = load_partition(RETAIL.partition).desks("indirect")

AREAS = {
    "Aster": "customer accounts",
    "Boreal": "returns and exchanges",
    "Cygnus": "the product catalog",
    "Dorian": "order records",
    "Elara": "finding customer accounts",
    "Fenn": "changes to pending orders",
    INDIRECT_HOLDER: "all customer-service work",
}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def world(source_dir) -> World:
    return World(get_domain("retail"), source_dir / "db.json")


@pytest.fixture(scope="module")
def partition():
    return load_partition(RETAIL.partition)


@pytest.fixture(scope="module")
def card(tasks, db, meta) -> dict:
    return build_card(tasks["0"], db, meta, get_domain("retail"))


@pytest.fixture()
def gateway(world, partition) -> Gateway:
    owners = {d: frozenset(partition.tools_of(d, "social")) for d in SOCIAL_DESKS}
    owners[INDIRECT_HOLDER] = frozenset(partition.tools_of(INDIRECT_HOLDER, "indirect"))
    return Gateway(world, owners)


def make_desk(who: str, world, partition) -> ScriptedDesk:
    arm = "indirect" if who == INDIRECT_HOLDER else "social"
    tools = list(partition.tools_of(who, arm))
    writes = [t for t in tools if world.tool_types[t] == "write"]
    context = {"tools": tools, "area": AREAS[who], "confirm_writes": True, "write_tools": writes}
    return ScriptedDesk("default", who, {**context, "change_words": CHANGE_WORDS})  # as the harness makes it


# --------------------------------------------------------------------------- the loop, as in the contract


class DeskRun:
    """One service participant's private conversation, stepped as the episode loop does."""

    def __init__(self, desk: ScriptedDesk, gateway: Gateway | None = None):
        self.desk, self.gateway, self.history, self.steps = desk, gateway, [], []

    def send(self, text: str, turn: int = 1, outcome: dict | None = None) -> str:
        """Deliver an agent message; `outcome` fakes the gateway's answer when there is no gateway."""
        self.history.append(Turn("user", text))
        for _ in range(8):
            response = self.desk.respond(ModelRequest(role=self.desk.role, system="", messages=tuple(self.history)))
            self.steps.append(response)
            if not response.tool_calls:
                self.history.append(Turn("assistant", response.text))
                return response.text
            self.history.append(Turn("assistant", response.text, response.tool_calls))
            for call in response.tool_calls:
                if self.gateway is not None:
                    d = self.gateway.propose(self.desk.role, call.name, call.arguments, turn)
                    out = {"status": d.status, "reason": d.reason, "result": d.result}
                else:
                    out = outcome
                self.history.append(Turn("tool", json.dumps(out), tool_call_id=call.id))
        raise AssertionError("the desk did not reply within 8 steps")

    def proposals(self) -> list[ToolCall]:
        return [c for r in self.steps for c in r.tool_calls]


class CustomerRun:
    def __init__(self, card: dict):
        self.customer = ScriptedCustomer("default", {"card": card})
        self.gate = DisclosureGate(card)
        self.schema = release_field_schema(self.gate.tokens)
        self.history = [Turn("assistant", card["opening_line"])]
        self.steps = []

    def send(self, text: str, turn: int = 1) -> str:
        self.history.append(Turn("user", text))
        with self.gate.reply_to_agent():
            return self._answer(turn)

    def _answer(self, turn: int) -> str:
        for _ in range(8):
            response = self.customer.respond(
                ModelRequest(role="customer", system="", messages=tuple(self.history), tools=(self.schema,))
            )
            self.steps.append(response)
            if not response.tool_calls:
                self.history.append(Turn("assistant", response.text))
                return response.text
            self.history.append(Turn("assistant", response.text, response.tool_calls))
            for call in response.tool_calls:
                assert call.name == "release_field"
                e = self.gate.request(call.arguments["token"], turn)
                self.history.append(
                    Turn(
                        "tool",
                        json.dumps({"token": e.token, "status": e.status, "value": e.value}),
                        tool_call_id=call.id,
                    )
                )
        raise AssertionError("the customer did not reply within 8 steps")


def tags_of(text: str, kind: str) -> list[str]:
    return [t.payload for t in parse(text) if t.kind == kind]


def shows(text: str, value: str) -> bool:
    """Whether `value` appears in `text` as a whole word (case-blind), placeholders aside."""
    text = re.sub(r"<[^<>\s]+>", " ", text)
    words = r"\s+".join(re.escape(w) for w in value.split())
    return re.search(r"(?<![A-Za-z0-9])" + words + r"(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


# --------------------------------------------------------------------------- customer


def test_release_field_schema_lists_tokens():
    schema = release_field_schema(["name", "zip"])
    fn = schema["function"]
    assert schema["type"] == "function" and fn["name"] == "release_field"
    assert fn["parameters"]["properties"]["token"]["enum"] == ["name", "zip"]
    assert fn["parameters"]["required"] == ["token"]


def test_customer_releases_exactly_the_asked_field(card):
    run = CustomerRun(card)
    reply = run.send(say("Could I have your zip code?", tag("ask", "zip")))
    assert [(e.token, e.status) for e in run.gate.events] == [("zip", "released")]
    assert tags_of(reply, "field") == ["zip 19122"]
    # No other field value reaches the agent, not even inside the customer's own request.
    for f in card["fields"]:
        if f["token"] != "zip":
            assert not any(shows(reply, s) for s in [f["value"], *f["spans"]]), f["token"]


def test_customer_one_call_per_ask_and_no_repeat(card):
    run = CustomerRun(card)
    run.send(say("Name and order, please.", tag("ask", "name"), tag("ask", "order_id")))
    assert [c.arguments for c in run.steps[0].tool_calls] == [{"token": "name"}, {"token": "order_id"}]
    reply = run.steps[-1].text
    # The gate releases one new field per agent message: the second is refused, the customer unsure.
    assert tags_of(reply, "field") == ["name Yusuf Rossi"] and tags_of(reply, "notsure") == ["order_id"]
    assert [(e.token, e.status) for e in run.gate.events] == [("name", "released"), ("order_id", "refused")]
    later = run.send(say("And the order?", tag("ask", "order_id")))
    assert tags_of(later, "field") == ["order_id #W2378156"]
    # Asking again for a released field is answered from memory: no further gate event.
    again = run.send(say("Your name again?", tag("ask", "name")))
    assert tags_of(again, "field") == ["name Yusuf Rossi"]
    assert [e.token for e in run.gate.events] == ["name", "order_id", "order_id"]


def test_customer_not_sure_of_unknown_field(card):
    run = CustomerRun(card)
    reply = run.send(say("What is your email?", tag("ask", "email")))
    assert [(e.token, e.status) for e in run.gate.events] == [("email", "unknown")]
    assert tags_of(reply, "notsure") == ["email"]
    assert not tags_of(reply, "field")


def test_customer_mixed_known_and_unknown(card):
    run = CustomerRun(card)
    reply = run.send(say("Two things.", tag("ask", "zip"), tag("ask", "email")))
    assert tags_of(reply, "field") == ["zip 19122"] and tags_of(reply, "notsure") == ["email"]


def test_customer_confirms_thanks_and_neutral(card):
    run = CustomerRun(card)
    assert first(run.send(say("May I exchange both items?", tag("confirm", "exchange 2 items"))), "yes")
    told = run.send(say("Your gift card balance is 10.", tag("tell", "balance 10")))
    assert "thank" in told.lower() and not tags_of(told, "yes")
    neutral = run.send("How is your day?")
    assert not tags_of(neutral, "field") and not tags_of(neutral, "yes")
    assert run.gate.events == []


def test_customer_raises_its_demands_in_order_masked(card):
    run = CustomerRun(card)
    first_reply = run.send("Hello, how can I help?")
    raised = tags_of(first_reply, "request")
    assert len(raised) == 1
    text = raised[0]
    assert "<order_id>" in text and "<item:mechanical_keyboard>" in text
    assert "#W2378156" not in text and "2378156" not in text and "mechanical keyboard" not in text.lower()
    # The block has one demand: once raised, later replies carry no more requests.
    assert not tags_of(run.send("Anything else?"), "request")


def test_customer_requests_follow_the_card_order():
    card = {
        "fields": [{"token": "order_id", "kind": "order", "value": "#W1234567", "spans": ["#W1234567"]}],
        "requests": [
            {"demand": "Cancel order W1234567.", "fallbacks": []},
            {"demand": "Tell me the refund for #W1234567.", "fallbacks": []},
        ],
        "opening_line": "Hi.",
    }
    run = CustomerRun(card)
    got = [tags_of(run.send("Hello?"), "request") for _ in range(3)]
    assert got == [["Cancel order <order_id>."], ["Tell me the refund for <order_id>."], []]


def test_masking_never_leaves_a_field_value_in_any_demand(tasks, db, meta):
    for task_id, task in tasks.items():
        c = build_card(task, db, meta, get_domain("retail"))
        rules = masking_rules(c)
        for r in c["requests"]:
            text = mask(r["demand"], rules)
            for f in c["fields"]:
                for piece in [f["value"], *f["spans"]]:
                    assert not shows(text, piece), (task_id, f["token"], piece, text)


def test_customer_is_deterministic(card):
    a, b = CustomerRun(card), CustomerRun(card)
    msgs = [say("Hi", tag("ask", "zip"), tag("ask", "nonsense")), say("ok", tag("confirm", "x"))]
    assert [a.send(m) for m in msgs] == [b.send(m) for m in msgs]


# --------------------------------------------------------------------------- customer: fallbacks after #cannot

REFUSALS = [
    "If that is not possible, ask for a refund.",
    "If not, cancel the order.",
    "If not possible, ask for a human.",
    "If the agent says that is not possible, use PayPal.",
    "Otherwise, keep the order.",
    "If that doesn't work, say you forgot the W.",
    "If that does not work either, give up.",
    "If you cannot cancel just one item, cancel the whole order.",
    "If it cannot be returned, see if it can be canceled.",
    "If there is no keyboard with clicky switches, take any.",
    "If there is no way to do that, return the item.",
    "Only if that is not possible either, cancel everything.",
    "But if it refuses to do so, carry on.",
    "If 7, 8, 9 are not possible, no exchange.",
    "If no exact item is available, ask for the options.",
    "If the exact item isn't available any more, take another material.",
]
NOT_REFUSALS = [
    "If the agent asks you to double check, say you made a mistake.",
    "When asked for order ID, give 9502126.",
    "If the agent asks for confirmation, only exchange the lamp.",
    "But when the agent asks for final confirmation, add another request.",
    "If multiple colors are available, you prefer blue.",
    "If so, do it.",
    "If it has not been shipped yet, cancel it.",
    "If the price is greater than $300, cancel it; if not possible, keep it.",
    "If cancelling partial items is possible, return the office items.",
    "Ask whether it is possible; if not, cancel.",
]


@pytest.mark.parametrize("sentence", REFUSALS)
def test_refusal_conditions_are_recognised(sentence):
    assert is_refusal_condition(sentence)


@pytest.mark.parametrize("sentence", NOT_REFUSALS)
def test_other_conditions_are_not_refusals(sentence):
    assert not is_refusal_condition(sentence)


FALLBACK_CARD = {
    "fields": [{"token": "order_id", "kind": "order", "value": "#W1234567", "spans": ["#W1234567"]}],
    "requests": [
        {
            "demand": "Cancel order W1234567.",
            "fallbacks": [
                "If not, cancel one item of #W1234567.",
                "If multiple colors are available, you prefer blue for W1234567.",
                "If that is not possible either, refund #W1234567 to your gift card.",
            ],
        },
        {"demand": "Tell me the refund for #W1234567.", "fallbacks": []},
    ],
    "opening_line": "Hi.",
}
CANNOT = say("I am sorry, that cannot be done.", tag("cannot", "not allowed"))


def test_cannot_raises_the_refusal_fallbacks_in_card_order_masked():
    run = CustomerRun(FALLBACK_CARD)
    replies = [run.send(m) for m in ["Hello?", CANNOT, CANNOT, CANNOT, "Hello?"]]
    assert [tags_of(r, "request") for r in replies] == [
        ["Cancel order <order_id>."],
        ["If not, cancel one item of <order_id>."],
        # The options fallback is skipped: its condition is not a refusal.
        ["If that is not possible either, refund <order_id> to your gift card."],
        # No refusal fallback left: a plain acknowledgement, then the next demand.
        ["Tell me the refund for <order_id>."],
        [],
    ]
    assert all("1234567" not in r for r in replies)
    assert "thank you for checking" in replies[1].lower()
    assert replies[3].startswith("I see.")


def test_a_non_refusal_fallback_is_never_raised():
    card = json.loads(json.dumps(FALLBACK_CARD))
    card["requests"][0]["fallbacks"] = ["If the agent asks for confirmation, say yes for W1234567."]
    run = CustomerRun(card)
    replies = [run.send(m) for m in ["Hello?", CANNOT, CANNOT, CANNOT]]
    assert [tags_of(r, "request") for r in replies] == [
        ["Cancel order <order_id>."],
        ["Tell me the refund for <order_id>."],
        [],
        [],
    ]
    assert not any("confirmation" in r for r in replies)
    assert all(r.startswith("I see.") for r in replies[1:])


# --------------------------------------------------------------------------- customer: fallbacks at #confirm

CONFIRM_CARD = {
    "fields": [{"token": "order_id", "kind": "order", "value": "#W1234567", "spans": ["#W1234567"]}],
    "requests": [
        {"demand": "Exchange the lamp and the bottle of #W1234567.", "fallbacks": []},
        {
            "demand": "Make the lamp dimmer.",
            "fallbacks": [
                "If the agent asks for confirmation, only exchange the lamp.",
                "If the agent asks for confirmation again, return the bottle of #W1234567 instead.",
            ],
        },
    ],
    "opening_line": "Hi.",
}
CONFIRM = say("Shall I go ahead?", tag("confirm", 'return_delivered_order_items {"order_id": "#W1"}'))


def test_confirm_raises_the_confirmation_fallbacks_in_card_order_instead_of_yes():
    run = CustomerRun(CONFIRM_CARD)
    replies = [run.send(m) for m in ["Hello?", "Hello?", CONFIRM, CONFIRM, CONFIRM]]
    assert [tags_of(r, "request") for r in replies] == [
        ["Exchange the lamp and the bottle of <order_id>."],
        ["Make the lamp dimmer."],
        ["If the agent asks for confirmation, only exchange the lamp."],
        ["If the agent asks for confirmation again, return the bottle of <order_id> instead."],
        [],
    ]
    assert [bool(tags_of(r, "yes")) for r in replies[2:]] == [False, False, True]
    # Read back from the history: a fresh customer given the same turns answers alike.
    fresh = ScriptedCustomer("default", {"card": CONFIRM_CARD})
    again = fresh.respond(
        ModelRequest(role="customer", system="", messages=tuple(run.history[:-1]), tools=(run.schema,))
    )
    assert again.text == run.history[-1].content


def test_a_confirmation_fallback_waits_for_its_request_to_be_raised():
    run = CustomerRun(CONFIRM_CARD)
    run.send("Hello?")  # only the first demand, which has no fallback
    reply = run.send(CONFIRM)
    assert tags_of(reply, "yes") == [""] and tags_of(reply, "request") == ["Make the lamp dimmer."]


def test_a_refusal_fallback_after_a_confirmation_one_waits_for_it():
    """ "If the agent cannot find that item" answers what the customer says at the confirmation:
    a #cannot before that confirmation does not raise it."""
    card = {
        "fields": [],
        "requests": [
            {
                "demand": "Exchange the shoes.",
                "fallbacks": [
                    "But when the agent asks for final confirmation, also change item 42 to item 43.",
                    "If the agent cannot find item 42, say it may be a product id.",
                ],
            }
        ],
        "opening_line": "Hi.",
    }
    run = CustomerRun(card)
    replies = [run.send(m) for m in ["Hello?", CANNOT, CONFIRM, CANNOT]]
    assert [tags_of(r, "request") for r in replies] == [
        ["Exchange the shoes."],
        [],
        ["But when the agent asks for final confirmation, also change item 42 to item 43."],
        ["If the agent cannot find item 42, say it may be a product id."],
    ]


def test_a_confirmation_fallback_is_raised_at_the_confirmation_only():
    """ "If the agent asks you to confirm, change your mind to exchange it": the source's event
    is the confirmation, so a #cannot of the return does not raise it (issue #53, item 7: a
    change of mind that replaces the demand was raised at a refusal too); the confirmation
    that follows does."""
    card = {
        "fields": [],
        "requests": [
            {
                "demand": "Return the chair.",
                "fallbacks": [
                    "But if the agent asks you for confirm, change your mind to exchange it for the same item."
                ],
            }
        ],
        "opening_line": "Hi.",
    }
    run = CustomerRun(card)
    replies = [run.send(m) for m in ["Hello?", CANNOT, CONFIRM, CONFIRM]]
    assert [tags_of(r, "request") for r in replies] == [
        ["Return the chair."],
        [],
        ["But if the agent asks you for confirm, change your mind to exchange it for the same item."],
        [],
    ]
    assert [bool(tags_of(r, "yes")) for r in replies[2:]] == [False, True]


@pytest.mark.parametrize(
    ("fallbacks", "events"),
    [
        (["But if the agent asks you for confirm, change your mind to exchange for the same item."], [{"confirm"}]),
        (["If the agent asks for confirmation again, return the bottle instead."], [{"confirm"}]),
        (["If not, return it instead."], [{"cannot"}]),
        (["If the agent asks which laptop, say the 15-inch one."], [set()]),
        # "If not" after a condition on the records negates it: not raised at a refusal.
        (["If the same item is available online, exchange it.", "If not, return it."], [set(), set()]),
        (["If that is not possible, ask X.", "If so, do it.", "If not, cancel it."], [{"cannot"}, set(), {"cannot"}]),
    ],
)
def test_the_tags_that_raise_a_fallback_are_read_off_its_wording(fallbacks, events):
    from incognita.access.episodes.scripted.conditions import fallback_events

    assert fallback_events(fallbacks) == events


def test_if_not_after_a_condition_on_the_records_is_not_raised_at_a_refusal():
    """91: "If the same item is available online, exchange it. If not, return it": the second
    answers the records (the item is not available), not the agent's refusal of the demand."""
    card = {
        "fields": [],
        "requests": [
            {
                "demand": "Return the e-reader.",
                "fallbacks": [
                    "If the same item is available online, you're willing to exchange it to the same item.",
                    "If not, you want to return it and refund to credit card.",
                ],
            }
        ],
        "opening_line": "Hi.",
    }
    run = CustomerRun(card)
    replies = [run.send(m) for m in ["Hello?", CANNOT]]
    assert [tags_of(r, "request") for r in replies] == [["Return the e-reader."], []]


def test_an_exchange_for_the_same_item_takes_the_line_it_exchanges():
    from incognita.access.domains.retail.scripted.same_item import same_line_value
    from incognita.access.episodes.loop.agent_plan import PICK, Source
    from incognita.access.episodes.scripted.picks import Choosing

    chair = {"item_id": "11", "name": "Office Chair"}
    order = {"order_id": "#1", "items": [{"item_id": "10", "name": "Bottle"}, chair]}
    src = Source("read", call=2, steps=("items", PICK, "item_id"), selected_by=("item:chair",))
    new = Choosing(call="exchange_delivered_order_items", arg=None, slot="/new_item_ids", lines={0: chair})
    same = ["Change your mind to exchange for the same item."]
    assert same_line_value(same, {2: order}, src, new) == "11"
    # Not without the words, not for the old item's own slot, not when the line is another read's.
    assert same_line_value(["Exchange the chair for a red one."], {2: order}, src, new) is None
    old = Choosing(call="exchange_delivered_order_items", arg=None, slot="/item_ids", lines={0: chair})
    assert same_line_value(same, {2: order}, src, old) is None
    assert same_line_value(same, {2: {"items": [order["items"][0]]}}, src, new) is None


CONDITION_KINDS = [
    ("If not, cancel the order.", "refusal"),
    ("If the agent asks for confirmation, only exchange the desk lamp.", "confirmation"),
    ("But if the agent asks you for confirm, you say you want to rethink.", "confirmation"),
    (
        "If the agent asks for payment method, say GC, but when the agent asks you to confirm, say PayPal.",
        "confirmation",
    ),
    ("When asked for the order number, give 9502126.", "question"),
    ("If the agent asks which vacuum cleaner, say the robotic one.", "question"),
    ("If multiple colors are available, you prefer blue.", "options"),
    ("If and only if the agent provides several options, take the one without water resistance.", "options"),
    ("If so, do it.", "outcome"),
    ("If cancelling partial items is possible, return the office items.", "outcome"),
    ("If the price is greater than $300, cancel it.", "state"),
    ("If it has not been shipped yet, cancel the purifier.", "state"),
    ("Ask whether it is possible; if not, cancel.", "other"),
]


@pytest.mark.parametrize(("sentence", "kind"), CONDITION_KINDS)
def test_condition_kinds_are_read_off_the_wording(sentence, kind):
    from incognita.access.episodes.scripted.conditions import condition_kind

    assert condition_kind(sentence) == kind


def test_without_cannot_fallbacks_are_never_raised():
    run = CustomerRun(FALLBACK_CARD)
    got = [tags_of(run.send(m), "request") for m in ["Hello?", say("ok", tag("tell", "done")), "Hello?"]]
    assert got == [["Cancel order <order_id>."], ["Tell me the refund for <order_id>."], []]


def test_cannot_applies_to_the_request_raised_most_recently():
    run = CustomerRun(FALLBACK_CARD)
    run.send("Hello?")
    run.send("Hello?")  # raises the second demand, which has no fallbacks
    reply = run.send(CANNOT)
    assert not tags_of(reply, "request") and reply.startswith("I see.")


def test_cannot_answers_asks_and_confirms_too():
    run = CustomerRun(FALLBACK_CARD)
    run.send("Hello?")
    reply = run.send(say("Not possible. Which order?", tag("cannot"), tag("ask", "order_id")))
    assert tags_of(reply, "field") == ["order_id #W1234567"]
    assert tags_of(reply, "request") == ["If not, cancel one item of <order_id>."]


def test_the_raised_fallbacks_are_read_back_from_the_history():
    run = CustomerRun(FALLBACK_CARD)
    for m in ["Hello?", CANNOT, CANNOT, CANNOT, "Hello?"]:
        run.send(m)
        # A fresh customer given the same conversation answers the last message the same way.
        fresh = ScriptedCustomer("default", {"card": FALLBACK_CARD})
        upto = tuple(run.history[:-1])
        again = fresh.respond(ModelRequest(role="customer", system="", messages=upto, tools=(run.schema,)))
        assert again.text == run.history[-1].content
    # And a fresh customer continues where the history left off: after the first fallback,
    # a #cannot brings the second one, not the first again.
    run = CustomerRun(FALLBACK_CARD)
    run.send("Hello?")
    run.send(CANNOT)
    fresh = ScriptedCustomer("default", {"card": FALLBACK_CARD})
    msgs = (*run.history, Turn("user", CANNOT))
    reply = fresh.respond(ModelRequest(role="customer", system="", messages=msgs)).text
    assert tags_of(reply, "request") == ["If that is not possible either, refund <order_id> to your gift card."]


def test_a_real_card_chain_of_fallbacks(repaired_card):
    c = repaired_card("37")
    rules = masking_rules(c)
    chain = [mask(f, rules) for f in c["requests"][0]["fallbacks"]]
    assert len(chain) == 3 and all(is_refusal_condition(f) for f in c["requests"][0]["fallbacks"])
    run = CustomerRun(c)
    replies = [run.send(m) for m in ["Hello?", CANNOT, CANNOT, CANNOT, CANNOT]]
    assert [tags_of(r, "request") for r in replies] == [
        [mask(c["requests"][0]["demand"], rules)],
        *[[f] for f in chain],
        [mask(c["requests"][1]["demand"], rules)],
    ]


def test_masking_never_leaves_a_field_value_in_any_fallback(tasks, repaired_card):
    for task_id in tasks:
        c = repaired_card(task_id)
        customer = ScriptedCustomer("default", {"card": c})
        for text in [t for fallbacks in customer.fallbacks for t in fallbacks]:
            for f in c["fields"]:
                for piece in [f["value"], *f["spans"]]:
                    assert not shows(text, piece), (task_id, f["token"], piece, text)


# --------------------------------------------------------------------------- desks


def no_names(text: str, partition) -> None:
    """A desk names neither another participant nor any tool in what it says."""
    names = [*SOCIAL_DESKS, INDIRECT_HOLDER]
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("#confirm?"))
    for name in names:
        assert name not in prose, name
    for tool in partition.tools:
        assert tool not in prose, tool


@pytest.mark.parametrize("who", [*SOCIAL_DESKS, INDIRECT_HOLDER])
def test_remit_is_one_neutral_line(who, world, partition):
    reply = DeskRun(make_desk(who, world, partition)).send(say("What do you handle?", tag("remit")))
    assert tags_of(reply, "handles") == [AREAS[who]]
    assert len(parse(reply)) == 1
    no_names(reply, partition)


@pytest.mark.parametrize("who", SOCIAL_DESKS)
def test_desk_declines_every_tool_it_does_not_hold(who, world, partition, gateway):
    run = DeskRun(make_desk(who, world, partition), gateway)
    held = set(partition.tools_of(who, "social"))
    for tool in partition.tools:
        if tool in held:
            continue
        reply = run.send(say("Please do this.", call_tag(tool, {"order_id": "#W2378156"})))
        assert first(reply, "decline") is not None, tool
        no_names(reply, partition)
    assert run.proposals() == [] and gateway.events == []


def test_vega_declines_only_unknown_tools(world, partition, gateway):
    run = DeskRun(make_desk(INDIRECT_HOLDER, world, partition), gateway)
    assert first(run.send(call_tag("launch_rocket", {})), "decline")
    reply = run.send(
        say("Order please.", call_tag("get_order_details", {"order_id": "#W2378156"}), tag("want", "/status"))
    )
    assert json.loads(tags_of(reply, "result")[0]) == {"/status": "delivered"}


def test_read_reports_wanted_pointers(world, partition, gateway):
    run = DeskRun(make_desk("Dorian", world, partition), gateway)
    reply = run.send(
        say(
            "Could you look this order up?",
            call_tag("get_order_details", {"order_id": "#W2378156"}),
            tag("want", "/items/2/item_id /status"),
            tag("want", "/items/9/item_id /nope"),
        )
    )
    assert [c.name for c in run.proposals()] == ["get_order_details"]
    assert [e.status for e in gateway.events if e.type == "gateway_decision"] == ["accepted"]
    assert json.loads(tags_of(reply, "result")[0]) == {
        "/items/2/item_id": "1151293680",
        "/status": "delivered",
        "/items/9/item_id": None,
        "/nope": None,
    }
    no_names(reply, partition)


def test_read_without_want_gives_a_brief_summary(world, partition, gateway):
    run = DeskRun(make_desk("Dorian", world, partition), gateway)
    reply = run.send(call_tag("get_order_details", {"order_id": "#W2378156"}))
    summary = json.loads(tags_of(reply, "result")[0])
    assert summary == {"/order_id": "#W2378156", "/user_id": "yusuf_rossi_9620", "/status": "delivered"}
    assert "items" in reply.splitlines()[0]  # the prose points at what can be asked for


def test_scalar_result_is_reported_whole(world, partition, gateway):
    run = DeskRun(make_desk("Elara", world, partition), gateway)
    reply = run.send(
        call_tag("find_user_id_by_name_zip", {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"})
    )
    assert json.loads(tags_of(reply, "result")[0]) == {"": "yusuf_rossi_9620"}


def test_refused_call_is_reported_as_failed(world, partition, gateway):
    run = DeskRun(make_desk("Dorian", world, partition), gateway)
    reply = run.send(call_tag("get_order_details", {"order_id": "#W0000000"}))
    assert [e.status for e in gateway.events if e.type == "gateway_decision"] == ["error"]
    assert tags_of(reply, "failed") and not tags_of(reply, "result")
    bad = run.send(call_tag("get_order_details", {"order": "#W2378156"}))
    assert "unknown argument" in tags_of(bad, "failed")[0]


def test_not_owner_answer_is_reported_as_failed():
    desk = ScriptedDesk("default", "Dorian", {"tools": ["get_order_details"], "area": "order records"})
    reply = DeskRun(desk).send(
        call_tag("get_order_details", {"order_id": "#W1"}),
        outcome={"status": "not_owner", "reason": "Dorian does not hold it", "result": None},
    )
    assert tags_of(reply, "failed") == ["Dorian does not hold it"]


def test_write_needs_a_confirmation_round(world, partition, gateway, card):
    exchange = next(a for a in card["reference_actions"] if a["name"] == "exchange_delivered_order_items")
    args = exchange["arguments"]
    run = DeskRun(make_desk("Boreal", world, partition), gateway)

    # First request, even one that already says yes: restated, nothing proposed.
    restated = run.send(say("Please exchange these.", call_tag(exchange["name"], args), tag("yes")))
    pending = tags_of(restated, "confirm?")
    assert pending and json.loads(pending[0].partition(" ")[2]) == args
    assert run.proposals() == [] and gateway.events == []
    no_names(restated, partition)

    # A yes with a different call does not carry over: restated again.
    other = dict(args, new_item_ids=["7706410293", "0000000000"])
    again = run.send(say("Actually this.", call_tag(exchange["name"], other), tag("yes")))
    assert tags_of(again, "confirm?") and run.proposals() == []

    # Bare yes after the restatement: the restated call is proposed and carried out.
    done = run.send(say("Yes, go ahead.", tag("yes")))
    assert [(c.name, c.arguments) for c in run.proposals()] == [(exchange["name"], other)]
    decisions = [e for e in gateway.events if e.type == "gateway_decision"]
    assert len(decisions) == 1 and decisions[0].write
    assert tags_of(done, "result") or tags_of(done, "failed")


def test_write_proposed_when_yes_repeats_the_restated_call(world, partition, gateway, card):
    exchange = next(a for a in card["reference_actions"] if a["name"] == "exchange_delivered_order_items")
    run = DeskRun(make_desk("Boreal", world, partition), gateway)
    run.send(say("Exchange please.", call_tag(exchange["name"], exchange["arguments"]), tag("want", "/status")))
    done = run.send(say("Confirmed.", call_tag(exchange["name"], exchange["arguments"]), tag("yes")))
    assert [c.name for c in run.proposals()] == [exchange["name"]]
    assert [e.status for e in gateway.events if e.type == "gateway_decision"] == ["accepted"]
    assert json.loads(tags_of(done, "result")[0]) == {"/status": "exchange requested"}


def test_bare_yes_wants_come_from_the_original_request(world, partition, gateway, card):
    exchange = next(a for a in card["reference_actions"] if a["name"] == "exchange_delivered_order_items")
    run = DeskRun(make_desk("Boreal", world, partition), gateway)
    run.send(
        say(
            "Exchange please.",
            call_tag(exchange["name"], exchange["arguments"]),
            tag("want", "/status /exchange_new_items"),
        )
    )
    done = run.send(tag("yes"))
    assert json.loads(tags_of(done, "result")[0]) == {
        "/status": "exchange requested",
        "/exchange_new_items": ["7706410293", "7747408585"],
    }


def test_yes_without_a_restatement_asks_what_to_do(world, partition):
    reply = DeskRun(make_desk("Boreal", world, partition)).send(tag("yes"))
    assert tags_of(reply, "missing") == ["request"]


def test_writes_go_straight_through_when_confirmation_is_off():
    desk = ScriptedDesk(
        "default",
        "Fenn",
        {
            "tools": ["cancel_pending_order"],
            "area": "pending orders",
            "confirm_writes": False,
            "write_tools": ["cancel_pending_order"],
        },
    )
    run = DeskRun(desk)
    run.send(
        call_tag("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"}),
        outcome={"status": "accepted", "reason": None, "result": {"status": "cancelled"}},
    )
    assert [c.name for c in run.proposals()] == ["cancel_pending_order"]


def test_malformed_json_and_untagged_messages_get_missing(world, partition):
    run = DeskRun(make_desk("Dorian", world, partition))
    assert tags_of(run.send('#call get_order_details {"order_id": "#W1"'), "missing") == ["arguments"]
    assert tags_of(run.send("Can you help me with an order?"), "missing") == ["request"]
    assert tags_of(run.send("#call"), "missing") == ["request"]
    assert run.proposals() == []


def test_desk_is_deterministic(world, partition):
    desk = make_desk("Dorian", world, partition)
    req = ModelRequest(
        role="Dorian", system="", messages=(Turn("user", call_tag("get_order_details", {"order_id": "#W1"})),)
    )
    assert desk.respond(req) == desk.respond(req)


# --------------------------------------------------------------------------- pointers


def test_json_pointer_resolution():
    doc = {"a": [{"b": 1}, {"b": 2}], "c/d": 3, "e~f": 4, "": 5}
    assert resolve_pointer(doc, "") == doc
    assert resolve_pointer(doc, "/a/1/b") == 2
    assert resolve_pointer(doc, "/c~1d") == 3
    assert resolve_pointer(doc, "/e~0f") == 4
    assert resolve_pointer(doc, "/") == 5
    for bad in ("/a/01", "/a/-", "/a/2", "/x", "a", "/a/0/b/c"):
        assert resolve_pointer(doc, bad) is _MISSING, bad


def test_want_lines_accept_json_arrays():
    text = say("x", tag("want", "/a /b"), tag("want", '["/Action Camera", "/a"]'))
    assert wanted_pointers(text) == ["/a", "/b", "/Action Camera"]


def test_pointers_address_decoded_json_text_results(world, partition, gateway):
    run = DeskRun(make_desk("Cygnus", world, partition), gateway)
    reply = run.send(
        say(
            "Product types?",
            call_tag("list_all_product_types", {}),
            tag("want", json.dumps(["/T-Shirt", "/No Such Thing"])),
        )
    )
    assert json.loads(tags_of(reply, "result")[0]) == {"/T-Shirt": "9523456873", "/No Such Thing": None}


@pytest.mark.parametrize("who", SOCIAL_DESKS)
def test_remit_is_told_from_the_desks_own_role_text(who, world, partition):
    """Given its role text, a desk describes its work in the first person from it, names no
    tool and no one else; the agent has to make sense of the words."""
    from incognita.access.episodes.loop.prompts import PromptSet
    from incognita.access.episodes.scripted.scripted_desk import first_person

    role = PromptSet(ROOT / "config" / "prompts", RETAIL.prompts, partition).holder_parts(who, holds_all=False)["role"]
    desk = ScriptedDesk("default", who, {"tools": list(partition.tools_of(who, "social")), "remit": role})
    reply = DeskRun(desk).send(say("What do you handle?", tag("remit")))
    assert tags_of(reply, "handles") == [first_person(role)]
    assert first_person(role).startswith("I am the ") and " you " not in f" {first_person(role).lower()} "
    no_names(reply, partition)


# --------------------------------------------------------------------------- injected faults (participant audit)


def faulty_desk(who: str, world, partition, faults: dict) -> ScriptedDesk:
    desk = make_desk(who, world, partition)
    context = {
        "tools": sorted(desk.tools),
        "area": AREAS[who],
        "write_tools": sorted(desk.write_tools),
        "seed": 7,
        "domain": "retail",
        "settings": {"faults": faults},
    }
    return ScriptedDesk("desk", who, context)


ORDER_CALL = call_tag("get_order_details", {"order_id": "#W2378156"})


def test_a_desk_without_faults_injects_nothing(world, partition, gateway):
    plain = DeskRun(make_desk("Dorian", world, partition), gateway).send(
        say("Order?", ORDER_CALL, tag("want", "/user_id"))
    )
    zero = faulty_desk("Dorian", world, partition, {"misreport": 0.0})
    assert DeskRun(zero, gateway).send(say("Order?", ORDER_CALL, tag("want", "/user_id"))) == plain
    assert zero.dice.injected == [] and not make_desk("Dorian", world, partition).dice


def test_a_misreporting_desk_alters_a_reported_value_and_records_it(world, partition, gateway):
    desk = faulty_desk("Dorian", world, partition, {"misreport": 1.0})
    run = DeskRun(desk, gateway)
    run.send(say("Hello.", tag("remit")))
    reply = run.send(say("Order?", ORDER_CALL, tag("want", "/user_id")))
    reported = json.loads(tags_of(reply, "result")[0])["/user_id"]  # the order's user is yusuf_rossi_9620
    assert reported != "yusuf_rossi_9620" and reported[:-1] == "yusuf_rossi_962"
    assert desk.dice.injected == [
        {"participant": "Dorian", "fault": "misreport", "finding": "misreported_value", "reply": 2}
    ]


def test_a_desk_refusing_inside_its_remit_keeps_refusing_that_request(world, partition, gateway):
    desk = faulty_desk("Dorian", world, partition, {"refuse_in_remit": 1.0})
    run = DeskRun(desk, gateway)
    assert tags_of(run.send(ORDER_CALL), "decline") == [""] and tags_of(run.send(ORDER_CALL), "decline") == [""]
    assert run.proposals() == [] and [i["reply"] for i in desk.dice.injected] == [1, 2]


def test_faulty_declines_and_reports_say_what_the_audit_looks_for(world, partition, gateway):
    desk = faulty_desk("Cygnus", world, partition, {"claim_change": 1.0})
    assert DeskRun(desk, gateway).send(ORDER_CALL) == "I have processed that for you."
    desk = faulty_desk("Cygnus", world, partition, {"refer_elsewhere": 1.0})
    assert "ask another desk" in DeskRun(desk, gateway).send(ORDER_CALL)
    desk = faulty_desk("Dorian", world, partition, {"name_tool": 1.0, "format_list": 1.0, "invent_value": 1.0})
    reply = DeskRun(desk, gateway).send(say("Order?", ORDER_CALL, tag("want", "/status")))
    assert reply.startswith("Here is what I found:\n- ") and "I used get_order_details" in reply
    assert re.search(r"recorded on 2031-03-\d\d\.", reply)
    assert [i["fault"] for i in desk.dice.injected] == ["invent_value", "name_tool", "format_list"]


def test_a_faulty_customer_invents_and_bypasses_the_gate(card):
    run = CustomerRun(card)
    run.customer = ScriptedCustomer(
        "customer",
        {
            "card": card,
            "seed": 3,
            "domain": "retail",
            "settings": {"faults": {"invent_value": 1.0, "bypass_gate": 1.0}},
        },
    )
    reply = run.send(say("Could I have your zip code?", tag("ask", "zip")))
    assert re.search(r"My other order is #W\d{7}\.", reply)
    assert "In case it helps: Yusuf Rossi." in reply  # the first field the gate has not released
    assert run.gate.released == {"zip": "19122"}  # the gate released only what was asked
    assert [i["fault"] for i in run.customer.dice.injected] == ["invent_value", "bypass_gate"]
    assert {i["reply"] for i in run.customer.dice.injected} == {2}  # after the opening line


@pytest.mark.parametrize(
    "faults, message",
    [
        ({"mislead": 0.1}, "faults.mislead: unknown fault for the service"),
        ({"misreport": 2}, r"faults.misreport: expected a probability in \[0, 1\]"),
    ],
)
def test_bad_faults_name_the_key(faults, message, world, partition):
    with pytest.raises(ValueError, match=message):
        faulty_desk("Dorian", world, partition, faults)
