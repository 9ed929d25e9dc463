"""The card audit flags unfaithful cards."""

import copy

from incognita.access.cards.audit import audit_card
from incognita.access.cards.card import build_card


def verdicts(c, db, vocabulary):
    return {f.check: (f.verdict, f.detail) for f in audit_card(c, db, vocabulary)}


def test_rule_built_cards_pass_the_hard_checks(tasks, db, meta, vocabulary):
    for task_id, task in tasks.items():
        v = verdicts(build_card(task, db, meta), db, vocabulary)
        for check in ("fields_in_source", "write_values_sourced", "requests_cover_demands", "requests_invent_nothing"):
            assert v[check][0] == "pass", (task_id, check, v[check])


def test_invented_field_is_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["0"], db, meta)
    c["fields"].append({"token": "phone", "kind": "identity", "value": "555-0100", "spans": ["555-0100"]})
    verdict, detail = verdicts(c, db, vocabulary)["fields_in_source"]
    assert verdict == "fail" and "phone" in detail


def test_write_argument_without_releasable_source_is_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["59"], db, meta)  # the new address exists only in the customer's instructions
    c["fields"] = [f for f in c["fields"] if f["token"] != "address1"]
    verdict, detail = verdicts(c, db, vocabulary)["write_values_sourced"]
    assert verdict == "fail" and "address1='1234 Elm St'" in detail


def test_uncovered_demand_and_invented_request_value_are_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["2"], db, meta)
    bad = copy.deepcopy(c)
    bad["requests"] = bad["requests"][1:]
    assert verdicts(bad, db, vocabulary)["requests_cover_demands"][0] == "fail"
    bad = copy.deepcopy(c)
    bad["requests"][0]["demand"] = "Ask for a refund of $999 on order #W0000001."
    verdict, detail = verdicts(bad, db, vocabulary)["requests_invent_nothing"]
    assert verdict == "fail" and "999" in detail


def test_missing_information_request_is_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["2"], db, meta)
    c["requests"] = [{"demand": "Return the cleaner.", "fallbacks": [], "covers": [0, 1]}]
    assert verdicts(c, db, vocabulary)["info_requested"][0] == "fail"
