"""The injected faults' values are each domain's identifiers, as its reader part describes them: what
a faulty customer invents and what a faulty desk alters are values the audit can see."""

from __future__ import annotations

import pytest

from incognita.access.domain import get_domain
from incognita.access.episodes.scripted.participant_faults import FaultDice

DOMAINS = ("retail", "airline", "mock")


def dice(domain: str, side: str = "customer", fault: str = "invent_value") -> FaultDice:
    return FaultDice({"seed": 11, "domain": domain, "settings": {"faults": {fault: 1.0}}}, side, "USER")


@pytest.mark.parametrize("domain", DOMAINS)
def test_an_invented_id_has_the_shape_of_one_the_customer_holds(domain):
    shapes = get_domain(domain).part("reader").VALUE_SHAPES
    for reply in range(1, 40):
        what, value = dice(domain).invented(reply)
        assert shapes.is_identifier(value), (what, value)
        found = shapes.values(f"My other {what} is {value}.")
        assert len(found) == 1 and next(iter(found))[0] in shapes.memory, (value, found)


def test_a_misreport_alters_the_domains_first_identifier():
    altered = dice("airline", "service", "misreport").altered
    reservation = {
        "cabin": "economy",
        "flights": [{"flight_number": "HAT170", "price": 883}],
        "reservation_id": "ZFA04Y",
    }
    assert altered(reservation) == {**reservation, "flights": [{"flight_number": "HAT171", "price": 883}]}
    assert altered({"reservation_id": "ZFA04Y"}) == {"reservation_id": "ZFA04Z"}
    assert altered({"cabin": "economy", "price": 883}) is None  # a whole number is no amount the audit sees
    retail = dice("retail", "service", "misreport").altered
    assert retail({"order_id": "#W2378156", "total": 10.5}) == {"order_id": "#W2378157", "total": 10.5}


def test_a_participant_with_faults_needs_its_domain():
    with pytest.raises(ValueError, match="USER: a scripted participant with faults needs its domain"):
        FaultDice({"seed": 1, "settings": {"faults": {"invent_value": 0.5}}}, "customer", "USER")
    assert not FaultDice({"seed": 1}, "customer", "USER")  # without faults it needs nothing


def test_a_bypass_says_no_value_the_customer_already_holds_in_part():
    from incognita.access.episodes.scripted.scripted_customer import ScriptedCustomer

    fields = [
        ("name", "identity", "Mia Kim"),
        ("user_id", "identity", "mia_kim_4397"),  # holds the released name: underscores part words
        ("payment", "payment", "certificate"),
        ("payment_2", "payment", "certificates"),  # holds the released value
        ("cabin", "cabin", "basic economy"),
    ]
    card = {
        "task_id": "24",
        "opening_line": "Hi, I need to change a flight.",
        "fields": [{"token": t, "kind": k, "value": v} for t, k, v in fields],
        "requests": [],
    }
    context = {"card": card, "seed": 5, "domain": "airline", "settings": {"faults": {"bypass_gate": 1.0}}}
    customer = ScriptedCustomer("customer", context)
    assert customer._faulty("Sure.", [], {"name", "payment"}) == "Sure.\nIn case it helps: basic economy."
