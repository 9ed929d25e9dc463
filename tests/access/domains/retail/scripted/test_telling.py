"""The rules by which a scripted agent works out what it tells the customer (telling.py)."""

from incognita.access.domains.retail.scripted.telling import (
    asks_which_paid,
    cheapest_lines,
    counted_lines,
    paid_with,
    saving,
)


def _line(item_id, name, price=10.0, product="p1", **options):
    return {"name": name, "product_id": product, "item_id": item_id, "price": price, "options": options}


def _order(order_id, *lines, history=()):
    return {"order_id": order_id, "items": list(lines), "payment_history": list(history)}


def test_the_method_an_order_was_paid_with_is_its_first_payment():
    changed = _order(
        "#1",
        _line("1", "Lamp"),
        history=[
            {"transaction_type": "payment", "amount": 10.0, "payment_method_id": "card_a"},
            {"transaction_type": "payment", "amount": 10.0, "payment_method_id": "card_b"},
            {"transaction_type": "refund", "amount": 10.0, "payment_method_id": "card_a"},
        ],
    )
    assert paid_with([{"user_id": "u"}, changed]) == "card_a"
    assert paid_with([changed, _order("#2", _line("2", "Mug"))]) is None  # which order is not settled
    assert asks_which_paid(["For your recent order, whether you used your visa or amex card."])
    assert not asks_which_paid(["You want to know your gift card balance."])


def test_lines_counted_by_name_come_from_the_one_order_holding_that_many():
    one = _order("#1", _line("1", "T-Shirt", material="cotton"), _line("2", "Grill"))
    two = _order("#2", _line("3", "T-Shirt", material="cotton"), _line("4", "T-Shirt", material="polyester"))
    asked = ["Ask which two t-shirts you have ordered in another order, and what materials they are."]
    assert [line["item_id"] for line in counted_lines(asked, [one, two])] == ["3", "4"]
    assert counted_lines(["Ask which three t-shirts you ordered."], [one, two]) == []
    assert counted_lines(["Ask which two t-shirts you ordered."], [two, dict(two, order_id="#3")]) == []


def test_the_saving_of_the_cheapest_version_is_of_the_lines_the_change_names():
    order = _order(
        "#1",
        _line("1", "Water Bottle", 54.0, "pw"),
        _line("2", "Pet Bed", 195.11, "pb"),
        _line("3", "Office Chair", 499.28, "pc"),
    )
    asked = ["You want to return the water bottle, and exchange the pet bed and office chair to the cheapest version."]
    assert [line["item_id"] for line in cheapest_lines(asked, [order])] == ["2", "3"]
    assert cheapest_lines(["Return the pet bed."], [order]) == []
    product = {
        "product_id": "pc",
        "variants": {
            "a": {"price": 499.28, "available": True},
            "b": {"price": 471.82, "available": True},
            "c": {"price": 466.44, "available": False},  # not one it can change to
        },
    }
    assert saving(order["items"][2], product) == 27.46
    assert saving(order["items"][2], None) is None


def test_the_telling_rules_name_no_product_and_no_id(db):
    """Like the scan of the other scripted modules (test_choosing.py): general rules only."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[5] / "incognita/access/domains/retail/scripted/telling.py").read_text(
        encoding="utf-8"
    )
    code = "\n".join(line.split("#", 1)[0] for line in re.sub(r'"""[\s\S]*?"""', "", text).splitlines()).lower()
    names = {p["name"].lower() for p in db["products"].values()}
    ids = set(db["products"]) | {i for p in db["products"].values() for i in p["variants"]} | set(db["orders"])
    for s in re.findall(r"[\"']([^\"'\n]{2,})[\"']", code):
        assert not any(re.search(rf"\b{re.escape(n)}\b", s) for n in names), s
    assert not [i for i in ids | set(db["users"]) if i.lower() in code]
