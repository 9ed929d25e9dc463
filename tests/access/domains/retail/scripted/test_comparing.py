"""The comparison rules a scripted agent reads a replacement by (incognita.access.domains.retail.scripted.comparing),
and the two record rules of the picker that go with them, each on a small hand-made fixture."""

from types import SimpleNamespace

from generator_helpers import drive

from incognita.access.domains.retail.scripted.comparing import (
    compared_goals,
    demands_in_scope,
    named_option_scores,
    offsets,
    scope_tokens,
    yes_no_wants,
)
from incognita.access.domains.retail.scripted.picking import EntryPicker
from incognita.access.episodes.loop.agent_plan import PICK, Source
from incognita.access.episodes.scripted.picks import Choosing


def _v(price, available=True, **options):
    return {"options": {k.replace("_", " "): v for k, v in options.items()}, "price": price, "available": available}


BOOTS = [
    ("a", _v(10, size="8", material="leather", waterproof="yes")),
    ("b", _v(11, size="8", material="synthetic", waterproof="no")),
    ("c", _v(12, size="10", material="synthetic", waterproof="yes")),
]
OLD_BOOT = {
    "item_id": "o",
    "product_id": "p",
    "name": "Boots",
    "price": 11.5,
    "options": {"size": "10", "material": "synthetic", "waterproof": "no"},
}


def test_an_option_name_with_its_value_states_it():
    assert named_option_scores(["size 8"], BOOTS) == {"a": 1, "b": 1}
    assert named_option_scores(["size 9"], BOOTS) == {}


def test_yes_no_options_named_in_words():
    speakers = [("y", _v(1, water_resistance="yes")), ("n", _v(2, water_resistance="no"))]
    assert yes_no_wants(["the one that is not resistant to water"], speakers) == {"water resistance": "no"}
    assert yes_no_wants(["a water-resistant one"], speakers) == {"water resistance": "yes"}
    assert yes_no_wants(["a waterproof variant"], BOOTS) == {"waterproof": "yes"}
    assert yes_no_wants(["I do not care about waterproof or not"], BOOTS) == {}


def test_offsets_are_relative_to_the_old_line():
    old = {"pieces": "500", "difficulty level": "intermediate"}
    assert offsets(["but 1000 more pieces"], old, old) == {"pieces": 1500.0}
    assert offsets(["with 500 pieces less"], old, old) == {"pieces": 0.0}
    bottle = {"capacity": "500ml"}
    assert offsets(["250ml more"], bottle, bottle) == {"capacity": 750.0}


def test_offset_same_option_and_the_nearest_when_the_value_is_missing():
    old = {
        "item_id": "o",
        "product_id": "p",
        "price": 5,
        "options": {"pieces": "500", "theme": "art", "difficulty level": "intermediate"},
    }
    puzzles = [
        ("k1", _v(5, pieces="1000", theme="art", difficulty_level="expert")),
        ("k15", _v(5, pieces="1500", theme="art", difficulty_level="beginner")),
        ("k15i", _v(5, pieces="1500", theme="art", difficulty_level="intermediate")),
        ("k2", _v(5, pieces="2000", theme="art", difficulty_level="intermediate")),
    ]
    said = ["you want the same difficulty, but 1000 more pieces"]
    goals = compared_goals([], said, said, puzzles, old, [])
    assert max(goals, key=goals.get) == "k15i"
    # "more pieces" is the offset itself, not also "the nearest bigger count" (1000).
    assert goals.get("k1", 0) == 0
    # No 1200: the nearest value on the asked side.
    said = ["700 more pieces"]
    assert {k for k, v in compared_goals([], said, said, puzzles, old, []).items() if v} == {"k1"}


def test_the_other_line_of_the_same_product_is_the_reference():
    old = {
        "item_id": "o",
        "product_id": "p",
        "name": "Water Bottle",
        "price": 5,
        "options": {"capacity": "500ml", "material": "steel", "color": "black"},
    }
    other = {
        "item_id": "r",
        "product_id": "p",
        "name": "Water Bottle",
        "price": 5,
        "options": {"capacity": "1000ml", "material": "glass", "color": "red"},
    }
    bottles = [
        ("s-black", _v(5, capacity="1000ml", material="steel", color="black")),
        ("s-red", _v(5, capacity="1000ml", material="steel", color="red")),
    ]
    said = ["change it to the other bottle you just placed"]
    goals = compared_goals(["1000ml"], said, said, bottles, old, [old, other])
    assert goals == {"s-red": 1}
    said = ["the color to be the same as your other bottle"]
    assert compared_goals([], said, said, bottles, old, [old, other]).get("s-red") >= 1


def test_the_same_item_but_one_option_keeps_the_rest():
    said = ["the exact same item but a waterproof variant"]
    boots = BOOTS + [("d", _v(12, size="10", material="leather", waterproof="yes"))]
    goals = compared_goals([], said, said, boots, OLD_BOOT, [])
    assert max(goals, key=goals.get) == "c" and goals["c"] > goals["d"]


def test_constraints_first_then_the_extreme_and_within_a_budget_the_cheaper():
    old = {
        "item_id": "o",
        "product_id": "p",
        "price": 500,
        "options": {"resolution": "1080p", "waterproof": "no", "color": "silver"},
    }
    cams = [
        ("4k-b", _v(466, resolution="4K", waterproof="yes", color="black")),
        ("4k-s", _v(481, resolution="4K", waterproof="yes", color="silver")),
        ("5k-n", _v(523, resolution="5K", waterproof="no", color="black")),
        ("hd-y", _v(503, resolution="1080p", waterproof="yes", color="black")),
    ]
    said = ["the highest resolution, waterproof camera that you can get with the previous price"]
    goals = compared_goals([], said, said, cams, old, [])
    assert max(goals, key=goals.get) == "4k-b"
    assert goals["4k-s"] > goals.get("5k-n", 0) and goals["4k-s"] > goals.get("hd-y", 0)


def test_a_demand_about_another_item_does_not_steer():
    raised = [
        "exchange the <item:boots> for a waterproof pair",
        "the <item:camera> with more zoom",
        "keep the same size",
    ]
    tokens = scope_tokens((), [], OLD_BOOT)
    assert tokens == {"boots"}
    assert demands_in_scope(raised, tokens) == ["exchange the for a waterproof pair", "keep the same size"]


class _Picker(EntryPicker):
    def __init__(self, results, released, requests=()):
        self.results, self.explored, self.released = results, {}, released
        self.requests, self.demands, self.mentioned, self.unsure = list(requests), list(requests), [], set()
        self.chosen, self.used, self.tools = {}, {}, {}
        self.plan = SimpleNamespace(calls=[])


def test_a_payment_method_is_not_used_up_by_an_earlier_change():
    user = {"payment_methods": {"card_a": {"brand": "visa"}, "card_b": {"brand": "mastercard"}}}
    picker = _Picker({1: user}, {"payment": "visa"})
    src = Source(kind="read", call=1, steps=("payment_methods", PICK), selected_by=("payment",))
    for _ in range(2):  # the same tool twice (two exchanges), both paid with the visa card
        choosing = Choosing(call="exchange_delivered_order_items", arg="payment_method_id", slot="/payment_method_id")
        value = drive(picker._read_value(src, choosing))
        assert value == user["payment_methods"]["card_a"]


def test_the_items_a_change_acts_on_come_from_its_order():
    line = {"item_id": "i1", "product_id": "p", "name": "Boots", "price": 1, "options": {"size": "10"}}
    other = {"item_id": "i2", "product_id": "p", "name": "Boots", "price": 1, "options": {"size": "10"}}
    results = {4: {"order_id": "#B", "items": [other]}, 2: {"order_id": "#A", "items": [line]}}
    picker = _Picker(results, {"item": "boots"})
    src = Source(kind="read", call=4, steps=("items", PICK, "item_id"), selected_by=("item",))
    choosing = Choosing(call="modify_pending_order_items", arg=None, slot="/item_ids", record="#A")
    assert drive(picker._read_value(src, choosing)) == "i1"
