"""The access family's names: its arms, the reader's failure types and its process measures.

Every stage reads these from here (the workflow's rules, the config check, the harness, the
reader, the statistics, the figures and the viewer); nothing else spells them out
(tests/access/test_taxonomy.py fails on an arm or failure-type name written as a string
anywhere else in the package). The order is meaningful: it is the order of tables, figure
panels and the viewer's columns.

- An *arm* is an access condition of the paper (Section 3): `direct` (the agent holds the
  tools), `indirect` (one declared holder, Vega), `social` (six undeclared role-isolated
  desks). `native` is the unmodified upstream harness: an external anchor, not a condition,
  run by the native stage rather than our harness. What each of our arms *is* (who holds the
  tools, what the agent is told, its prompts) is its entry in the arm registry
  (incognita.access.arm_registry, config/arms.yaml); these are the names the reader, the
  statistics and the figures read.
- A *failure type* is the reader's label of a failed trial (Appendix B, docs/reader.md):
  the first stage of the acquisition-to-execution chain that broke.
- An *outcome* is what the composition tables and figures count a trial as: success, one of
  the failure types, a failure without a type (the native harness has none), or excluded.
- A *process measure* is a per-trial indicator the reader computes beside success.
- A *finding* is the participant-fidelity audit's mark on one participant reply
  (incognita.access.reader.participant_audit, docs/fidelity.md); an *attribution* is what the
  findings make of an acquisition failure.

Arms and outcomes are records (`Term`): the name, and how every stage shows it, its label and
colour on the figures (incognita.access.figures.figure_style) and a one-line description; the
viewer ships them (`as_json`). A failure type's description is the reader's rule for it (the
question of docs/reader.md that assigns it), which the viewer prints beside a label
(incognita.viewer.failure_rule).

The arms registered only as data (config/arms.yaml: `social+map`, `social+referral`,
`social-3`, `social+named`, issue #28) have no record: they are exploratory additions, shown by
their registered name (`arm_label`), which already says which component of the social bundle
changed, and no figure colours an arm it has no record of (the unbundling figure colours by
model). Their presentation stays out of config/arms.yaml on purpose: that file says how an arm
*behaves*, and every episode, the reader and the reference read it, so a label edited there
would re-run them all.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One name of the family and how it is shown."""

    name: str  # as the tables, configs, record paths and the scripted injections spell it
    label: str  # on figures and tables
    color: str  # a matplotlib colour (hex), the figures' fill or marker
    description: str  # one line: what it is


ARM_RECORDS = (
    Term("direct", "Centralized (direct)", "#E69F00", "the agent holds every tool and calls it itself"),
    Term("indirect", "Centralized (indirect)", "#0072B2", "one declared participant holds every tool"),
    # Not yet drawn by any figure in its own colour: the one Okabe-Ito hue the other arms leave.
    Term(
        "social",
        "Socially distributed",
        "#CC79A7",
        "six undeclared role-isolated desks hold the tools; the agent must find who holds which",
    ),
    Term(
        "native",
        "Native anchor",
        "#009E73",
        "the unmodified upstream harness: an external anchor, not an access condition",
    ),
)
DIRECT, INDIRECT, SOCIAL, NATIVE = (a.name for a in ARM_RECORDS)
HARNESS_ARMS = (DIRECT, INDIRECT, SOCIAL)  # run by our harness, one shared success criterion
ALL_ARMS = (*HARNESS_ARMS, NATIVE)

# In the reader's order (the first that applies is the label); the description is its question.
FAILURE_RECORDS = (
    Term(
        "never_requested",
        "1 Never requested",
        "#b2182b",
        "no action attempted; some needed facts missing, and no missing fact's source was approached",
    ),
    Term(
        "requested_not_obtained",
        "2 Requested, not obtained",
        "#ef8a62",
        "no action attempted; some needed facts missing, and the source of at least one missing fact was approached",
    ),
    Term(
        "obtained_not_delivered", "3 Obtained, not delivered", "#fddbc7", "no action attempted; no needed fact missing"
    ),
    Term(
        "delivered_incorrect",
        "4 Delivered, incorrect",
        "#67a9cf",
        "an action was attempted; a required action was not executed correctly, or an action outside the "
        "reference was executed",
    ),
    Term(
        "correct_unconfirmed",
        "5 Correct, unconfirmed",
        "#2166ac",
        "an action was attempted; every required action executed correctly and none outside, and the task "
        "failed anyway",
    ),
)
FAILURE_TYPES = tuple(f.name for f in FAILURE_RECORDS)
NEVER_REQUESTED, REQUESTED_NOT_OBTAINED, OBTAINED_NOT_DELIVERED, DELIVERED_INCORRECT, CORRECT_UNCONFIRMED = (
    FAILURE_TYPES
)

# Composition order: success, then the failure chain from first to last stage, then the rest.
OUTCOME_RECORDS = (
    Term("success", "Success", "#1b7837", "the evaluator's success criterion held"),
    *FAILURE_RECORDS,
    Term(
        "failed_unlabelled",
        "Failed, no type (native harness)",
        "#9e9ac8",
        "failed without a failure type: the native harness has no reader",
    ),
    Term(
        "excluded",
        "Excluded (broke outside the agent)",
        "#bdbdbd",
        "broke outside the agent (an API or harness error): not scored",
    ),
)
OUTCOMES = tuple(o.name for o in OUTCOME_RECORDS)
SUCCESS, FAILED_UNLABELLED, EXCLUDED = OUTCOMES[0], OUTCOMES[-2], OUTCOMES[-1]

_ARMS = {a.name: a for a in ARM_RECORDS}
_OUTCOMES = {o.name: o for o in OUTCOME_RECORDS}


def arm_record(name: str) -> Term:
    """The record of one of the paper's arms (KeyError for any other name)."""
    return _ARMS[name]


def outcome_record(name: str) -> Term:
    """The record of an outcome: success, a failure type, failed_unlabelled or excluded."""
    return _OUTCOMES[name]


def arm_label(name: str) -> str:
    """How figures and tables name an arm: its record's label, or, for an arm registered only
    as data (module docstring), its registered name."""
    return _ARMS[name].label if name in _ARMS else name


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
ATTRIBUTED_FAILURES = (REQUESTED_NOT_OBTAINED, NEVER_REQUESTED)
ATTRIBUTIONS = ("participant_refused_in_remit", "participant_misreported", "no_participant_fault_found")

# Per-trial counts the reader reports beside the indicators.
COUNT_MEASURES = ("agent_actions", "messages", "unanswerable_questions", "non_reference_reads")


def _records(terms: tuple[Term, ...]) -> dict:
    return {t.name: {"label": t.label, "color": t.color, "description": t.description} for t in terms}


def as_json() -> dict:
    """The names as one JSON-ready document (the viewer ships it to its pages), with the
    records' labels, colours and descriptions by name."""
    return {
        "arms": list(ALL_ARMS),
        "harness_arms": list(HARNESS_ARMS),
        "failure_types": list(FAILURE_TYPES),
        "process_measures": list(PROCESS_MEASURES),
        "finding_kinds": list(FINDING_KINDS),
        "attributions": list(ATTRIBUTIONS),
        "records": {"arms": _records(ARM_RECORDS), "outcomes": _records(OUTCOME_RECORDS)},
    }
