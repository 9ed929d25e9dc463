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
"""

from __future__ import annotations

HARNESS_ARMS = ("direct", "indirect", "social")  # run by our harness, one shared success criterion
NATIVE = "native"
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
# Per-trial counts the reader reports beside the indicators.
COUNT_MEASURES = ("agent_actions", "messages", "unanswerable_questions", "non_reference_reads")


def as_json() -> dict:
    """The names as one JSON-ready document (the viewer ships it to its pages)."""
    return {
        "arms": list(ALL_ARMS),
        "harness_arms": list(HARNESS_ARMS),
        "failure_types": list(FAILURE_TYPES),
        "process_measures": list(PROCESS_MEASURES),
    }
