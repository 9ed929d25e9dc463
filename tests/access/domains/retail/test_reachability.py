"""The retail audit's selectors_reachable check (incognita.access.domains.retail.reachability): a
choice the customer cannot tell apart fails, and the field that repairs it makes it pass."""

import copy
import json
from pathlib import Path

import pytest

from incognita.access.cards.audit import audit_card, load_ambiguities
from incognita.access.cards.card import build_card
from incognita.access.domain import domain_files, get_domain
from incognita.access.domains.retail.reachability import check_selectors_reachable
from incognita.access.domains.retail.reachability_words import _Said

RETAIL = get_domain("retail")
AMBIGUITIES = domain_files("retail").ambiguities  # config/domains/retail/upstream_ambiguities.yaml


def verdicts(c, db, vocabulary, ambiguities=None):
    known = load_ambiguities(AMBIGUITIES) if ambiguities is None else ambiguities
    return {f.check: (f.verdict, f.detail) for f in audit_card(c, db, vocabulary, known, RETAIL)}


CARDS_V1 = Path(__file__).resolve().parents[3] / "fixtures" / "cards_v1"
# The rule-built (v1) cards of four tasks whose gold picks an entry the customer cannot name:
# task -> (the choice named in the detail, what tells the gold apart, the field that repairs it).
UNREACHABLE = {
    "46": (
        "return_delivered_order_items.item_ids[0]=6259501109",  # two vacuum cleaners on the order
        "{type: robotic}",
        {"token": "item:vacuum_cleaner_2", "kind": "item", "value": "the robotic one", "spans": ["the robotic one"]},
    ),
    "3": (
        "modify_pending_order_items.order_id=#W4776164",  # two pending orders with a t-shirt
        "size: S",
        {"token": "item:t_shirt_2", "kind": "item", "value": "small tshirt", "spans": ["small tshirt"]},
    ),
    "1": (
        "exchange_delivered_order_items.new_item_ids[0]=7747408585",  # the db says Google Assistant
        "compatibility: Google Assistant",
        {
            "token": "preference:smart_thermostat",
            "kind": "preference",
            "value": "Google Home",
            "spans": ["Google Home"],
        },
    ),
    "104": (
        "return_delivered_order_items.item_ids[0]=8479046075",  # a bookshelf among five lines
        "name: Bookshelf",
        {"token": "item:bookshelf", "kind": "item", "value": "bookshelves", "spans": ["bookshelves"]},
    ),
}


def v1_card(task_id: str) -> dict:
    return json.loads((CARDS_V1 / f"{task_id}.json").read_text())


@pytest.mark.parametrize("task_id", sorted(UNREACHABLE, key=int))
def test_unreachable_choice_fails_and_the_missing_field_repairs_it(task_id, db, vocabulary):
    choice, distinguishing, field = UNREACHABLE[task_id]
    card = v1_card(task_id)
    verdict, detail = verdicts(card, db, vocabulary)["selectors_reachable"]
    assert verdict == "fail" and choice in detail and distinguishing in detail, detail

    repaired = copy.deepcopy(card)
    repaired["fields"].append(field)
    v = verdicts(repaired, db, vocabulary)
    assert v["selectors_reachable"][0] == "pass", v["selectors_reachable"]
    assert v["fields_in_source"][0] == "pass"  # the repair releases what the source says, nothing new


def test_check_does_not_pass_trivially(db, vocabulary):
    """Taking the distinguishing field away again fails; so does a value of the wrong kind."""
    choice, _, field = UNREACHABLE["46"]
    card = v1_card("46")
    card["fields"].append(field)
    assert verdicts(card, db, vocabulary)["selectors_reachable"][0] == "pass"
    card["fields"].remove(field)
    assert verdicts(card, db, vocabulary)["selectors_reachable"][0] == "fail"
    # "small" as a preference describes the t-shirt wanted, not the pending order to pick.
    card = v1_card("3")
    card["fields"].append({"token": "preference:t_shirt_2", "kind": "preference", "value": "small", "spans": ["small"]})
    verdict, detail = verdicts(card, db, vocabulary)["selectors_reachable"]
    assert verdict == "fail" and UNREACHABLE["3"][0] in detail


def test_selector_words_reach_a_choice(db, vocabulary):
    """A general selector in the customer's words ("the cheapest") reaches what no value does."""
    card = v1_card("1")
    card["fields"].append(UNREACHABLE["1"][2])
    assert verdicts(card, db, vocabulary)["selectors_reachable"][0] == "pass"
    card["fields"] = [f for f in card["fields"] if f["token"] != "item:smart_thermostat"]
    verdict, detail = verdicts(card, db, vocabulary)["selectors_reachable"]
    assert verdict == "fail" and "item_ids[0]=4983901480" in detail  # which line of the order?
    card["requests"][0]["demand"] += " Exchange the cheapest item of the order."  # the thermostat is
    assert verdicts(card, db, vocabulary)["selectors_reachable"][0] == "pass"


def test_matching_is_word_bounded_and_general():
    said = _Said(["34 inch", "v-neck", "small", "extra large", "bookshelves", "batteries", "boxes", "giftcard"])
    assert said.states("length", "34 inch", set()) and not said.states("length", "31 inch", set())
    assert said.states("style", "v-neck", set()) and not said.states("style", "crew neck", set())
    assert said.states("size", "S", set()) and said.states("size", "XL", set()) and not said.states("size", "L", set())
    for name in ("Bookshelf", "Battery", "Box", "gift card"):
        assert said.states("name", name, set()), name
    # One shared distinctive word reaches a value only when no alternative has it.
    home = _Said(["Google Home"])
    assert home.states("compatibility", "Google Assistant", {"amazon", "alexa", "apple", "homekit"})
    assert not home.states("compatibility", "Google Assistant", {"google", "nest"})
    assert _Said(["no backlight"]).states("backlight", "none", set())
    assert not _Said(["RGB backlight"]).states("backlight", "none", set())


def test_known_upstream_ambiguity_warns(tasks, db, meta, vocabulary):
    card = build_card(tasks["100"], db, meta, RETAIL)
    verdict, detail = verdicts(card, db, vocabulary)["selectors_reachable"]
    reason = load_ambiguities(AMBIGUITIES)["100"]["modify_pending_order_items.payment_method_id"]
    assert verdict == "warn" and detail.startswith(f"ambiguous upstream: {reason}")
    # Unlisted, the same choice fails: the gold pays with a card the order was not paid with.
    findings = {f.check: f for f in audit_card(card, db, vocabulary, {}, RETAIL)}
    assert findings["selectors_reachable"].verdict == "fail"
    assert "modify_pending_order_items.payment_method_id=credit_card_3261838" in findings["selectors_reachable"].detail


def test_one_finding_per_card(tasks, db, meta, vocabulary):
    findings = audit_card(
        build_card(tasks["0"], db, meta, RETAIL), db, vocabulary, load_ambiguities(AMBIGUITIES), RETAIL
    )
    assert [f.check for f in findings].count("selectors_reachable") == 1


# A small made-up store for the general selectors: one user, three orders, two products.
def _item(item_id, name, price, product="p_" + "x", **options):
    return {"item_id": item_id, "name": name, "price": price, "product_id": product, "options": options}


def small_db() -> dict:
    orders = {
        "#W1": ("delivered", "Austin", "TX", [_item("11", "Water Bottle", 50.0, capacity="750ml"), _item("12", "Mechanical Keyboard", 200.0), _item("13", "Tablet", 900.0, storage="64GB")]),  # fmt: skip
        "#W2": ("delivered", "Miami", "FL", [_item("21", "Gaming Mouse", 150.0), _item("22", "Pet Bed", 90.0)]),
        "#W3": ("pending", "Miami", "FL", [_item("31", "Bookshelf", 500.0), _item("32", "Action Camera", 500.0, "p_cam", resolution="4K", color="silver")]),  # fmt: skip
    }  # fmt: skip
    db_orders = {
        oid: {
            "order_id": oid,
            "user_id": "u1",
            "status": status,
            "items": items,
            "address": {"address1": "1 Main St", "city": city, "state": state, "zip": "00000"},
            "fulfillments": [{"tracking_id": [f"99{oid[-1]}123456"], "item_ids": [i["item_id"] for i in items]}],
            "payment_history": [{"transaction_type": "payment", "amount": 1.0, "payment_method_id": "gc_1"}],
        }  # fmt: skip
        for oid, (status, city, state, items) in orders.items()
    }
    cameras = {
        "41": ("4K", "black", 480.0), "42": ("4K", "silver", 490.0), "43": ("4K", "black", 520.0), "44": ("4K", "red", 470.0),
    }  # fmt: skip
    variants = {k: {"item_id": k, "price": p, "available": True, "options": {"resolution": r, "color": c}} for k, (r, c, p) in cameras.items()}  # fmt: skip
    return {
        "users": {"u1": {"orders": list(orders), "payment_methods": {"gc_1": {"id": "gc_1", "source": "gift_card"}}}},
        "orders": db_orders,
        "products": {"p_cam": {"product_id": "p_cam", "name": "Action Camera", "variants": variants}},
    }


def small_card(demand: str, actions: list, info: tuple[str, ...] = (), items: tuple[str, ...] = ()) -> dict:
    fields = [{"token": "user_id", "kind": "identity", "value": "u1", "spans": ["u1"]}]
    return {
        "task_id": "9001",
        "fields": fields + [{"token": f"item:{v}", "kind": "item", "value": v, "spans": [v]} for v in items],
        "opening_line": "",
        "requests": [{"demand": demand, "fallbacks": [], "covers": [0]}],
        "reference_actions": [{"name": n, "arguments": a} for n, a in actions],
        "information_channel": {"communicate_info": list(info), "nl_assertions": []},
        "source": {"instructions": {"reason_for_call": demand}},
    }


def reach(demand, actions, info=()):
    return check_selectors_reachable(small_card(demand, actions, info), small_db(), {})


RETURN_W1 = [
    ("return_delivered_order_items", {"order_id": "#W1", "item_ids": ["11", "13"], "payment_method_id": "gc_1"})
]


def test_exclusion_names_the_lines_and_orders_left_out():
    """ "Everything except a keyboard and a mouse": the keyboard line and the mouse's order are no
    alternatives; without the exclusion nothing tells them apart."""
    verdict, detail = reach("Return everything except a keyboard, a mouse and a pet bed, but keep quiet.", RETURN_W1)
    assert verdict == "pass", detail
    verdict, detail = reach("Return everything except a keyboard and a mouse.", RETURN_W1)  # not the pet bed
    assert verdict == "fail" and "order_id=#W1" in detail and "item_ids[0]=11" not in detail
    verdict, detail = reach("Return everything except a mouse and a pet bed.", RETURN_W1)  # not the keyboard
    assert verdict == "fail" and "item_ids[0]=11" in detail and "12 (Mechanical Keyboard)" in detail
    assert "order_id=#W1" not in detail  # the mouse's order is excluded whole


def test_relations_name_an_order_by_what_it_holds_or_where_it_went():
    cancel_w3 = [("cancel_pending_order", {"order_id": "#W3", "reason": "ordered by mistake"})]
    db = small_db()
    db["orders"]["#W2"]["status"] = "pending"
    for demand, verdict in [
        ("Cancel the whole order with the book shelf.", "pass"),
        ("Cancel the whole order.", "fail"),
    ]:
        assert check_selectors_reachable(small_card(demand, cancel_w3), db, {})[0] == verdict, demand  # Bookshelf
    # #W2 and #W3 both went to Florida: the state tells #W1 apart from both, not #W2 from #W3.
    tracking_w1 = [("get_order_details", {"order_id": "#W1"})]
    assert reach("Tell me the tracking number of the order sent to Texas.", tracking_w1, ("991123456",))[0] == "pass"
    verdict, detail = reach("Tell me the tracking number of the order sent to Florida.", tracking_w1, ("991123456",))
    assert verdict == "fail" and "read off #W1" in detail
    # "your other order": not the one holding the item named.
    address_w3 = [("modify_pending_order_address", {"order_id": "#W3", "address1": "2 Elm St", "city": "Austin", "country": "USA", "state": "TX", "zip": "1"})]  # fmt: skip
    card = small_card("You bought a pet bed. Change the address of your other order.", address_w3)
    assert check_selectors_reachable(card, db, {})[0] == "pass"
    card = small_card("You bought a pet bed. Change the address of the order.", address_w3)
    assert check_selectors_reachable(card, db, {})[0] == "fail"


def test_an_answer_is_read_off_the_line_asked_about():
    """An answer's line is named by the item the question is about; a write's line is not."""
    tracking = [("get_order_details", {"order_id": "#W1"})]
    assert reach("Ask for the storage of the tablet you ordered.", tracking, ("64GB",))[0] == "pass"
    verdict, detail = reach("Ask for the storage you ordered.", tracking, ("64GB",))
    assert verdict == "fail" and "read off line 13" in detail
    verdict, detail = reach("Return the water bottle and the tablet.", RETURN_W1)  # a field must name them
    assert verdict == "fail" and "item_ids[0]=11" in detail


EXCHANGE_CAMERA = [("modify_pending_order_items", {"order_id": "#W3", "item_ids": ["32"], "new_item_ids": ["41"], "payment_method_id": "gc_1"})]  # fmt: skip


def test_budget_and_same_option_as_another_item_compare_with_the_records():
    """ "Within the previous price" removes dearer variants (not cheaper ones); "the same colour as
    your other camera" copies one option from another item the customer has."""
    other = {"item_id": "45", "name": "Action Camera", "price": 400.0, "product_id": "p_cam", "options": {"resolution": "1080p", "color": "black"}}  # fmt: skip
    db = small_db()
    db["orders"]["#W2"]["items"].append(other)
    db["products"]["p_cam"]["variants"]["43"]["options"]["resolution"] = "8K"

    def check(demand):
        return check_selectors_reachable(small_card(demand, EXCHANGE_CAMERA, items=("camera",)), db, {})

    demand = "Exchange the camera for one with the same colour as your other camera, within the previous price."
    assert check(demand)[0] == "pass", check(demand)
    verdict, detail = check("Exchange the camera, within the previous price.")
    assert verdict == "fail" and "44 (Action Camera, color red)" in detail and "43 (" not in detail
    verdict, detail = check("Exchange the camera for the colour of your other camera, within the previous price.")
    assert verdict == "fail" and "42 (Action Camera, color silver)" in detail


def test_just_bought_is_the_latest_order():
    cancel_w3 = [("cancel_pending_order", {"order_id": "#W3", "reason": "ordered by mistake"})]
    db = small_db()
    db["orders"]["#W2"]["status"] = "pending"
    assert check_selectors_reachable(small_card("Cancel the order you just placed.", cancel_w3), db, {})[0] == "pass"
    assert check_selectors_reachable(small_card("Cancel the order you placed.", cancel_w3), db, {})[0] == "fail"
