"""The airline's choosing rules that need no episode (picking.py), task-free."""

import math

from incognita.access.domains.airline.scripted import picking as pk


def _reservation(**kw):
    base = {"reservation_id": "R", "status": None, "cabin": "economy", "insurance": "no",
            "created_at": "2024-05-01T10:00:00", "flights": [{"date": "2024-05-20"}]}  # fmt: skip
    return {**base, **kw}


def test_a_reservation_may_be_cancelled_only_under_the_policy_conditions():
    assert not pk.cancellable(_reservation())  # economy, no insurance, booked long ago
    assert pk.cancellable(_reservation(cabin="business"))
    assert pk.cancellable(_reservation(insurance="yes"))
    assert pk.cancellable(_reservation(created_at="2024-05-14T18:00:00"))  # within the last 24 hours
    assert not pk.cancellable(_reservation(cabin="business", flights=[{"date": "2024-05-10"}]))  # flown
    assert not pk.cancellable(_reservation(cabin="business", status="cancelled"))


def _flight(number, dep, arr, economy):
    return {"flight_number": number, "scheduled_departure_time_est": dep, "scheduled_arrival_time_est": arr,
            "prices": {"economy": economy}, "available_seats": {"economy": 9}, "status": "available"}  # fmt: skip


def test_superlatives_order_journeys_by_price_duration_and_stops():
    a = _flight("A", "08:00:00", "10:00:00", 200)
    b = [_flight("B1", "06:00:00", "07:00:00", 60), _flight("B2", "08:00:00", "12:00:00", 70)]
    c = _flight("C", "22:00:00", "01:00:00", 150)  # arrives after midnight: three hours
    free = [(0, a), (1, b), (2, c)]
    views = dict(free)
    best = lambda name: max(pk._superlative_order([name], free, views, "economy").items(), key=lambda kv: kv[1])[0]  # noqa: E731
    assert best("least") == 1  # 130 for the one-stop journey
    assert best("second_cheapest") == 2
    assert best("fastest") == 0  # two hours
    assert best("nonstop") in (0, 2)
    assert best("earliest") == 1


def test_the_last_reservation_is_the_last_the_profile_lists():
    free = [(0, "AAA"), (1, "BBB"), (2, "CCC")]
    order = pk._superlative_order(["latest"], free, dict(free), None)
    assert max(order, key=order.get) == 2


def test_what_a_payment_method_can_cover():
    assert pk._capacity({"source": "gift_card", "amount": 6.0}) == 6.0
    assert math.isinf(pk._capacity({"source": "credit_card", "brand": "visa"}))
    assert pk._capacity({"flight_number": "HAT001"}) == 0


def test_searched_flights_are_found_in_direct_and_one_stop_results():
    a, b1, b2 = _flight("A", "08:00:00", "10:00:00", 1), _flight("B1", "1", "2", 2), _flight("B2", "3", "4", 3)
    assert [f["flight_number"] for f in pk.searched_flights([[a], [[b1, b2]], {"user_id": "u"}])] == ["A", "B1", "B2"]
    assert pk._element("/flights/1/date") == (1,) and pk._element("/cabin") == ()
    assert pk._kind("time_2") == "time" and pk._kind("time") == "time"
