"""Selectors (issue #23): which card fields describe the element a read picks out of a collection.

Unit tests of `incognita.access.domains.retail.element_selectors` on hand-made results; the
all-tasks check that the audited selectors reach `selected_by` is in test_trajectory.py.
"""

from __future__ import annotations

from incognita.access.domains.retail.element_selectors import ElementSelection, _describes


def _variants() -> dict:
    def v(item_id, price, available=True, **options):
        return {"item_id": item_id, "options": options, "available": available, "price": price}

    return {
        "name": "T-Shirt",
        "product_id": "p1",
        "variants": {
            "t1": v("t1", 20.0, color="blue", size="S", style="v-neck"),
            "t2": v("t2", 25.0, color="purple", size="S", style="v-neck"),
            "t3": v("t3", 22.0, color="purple", size="M", style="crew neck"),
            "t4": v("t4", 18.0, False, color="red", size="XL", style="crew neck"),
            "t5": v("t5", 19.0, color="red", size="L", style="crew neck"),
        },
    }


def _selector_builder(fields: list[dict]) -> ElementSelection:
    """The selector part of a golden builder with what `_selectors` reads: the card's fields."""
    b = ElementSelection()
    b.fields, b._catalog = fields, {}
    b._peek = lambda name, args: {"name": "?", "variants": {}}
    return b


def _field(token: str, *spans: str, kind: str | None = None) -> dict:
    return {"token": token, "kind": kind or token.split(":")[0], "value": "; ".join(spans), "spans": list(spans)}


def test_selectors_judge_each_span_sizes_units_and_hyphens_whole():
    doc = _variants()
    pref = _field("preference:t_shirt", "purple", "small", "v-neck")
    b = _selector_builder([pref, _field("preference:laptop", "purple")])
    assert b._selectors(doc, "/variants/t2/item_id") == ["preference:t_shirt"]  # 'small' is size S
    assert b._selectors(doc, "/variants/t3/item_id") == []  # size M and crew neck contradict
    # the old line picked out of the catalog is described by the item field, not the wish
    item = _field("item:t_shirt", "tshirt", "small", "v-neck")
    b = _selector_builder([item, pref])
    assert b._selectors(doc, "/variants/t1/item_id", role="item_ids") == ["item:t_shirt"]
    assert b._selectors(doc, "/variants/t1/item_id", role="new_item_ids") == []  # 'purple' contradicts blue

    boards = [{"options": {"length": "34 inch"}}, {"options": {"length": "31 inch"}}]
    universe = {"length": {"34 inch", "31 inch"}}
    f = _field("preference:skateboard", "34 inch")
    assert _describes(f, boards[0], boards, universe, "Skateboard")
    assert not _describes(f, boards[1], boards, universe, "Skateboard")  # shares 'inch' only
    wish = _field("preference:smart_thermostat", "Google Home")
    thermostat = {"options": {"compatibility": "Google Assistant"}}
    assert _describes(wish, thermostat, [thermostat], {"compatibility": {"Google Assistant", "Apple HomeKit"}})


def test_a_price_superlative_selects_only_where_it_holds():
    doc = _variants()
    b = _selector_builder([_field("preference:t_shirt", "cheapest")])
    assert b._selectors(doc, "/variants/t5/item_id") == ["preference:t_shirt"]  # t4 is cheaper but unavailable
    assert b._selectors(doc, "/variants/t1/item_id") == []
    b = _selector_builder([_field("preference:t_shirt", "most expensive")])
    assert b._selectors(doc, "/variants/t2/item_id") == ["preference:t_shirt"]
    # with more words the superlative narrows among what they leave: it contradicts nothing
    b = _selector_builder([_field("preference:t_shirt", "purple", "cheapest")])
    assert b._selectors(doc, "/variants/t2/item_id") == ["preference:t_shirt"]


def test_a_recency_selector_picks_an_end_of_the_order_list():
    user = {"user_id": "u", "orders": ["#W1", "#W2", "#W3"]}
    b = _selector_builder([_field("which_order", "most recently placed", kind="selector")])
    assert b._selectors(user, "/orders/2") == ["which_order"]
    assert b._selectors(user, "/orders/0") == []
    b = _selector_builder([_field("which_order", "first order", kind="selector")])
    assert b._selectors(user, "/orders/0") == ["which_order"]
    assert b._selectors({"orders": ["#W1"]}, "/orders/0") == []  # no choice
