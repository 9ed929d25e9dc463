"""What a customer's airline words state, in the records' forms (facts.py), task-free."""

from incognita.access.domains.airline.scripted import facts as fx


def test_a_stated_value_is_held_in_the_forms_the_records_use():
    flight = {"flight_number": "HAT271", "date": "2024-05-10", "origin": "ORD", "destination": "PHL"}
    texts = fx.leaves(flight)
    assert fx.states("May 10", texts)  # the ISO date
    assert fx.states("PHL", texts)
    assert not fx.states("May 11", texts)
    assert fx.states("sf", fx.leaves({"origin": "SFO"}))  # a city's everyday short name, its airport
    assert fx.states("Kevin Smith", fx.leaves({"first_name": "Kevin", "last_name": "Smith", "dob": "2001-04-12"}))


def test_a_kind_of_payment_is_held_by_its_words_singular_abbreviated_or_by_its_digits():
    cert = fx.leaves({"id": "certificate_8045380", "source": "certificate", "amount": 500.0})
    gift = fx.leaves({"id": "gift_card_5094406", "source": "gift_card", "amount": 274.0})
    card = fx.leaves({"id": "credit_card_4421486", "source": "credit_card", "brand": "mastercard", "last_four": "7447"})
    assert fx.states("certificates", cert) and not fx.states("certificates", gift)
    assert fx.states("GC", gift) and fx.states("CC", card) and not fx.states("CC", gift)
    assert fx.states("master card", card)
    assert fx.states("credit card ending in 7447", card) and fx.states("7447 card", card)
    assert not fx.states("credit card ending in 1234", card)


def test_a_time_of_day_is_kept_by_the_first_departure_or_the_last_arrival():
    early = {"scheduled_departure_time_est": "06:00:00", "scheduled_arrival_time_est": "09:30:00"}
    late = {"scheduled_departure_time_est": "13:00:00", "scheduled_arrival_time_est": "23:00:00"}
    assert fx.time_holds("before 11am est", early) and not fx.time_holds("before 11am est", late)
    assert fx.time_holds("after 8am", late) and fx.time_holds("departs 1pm", late)
    assert fx.time_holds("arrive before 10am", [early]) and not fx.time_holds("arrive before 7am", [late, early])
    assert fx.time_holds("no time here", early) is None


def test_superlatives_are_read_from_the_selectors():
    assert fx.superlatives(["cheapest"]) == ["least"]
    assert fx.superlatives(["second cheapest"]) == ["second_cheapest", "least"]
    assert fx.superlatives(["most recent", "last reservation"]) == ["latest"]
    assert fx.superlatives(["gift card with the smallest balance"]) == ["least"]
    assert fx.superlatives(["fastest"]) == ["fastest"] and fx.superlatives(["nonstop"]) == ["nonstop"]
    assert fx.superlatives(["upcoming"]) == []


def test_a_payment_method_by_its_amount_holds_the_amount_and_the_kind():
    cert = fx.leaves({"id": "certificate_3765853", "source": "certificate", "amount": 500.0})
    assert fx.states("500 dollar certificate", cert) and fx.states("$500 certificate", cert)
    assert not fx.states("250 dollar certificate", cert)
    assert not fx.states("500 dollar gift card", cert)
