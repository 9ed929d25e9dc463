"""The retail card rules (incognita.access.domains.retail.card_rules, through the generic
builder incognita.access.cards.card.build_card) on tasks of each kind."""

import pytest

from incognita.access.cards.card import build_card, validate_card
from incognita.access.domain import get_domain

RETAIL = get_domain("retail")


def card(tasks, db, meta, task_id):
    c = build_card(tasks[task_id], db, meta, RETAIL)
    validate_card(c, f"card {task_id}")
    return c


def fields(c):
    return {f["token"]: f["value"] for f in c["fields"]}


def test_all_114_cards_are_schema_valid(tasks, db, meta):
    for task_id in tasks:
        card(tasks, db, meta, task_id)


def test_exchange_card(tasks, db, meta):
    c = card(tasks, db, meta, "0")
    f = fields(c)
    assert f["name"] == "Yusuf Rossi" and f["zip"] == "19122" and f["order_id"] == "#W2378156"
    assert f["item:mechanical_keyboard"].split("; ")[0] == "mechanical keyboard"
    assert "clicky" in f["preference:mechanical_keyboard"]
    assert c["reference_actions"][-1]["name"] == "exchange_delivered_order_items"
    # The opening line says what kind of help, and never a field value.
    assert "exchange" in c["opening_line"]
    assert not any(v.lower() in c["opening_line"].lower() for v in f.values())


def test_return_card_with_information_channel(tasks, db, meta):
    c = card(tasks, db, meta, "2")
    assert {"item:vacuum_cleaner", "item:headphones", "item:smart_watch"} <= set(fields(c))
    assert c["information_channel"]["communicate_info"] == ["10"]


def test_cancel_card_has_reason_and_items(tasks, db, meta):
    c = card(tasks, db, meta, "16")  # cancel all pending orders 'since they are no longer needed'
    f = fields(c)
    assert f["reason"].lower().startswith("no longer need")
    assert any(a["name"] == "cancel_pending_order" for a in c["reference_actions"])


def test_modify_items_card(tasks, db, meta):
    f = fields(card(tasks, db, meta, "15"))  # pending boots to size 8
    assert "item:hiking_boots" in f


def test_modify_address_card_keeps_literal_address(tasks, db, meta):
    f = fields(card(tasks, db, meta, "17"))
    assert f["address2"] == "Suite 641" and f["order_id"] == "#W8665881"


def test_modify_payment_card(tasks, db, meta):
    task_id = next(
        t
        for t, task in tasks.items()
        if any(a["name"] == "modify_pending_order_payment" for a in task["evaluation_criteria"]["actions"] or [])
    )
    c = card(tasks, db, meta, task_id)
    assert any(f["kind"] == "payment" for f in c["fields"]), c["fields"]


def test_user_id_email_and_several_orders(tasks, db, meta):
    f = fields(card(tasks, db, meta, "46"))
    assert f["user_id"] == "daiki_johnson_9523"
    assert f["order_id"] == "9502126" and f["order_id_2"] == "9502127"


@pytest.mark.parametrize("task_id", ["24", "57"])
def test_tasks_without_reference_actions(tasks, db, meta, task_id):
    c = card(tasks, db, meta, task_id)
    assert c["reference_actions"] == []
    assert c["requests"] and c["fields"]


def test_information_request_from_persona_text(tasks, db, meta):
    c = card(tasks, db, meta, "108")  # 'You want to know how much money you can get back' sits in the persona
    assert any("how much money" in r["demand"] for r in c["requests"])


def test_withholding_instruction_is_detected(tasks, db, meta):
    assert card(tasks, db, meta, "12")["withholds_disclosure"] is True
    assert card(tasks, db, meta, "3")["withholds_disclosure"] is False  # a private persona is not withholding


# --------------------------------------------------------------------------- selector rules (issue #23)
# Small made-up database and tasks: one rule per test, independent of the upstream data.

META = {"package": "test", "version": "0", "tasks_sha256": "0" * 64}


def mini_db() -> dict:
    def variant(item_id, price, available=True, **options):
        return {"item_id": item_id, "options": options, "available": available, "price": price}

    products = {
        "p1": {
            "name": "T-Shirt",
            "product_id": "p1",
            "variants": {
                "t1": variant("t1", 20.0, color="blue", size="S", style="v-neck"),
                "t2": variant("t2", 25.0, color="purple", size="S", style="v-neck"),
                "t3": variant("t3", 22.0, color="purple", size="M", style="crew neck"),
                "t4": variant("t4", 19.0, color="red", size="XL", style="crew neck"),
            },
        },
        "p2": {
            "name": "Vacuum Cleaner",
            "product_id": "p2",
            "variants": {
                "v1": variant("v1", 300.0, type="robotic"),
                "v2": variant("v2", 200.0, type="canister"),
            },
        },
        "p3": {
            "name": "Bookshelf",
            "product_id": "p3",
            "variants": {"b1": variant("b1", 90.0, height="5 ft"), "b2": variant("b2", 80.0, height="3 ft")},
        },
        "p4": {
            "name": "Skateboard",
            "product_id": "p4",
            "variants": {"s1": variant("s1", 100.0, length="34 inch"), "s2": variant("s2", 110.0, length="31 inch")},
        },
    }

    def line(item_id):
        pid, product = next((k, p) for k, p in products.items() if item_id in p["variants"])
        v = product["variants"][item_id]
        return {
            "item_id": item_id,
            "product_id": pid,
            "name": product["name"],
            "options": v["options"],
            "price": v["price"],
        }

    orders = {
        "#W0000001": {
            "order_id": "#W0000001",
            "user_id": "ann_lee_1234",
            "status": "delivered",
            "items": [line("v1"), line("v2"), line("b1")],
        },
        "#W0000002": {
            "order_id": "#W0000002",
            "user_id": "ann_lee_1234",
            "status": "pending",
            "items": [line("t1"), line("t4"), line("s2")],
        },
        "#W0000003": {"order_id": "#W0000003", "user_id": "bo_kim_5678", "status": "pending", "items": [line("b2")]},
    }
    users = {
        "ann_lee_1234": {"user_id": "ann_lee_1234", "orders": ["#W0000001", "#W0000002"]},
        "bo_kim_5678": {"user_id": "bo_kim_5678", "orders": ["#W0000003"]},
    }
    return {"products": products, "orders": orders, "users": users}


def mini_task(reason: str, actions: list[dict], known: str = "You are ann_lee_1234.") -> dict:
    return {
        "id": "900",
        "user_scenario": {
            "instructions": {
                "known_info": known,
                "reason_for_call": reason,
                "unknown_info": None,
                "task_instructions": None,
            }
        },
        "evaluation_criteria": {
            "actions": [{"action_id": f"a{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(actions)]
        },
    }


def mini_fields(reason: str, actions: list[tuple[str, dict]], **kw) -> dict:
    c = build_card(mini_task(reason, actions, **kw), mini_db(), META, RETAIL)
    validate_card(c, "mini card")
    from incognita.access.cards.text import contains_span
    from incognita.access.domains.retail.source_words import source_text

    text = source_text(c["source"]["instructions"])
    assert all(contains_span(text, s) for f in c["fields"] for s in f["spans"])  # fields_in_source
    return {f["token"]: f["value"] for f in c["fields"]}


def ret(order, *items):
    return ("return_delivered_order_items", {"order_id": order, "item_ids": list(items), "payment_method_id": "x"})


def mod(order, olds, news):
    return (
        "modify_pending_order_items",
        {"order_id": order, "item_ids": olds, "new_item_ids": news, "payment_method_id": "x"},
    )


def test_item_field_carries_the_option_values_stated_for_the_line():
    f = mini_fields(
        "You want to return a vacuum cleaner. If the agent asks you for which vacuum cleaner, mention the robotic one.",
        [ret("#W0000001", "v1")],
    )
    assert f["item:vacuum_cleaner"] == "vacuum cleaner; robotic"


def test_size_words_and_abbreviations_are_one_value():
    from incognita.access.domains.retail.source_words import find_option

    f = mini_fields(
        "You want to modify your pending small tshirt to purple, same size, same v-neck.",
        [mod("#W0000002", ["t1"], ["t2"])],
    )
    assert f["item:t_shirt"] == "tshirt; small; v-neck"  # 'same v-neck' describes the line too
    assert f["preference:t_shirt"] == "purple; small; v-neck"
    assert find_option("an XL one", "size", "XL") == "XL"
    assert find_option("an extra large one", "size", "XL") == "extra large"
    assert find_option("an extra large one", "size", "L") is None  # 'large' inside 'extra large'
    assert find_option("the s size please", "size", "S") == "s size"
    assert find_option("{'color': 'blue', 'size': 'S'}", "size", "S") == "'size': 'S'"
    # a bare single letter is no size: a possessive, a plural
    assert find_option("the user's order, all sizes", "size", "S") is None
    assert find_option("it is a small backpack", "size", "small") == "small"


def test_numbers_with_units_match_as_a_whole():
    from incognita.access.domains.retail.source_words import find_option, states_option

    assert find_option("the 34-inch skateboard", "length", "34 inch") == "34-inch"
    assert find_option("the 34 inches one", "length", "34 inch") == "34 inches"
    assert find_option("the 34 inch skateboard", "length", "31 inch") is None
    assert find_option("a 2 liters kettle", "capacity", "2L") == "2 liters"
    assert find_option("weights of 5-25 lbs", "weight range", "25 lbs") is None
    # a bare number only next to the option's name
    assert find_option("boots in size 10", "size", "10") == "size 10"
    assert find_option("the 1000-piece puzzle", "pieces", "1000") == "1000-piece"
    assert find_option("it cost $1000 for 10 things", "pieces", "1000") is None
    assert states_option("34 inch", "length", "34 inch") and not states_option("34 inch", "length", "31 inch")
    f = mini_fields("You want to modify the 31 inch skateboard to the longer one.", [mod("#W0000002", ["s2"], ["s1"])])
    assert f["item:skateboard"] == "skateboard; 31 inch"


def test_hyphenated_values_match_whole():
    from incognita.access.domains.retail.source_words import find_option, states_option

    assert find_option("a v-neck tshirt", "style", "v-neck") == "v-neck"
    assert find_option("a v neck tshirt", "style", "v-neck") == "v neck"
    assert find_option("a v-neck tshirt", "style", "neck") is None
    assert find_option("a v-neck tshirt", "style", "crew neck") is None
    assert not states_option("v-neck", "style", "crew neck")


def test_plurals_find_the_product():
    from incognita.access.domains.retail.source_words import find_product, word_forms

    assert find_product("return all bookshelves", "Bookshelf") == "bookshelves"
    assert "batteries" in word_forms("battery") and "battery" in word_forms("batteries")
    assert "watches" in word_forms("watch") and "boot" in word_forms("boots")
    f = mini_fields("You want to return all bookshelves.", [ret("#W0000001", "b1")])
    assert f["item:bookshelf"] == "bookshelves"


def test_a_value_in_the_request_describes_the_new_item_not_the_line():
    f = mini_fields(
        "You want to modify the tshirt to a purple one (prefer v-neck over crew neck).",
        [mod("#W0000002", ["t4"], ["t2"])],
    )
    assert f["item:t_shirt"] == "tshirt"  # 'crew neck' is named as a candidate, after 'to'
    assert f["preference:t_shirt"] == "purple; v-neck"


def test_price_superlative_joins_the_preference():
    f = mini_fields("You want to modify your tshirt to the cheapest one.", [mod("#W0000002", ["t1"], ["t4"])])
    assert f["preference:t_shirt"] == "cheapest"
    f = mini_fields(
        "You want to modify your tshirt to purple. If several are available, choose the most expensive one.",
        [mod("#W0000002", ["t1"], ["t2"])],
    )
    assert f["preference:t_shirt"] == "purple; most expensive"  # a fallback sentence of the demand
    # a superlative about order lines is no preference for a variant
    f = mini_fields(
        "You wonder what the most expensive item is. Change the tshirt to purple.", [mod("#W0000002", ["t1"], ["t2"])]
    )
    assert f["preference:t_shirt"] == "purple"


def test_recency_selector_only_when_the_reference_picks_one_of_several_orders():
    reason = "You want to check how much you paid for the order that you most recently placed."
    f = mini_fields(reason, [("get_order_details", {"order_id": "#W0000002"})])
    assert f["which_order"] == "most recently placed"
    # the order is named, or the customer has one order only: nothing to pick
    f = mini_fields(reason + " It is #W0000002.", [("get_order_details", {"order_id": "#W0000002"})])
    assert "which_order" not in f
    f = mini_fields(reason, [("get_order_details", {"order_id": "#W0000003"})], known="You are bo_kim_5678.")
    assert "which_order" not in f
    from incognita.access.domains.retail.source_words import recency_end

    assert recency_end("your latest order") == "last" and recency_end("the earliest one") == "first"
    assert recency_end("recently delivered") is None


def test_the_selectors_the_audit_found_are_releasable(tasks, db, meta, repaired_card):
    """Issue #23 item 1: each selector the source states for a golden argument is a field."""
    f = fields(card(tasks, db, meta, "46"))
    assert f["item:vacuum_cleaner"] == "vacuum cleaner; robotic"
    f = fields(card(tasks, db, meta, "3"))
    assert f["item:t_shirt"] == "tshirt; small; v-neck"
    assert f["preference:t_shirt"] == "purple; small; polyester; v-neck"
    rule_built = fields(card(tasks, db, meta, "1"))
    assert rule_built["item:smart_thermostat"] == "smart thermostat; Apple HomeKit"
    assert "preference:smart_thermostat" not in rule_built  # the catalog says 'Google Assistant'
    repaired = repaired_card("1")
    validate_card(repaired, "card 1 repaired")
    pref = next(x for x in repaired["fields"] if x["token"] == "preference:smart_thermostat")
    assert pref["value"] == "Google Home" and pref["kind"] == "preference" and repaired["card_version"] == 2
    f = fields(card(tasks, db, meta, "104"))
    assert f["item:bookshelf"] == "bookshelves"
    for task_id in ("67", "68"):
        c = card(tasks, db, meta, task_id)
        (sel,) = [x for x in c["fields"] if x["kind"] == "selector"]
        assert sel["token"] == "which_order" and sel["value"] == "most recently placed"
