"""Which rule of the reader's failure table assigned a trial's label, and on what evidence.

The trials table records the label but not the question of docs/reader.md that produced it.
The label alone names the row (each row gives a different label), but a reader of a
trajectory wants the evidence too: which facts were missing, whether their sources were
approached, which actions ran. This module asks the reader itself (its trace, facts and
`read_failure`) and never decides a label on its own.
"""

from __future__ import annotations

from collections import Counter

from incognita.access.reader import trial_reading as reader
from incognita.access.taxonomy import FAILURE_TYPES, outcome_record


def _fact_name(fact: reader.Fact) -> str:
    return f"customer field {fact.key}" if fact.kind == "customer" else f"{fact.key[0]} at {fact.holder}"


def _actions(trace: reader.Trace, required: list[dict]) -> tuple[int, int, int]:
    """(required actions, of which executed correctly, accepted actions outside the reference),
    counted with the reader's own matching."""
    calls = trace.calls
    needed = Counter(
        (c["executor"], c["name"], calls.key(c["name"], c["arguments"]))
        for c in required
        if c["tool_type"] == "write" or c["name"] in calls.handoffs
    )
    matched = reader._matched(needed, trace.accepted_actions)
    return sum(needed.values()), matched, sum(trace.accepted_actions.values()) - matched


def explain(events: list, task: dict, arm: str, label: str | None, calls: reader.CallKeys) -> dict | None:
    """The rule behind `label` (the trials table's failure type) with its evidence; None for a
    trial without a label (a success, an excluded or a native trial). `calls`: how the task's
    domain compares calls (the reader's CallKeys)."""
    if not label:
        return None
    trace = reader.Trace(events, calls)
    required = task["arms"][arm]["required_calls"]
    facts = reader.required_facts(task, arm, calls)
    reading = reader.read_failure(trace, facts, required)
    missing = [f for f in facts if not reader._obtained(f, trace)]
    n_actions, correct, outside = _actions(trace, required)
    evidence = [
        "action attempted: " + ("yes" if trace.action_attempted else "no"),
        f"needed facts: {len(facts)}, missing: {len(missing)}",
        *(
            f"missing {_fact_name(f)}: source " + ("approached" if reader._approached(f, trace) else "never approached")
            for f in missing
        ),
    ]
    if trace.action_attempted:
        evidence += [
            f"required actions executed correctly: {correct} of {n_actions}",
            f"actions outside the reference: {outside}",
        ]
    return {
        "label": label,
        "rule": FAILURE_TYPES.index(label) + 1 if label in FAILURE_TYPES else None,
        # a failure type's description is its question of docs/reader.md, "The five failure types"
        "question": outcome_record(label).description if label in FAILURE_TYPES else "unknown label",
        "evidence": evidence,
        # A disagreement means the table was read by another reader version than this code.
        "recomputed": reading.label,
        "audits": {
            "reads_credited": reading.credited,
            "exact_credited": reading.exact_credited,
            "request_based": reading.request_based,
        },
    }
