"""The airline's choosing rules that need no episode (picking.py), task-free."""

from types import SimpleNamespace

from incognita.access.domains.airline.scripted import picking as pk
from incognita.access.episodes.scripted.picks import Choosing


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


def test_searched_flights_are_found_in_direct_and_one_stop_results():
    a, b1, b2 = _flight("A", "08:00:00", "10:00:00", 1), _flight("B1", "1", "2", 2), _flight("B2", "3", "4", 3)
    assert [f["flight_number"] for f in pk.searched_flights([[a], [[b1, b2]], {"user_id": "u"}])] == ["A", "B1", "B2"]
    assert pk._element("/flights/1/date") == (1,) and pk._element("/cabin") == ()
    assert pk._kind("time_2") == "time" and pk._kind("time") == "time"


def test_the_most_recent_reservation_orders_reservations_not_the_flights_inside_one():
    legs = [{"flight_number": "A", "date": "2024-05-28"}, {"flight_number": "B", "date": "2024-05-28"}]
    free = list(enumerate(legs))
    assert pk._superlative_order(["latest"], free, dict(free), None) == {}
    records = [(0, {"reservation_id": "R1"}), (1, {"reservation_id": "R2"})]
    order = pk._superlative_order(["latest"], records, dict(records), None)
    assert max(order, key=order.get) == 1


def test_a_flight_another_element_of_the_call_took_is_the_same_flight_on_the_same_date():
    kept = {"flight_number": "HAT204", "date": "2024-05-28", "price": 71}
    lines = {(1,): kept}
    assert pk._same_flight({"flight_number": "HAT204", "date": "2024-05-28", "prices": {}}, lines, (2,))
    assert not pk._same_flight({"flight_number": "HAT204", "date": "2024-05-29"}, lines, (2,))
    assert not pk._same_flight({"flight_number": "HAT100", "date": "2024-05-28"}, lines, (2,))
    assert not pk._same_flight(kept, lines, (1,))  # the element's own choice
    assert not pk._same_flight({"flight_number": "HAT204", "date": None}, lines, (2,))  # no date: not known


def _picker(demands, released, plan_calls=(), results=None, explored=None):
    agent = pk.FlightPicker()
    agent.demands, agent.released = demands, released
    agent.plan = SimpleNamespace(calls=list(plan_calls))
    agent.results, agent.explored = results or {}, explored or {}
    return agent


def test_a_new_flight_replaces_the_legs_between_its_ends_even_before_its_date_is_derived():
    legs = {0: {"flight_number": "A1", "origin": "IAH", "destination": "JFK", "date": "2024-05-18", "price": 1},
            1: {"flight_number": "A2", "origin": "JFK", "destination": "SFO", "date": "2024-05-18", "price": 1},
            2: {"flight_number": "R1", "origin": "SFO", "destination": "IAH", "date": "2024-05-22", "price": 1}}  # fmt: skip
    new = {"flight_number": "N1", "origin": "IAH", "destination": "SFO", "prices": {"economy": 1}}
    agent = _picker([], {}, results={5: [new]})
    # flights/1 keeps the return (its number is the reservation's; its date is derived after it).
    args = {"flights": [{"flight_number": "N1", "date": "2024-05-19"}, {"flight_number": "R1"}]}
    choosing = Choosing(call="update_reservation_flights", arg=None, pointer="/flights/1/date", args=args)
    assert agent._replaced_legs(choosing, list(legs.items())) == {0, 1}


def test_of_the_customers_same_day_reservations_the_one_its_facts_do_not_describe_is_cancelled():
    def reservation(rid, legs, cabin="business", who=("Ann", "Lee")):
        return {"reservation_id": rid, "status": None, "cabin": cabin, "insurance": "no",
                "created_at": "2024-05-01T10:00:00", "passengers": [{"first_name": who[0], "last_name": who[1]}],
                "flights": [{"origin": o, "destination": d, "date": day} for o, d, day in legs]}  # fmt: skip

    views = {
        0: reservation("KEEP", [("BOS", "MIA", "2024-05-22")]),  # Boston, May 22
        1: reservation("DUP", [("ORD", "PHL", "2024-05-22")]),  # May 22 only
        2: reservation("FLOWN", [("DFW", "EWR", "2024-05-10"), ("DFW", "EWR", "2024-05-17")], cabin="economy"),
        3: reservation("TIE", [("JFK", "ORD", "2024-05-17")]),  # as many facts as FLOWN, which cannot be cancelled
        4: reservation("OTHERS", [("ORD", "PHL", "2024-05-22")], who=("Ivan", "Ito")),  # not the customer's trip
    }
    released = {
        "airport": "Boston",
        "airport_2": "Dallas",
        "date": "May 22",
        "date_2": "May 17",
        "selector": "same day",
    }
    agent = _picker([], released, results={0: {"name": {"first_name": "Ann", "last_name": "Lee"}, "reservations": []}})
    src = SimpleNamespace(selected_by=tuple(released))
    cancel = Choosing(call="cancel_reservation", arg="reservation_id")
    assert agent._same_day_extras(list(views.items()), views, src, cancel) == {1, 3}
    # No "same day" said, or another call: no such rule.
    assert (
        agent._same_day_extras(list(views.items()), views, SimpleNamespace(selected_by=("airport",)), cancel) == set()
    )
    assert agent._same_day_extras(list(views.items()), views, src, Choosing(call="book_reservation", arg=None)) == set()
