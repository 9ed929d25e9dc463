"""Every identity a retail task states reaches its card (issue #53, item 6): the check
`identities_on_card` (incognita.access.domains.retail.identity_check) on all 114 tasks, and the
card rules that put names, aliases and scripted zips on the card."""

import copy

from incognita.access.cards.card import build_card
from incognita.access.domain import get_domain
from incognita.access.domains.retail.identity_check import check_identities_on_card, stated_identities

RETAIL = get_domain("retail")


def fields(c):
    return {f["token"]: f["value"] for f in c["fields"]}


def test_every_stated_identity_is_on_every_card(tasks, repaired_card):
    failing = {}
    for task_id in tasks:
        _, verdict, detail = check_identities_on_card(repaired_card(task_id))
        if verdict != "pass":
            failing[task_id] = detail
    assert failing == {}


def test_names_aliases_and_a_zip_script_reach_the_card(tasks, db, meta):
    noah = fields(build_card(tasks["67"], db, meta, RETAIL))  # "Your name is Noah but you go by NoNo"
    assert noah["name"] == "Noah" and noah["alias"] == "NoNo"
    # "say that it is 98178 first ..., then ... 98186 ... If that fails, then say 98187"
    assert [noah["zip"], noah["zip_2"], noah["zip_3"]] == ["98178", "98186", "98187"]
    assert fields(build_card(tasks["50"], db, meta, RETAIL))["name"] == "Chen Smith"  # "You're Chen Smith"
    assert fields(build_card(tasks["43"], db, meta, RETAIL))["name"] == "Lucas"  # "You are Lucas (lucas_...)"
    assert fields(build_card(tasks["54"], db, meta, RETAIL))["name"] == "Amelia"
    assert fields(build_card(tasks["0"], db, meta, RETAIL))["name"] == "Yusuf Rossi"


def test_the_check_reads_the_source_itself(tasks, db, meta):
    card = build_card(tasks["67"], db, meta, RETAIL)
    assert check_identities_on_card(card)[1] == "pass"
    no_alias = copy.deepcopy(card)
    no_alias["fields"] = [f for f in card["fields"] if f["token"] != "alias"]
    verdict, detail = check_identities_on_card(no_alias)[1:]
    assert verdict == "fail" and "alias 'NoNo'" in detail
    # The known zip first, as the rule-built card had it before: the scripted mistakes are skipped.
    swapped = copy.deepcopy(card)
    zips = [f for f in swapped["fields"] if f["token"].startswith("zip")]
    for f, value in zip(zips, ["98187", "98178", "98186"], strict=True):
        f["value"], f["spans"] = value, [value]
    verdict, detail = check_identities_on_card(swapped)[1:]
    assert verdict == "fail" and "order of attempts" in detail and "98178 -> 98186 -> 98187" in detail


def test_stated_identities_by_part():
    stated, scripted = stated_identities(
        {
            "known_info": "You are Amelia, and you have two emails: a@example.com and b.c@example.com.",
            "unknown_info": None,
            "reason_for_call": "Change the address to 12 Elm St, Austin, 78701. Your user id is amelia_silva_7726.",
            "task_instructions": "You are a lonely man.",
        }
    )
    # A zip in the reason for calling is an address to write, not an identity; no order scripted.
    assert stated["name"] == ["Amelia"] and stated["zip"] == [] and scripted == {}
    assert stated["email"] == ["a@example.com", "b.c@example.com"] and stated["user_id"] == ["amelia_silva_7726"]
