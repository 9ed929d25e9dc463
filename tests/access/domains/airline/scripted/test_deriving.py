"""The airline's derivation rules as the scripted agent applies them (deriving.py), task-free."""

import pytest

from incognita.access.domains.airline.scripted import deriving as dv


def test_a_shifted_date_moves_the_read_date_by_the_days_the_customer_states():
    assert dv.shifted_date("2024-05-23", "the day after", 1) == "2024-05-24"
    assert dv.shifted_date("2024-05-31", "2 days", 1) == "2024-06-02"
    assert dv.shifted_date("2024-05-22", "by one day", -1) == "2024-05-21"
    with pytest.raises(dv.RuleError, match="no shift"):
        dv.shifted_date("2024-05-23", "economy", 1)


def test_added_bags_are_counted_onto_the_reservation_total():
    assert dv.bags_added(2, "one more checked bag") == 3
    with pytest.raises(dv.RuleError):
        dv.bags_added(None, "one more checked bag")


def test_free_bags_follow_the_policy_table_by_membership_cabin_and_passengers():
    assert dv.free_bags("regular", "basic_economy", 3) == 0
    assert dv.free_bags("silver", "economy", 2) == 4
    assert dv.free_bags("gold", "business", 1) == 4
    with pytest.raises(dv.RuleError, match="no free bags"):
        dv.free_bags("platinum", "economy", 1)


def test_the_bags_not_free_are_the_total_less_the_allowance_or_the_allowance_itself():
    assert dv.bag_allowance("regular", "economy", 2, 3, None) == 1  # 2 free of 3
    assert dv.bag_allowance("gold", "economy", 1, 2, None) == 0  # never below zero
    assert dv.bag_allowance("silver", "business", 2, "7", None) == 1  # a count written as a string
    # "use all your free baggage allowance": the total is the free bags.
    assert dv.bag_allowance("silver", "basic_economy", 2, None, "free baggage allowance") == 2
    with pytest.raises(dv.RuleError, match="no bag total"):
        dv.bag_allowance("regular", "economy", 1, None, None)


def test_a_fare_is_the_flights_prices_per_passenger_plus_fees_less_earlier_payments():
    # Two flights at 100 and 50, two passengers, insurance, one bag not free.
    assert dv.fare([100, 50], 2, "yes", 1, []) == 300 + 60 + 50
    assert dv.fare([100, 50], 2, "no", 0, [120]) == 180
    # Paid in the customer's order: a certificate of 250 covers 250, the card the rest.
    assert dv.payment_share(410, 250.0, last=False) == 250
    assert dv.payment_share(160, None, last=False) == 160  # a card with no balance covers all
    assert dv.payment_share(160, 500.0, last=True) == 160


def test_compensation_is_per_passenger_by_what_the_flight_did():
    assert dv.compensation(3, ["You are upset that the flight has been delayed."]) == 150
    assert dv.compensation(2, ["Your flight was cancelled and you want compensation."]) == 200
    # A status the agent read settles it, whatever the words.
    assert dv.compensation(1, ["the flight was delayed"], ["cancelled"]) == 100
    with pytest.raises(dv.RuleError, match="neither"):
        dv.compensation(1, ["You want to change your flight."])
    assert dv.count_of([{"first_name": "A"}, {"first_name": "B"}]) == 2
