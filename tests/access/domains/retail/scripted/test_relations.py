"""Records described by relation or alias (incognita.access.domains.retail.scripted.relations), each rule on a small
hand-made fixture: places by alias, state name or code; target phrases ("the LA order", "the
order sent to Texas", "an order with two watches", "the order sent to the old address", "all
orders"); destination phrases ("to my NYC address", "to the new home"); the picker's hook."""

from generator_helpers import drive

from incognita.access.domains.retail.scripted.relations import (
    RelationPicker,
    destination_descriptors,
    destination_scores,
    phrase_tokens,
    pick_roles,
    place_matches,
    target_descriptors,
    target_score,
)
from incognita.access.episodes.loop.agent_plan import PICK, PlannedCall, Source


def _order(oid, street, city, state, *lines):
    return {
        "order_id": oid,
        "address": {"address1": street, "city": city, "state": state, "country": "USA"},
        "items": [{"name": name, "options": dict(options)} for name, options in lines],
    }


NORTH = _order("#A1", "1 North Road", "New York", "NY", ("Kite", {"color": "red"}))
WEST = _order(
    "#A2", "9 West Lane", "Los Angeles", "CA", ("Clock", {"strap": "silicone"}), ("Clock", {"strap": "steel"})
)
SOUTH = _order("#A3", "5 Oak Street", "Austin", "TX", ("Lamp", {}), ("Kite", {"color": "blue"}), ("Rug", {}))


def test_places_match_city_aliases_state_names_and_codes():
    assert place_matches("NYC", NORTH["address"])
    assert place_matches("New York", NORTH["address"])
    assert place_matches("LA", WEST["address"]) and not place_matches("LA", NORTH["address"])
    assert place_matches("Texas by accident", SOUTH["address"])  # a state's name for its code
    assert place_matches("TX", SOUTH["address"]) and not place_matches("tx", SOUTH["address"])  # codes in capitals
    assert not place_matches("pending", SOUTH["address"])


def test_target_phrases_are_read_as_relations():
    assert target_descriptors("You want to change your LA order to your NYC address.", {}) == [("words", "LA")]
    assert ("words", "Texas by accident") in target_descriptors("You have an order sent to Texas by accident.", {})
    assert target_descriptors("an order with two <item:clock>, change its address", {"item:clock": "clock"}) == [
        ("count", 2, "clock")
    ]
    away = target_descriptors("another order sent to the old address, change your wrong order address", {})
    assert away == [("away",), ("away",)]
    assert ("every",) in target_descriptors("correct all order addresses", {})
    assert phrase_tokens("modify the <item:laptop> order to your <city> address") == ["item:laptop", "city"]


def test_an_order_is_selected_by_place_item_kind_count_or_by_not_being_at_the_new_address():
    def score(text, record, destination=None, first=False):
        return target_score(target_descriptors(text, {}), record, destination, first)

    assert [score("your LA order", r) for r in (NORTH, WEST, SOUTH)] == [0, 1, 0]
    assert [score("the order sent to Texas", r) for r in (NORTH, WEST, SOUTH)] == [0, 0, 1]
    assert [score("the kite order", r) for r in (NORTH, WEST, SOUTH)] == [1, 0, 1]
    assert [score("the order with two clocks", r) for r in (NORTH, WEST, SOUTH)] == [0, 1, 0]
    assert [score("an order with three items", r) for r in (NORTH, WEST, SOUTH)] == [0, 0, 1]
    assert [score("the order sent to the old address", r, "1 North Road") for r in (NORTH, WEST)] == [0, 1]
    assert score("fix all orders", NORTH, first=True) == 1 and score("fix all orders", WEST) == 0


def test_destination_by_place_or_by_the_item_sent_to_the_new_home():
    records = {0: NORTH, 1: WEST, 2: SOUTH}
    nyc = destination_descriptors("change your LA order to your NYC address (it is in your other order)", {})
    assert nyc == [("place", "NYC")]
    assert destination_scores(nyc, records, [], None) == {0: 1, 1: 0, 2: 0}
    new = destination_descriptors("change the other order's address to the new home", {})
    assert new == [("new",)]
    said = ["You moved to a new house and bought a lamp sent to this new address."]
    assert destination_scores(new, records, said, None) == {0: 0, 1: 0, 2: 1}
    # No item named: a new house on the same street is that street at another number.
    profile = {"address1": "70 Oak Street"}
    same = ["You moved to a new house on the same street."]
    assert destination_scores(new, records, same, profile) == {0: 0, 1: 0, 2: 1}


def _read(call, *steps):
    return Source("read", call=call, steps=steps)


PLAN = [
    PlannedCall(1, "get_user_details", False, {"/user_id": Source("field", token="user_id")}),
    PlannedCall(2, "get_order_details", False, {"/order_id": _read(1, "orders", PICK)}),
    PlannedCall(
        3,
        "modify_pending_order_address",
        True,
        {"/order_id": _read(1, "orders", PICK), "/address1": _read(2, "address", "address1")},
    ),
    PlannedCall(4, "get_order_details", False, {"/order_id": _read(1, "orders", PICK)}),
    PlannedCall(5, "return_delivered_order_items", True, {"/item_ids/0": _read(4, "items", PICK, "item_id")}),
]


def test_pick_roles_tell_a_target_from_a_destination():
    assert [(w.index, role) for w, role in pick_roles(PLAN, 2, "order_id")] == [(3, "destination")]
    assert [(w.index, role) for w, role in pick_roles(PLAN, 3, "order_id")] == [(3, "target")]
    assert [(w.index, role) for w, role in pick_roles(PLAN, 4, "order_id")] == [(5, "target")]
    assert pick_roles(PLAN, 3, "address1") == []


class _Agent(RelationPicker):
    """Just what the hook reads of a scripted agent."""

    def __init__(self, demands, released):
        self.plan = type("P", (), {"calls": PLAN})()
        self.demands, self.released, self.unsure = demands, dict(released), set()
        self.results = {1: {"orders": ["#A1", "#A2", "#A3"], "address": {"address1": "70 Oak Street"}}}
        self.asked = []

    def _ask_customer(self, token, required=True):
        self.asked.append(token)
        self.released[token] = "kite"
        yield {"kind": "message"}

    def _explore(self, tool, args):
        return {"#A1": NORTH, "#A2": WEST, "#A3": SOUTH}[args["order_id"]]
        yield


def test_the_hook_asks_for_placeholders_in_a_relation_and_scores_the_orders():
    choosing = type("C", (), {"index": 3, "arg": "order_id"})()
    agent = _Agent(["You want to change the <item:toy> order to your NYC address."], {})
    free = [(0, "#A1"), (1, "#A2"), (2, "#A3")]
    scores = drive(agent._relation_scores(free, choosing, "get_order_details"))
    assert agent.asked == ["item:toy"]
    assert scores == {0: 1, 1: 0, 2: 1}  # the orders holding a kite
    choosing.index = 2  # the read that gives the address: the NYC order
    assert drive(agent._relation_scores(free, choosing, "get_order_details")) == {0: 1, 1: 0, 2: 0}
    # A demand about another kind of change says nothing about this one.
    other = _Agent(["Return the items of the order sent to Texas."], {})
    choosing.index = 3
    assert set(drive(other._relation_scores(free, choosing, "get_order_details")).values()) == {0}


def test_a_replacement_is_not_matched_against_the_description_of_the_item_it_replaces():
    change = PlannedCall(
        6,
        "modify_pending_order_items",
        True,
        {
            "/item_ids/0": Source("read", call=4, steps=("items", PICK, "item_id"), selected_by=("item:toy",)),
            "/new_item_ids/0": Source("read", call=5, steps=("variants", PICK, "item_id")),
        },
    )
    agent = _Agent([], {"item:toy": "kite; 1000-piece; red", "name": "Ada Lee"})
    agent.plan.calls = [*PLAN, change]
    replacement = type("C", (), {"index": 6, "slot": "/new_item_ids", "position": 0})()
    assert agent._replaced_descriptions(replacement) == {"kite; 1000-piece; red"}
    old_line = type("C", (), {"index": 6, "slot": "/item_ids", "position": 0})()
    assert agent._replaced_descriptions(old_line) == set()


def test_a_place_named_after_the_address_it_qualifies_selects_the_order():
    text = "You ordered an order sent to your aunt's address in Los Angeles, and want it changed to your home."
    assert ("words", "Los Angeles") in target_descriptors(text, {})
    no_to = "You sent an order your aunt's address in LA, and want to change it to your default address in Oslo."
    found = target_descriptors(no_to, {})
    assert ("words", "LA") in found and ("words", "Oslo") not in found
    assert target_score(found, WEST, None) > target_score(found, NORTH, None)


def test_a_price_comparison_is_read_across_orders_holding_the_item_kind():
    from incognita.access.domains.retail.scripted.relations import price_extreme_scores

    cheap = {"order_id": "#C1", "items": [{"name": "Kite", "price": 20.0}, {"name": "Lamp", "price": 90.0}]}
    dear = {"order_id": "#C2", "items": [{"name": "Kite", "price": 35.0}]}
    records = {"#C1": cheap, "#C2": dear}
    assert price_extreme_scores(["Return the more expensive one."], ["kites"], records) == {"#C2": 1}
    assert price_extreme_scores(["Return the cheapest one."], ["kites"], records) == {"#C1": 1}
    # A change of mind: the latest comparison holds.
    said = ["Return the less expensive one.", "You change your mind and return the more expensive one."]
    assert price_extreme_scores(said, ["kites"], records) == {"#C2": 1}
    assert price_extreme_scores(["Return the kite."], ["kites"], records) == {}
    assert price_extreme_scores(["Return the dearest."], ["kites"], {"#C2": dear}) == {}


def test_the_lines_of_a_read_that_landed_elsewhere_do_not_choose_the_order():
    # The change's lines are read from call 1; that read took another order than the one
    # holding what the customer described, so it says nothing about the change's order.
    from incognita.access.domains.retail.scripted.relations import RelationPicker
    from incognita.access.episodes.loop.agent_plan import PICK, PlannedCall, Source

    line = Source("read", call=1, steps=("items", PICK, "item_id"), selected_by=("item:boots",))
    write = PlannedCall(2, "modify_pending_order_items", True, {"/item_ids/0": line})
    agent = RelationPicker()
    agent.released = {"item:boots": "boots"}
    agent.results = {1: {"order_id": "#B2", "items": [{"name": "Bluetooth Speaker", "item_id": "1"}]}}
    assert agent._lines_record(write) is None
    agent.results = {1: {"order_id": "#B1", "items": [{"name": "Hiking Boots", "item_id": "2"}]}}
    assert agent._lines_record(write) == "#B1"
