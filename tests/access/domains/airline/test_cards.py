"""The airline's cards (incognita.access.domains.airline.card_rules, card_checks): all 50 upstream
tasks pass the card audit, and the rules and checks do what they say on hand-made cases."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest

from incognita.access.cards.audit import load_ambiguities
from incognita.access.domain import get_domain
from incognita.access.domains.airline import card_checks
from incognita.access.domains.airline import source_words as sw
from incognita.common.io import read_json

ROOT = Path(__file__).resolve().parents[4]
CONFIG = ROOT / "config" / "domains" / "airline"


def test_the_airline_domain_is_registered_with_upstreams_tools():
    airline = get_domain("airline")
    _, toolkit = airline.upstream.classes()
    tools = set(toolkit(None).tools)
    assert set(airline.tool_roles) <= tools
    assert airline.tools_with("arithmetic") == {"calculate"} and not airline.tools_with("identity")
    assert airline.write_tools() == card_checks.WRITE_TOOLS
    assert airline.seed_namespace == "airline"


def test_the_policys_current_time_is_the_date_rules_today(stages):
    policy = (stages / "source" / "policy.md").read_text()
    assert f"The current time is {sw.POLICY_TODAY.isoformat()} " in policy


def test_source_words():
    assert sw.month_day_date("May 26") == "2024-05-26" and sw.month_day_date("May 22nd") == "2024-05-22"
    assert sw.month_day_date("the 19th") == "2024-05-19" and sw.month_day_date("next week") is None
    assert [sw.shift_days(p) for p in ("the day after", "next day", "by one day", "2 days")] == [1, 1, 1, 2]
    assert sw.bag_count("3 checked bags") == 3 and sw.bag_count("one more checked bag") == 1
    assert sw.bag_count("No baggage") == 0 and sw.bag_count("don't have any baggages") == 0
    assert sw.bag_count("free baggage allowance") is None


def test_every_card_passes_the_audit(audit_rows, tasks):
    assert len({r["task"] for r in audit_rows}) == len(tasks) == 50
    fails = [f"{r['task']} {r['check']}: {r['detail']}" for r in audit_rows if r["verdict"] == "fail"]
    assert fails == []
    verdicts = Counter((r["check"], r["verdict"]) for r in audit_rows)
    for check in ("fields_in_source", "conditions_kept", "identities_on_card", "requests_cover_demands"):
        assert verdicts[(check, "pass")] == 50, check
    # A warning is a choice the upstream instructions leave open, each recorded with its reason.
    known = load_ambiguities(CONFIG / "upstream_ambiguities.yaml")
    warned = {r["task"] for r in audit_rows if r["verdict"] == "warn"}
    assert warned <= set(known)


def test_what_a_card_holds(cards):
    """Identity, records, dates, bags, payment and conditions in the customer's own words."""
    card = cards["8"]
    by_kind = {}
    for f in card["fields"]:
        by_kind.setdefault(f["kind"], []).append(f["value"])
    assert by_kind["identity"] == ["Sophia Silva", "sophia_silva_7557"]
    assert "Kevin Smith" in by_kind["passenger"] and "2001-04-12" in by_kind["dob"]
    assert {"ORD", "PHL"} <= set(by_kind["airport"]) and "May 26" in by_kind["date"]
    assert "economy" in by_kind["cabin"] and "one-way" in by_kind["flight_type"]
    assert any(sw.bag_count(v) == 0 for v in by_kind["baggage"]) and by_kind["payment"]
    fallbacks = [fb for r in card["requests"] for fb in r["fallbacks"]]
    assert any(fb.startswith("If and only if the price is above $500") for fb in fallbacks)
    # The opening line names the kind of help only.
    assert card["opening_line"] == "Hi, I need some help: a booking."
    values = [f["value"] for f in card["fields"]]
    assert not any(v in card["opening_line"] for v in values if len(v) > 3)


def test_a_reservation_number_is_a_record_not_a_shape(cards):
    """Six capitals are a reservation only when the database has it; the customer's words for a
    reservation they cannot number are its description."""
    assert [f["value"] for f in cards["0"]["fields"] if f["kind"] == "reservation"] == ["EHGLP3"]
    assert not [f for f in cards["15"]["fields"] if f["kind"] == "reservation"]
    assert {"the day after"} <= {f["value"] for f in cards["15"]["fields"] if f["kind"] == "date_shift"}


def _card(cards, task):
    return copy.deepcopy(cards[task])


def test_the_checks_fail_what_they_guard(cards, stages):
    db = read_json(stages / "source" / "db.json")
    # A condition dropped from the request block.
    card = _card(cards, "10")
    card["sentences"] = [s for s in card["sentences"] if not s.lower().startswith("if and only if")]
    assert card_checks.check_conditions_kept(card)[1] == "fail"
    # A payment the customer never speaks of, among the profile's several methods.
    card = _card(cards, "20")
    card["fields"] = [f for f in card["fields"] if f["kind"] != "payment"]
    verdict, detail = card_checks.check_choices_reachable(card, db, {})[1:]
    assert verdict == "fail" and "book_reservation.payment_id" in detail
    assert card_checks.check_choices_reachable(card, db, {"book_reservation.payment_id": "why"})[1] == "warn"
    # A passenger the source does not name and no record of the task holds.
    card = _card(cards, "8")
    card["fields"] = [f for f in card["fields"] if f["kind"] != "passenger"]
    assert "Kevin Smith" in card_checks.check_choices_reachable(card, db, {})[2]
    # A text value no field, vocabulary term or read gives.
    card = _card(cards, "40")
    card["fields"] = [f for f in card["fields"] if "Mei Garcia" not in f["value"]]
    card["reference_actions"][-1]["arguments"]["passengers"][1]["last_name"] = "Nobody"
    assert card_checks.check_write_values(card, db, {})[1] == "fail"
    # An identity the known information states but the card lacks.
    card = _card(cards, "0")
    card["fields"] = [f for f in card["fields"] if f["token"] != "user_id"]
    assert card_checks.check_identities(card)[1] == "fail"


@pytest.mark.parametrize("task", ["3", "7", "11", "14", "18", "23"])
def test_a_task_that_must_tell_something_asks_for_it(audit_rows, task):
    (row,) = [r for r in audit_rows if r["task"] == task and r["check"] == "info_requested"]
    assert row["verdict"] == "pass"
