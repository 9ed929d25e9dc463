"""The set and count rules a scripted agent chooses by (incognita.access.domains.retail.scripted.sets), each on a
small hand-made fixture."""

from generator_helpers import drive

from incognita.access.domains.retail.scripted.sets import (
    SetChooser,
    consuming_writes,
    excluded_lines,
    excluded_phrases,
    filled,
    has_better_variant,
    keep_records,
    keep_variants,
    kept_options,
    paired_product,
    per_line_superlative,
    quantified,
    refund_total,
    slots_from,
    stated_count,
    tool_statuses,
)
from incognita.access.episodes.loop.agent_plan import PICK, Plan, PlannedCall, Source


def _line(item_id, name, price=10.0, product="p1", **options):
    return {"name": name, "product_id": product, "item_id": item_id, "price": price, "options": options}


def _plan() -> Plan:
    """Read a profile (0), read one of its orders (1), return three lines of that order (2),
    cancel another order straight from the profile (3)."""
    orders = Source("read", call=0, steps=("orders", PICK))
    line = Source("read", call=1, steps=("items", PICK, "item_id"))
    return Plan(
        calls=[
            PlannedCall(0, "get_user_details", False, {}),
            PlannedCall(1, "get_order_details", False, {"/order_id": orders}),
            PlannedCall(
                2,
                "return_delivered_order_items",
                True,
                {"/order_id": orders, "/item_ids/0": line, "/item_ids/1": line, "/item_ids/2": line},
            ),
            PlannedCall(3, "cancel_pending_order", True, {"/order_id": orders}),
        ],
        info=[],
    )


def test_a_tools_name_states_the_status_its_records_need():
    assert tool_statuses("cancel_pending_order") == {"pending"}
    assert tool_statuses("return_delivered_order_items") == {"delivered"}
    assert tool_statuses("modify_user_address") == set()
    plan = _plan()
    # the order read feeds the return (it takes lines of it); the cancel acts on its own pick
    assert [c.name for c in consuming_writes(plan, 1)] == ["return_delivered_order_items"]
    assert [c.name for c in consuming_writes(plan, 3)] == ["cancel_pending_order"]
    assert slots_from(plan, 1) == {("items",): 3}


def test_records_are_kept_by_status_enough_lines_and_a_stated_count():
    records = {
        "a": {"status": "cancelled", "items": [1, 2, 3]},
        "b": {"status": "delivered", "items": [1]},
        "c": {"status": "delivered", "items": [1, 2, 3, 4]},
        "d": {"status": "pending", "items": [1, 2, 3, 4, 5]},
    }
    free = [(k, k) for k in records]
    assert [k for k, _ in keep_records(free, records, {"delivered"}, {("items",): 3}, None)] == ["c"]
    assert [k for k, _ in keep_records(free, records, {"pending"}, {}, 5)] == ["d"]
    # a test no record passes sets nothing aside
    assert [k for k, _ in keep_records(free, records, {"processed"}, {}, None)] == list(records)


def test_a_stated_count_belongs_to_the_demand_of_the_same_change():
    from incognita.access.domains.retail.scripted.wording import action_words as _action_words

    demands = [
        "You want to exchange the laptop.",
        "You also have a pending order with five items, and you want to cancel it.",
    ]
    assert stated_count(demands, ["cancel_pending_order"], _action_words) == 5
    assert stated_count(demands, ["modify_pending_order_items"], _action_words) is None
    assert stated_count(["cancel the order with 3 items"], ["cancel_pending_order"], _action_words) == 3


def test_a_quantified_exclusion_sets_aside_the_lines_it_names():
    assert excluded_phrases(["(Everything except a keyboard and a mouse, but do not reveal it)."]) == [
        "keyboard",
        "mouse",
    ]
    assert excluded_phrases(["You want to return everything you just bought except the coffee machine."]) == [
        "coffee machine"
    ]
    assert excluded_phrases(["return everything but a tablet in a recently delivered order"]) == ["tablet"]
    # no quantifier, no set: a plain "except" is left to the negation rule
    assert excluded_phrases(["Well, except the boots that you love."]) == []
    lines = [
        (0, _line("1", "Water Bottle")),
        (1, _line("2", "Mechanical Keyboard")),
        (2, _line("3", "Espresso Machine")),
    ]
    assert excluded_lines(["keyboard", "mouse"], lines) == {1}
    # "coffee machine" shares one word with one line only: that line is the one meant
    assert excluded_lines(["coffee machine"], lines) == {2}


def test_every_line_to_its_cheapest_option_selects_the_lines_that_have_one():
    assert per_line_superlative(["switch all items to their cheapest options"]) == "price_min"
    assert per_line_superlative(["whether every item can be switched to its cheapest option"]) == "price_min"
    assert per_line_superlative(["upgrade all your items to the most expensive variants"]) == "price_max"
    assert per_line_superlative(["the cheapest lamp"]) is None
    product = {
        "variants": {
            "v1": {"price": 8.0, "available": False},
            "v2": {"price": 10.0, "available": True},
            "v3": {"price": 12.0, "available": True},
        }
    }
    line = _line("v2", "Lamp", 10.0)
    assert not has_better_variant(line, product, "price_min")  # the cheaper one is unavailable
    assert has_better_variant(line, product, "price_max")


def test_an_old_item_pairs_with_the_product_its_replacement_is_read_from():
    call = PlannedCall(
        5,
        "modify_pending_order_items",
        True,
        {
            "/item_ids/0": Source("read", call=1, steps=("items", PICK, "item_id")),
            "/item_ids/1": Source("read", call=1, steps=("items", PICK, "item_id")),
            "/new_item_ids/0": Source("read", call=3, steps=("variants", PICK, "item_id")),
            "/new_item_ids/1": Source("read", call=4, steps=("variants", PICK, "item_id")),
        },
    )
    results = {3: {"product_id": "pa", "variants": {}}, 4: {"product_id": "pb", "variants": {}}}
    assert paired_product(call, "/item_ids/0", results) == "pa"
    assert paired_product(call, "/item_ids/1", results) == "pb"
    assert paired_product(call, "/order_id", results) is None


def test_the_same_details_are_kept_for_the_item_the_phrase_names():
    shoe = _line("old", "Running Shoes", size="9", color="yellow")
    said = ["upgrade everything (but make sure the new shoe is still the same size)."]
    assert kept_options(said, shoe) == {"size": "9"}
    # the sentence names another item: the shoe keeps nothing
    assert kept_options(["make sure the new keyboard is still the same size"], shoe) == {}
    boots = _line("old", "Hiking Boots", size="10", material="leather", waterproof="no")
    assert kept_options(["exchange it for boots of the exact same size and material"], boots) == {
        "size": "10",
        "material": "leather",
    }
    variants = [("a", {"options": {"size": "8"}}), ("b", {"options": {"size": "9"}})]
    assert [k for k, _ in keep_variants(variants, {"size": "9"})] == ["b"]


def test_placeholders_read_as_released_values_and_quantifiers():
    assert filled(["switch all items to their <preference:x> options <item:y>"], {"preference:x": "cheapest"}) == [
        "switch all items to their cheapest options"
    ]
    assert quantified(["modify all your pending t-shirts"]) and quantified(["cancel both orders"])
    assert not quantified(["modify the pending order"])


def test_money_back_sums_the_cancelled_orders_and_the_returned_lines():
    cancelled = {"status": "cancelled", "items": [_line("1", "A", 10.5), _line("2", "B", 4.25)]}
    returned = {
        "status": "return requested",
        "items": [_line("3", "C", 7.0), _line("4", "D", 100.0)],
        "return_items": ["3"],
    }
    made = [("cancel_pending_order", cancelled), ("return_delivered_order_items", returned)]
    assert refund_total(["At the end, ask how much money you will get back."], made) == "21.75"
    assert refund_total(["Ask for the tracking number."], made) is None
    assert refund_total(["how much will I get back"], []) is None


class _Agent(SetChooser):
    """The state `_leave_for_later` reads: the plan, results so far, what was released."""

    def __init__(self, plan, released):
        self.plan, self.results, self.released, self.unsure = plan, {0: {}}, released, set()
        self.asked = []

    def _ask_customer(self, token, required=True):
        self.asked.append(token)
        self.released[token] = {"item:b": "jigsaw"}[token]
        yield {"kind": "message"}


def test_a_record_a_later_pick_needs_is_left_for_it():
    """Two order reads from one list: the first wants the bookshelf, the later one the
    bookshelf and the jigsaw. The order holding both is left for the later read."""
    first = Source("read", call=0, steps=("orders", PICK), selected_by=("item:a",))
    later = Source("read", call=0, steps=("orders", PICK), selected_by=("item:a", "item:b"))
    plan = Plan(
        calls=[
            PlannedCall(0, "get_user_details", False, {}),
            PlannedCall(1, "get_order_details", False, {"/order_id": first}),
            PlannedCall(2, "get_order_details", False, {"/order_id": later}),
        ],
        info=[],
    )
    agent = _Agent(plan, {"item:a": "bookshelves"})
    records = {
        "#1": {"items": [_line("1", "Bookshelf"), _line("2", "Jigsaw Puzzle")]},
        "#2": {"items": [_line("3", "Bookshelf")]},
    }
    free = [("#1", "#1"), ("#2", "#2")]

    class Choosing:
        index = 1

    kept = drive(agent._leave_for_later(free, records, first, Choosing()))
    assert [k for k, _ in kept] == ["#2"] and agent.asked == ["item:b"]
    Choosing.index = 2
    agent.results[1] = {}
    assert [k for k, _ in drive(agent._leave_for_later(free, records, later, Choosing()))] == ["#1", "#2"]


def test_an_exchange_for_the_same_item_needs_one_line_not_two():
    # item_ids/0 and new_item_ids/0 both read off the order's lines ("a new pair with the same
    # specs"): one position, so an order holding a single line qualifies.
    orders = Source("read", call=0, steps=("orders", PICK))
    line = Source("read", call=1, steps=("items", PICK, "item_id"))
    plan = Plan(
        calls=[
            PlannedCall(0, "get_user_details", False, {}),
            PlannedCall(1, "get_order_details", False, {"/order_id": orders}),
            PlannedCall(
                2,
                "exchange_delivered_order_items",
                True,
                {"/order_id": orders, "/item_ids/0": line, "/new_item_ids/0": line},
            ),
        ],
        info=[],
    )
    assert slots_from(plan, 1) == {("items",): 1}
