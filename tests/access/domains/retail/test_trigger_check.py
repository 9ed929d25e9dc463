"""Each condition a retail task states keeps the event that fires it (issue #53, item 7): the
check `triggers_kept` (incognita.access.domains.retail.trigger_check) on all 114 tasks, and what
it flags."""

import copy

from incognita.access.cards.card import build_card, build_requests
from incognita.access.domain import get_domain
from incognita.access.domains.retail.trigger_check import branch_pairs, check_triggers_kept, source_events

RETAIL = get_domain("retail")


def test_every_condition_keeps_its_trigger_on_every_card(tasks, repaired_card):
    """No card fails; the one warning is the paper's repair of 59, which states "If the agent
    cannot guarantee ..., have it cancelled" to the agent in a demand."""
    found = {}
    for task_id in tasks:
        _, verdict, detail = check_triggers_kept(repaired_card(task_id))
        if verdict != "pass":
            found[task_id] = verdict
    assert found == {"59": "warn"}


def test_a_flattened_chain_is_flagged(tasks, db, meta):
    """33's rule-built block puts "If cancelling partial items is possible" and "... is not
    possible" in two requests: the negative branch answers a refusal of another demand."""
    verdict, detail = check_triggers_kept(build_card(tasks["33"], db, meta, RETAIL))[1:]
    assert verdict == "fail" and "[2]/[4] the two branches of one condition are in different requests" in detail


def test_a_confirmation_is_a_fallback_raised_at_the_confirmation_only(tasks, db, meta):
    card = build_card(tasks["84"], db, meta, RETAIL)  # "But when the agent asks for confirmation, ..."
    assert check_triggers_kept(card)[1] == "pass"
    as_demand = copy.deepcopy(card)
    request = as_demand["requests"][-1]
    as_demand["requests"][-1:] = [
        {"demand": request["demand"], "fallbacks": [], "covers": request["covers"][:1]},
        {"demand": request["fallbacks"][0], "fallbacks": [], "covers": request["covers"][1:]},
    ]
    verdict, detail = check_triggers_kept(as_demand)[1:]
    assert verdict == "fail" and "confirmation condition raised at once as a demand" in detail


def test_a_demand_clause_waiting_for_the_confirmation_becomes_its_fallback(tasks, db, meta):
    """24: "You want to cancel the grill, but if the agent asks you to confirm, you regret and
    want to keep it" was one demand raised at once."""
    requests = build_requests(["You want to cancel the grill, but if the agent asks you to confirm, you regret."])
    assert requests == [
        {
            "demand": "You want to cancel the grill",
            "fallbacks": ["if the agent asks you to confirm, you regret."],
            "covers": [0],
        }
    ]
    assert check_triggers_kept(build_card(tasks["24"], db, meta, RETAIL))[1] == "pass"


def test_if_not_after_a_state_is_that_state_negated(tasks, db, meta):
    """91: "If the same item is available online, ... If not, you want to return it": the second
    is met by the records, not by a refusal; the scripted customer used to raise it at one."""
    card = build_card(tasks["91"], db, meta, RETAIL)
    assert check_triggers_kept(card)[1] == "pass"
    assert source_events(card["sentences"])[4:6] == ["state", "state"]


def test_source_events_and_branches():
    events = source_events(
        [
            "But when the agent asks for confirmation, you change your mind.",
            "If that doesn't work, say you forgot the W.",
            "When asked for order ID, provide 9502127 first.",
            "If multiple colors are available, you prefer blue.",
            "If so, do it.",
            "If the same item is available online, exchange it.",
            "If not, return it.",
            "You want to return it.",
        ]
    )
    assert events == ["confirmation", "refusal", "question", "options", "outcome", "state", "state", None]
    assert branch_pairs(["Ask X.", "If X is possible, do it.", "Ask Y.", "If X is not possible, do Z."]) == [(1, 3)]
    assert branch_pairs(["Ask X.", "If it is cheap, buy it.", "If not, return it."]) == [(1, 2)]
    assert branch_pairs(["Ask X.", "If not, ask Y."]) == []
