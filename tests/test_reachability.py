"""The audit's selectors_reachable check (incognita.reachability): a choice the customer cannot
tell apart fails, and the field that repairs it makes it pass."""

import copy
import json
from pathlib import Path

import pytest

from incognita.audit import audit_card
from incognita.cards import build_card
from incognita.common.io import InputError
from incognita.reachability import _Said, load_ambiguities


def verdicts(c, db, vocabulary):
    return {f.check: (f.verdict, f.detail) for f in audit_card(c, db, vocabulary)}


CARDS_V1 = Path(__file__).parent / "fixtures" / "cards_v1"
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
    card = build_card(tasks["100"], db, meta)
    verdict, detail = verdicts(card, db, vocabulary)["selectors_reachable"]
    reason = load_ambiguities()["100"]["modify_pending_order_items.payment_method_id"]
    assert verdict == "warn" and detail.startswith(f"ambiguous upstream: {reason}")
    # Unlisted, the same choice fails: the gold pays with a card the order was not paid with.
    findings = {f.check: f for f in audit_card(card, db, vocabulary, ambiguities={})}
    assert findings["selectors_reachable"].verdict == "fail"
    assert "modify_pending_order_items.payment_method_id=credit_card_3261838" in findings["selectors_reachable"].detail


def test_one_finding_per_card(tasks, db, meta, vocabulary):
    findings = audit_card(build_card(tasks["0"], db, meta), db, vocabulary)
    assert [f.check for f in findings].count("selectors_reachable") == 1


@pytest.mark.parametrize(
    "text, named",
    [
        ('"100": [{argument: cancel_pending_order.reason, reason: x, note: y}]', "unknown key 'note'"),
        ("'100': [{argument: cancel_pending_order.reason}]", "reason"),
        ("'100': [{argument: fly_away.order_id, reason: x}]", "fly_away.order_id"),
        ("abc: [{argument: cancel_pending_order.reason, reason: x}]", "'abc'"),
        ("'100': [{argument: x", "not valid YAML"),
    ],
)
def test_bad_ambiguities_file_names_file_and_key(tmp_path, text, named):
    path = tmp_path / "upstream_ambiguities.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_ambiguities(path)
    assert str(path) in str(err.value) and named in str(err.value)
