"""The airline's payment rules that need no episode (paying.py), task-free."""

import math
from types import SimpleNamespace

from incognita.access.domains.airline.scripted import paying as pay
from incognita.access.domains.airline.scripted import picking as pk
from incognita.access.episodes.scripted.picks import Choosing


def _picker(demands, released, plan_calls=(), results=None):
    agent = pk.FlightPicker()
    agent.demands, agent.released = demands, released
    agent.plan = SimpleNamespace(calls=list(plan_calls))
    agent.results, agent.explored = results or {}, {}
    return agent


def test_what_a_payment_method_can_cover():
    assert pay.capacity({"source": "gift_card", "amount": 6.0}) == 6.0
    assert math.isinf(pay.capacity({"source": "credit_card", "brand": "visa"}))
    assert pay.capacity({"flight_number": "HAT001"}) == 0


def test_kinds_of_payment_rank_in_the_order_the_demand_naming_most_of_them_names_them():
    released = {"payment": "gift cards", "payment_2": "certificates", "payment_5": "master card"}
    demands = [
        "You want to know how much you have on your <payment> and <payment_2>.",
        "For payment, use the <payment_2> as much as possible, then <payment>, the rest with your <payment_5>.",
    ]
    agent = _picker(demands, released)
    assert agent._named_order(("payment", "payment_2", "payment_5")) == {"payment_2": 0, "payment": 1, "payment_5": 2}
    # One kind named: no order among kinds.
    assert _picker(["Use your <payment>."], released)._named_order(("payment", "payment_2")) == {}


def test_a_payment_the_episodes_changes_used_is_spent():
    booked = {"reservation_id": "N", "payment_history": [{"payment_id": "certificate_1", "amount": 250},
                                                           {"payment_id": "gift_card_1", "amount": 100}]}  # fmt: skip
    agent = _picker([], {}, [SimpleNamespace(index=0, write=False), SimpleNamespace(index=1, write=True)],
                    results={0: {"user_id": "u"}, 1: booked})  # fmt: skip
    assert agent._paid_with("certificate_1") == 250 and agent._paid_with("gift_card_1") == 100
    assert agent._paid_with("credit_card_1") == 0
    choosing = Choosing(call="book_reservation", arg=None)
    assert not agent._admissible({"source": "certificate", "id": "certificate_1", "amount": 500.0}, choosing, [])
    assert not agent._admissible({"source": "gift_card", "id": "gift_card_1", "amount": 100.0}, choosing, [])
    assert agent._admissible({"source": "gift_card", "id": "gift_card_1", "amount": 150.0}, choosing, [])
    assert agent._admissible({"source": "credit_card", "id": "credit_card_1"}, choosing, [])
