"""The card audit flags unfaithful cards (the generic checks of incognita.access.cards.audit, on
retail cards) and refuses a malformed upstream-ambiguities file."""

import copy

import pytest

from incognita.access.cards.audit import audit_card, load_ambiguities
from incognita.access.cards.card import build_card
from incognita.access.domain import domain_files, get_domain
from incognita.common.io import InputError

RETAIL = get_domain("retail")


def verdicts(c, db, vocabulary):
    known = load_ambiguities(domain_files("retail").ambiguities)
    return {f.check: (f.verdict, f.detail) for f in audit_card(c, db, vocabulary, known, RETAIL)}


def test_rule_built_cards_pass_the_hard_checks(tasks, db, meta, vocabulary):
    for task_id, task in tasks.items():
        v = verdicts(build_card(task, db, meta, RETAIL), db, vocabulary)
        for check in ("fields_in_source", "write_values_sourced", "requests_cover_demands", "requests_invent_nothing"):
            assert v[check][0] == "pass", (task_id, check, v[check])


def test_invented_field_is_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["0"], db, meta, RETAIL)
    c["fields"].append({"token": "phone", "kind": "identity", "value": "555-0100", "spans": ["555-0100"]})
    verdict, detail = verdicts(c, db, vocabulary)["fields_in_source"]
    assert verdict == "fail" and "phone" in detail


def test_uncovered_demand_and_invented_request_value_are_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["2"], db, meta, RETAIL)
    bad = copy.deepcopy(c)
    bad["requests"] = bad["requests"][1:]
    assert verdicts(bad, db, vocabulary)["requests_cover_demands"][0] == "fail"
    bad = copy.deepcopy(c)
    bad["requests"][0]["demand"] = "Ask for a refund of $999 on order #W0000001."
    verdict, detail = verdicts(bad, db, vocabulary)["requests_invent_nothing"]
    assert verdict == "fail" and "999" in detail


def test_missing_information_request_is_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["2"], db, meta, RETAIL)
    c["requests"] = [{"demand": "Return the cleaner.", "fallbacks": [], "covers": [0, 1]}]
    assert verdicts(c, db, vocabulary)["info_requested"][0] == "fail"


def test_the_domain_adds_its_own_checks(tasks, db, meta, vocabulary):
    """audit_card runs the generic checks, then the domain's (Domain.cards.audit_checks), once each."""
    checks = [f.check for f in audit_card(build_card(tasks["0"], db, meta, RETAIL), db, vocabulary, {}, RETAIL)]
    generic = ["fields_in_source", "info_requested", "requests_cover_demands", "requests_invent_nothing"]
    assert checks[:5] == [*generic, "withholds_disclosure"], checks
    assert {"write_values_sourced", "choices_expressed", "selectors_reachable"} <= set(checks)
    assert len(checks) == len(set(checks))


# The ambiguities file is a domain's (its tasks and tools); the loader checks its form: upstream
# ids as keys, <tool>.<argument> (or communicate_info) as arguments, a reason for each.
@pytest.mark.parametrize(
    "text, named",
    [
        ('"100": [{argument: cancel_pending_order.reason, reason: x, note: y}]', "unknown key 'note'"),
        ("'100': [{argument: cancel_pending_order.reason}]", "reason"),
        ("'100': [{argument: fly away.order_id, reason: x}]", "fly away.order_id"),
        ("'100': [{argument: cancel_pending_order, reason: x}]", "cancel_pending_order"),
        ("'a b': [{argument: cancel_pending_order.reason, reason: x}]", "'a b'"),
        ("'100': [{argument: x", "not valid YAML"),
    ],
)
def test_bad_ambiguities_file_names_file_and_key(tmp_path, text, named):
    path = tmp_path / "upstream_ambiguities.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_ambiguities(path)
    assert str(path) in str(err.value) and named in str(err.value)


def test_the_shipped_ambiguities_file_loads():
    known = load_ambiguities(domain_files("retail").ambiguities)
    assert "modify_pending_order_items.payment_method_id" in known["100"]


def test_an_ambiguity_of_a_tool_that_does_not_write_names_the_tool(tmp_path):
    """Each listed choice is a write's argument: a read tool, or a misspelt one, would never match
    a choice the audit compares, so it is refused with the file, the task and the tool named."""
    from incognita.access.domain import get_domain

    write_tools = get_domain("retail").write_tools()
    assert "cancel_pending_order" in write_tools and "get_order_details" not in write_tools
    path = tmp_path / "upstream_ambiguities.yaml"
    path.write_text("'7': [{argument: get_order_details.order_id, reason: x}]\n")
    load_ambiguities(path)  # without the domain's tools, the shape alone is checked
    with pytest.raises(InputError) as err:
        load_ambiguities(path, write_tools)
    assert f"{path}: 7: " in str(err.value) and "'get_order_details' is not one of" in str(err.value)
    shipped = load_ambiguities(domain_files("retail").ambiguities, write_tools)
    assert "100" in shipped
