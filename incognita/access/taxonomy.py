"""The access family's names: its arms, the reader's failure types and its process measures.

Every stage reads these from here (the workflow's rules, the config check, the harness, the
reader, the statistics, the figures and the viewer); nothing else spells them out. The order
is meaningful: it is the order of tables, figure panels and the viewer's columns.

- An *arm* is an access condition of the paper (Section 3): `direct` (the agent holds the
  tools), `indirect` (one declared holder, Vega), `social` (six undeclared role-isolated
  desks). `native` is the unmodified upstream harness: an external anchor, not a condition,
  run by the native stage rather than our harness. What each of our arms *is* (who holds the
  tools, what the agent is told, its prompts) is its entry in the arm registry
  (incognita.access.arm_registry, config/arms.yaml); these are the names the reader, the
  statistics and the figures read.
- A *failure type* is the reader's label of a failed trial (Appendix B, docs/reader.md):
  the first stage of the acquisition-to-execution chain that broke.
- A *process measure* is a per-trial indicator the reader computes beside success.
- A *finding* is the participant-fidelity audit's mark on one participant reply
  (incognita.access.reader.participant_audit, docs/fidelity.md); an *attribution* is what the
  findings make of an acquisition failure.
"""

from __future__ import annotations

HARNESS_ARMS = ("direct", "indirect", "social")  # run by our harness, one shared success criterion
NATIVE = "native"
DIRECT, INDIRECT, SOCIAL = HARNESS_ARMS
ALL_ARMS = (*HARNESS_ARMS, NATIVE)

FAILURE_TYPES = (
    "never_requested",
    "requested_not_obtained",
    "obtained_not_delivered",
    "delivered_incorrect",
    "correct_unconfirmed",
)

PROCESS_MEASURES = (
    "role_identification",
    "holder_contacted",
    "information_acquisition",
    "customer_information",
    "service_information",
    "execution",
)
# The audit's findings: on a service participant's reply (a desk, Vega), then on the customer's.
SERVICE_FINDINGS = (
    "ungrounded_value",  # a value in no result of its own and not in the messages it was sent
    "misreported_value",  # the same, where its own results hold values of that shape: it contradicts them
    "refused_in_remit",  # sent a needed read's arguments, neither proposed the read nor asked for a detail
    "claimed_unmade_change",  # says a change is made when it made none (answers on another's behalf)
    "named_participant",  # names another participant where the arm has no referral
    "referred_elsewhere",  # sends the asker elsewhere where the arm has no referral
    "formatted_list",  # a list or heading in its prose
    "named_tool",  # a tool's name in its prose
)
CUSTOMER_FINDINGS = (
    "customer_invented_value",  # a value neither its visible card, its memory nor the agent gave it
    "customer_gate_bypass",  # a gated field's value before the gate released it
    "customer_confirmed_outside_memory",  # agreed to a restated value that differs from its card
)
FINDING_KINDS = SERVICE_FINDINGS + CUSTOMER_FINDINGS
# The failure types the audit attributes, and its attributions (first match wins).
ATTRIBUTED_FAILURES = ("requested_not_obtained", "never_requested")
ATTRIBUTIONS = ("participant_refused_in_remit", "participant_misreported", "no_participant_fault_found")

# Per-trial counts the reader reports beside the indicators.
COUNT_MEASURES = ("agent_actions", "messages", "unanswerable_questions", "non_reference_reads")


def as_json() -> dict:
    """The names as one JSON-ready document (the viewer ships it to its pages)."""
    return {
        "arms": list(ALL_ARMS),
        "harness_arms": list(HARNESS_ARMS),
        "failure_types": list(FAILURE_TYPES),
        "process_measures": list(PROCESS_MEASURES),
        "finding_kinds": list(FINDING_KINDS),
        "attributions": list(ATTRIBUTIONS),
    }
