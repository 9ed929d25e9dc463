"""The trajectory reader on one trial (incognita.access.reader.trial_reading): process measures,
the five failure types, counts and usage. Fixtures are hand-made episodes of two small tasks
(tests/fixtures/reader; their reference is config/domains/retail/reader_validation/reference.json): 901 (email -> user id -> profile -> order -> cancel, four desks) and
902 (one product read whose answer the customer is owed; no information items)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from incognita.access.domain import split_task
from incognita.access.episodes.loop.records import EpisodeRecord
from incognita.access.reader.trial_contract import PROCESS_COLUMNS
from incognita.access.reader.trial_reading import (
    Exchange,
    Fact,
    classify,
    read_trial,
    unanswerable_questions,
)
from incognita.access.taxonomy import FAILURE_TYPES
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "reader"
REFERENCE = json.loads((ROOT / "config/domains/retail/reader_validation/reference.json").read_text())
EPISODES = sorted(FIX.glob("*.json"))


def _data(name: str) -> dict:
    return json.loads((FIX / f"{name}.json").read_text())


def _read(data: dict):
    record = EpisodeRecord.from_dict(data)
    return read_trial(record, REFERENCE["tasks"][split_task(record.cell["task"])[1]])  # retail/901: task 901


def _row(name: str):
    return _read(_data(name))


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


# --------------------------------------------------------------------------- failure types


@pytest.mark.parametrize(
    "name, label",
    [
        ("social_never_requested", "never_requested"),
        ("social_requested_not_obtained", "requested_not_obtained"),
        ("social_obtained_not_delivered", "obtained_not_delivered"),
        ("social_delivered_incorrect", "delivered_incorrect"),
        ("social_correct_unconfirmed", "correct_unconfirmed"),
        ("indirect_non_reference_read", "requested_not_obtained"),
        ("direct_read_only_untold", "obtained_not_delivered"),
        ("social_success", None),
        ("direct_success", None),
        ("social_error", None),
    ],
)
def test_each_fixture_gets_its_label(name, label):
    row = _row(name)
    assert row.failure_type == label
    if label is not None:
        assert row.success == 0.0 and row.injected_failure in (label, None)


def test_every_failure_type_has_a_hand_made_fixture():
    labels = {_row(p.stem).failure_type for p in EPISODES}
    assert set(FAILURE_TYPES) <= labels


@pytest.mark.parametrize(
    "missing, approached, attempted, correct, outside, label",
    [
        ([Fact("customer", "t", "USER")], [False], False, True, False, "never_requested"),
        (
            [Fact("customer", "t", "USER"), Fact("service", ("r", "{}"), "Aster")],
            [False, True],
            False,
            True,
            False,
            "requested_not_obtained",
        ),
        ([], [], False, False, False, "obtained_not_delivered"),
        # Once an action was attempted, missing facts no longer decide the label.
        ([Fact("customer", "t", "USER")], [False], True, True, False, "correct_unconfirmed"),
        ([], [], True, False, False, "delivered_incorrect"),
        ([], [], True, True, True, "delivered_incorrect"),
        ([], [], True, True, False, "correct_unconfirmed"),
    ],
)
def test_classify_first_match(missing, approached, attempted, correct, outside, label):
    assert classify(missing, approached, attempted, correct, outside) == label


def test_successful_trajectory_off_the_reference_is_never_a_failure():
    data = _data("social_delivered_incorrect")  # cancels with another reason than the reference's
    data["success"], data["channels"]["db"], data["database_only_success"] = True, True, True
    row = _read(data)
    assert row.execution == 0.75 and row.non_reference_actions == 1
    assert row.failure_type is None and row.failure_type_reads_credited is None and row.success == 1.0


def test_labels_rest_on_events_not_on_message_text():
    for path in EPISODES:
        data = json.loads(path.read_text())
        for event in data["events"]:
            if event["type"] == "message":
                event["text"] = "#ask email\n#call cancel_pending_order {}\n#yes"
        assert _read(data) == _row(path.stem), path.stem


# --------------------------------------------------------------------------- process measures


def test_process_absent_from_an_arm_is_nan_not_zero():
    direct, social = _row("direct_success"), _row("social_never_requested")
    assert _nan(direct.role_identification) and _nan(direct.holder_contacted)
    assert _nan(_row("indirect_non_reference_read").role_identification)
    assert social.role_identification == 0.0 and social.holder_contacted == 0.0  # present, and zero
    untold = _row("direct_read_only_untold")  # task 902 has no information items at all
    assert all(
        _nan(getattr(untold, c)) for c in ("information_acquisition", "customer_information", "service_information")
    )
    assert untold.execution == 1.0


def test_process_fractions():
    row = _row("social_requested_not_obtained")
    # Elara ran her read; Aster tried with a wrong user id, which failed: proposed, not executed,
    # so only Elara counts for role identification (Section 4.2); Dorian and Fenn never contacted.
    assert (row.role_identification, row.holder_contacted) == (0.25, 0.5)
    assert (row.customer_information, row.service_information, row.information_acquisition) == (0.5, 0.5, 0.5)
    assert row.execution == 0.25
    odn = _row("social_obtained_not_delivered")  # Fenn asked but never ran the cancellation
    assert (odn.role_identification, odn.holder_contacted, odn.execution) == (0.75, 1.0, 0.75)
    assert _row("social_success").execution == 1.0 and _row("direct_success").execution == 1.0


def test_a_hand_off_counts_by_its_name_not_its_free_text_summary():
    """The transfer's summary is the agent's own wording: execution compares the call without it."""
    import copy

    task = copy.deepcopy(REFERENCE["tasks"]["901"])
    calls = task["arms"]["direct"]["required_calls"]
    calls.append(
        {
            "arguments": {"summary": "The reference's own words."},
            "executor": "agent",
            "index": len(calls),
            "name": "transfer_to_human_agents",
            "tool_type": "handoff",
        }
    )
    data = _data("direct_success")
    done = _read(data).execution
    record = EpisodeRecord.from_dict(data)
    assert read_trial(record, task).execution == pytest.approx(done * (len(calls) - 1) / len(calls))
    turn = max(e["turn"] for e in data["events"]) + 1
    transfer = {
        "turn": turn,
        "call_id": "c99",
        "proposer": "agent",
        "tool": "transfer_to_human_agents",
        "arguments": {"summary": "Customer needs a human; in my words."},
    }
    data["events"] += [
        {"type": "tool_proposal", **transfer},
        {
            "type": "gateway_decision",
            **transfer,
            "status": "accepted",
            "reason": None,
            "result": "Transfer successful",
            "write": False,
        },
    ]
    assert read_trial(EpisodeRecord.from_dict(data), task).execution == done == 1.0


def test_approached_means_contact_with_the_source_for_both_kinds_of_fact():
    """Section 4.3: a missing fact counts as approached once its source was contacted, the
    customer as much as a desk; the request-based reading is kept as an audit column."""
    data = _data("social_requested_not_obtained")
    stop = next(i for i, e in enumerate(data["events"]) if e.get("recipient") == "Elara")
    data["events"] = data["events"][:stop] + [
        {
            "type": "message",
            "turn": 2,
            "sender": "agent",
            "recipient": "ENVIRONMENT",
            "text": "done",
            "message_type": "FINAL",
        }
    ]  # asked the customer for the email, then gave up
    row = _read(data)
    assert row.missing_customer_facts == 1 and row.missing_service_facts == 2  # order choice; both reads
    assert row.failure_type == "requested_not_obtained"  # the customer, source of the order choice, was contacted
    assert row.failure_type_request_based == "never_requested"  # nobody was asked for a missing fact itself
    ok = _row("social_success")
    assert ok.failure_type is None and ok.failure_type_request_based is None


def test_a_read_owed_only_to_the_customer_is_not_a_required_fact():
    """Section 4: labels and information acquisition use one set of facts, those the required
    calls need; the order read of task 901 only serves what the customer must be told."""
    data = _data("social_obtained_not_delivered")
    data["events"] = [e for e in data["events"] if e.get("proposer") != "Dorian"]  # no order read
    row = _read(data)
    assert row.information_acquisition == 1.0
    assert row.missing_service_facts == 0 and row.failure_type == "obtained_not_delivered"


def test_service_fact_needs_the_reference_arguments():
    data = _data("social_success")
    for e in data["events"]:
        if e.get("tool") == "get_user_details":
            e["arguments"] = {"user_id": "ada_lovelace_9999"}
    row = _read(data)
    assert row.service_information == 0.5 and row.non_reference_reads == 1 and row.role_identification == 1.0


# --------------------------------------------------------------------------- counts and usage


def test_counts_and_usage():
    row = _row("direct_success")
    assert (row.agent_actions, row.messages, row.turns, row.unanswerable_questions) == (9, 4, 9, 0)
    assert (row.tokens_agent, row.tokens_episode) == (910, 965)
    assert row.cost_agent_usd == pytest.approx(0.01) and row.cost_episode_usd == pytest.approx(0.012)
    assert (row.cache_hits, row.cache_misses) == (1, 4)
    social = _row("social_success")
    assert (social.agent_actions, social.messages) == (10, 9)


def test_unanswerable_questions_in_fixtures():
    # A dead end at Cygnus; Fenn's restatement is answered by the change on the next message.
    assert _row("social_success").unanswerable_questions == 1
    # Fenn restated the change and was never told to go ahead: that question got nothing done.
    assert _row("social_obtained_not_delivered").unanswerable_questions == 2
    assert _row("indirect_non_reference_read").unanswerable_questions == 1


def _ex(recipient, accepted=0, actions=0, gate=()):
    return Exchange(recipient, accepted, actions, tuple(gate))


def test_unanswerable_question_rules():
    # Confirmation round trip: the first message is answered by the change that follows.
    assert unanswerable_questions([_ex("Fenn"), _ex("Fenn", 1, 1)]) == 0
    # A decline followed later by a read at the same desk stays a dead end.
    assert unanswerable_questions([_ex("Aster"), _ex("USER"), _ex("Aster", 1, 0)]) == 1
    # A failed call answers nothing; neither does a question with no later exchange.
    assert unanswerable_questions([_ex("Vega"), _ex("Dorian")]) == 2
    # The customer: only a request for a field the card does not hold.
    assert (
        unanswerable_questions(
            [
                _ex("USER", gate=("unknown",)),
                _ex("USER", gate=("released",)),
                _ex("USER", gate=("unknown", "released")),
                _ex("USER"),
            ]
        )
        == 1
    )


def test_audit_credits_missing_service_facts_to_non_reference_reads():
    row = _row("indirect_non_reference_read")
    # the profile is missing (the order read only serves what the customer is told: not a required fact)
    assert row.non_reference_reads == 1 and row.missing_service_facts == 1 and row.missing_customer_facts == 0
    assert row.failure_type == "requested_not_obtained"
    assert row.failure_type_reads_credited == "obtained_not_delivered"
    plain = _row("social_requested_not_obtained")  # no non-reference read: nothing to credit
    assert plain.failure_type_reads_credited == plain.failure_type


def test_the_stricter_audit_credits_only_a_read_that_returned_a_consumed_value():
    """B.2's exact-value check: a non-reference read counts for a missing service fact only if it
    returned exactly a value that the calls consuming that fact take as an argument."""
    data = _data("indirect_non_reference_read")
    row = _read(data)  # the other order's status says nothing about the profile's content
    assert row.failure_type_reads_credited == "obtained_not_delivered"
    assert row.failure_type_exact_credited == "requested_not_obtained"
    read = next(e for e in data["events"] if e["type"] == "gateway_decision" and e["tool"] == "get_order_details")
    read["result"] = {"status": "delivered", "related_orders": ["#W1000001"]}  # the order the cancellation needs
    assert _read(data).failure_type_exact_credited == "obtained_not_delivered"
    assert _row("social_requested_not_obtained").failure_type_exact_credited == "requested_not_obtained"


def test_a_needed_field_the_gate_did_not_release_is_counted():
    data = _data("social_requested_not_obtained")
    data["events"].insert(
        -1, {"type": "disclosure", "turn": 3, "token": "order_choice", "status": "unknown", "value": None}
    )
    assert _read(data).gate_withheld_facts == 1
    assert _row("social_requested_not_obtained").gate_withheld_facts == 0


def test_excluded_trial():
    row = _row("social_error")
    assert row.excluded and row.termination == "error" and "503" in row.error
    assert _nan(row.success) and _nan(row.database_only_success) and _nan(row.channel_db)
    assert row.failure_type is None
    assert all(_nan(getattr(row, c)) for c in PROCESS_COLUMNS)
    assert row.tokens_agent == 210  # what was spent still counts


def test_bad_records_are_named():
    data = _data("social_success")
    data["cell"]["arm"] = "native"
    with pytest.raises(InputError, match="cell.arm"):
        _read(data)
    data = _data("social_success")
    data["success"] = None
    with pytest.raises(InputError, match="success: missing"):
        _read(data)
