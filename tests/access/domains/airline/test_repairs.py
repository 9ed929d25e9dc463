"""The airline's repair overlays (config/domains/airline/repairs/): each loads, states in the
customer's request block what upstream's gold needs and the source never tells the customer,
and so makes a choice the audit could not reach reachable and puts the customer's words into the
golden provenance; what no overlay can settle stays in upstream_ambiguities.yaml."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from incognita.access.cards import audit
from incognita.access.cards.audit import load_ambiguities
from incognita.access.cards.repairs import apply_overlay, load_overlay
from incognita.access.domains.airline import card_checks
from incognita.access.domains.airline.source_words import source_text
from incognita.access.native.native_run import native_task
from incognita.common.io import InputError, read_json

ROOT = Path(__file__).resolve().parents[4]
CONFIG = ROOT / "config" / "domains" / "airline"
REPAIRS = CONFIG / "repairs"
# Task -> the upstream value its overlay states, and the words the customer states it in.
STATED = {
    "7": ("credit_card_2408938", "credit card ending in 2135"),
    "29": ("credit_card_8003957", "credit card ending in 6521"),
    "32": ("credit_card_9659780", "credit card ending in 1777"),
    "44": ("credit_card_4196779", "credit card ending in 7238"),
}


def _overlays() -> dict[str, dict]:
    return {p.stem: load_overlay(p, known_tasks={str(n) for n in range(50)}) for p in sorted(REPAIRS.glob("*.yaml"))}


def _row(audit_rows: list[dict], task: str, check: str) -> dict:
    (row,) = [r for r in audit_rows if r["task"] == task and r["check"] == check]
    return row


def test_the_overlays_and_what_each_states():
    overlays = _overlays()
    assert sorted(overlays, key=int) == ["7", "23", "29", "32", "33", "44"]
    for task, overlay in overlays.items():
        text = " ".join(t for r in overlay.get("requests", []) for t in [r["demand"], *r.get("fallbacks", [])])
        for field in overlay.get("add_fields", []):
            # a value the source never tells is stated in the request block, for upstream's gold
            assert field["from_gold"] and field["value"] in text, (task, field["token"])


@pytest.mark.parametrize("task", sorted(STATED, key=int))
def test_a_payment_the_source_never_names_is_the_customers_own_card(task, cards, stages):
    """Each stated card is one of the customer's own, the one the gold pays with."""
    db = read_json(stages / "source" / "db.json")
    gold_id, words = STATED[task]
    (field,) = [f for f in cards[task]["fields"] if f["kind"] == "payment"]
    assert field["value"] == words and field["from_gold"].endswith(".payment_id")
    paid = {a["arguments"]["payment_id"] for a in cards[task]["reference_actions"] if "payment_id" in a["arguments"]}
    assert paid == {gold_id}
    (user,) = [u for u in db["users"].values() if gold_id in u["payment_methods"]]
    assert words.endswith(user["payment_methods"][gold_id]["last_four"])
    assert cards[task]["card_version"] == 2


@pytest.mark.parametrize("task", sorted(STATED, key=int))
def test_the_repaired_payment_is_reachable_and_was_not_before(task, cards, stages, audit_rows):
    """The rule-built card (cards/v1/) cannot say which card pays, and the ambiguity is no longer
    listed: it fails; the repaired card passes."""
    db = read_json(stages / "source" / "db.json")
    known = load_ambiguities(CONFIG / "upstream_ambiguities.yaml").get(task, {})
    v1 = read_json(stages / "cards" / "v1" / f"{task}.json")
    verdict, detail = card_checks.check_choices_reachable(v1, db, known)[1:]
    assert verdict == "fail" and "payment_id" in detail
    assert _row(audit_rows, task, "choices_reachable")["verdict"] == "pass"
    row = _row(audit_rows, task, "fields_in_source")
    assert row["verdict"] == "pass" and "stated by the repair for upstream's gold: payment" in row["detail"]


@pytest.mark.parametrize("task", ["32", "44"])
def test_the_golden_payment_is_selected_by_the_customers_words(task, golden):
    """Where the gold's card is one of the profile's several (not the reservation's own), the read
    that sources it is selected by the card the customer states; without the overlay, by nothing."""
    provs = [p for call in golden[task]["calls"] for ptr, p in call["provenance"].items() if ptr.endswith("payment_id")]
    assert provs and all(p["kind"] == "read" and p["selected_by"] == ["payment"] for p in provs)


def test_companions_are_booked_with_the_details_the_customer_states(cards, golden):
    """Task 23: Aarav and Evelyn get the last names and birth dates the customer states, not those
    of the saved passengers (Raj Sanchez, Liam Wilson) the gold's values coincide with."""
    fields = {f["token"]: f for f in cards["23"]["fields"]}
    assert fields["passenger"]["value"] == "Aarav Sanchez" and fields["dob"]["value"] == "1986-09-12"
    assert fields["passenger_2"]["value"] == "Evelyn Wilson" and fields["dob_2"]["value"] == "1980-03-27"
    books = [c for c in golden["23"]["calls"] if c["name"] == "book_reservation"]
    got = [
        (
            b["provenance"]["/passengers/0/first_name"]["token"],
            b["provenance"]["/passengers/0/last_name"]["token"],
            b["provenance"]["/passengers/0/dob"]["token"],
        )
        for b in books[1:]
    ]
    assert got == [("passenger", "passenger", "dob"), ("passenger_2", "passenger_2", "dob_2")]
    for b in books[1:]:
        assert all(p["kind"] == "field" for k, p in b["provenance"].items() if k.startswith("/passengers/"))


def test_what_no_overlay_settles_stays_listed():
    """A policy-breaking gold (29's destination, 33's bag charge), a birth date against the
    customer's records (35) and an item to tell the gold's booking contradicts (14)."""
    known = load_ambiguities(CONFIG / "upstream_ambiguities.yaml")
    assert {t: sorted(a) for t, a in known.items()} == {
        "14": ["communicate_info"],
        "29": ["update_reservation_flights.flights"],
        "33": ["update_reservation_baggages.nonfree_baggages"],
        "35": ["book_reservation.passengers"],
    }
    for task, overlay in _overlays().items():
        settled = {f["from_gold"] for f in overlay.get("add_fields", [])}
        assert not settled & set(known.get(task, {})), task


def test_the_native_run_tells_the_customer_what_the_overlay_states(tasks, cards):
    task = native_task(tasks["7"], cards["7"])
    assert "credit card ending in 2135" in task.user_scenario.instructions.reason_for_call
    assert (
        "2135" not in native_task(tasks["7"], {**cards["7"], "repairs": []}).user_scenario.instructions.reason_for_call
    )


def test_a_stated_value_must_be_in_the_request_block_and_needed_by_the_gold(cards):
    card = copy.deepcopy(cards["7"])
    assert audit.check_fields_in_source(card, source_text).verdict == "pass"
    assert audit.check_requests_invent_nothing(card, source_text).verdict == "pass"
    # a stated value the request block does not state
    bad = copy.deepcopy(card)
    bad["requests"][0]["fallbacks"].pop()
    assert "not in the request block" in audit.check_fields_in_source(bad, source_text).detail
    # an argument no reference action has
    bad = copy.deepcopy(card)
    next(f for f in bad["fields"] if f.get("from_gold"))["from_gold"] = "book_reservation.payment_methods"
    assert audit.check_fields_in_source(bad, source_text).verdict == "fail"
    # the same words with no from_gold are invented, and their number with them
    bad = copy.deepcopy(card)
    for f in bad["fields"]:
        f.pop("from_gold", None)
    assert audit.check_fields_in_source(bad, source_text).verdict == "fail"
    assert "2135" in audit.check_requests_invent_nothing(bad, source_text).detail


def test_an_overlay_may_not_state_a_field_of_unknown_shape(tmp_path, cards):
    path = tmp_path / "7.yaml"
    overlay = json.loads(json.dumps(_overlays()["7"]))
    overlay["add_fields"][0]["from_gold"] = "payment"
    path.write_text(json.dumps(overlay))
    with pytest.raises(InputError, match="7.yaml"):
        load_overlay(path)
    v1 = copy.deepcopy(cards["7"])
    v1["fields"] = [f for f in v1["fields"] if not f.get("from_gold")]
    assert apply_overlay(v1, _overlays()["7"], REPAIRS / "7.yaml")["card_version"] == 2
