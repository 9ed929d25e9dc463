"""The language rules a scripted agent chooses by (incognita.access.domains.retail.scripted.choosing), each on a small
hand-made fixture, and a scan that keeps every scripted rule free of task ids and product names."""

import re
from pathlib import Path

from incognita.access.domains.retail.scripted.choosing import (
    goal_picks,
    match_score,
    negated_terms,
    option_goals,
    option_rank,
    singular,
    superlative,
    superlative_picks,
    terms,
)
from incognita.access.episodes.scripted.language import placeholders, strip_placeholders

ROOT = Path(__file__).resolve().parents[5]


def test_numbers_and_units_are_one_term():
    assert "34 inch" in terms("a skateboard of 34 inch length")
    assert match_score(["34 inch"], ["31 inch", "maple"]) == 0
    assert match_score(["34 inch"], ["34 inch", "maple"]) == 1
    assert "5-25 lbs" in terms("weight range 5-25 lbs")


def test_sizes_match_their_abbreviations():
    assert match_score(["small"], ["S", "blue"]) == 1
    assert match_score(["small"], ["M", "blue"]) == 0
    assert match_score(["extra large"], ["XL"]) == 1
    assert match_score(["extra large"], ["L"]) == 0


def test_singular_and_plural():
    assert singular("bookshelves") == "bookshelf"
    assert singular("batteries") == "battery"
    assert singular("boxes") == "box"
    assert singular("glass") == "glass"
    assert match_score(["bookshelves"], ["Bookshelf"]) == 1


def test_hyphenated_option_words_compare_whole():
    assert "v-neck" in terms("the v-neck one")
    assert match_score(["v-neck"], ["crew neck", "cotton"]) == 0
    assert match_score(["v-neck"], ["v-neck", "cotton"]) == 1


def test_placeholders_are_never_the_customers_words():
    said = "Return the <item:vacuum_cleaner> and the <item:smart_watch> you received."
    assert placeholders(said) == ["item:vacuum_cleaner", "item:smart_watch"]
    assert "vacuum" not in strip_placeholders(said)
    assert match_score([said], ["Vacuum Cleaner", "Smart Watch"]) == 0


def test_a_demand_names_values_in_passing_and_negation_marks_down():
    demand = "exchange the thermostat for one compatible with Google Home instead of Apple HomeKit"
    assert negated_terms([demand]) >= {"apple", "homekit"}
    assert match_score([demand], ["Apple HomeKit", "white"]) < match_score([demand], ["Google Assistant", "white"])
    assert match_score(["return everything except the coffee machine"], ["Coffee Machine"]) < 0


def test_price_superlatives_pick_by_price():
    variants = [
        ("a", {"item_id": "a", "options": {"color": "red"}, "available": True, "price": 30.0}),
        ("b", {"item_id": "b", "options": {"color": "red"}, "available": True, "price": 10.0}),
        ("c", {"item_id": "c", "options": {"color": "red"}, "available": True, "price": 20.0}),
    ]
    assert superlative_picks(superlative(["I want the cheapest one"]), variants, False) == {"b"}
    assert superlative_picks(superlative(["the most expensive option please"]), variants, False) == {"a"}
    lines = [
        ("x", {"item_id": "x", "product_id": "p", "name": "Lamp", "price": 5.0}),
        ("y", {"item_id": "y", "product_id": "q", "name": "Camera", "price": 50.0}),
    ]
    # "item" points at an order's lines: it never picks among variants.
    stated = superlative(["which item in the order costs the most"])
    assert stated == [("price_max", "line")]
    assert superlative_picks(stated, lines, False) == {"y"}
    assert superlative_picks(stated, variants, False) == set()


def test_recency_picks_by_list_position_as_the_database_orders_it():
    orders = [(0, "#W1"), (1, "#W2"), (2, "#W3")]
    assert superlative_picks(superlative(["the order that you most recently placed"]), orders, True) == {2}
    assert superlative_picks(superlative(["my latest order"]), orders, True) == {2}
    assert superlative_picks(superlative(["the first order I placed"]), orders, True) == {0}
    # A dict has no order the database gives: recency picks nothing there.
    assert superlative_picks(superlative(["the most recent"]), orders, False) == set()


def test_option_extremes_and_comparisons():
    assert option_rank("500") == 500 and option_rank("1.5L") == option_rank("1500ml")
    assert option_rank("beginner") < option_rank("expert") and option_rank("S") < option_rank("L")
    assert option_rank("1080p") < option_rank("4K") < option_rank("5K")  # "4K" is four thousand
    jigsaws = [
        ("e", {"options": {"pieces": "500", "difficulty level": "expert"}, "price": 1}),
        ("b", {"options": {"pieces": "500", "difficulty level": "beginner"}, "price": 1}),
        ("i", {"options": {"pieces": "1000", "difficulty level": "intermediate"}, "price": 1}),
    ]
    assert goal_picks(option_goals(["the easiest one"]), jigsaws, None) == {"b": 1}
    assert goal_picks(option_goals(["the one with the fewest pieces"]), jigsaws, None) == {"e": 1, "b": 1}
    lamps = [
        ("low", {"options": {"brightness": "low"}, "price": 1}),
        ("med", {"options": {"brightness": "medium"}, "price": 1}),
        ("high", {"options": {"brightness": "high"}, "price": 1}),
    ]
    old = {"options": {"brightness": "medium"}}
    assert goal_picks(option_goals(["a less bright one"]), lamps, old) == {"low": 1}
    assert goal_picks(option_goals(["a brighter one"]), lamps, old) == {"high": 1}
    # A comparison names an option the entries must have; otherwise it says nothing here.
    assert goal_picks(option_goals(["a bigger one"]), lamps, old) == {}


SCRIPTED = [
    "incognita/access/domains/retail/scripted/agent.py",
    "incognita/access/domains/retail/scripted/choosing.py",
    "incognita/access/domains/retail/scripted/picking.py",
    "incognita/access/domains/retail/scripted/relations.py",
    "incognita/access/domains/retail/scripted/comparing.py",
    "incognita/access/domains/retail/scripted/sets.py",
    "incognita/access/domains/retail/scripted/wording.py",
    "incognita/access/domains/retail/scripted/same_item.py",
    "incognita/access/domains/retail/scripted/telling.py",
    "incognita/access/episodes/scripted/scripted_agent.py",
    "incognita/access/episodes/scripted/scripted_customer.py",
    "incognita/access/episodes/scripted/scripted_desk.py",
    "incognita/access/episodes/scripted/discovery.py",
    "incognita/access/episodes/scripted/conditions.py",
    "incognita/access/episodes/scripted/reconsidering.py",
    "incognita/access/episodes/scripted/picks.py",
    "incognita/access/episodes/scripted/language.py",
    "incognita/access/episodes/loop/agent_plan.py",
]


def _code_only(path: Path) -> str:
    """The module without its comments and docstrings (prose may give an example)."""
    text = re.sub(r'"""[\s\S]*?"""', "", path.read_text(encoding="utf-8"))
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def test_no_scripted_rule_names_a_task_an_id_or_a_product(db):
    """The choosing rules must be general: no literal task id, catalogue id or product name
    in the code of the scripted participants (issue #23)."""
    names = {p["name"].lower() for p in db["products"].values()}
    ids = set(db["products"]) | {i for p in db["products"].values() for i in p["variants"]} | set(db["orders"])
    ids |= {o.lstrip("#") for o in db["orders"]} | set(db["users"])
    for rel in SCRIPTED:
        code = _code_only(ROOT / rel).lower()
        strings = re.findall(r"[\"']([^\"'\n]{2,})[\"']", code)
        for s in strings:
            for name in names:
                assert not re.search(rf"\b{re.escape(name)}\b", s), f"{rel}: a string names the product {name!r}: {s!r}"
        for ident in ids:
            assert ident.lower() not in code, f"{rel}: names the id {ident!r}"
        tasks = re.findall(r"\btask\w*\s*(?:==|in|!=)\s*[\"'(\[]\s*[\"']?\d+", code)
        assert not tasks, f"{rel}: compares with a task id: {tasks}"
