"""The retail card checks (incognita.access.domains.retail.card_checks) flag unfaithful cards."""

from incognita.access.cards.card import build_card
from incognita.access.domain import get_domain
from incognita.access.domains.retail.card_checks import audit_checks

RETAIL = get_domain("retail")


def verdicts(c, db, vocabulary):
    return {check: (verdict, detail) for check, verdict, detail in audit_checks(c, db, vocabulary, {})}


def test_write_argument_without_releasable_source_is_flagged(tasks, db, meta, vocabulary):
    c = build_card(tasks["59"], db, meta, RETAIL)  # the new address exists only in the customer's instructions
    assert verdicts(c, db, vocabulary)["write_values_sourced"][0] == "pass"
    c["fields"] = [f for f in c["fields"] if f["token"] != "address1"]
    verdict, detail = verdicts(c, db, vocabulary)["write_values_sourced"]
    assert verdict == "fail" and "address1='1234 Elm St'" in detail
