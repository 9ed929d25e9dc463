"""The trajectory reader: deterministic, model-free, reference-relative (docs/reader.md).

It turns one episode record plus the frozen coordination reference of its task into one
row of `results/trials.parquet` (incognita.access.reader.trial_contract): the three
coordination processes, the failure type of a failed trial, counts (actions, messages,
unanswerable questions, non-reference reads) and usage. It looks only at structured events
(messages as who-to-whom, tool proposals, gateway decisions, disclosures); it never reads the
text of a message. The viewer asks this module for a trial's evidence (incognita.viewer).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from incognita.access.domain import split_task
from incognita.access.episodes.loop.records import (
    Disclosure,
    EpisodeRecord,
    GatewayDecision,
    Message,
    ProtocolError,
    ToolProposal,
)
from incognita.access.reader.trial_contract import NA, PROCESS_COLUMNS, TrialRow
from incognita.access.taxonomy import (
    CORRECT_UNCONFIRMED,
    DELIVERED_INCORRECT,
    NATIVE,
    NEVER_REQUESTED,
    OBTAINED_NOT_DELIVERED,
    REQUESTED_NOT_OBTAINED,
)
from incognita.common.io import InputError

# Bumped when a definition in docs/reader.md changes meaning: the workflow passes it as a
# param, so the trials table is rebuilt then and only then.
READER_VERSION = 4  # 4: native trials count turns as our arms do (native_results.agent_turns)


AGENT, USER = "agent", "USER"
# The argument of a hand-off whose value is the agent's own wording (tau2's transfer tools'
# summary), which no reference can fix: calls are compared without it, so a transfer counts by its
# name alone (the golden stage sources it from the customer's request, provenance `request`).
HANDOFF_FREE_TEXT = "summary"


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class CallKeys:
    """How one domain's calls are compared. An action changes the state of the case: a database
    write or a hand-off to a human (the domain's tools with role `handoff`), the same calls the
    golden stage counts for their own sake (incognita.access.golden.trajectory)."""

    handoffs: frozenset[str]

    @classmethod
    def of(cls, task: str) -> CallKeys:
        """The keys of a task's domain (`task` a qualified id)."""
        from incognita.access.domain import get_domain

        return cls(get_domain(split_task(task)[0]).tools_with("handoff"))

    def key(self, tool: str, arguments: Any) -> str:
        """A call's arguments as a canonical string: equal JSON values give equal keys; a
        hand-off's free-text summary is left out."""
        if tool in self.handoffs and isinstance(arguments, dict):
            arguments = {k: v for k, v in arguments.items() if k != HANDOFF_FREE_TEXT}
        return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)

    def is_action(self, decision: GatewayDecision) -> bool:
        return bool(decision.write) or decision.tool in self.handoffs


@dataclass(frozen=True)
class Exchange:
    """One agent message to a participant and what the participant did before replying."""

    recipient: str
    accepted: int  # calls by the recipient the gateway accepted in this exchange
    accepted_actions: int
    gate_requests: tuple[str, ...]  # statuses of disclosure requests (customer exchanges)


class Trace:
    """The events of one episode, indexed once for every measure below."""

    def __init__(self, events: list, calls: CallKeys):
        _key, _is_action = calls.key, calls.is_action
        self.calls = calls
        self.agent_messages = [e for e in events if isinstance(e, Message) and e.sender == AGENT]
        self.contacted = {m.recipient for m in self.agent_messages if m.message_type == "MESSAGE"}
        self.decisions = [e for e in events if isinstance(e, GatewayDecision)]
        self.agent_proposals = [e for e in events if isinstance(e, ToolProposal) and e.proposer == AGENT]
        self.protocol_errors = sum(1 for e in events if isinstance(e, ProtocolError) and e.actor == AGENT)
        disclosures = [e for e in events if isinstance(e, Disclosure)]
        self.gate_asked = {d.token for d in disclosures}
        self.released = {d.token for d in disclosures if d.status in ("released", "already_released")}
        accepted = [d for d in self.decisions if d.status == "accepted"]
        self.accepted = Counter((d.proposer, d.tool, _key(d.tool, d.arguments)) for d in accepted)
        self.accepted_calls = {(d.tool, _key(d.tool, d.arguments)) for d in accepted}
        self.accepted_actions = Counter(
            (d.proposer, d.tool, _key(d.tool, d.arguments)) for d in accepted if _is_action(d)
        )
        self.accepted_read_decisions = [d for d in accepted if not _is_action(d)]
        self.accepted_reads = [(d.tool, _key(d.tool, d.arguments)) for d in self.accepted_read_decisions]
        self.released_values = {str(d.value) for d in disclosures if d.status == "released" and d.value is not None}
        self.action_attempted = any(_is_action(d) for d in self.decisions)
        self.executed = {(d.proposer, d.tool) for d in accepted}  # who carried out which tool, any arguments
        self.proposed = {(d.proposer, d.tool) for d in self.decisions}
        self.agent_tools = {p.tool for p in self.agent_proposals}
        self.exchanges = _exchanges(events, calls)


def _exchanges(events: list, calls: CallKeys) -> list[Exchange]:
    """Split the episode at each agent message; the participant acts within the agent's turn."""
    out: list[Exchange] = []
    current: dict | None = None
    for e in events:
        if isinstance(e, Message) and e.sender == AGENT:
            if current is not None:
                out.append(Exchange(**current))
            current = None
            if e.message_type == "MESSAGE":
                current = {"recipient": e.recipient, "accepted": 0, "accepted_actions": 0, "gate_requests": ()}
        elif current is None:
            continue
        elif isinstance(e, GatewayDecision) and e.proposer == current["recipient"] and e.status == "accepted":
            current["accepted"] += 1
            current["accepted_actions"] += calls.is_action(e)
        elif isinstance(e, Disclosure) and current["recipient"] == USER:
            current["gate_requests"] += (e.status,)
    if current is not None:
        out.append(Exchange(**current))
    return out


def unanswerable_questions(exchanges: list[Exchange]) -> int:
    """Agent messages that reached a participant unable to answer them (docs/reader.md).

    Service participant: it got no call accepted in the exchange, unless the agent's next
    message to it brings an accepted action (the first half of a confirmation round trip).
    Customer: the gate was asked only for fields the card does not hold.
    """
    count = 0
    for i, ex in enumerate(exchanges):
        if ex.recipient == USER:
            count += bool(ex.gate_requests) and all(s == "unknown" for s in ex.gate_requests)
            continue
        if ex.accepted:
            continue
        nxt = next((x for x in exchanges[i + 1 :] if x.recipient == ex.recipient), None)
        count += not (nxt is not None and nxt.accepted_actions)
    return count


# --------------------------------------------------------------------------- reference


@dataclass(frozen=True)
class Fact:
    """Something a required call needs (an information item of the reference).

    customer: key is the gate token, holder USER. service: key is (tool, argument key) of
    the designated reference read, holder its executor in the arm; `consumed` holds the
    scalar argument values of the required calls that consume the read (for the stricter
    B.2 audit, which looks for them in other reads' results).
    """

    kind: str
    key: Any
    holder: str
    consumed: tuple[str, ...] = ()


def required_facts(task: dict, arm: str, keys: CallKeys) -> list[Fact]:
    """The facts the required calls need (Section 4.2): the reference's information items.
    The failure types and the information measures use this one set (Section 4.3). Reads that
    only serve what the customer must be told (`channel_sources`) are not among them."""
    items = task["information_items"]
    calls = {c["index"]: c for c in task["arms"][arm]["required_calls"]}
    facts = [Fact("customer", c["token"], USER) for c in items["customer"]]
    for s in items["service"]:
        consumed = tuple(
            dict.fromkeys(v for i in s["consumed_by"] if i in calls for v in _scalars(calls[i]["arguments"]))
        )
        facts.append(Fact("service", (s["name"], keys.key(s["name"], s["arguments"])), s["executor"][arm], consumed))
    return facts


def _scalars(doc: Any) -> Iterator[str]:
    """Every string or number in a JSON document, as text (booleans and nulls are no values to match)."""
    if isinstance(doc, dict):
        for v in doc.values():
            yield from _scalars(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _scalars(v)
    elif isinstance(doc, (str, int, float)) and not isinstance(doc, bool):
        yield str(doc)


def _obtained(fact: Fact, trace: Trace) -> bool:
    if fact.kind == "customer":
        return fact.key in trace.released
    return fact.key in trace.accepted_calls


def _approached(fact: Fact, trace: Trace) -> bool:
    """Did the agent go to the source of this fact at all, whatever it asked and whatever came
    of it (Section 4.3: "after the relevant participant was approached")? The same notion for
    both kinds: a message to the customer, or to the holder of the fact's read; in the direct
    arm, where the agent holds the tools, a use of that tool."""
    if fact.kind == "customer":
        return USER in trace.contacted
    if fact.holder == AGENT:
        return fact.key[0] in trace.agent_tools
    return fact.holder in trace.contacted


def _requested(fact: Fact, trace: Trace) -> bool:
    """The stricter alternative, reported as an audit (failure_type_request_based): the request
    reached the fact itself, i.e. the gate was asked for its token, or its holder proposed its
    read (the agent did, in the direct arm)."""
    if fact.kind == "customer":
        return fact.key in trace.gate_asked
    return (fact.holder, fact.key[0]) in trace.proposed


def _fraction(hits: int, total: int) -> float:
    return hits / total if total else NA


def _matched(needed: Counter, have: Counter) -> int:
    return sum(min(n, have[k]) for k, n in needed.items())


# --------------------------------------------------------------------------- labels


def classify(
    missing: list[Fact], approached: list[bool], attempted: bool, actions_correct: bool, outside_action: bool
) -> str:
    """The five failure types, first match wins (paper, Section 4.3). Failed trials only."""
    if not attempted:
        if missing:
            return REQUESTED_NOT_OBTAINED if any(approached) else NEVER_REQUESTED
        return OBTAINED_NOT_DELIVERED
    if not actions_correct or outside_action:
        return DELIVERED_INCORRECT
    return CORRECT_UNCONFIRMED


@dataclass(frozen=True)
class Reading:
    label: str
    credited: str  # the B.2 audit: non-reference reads credited for every missing service fact
    exact_credited: str  # B.2's stricter audit: credited only where a read returned a consumed value
    request_based: str  # the label with `_requested` in place of `_approached`
    missing_customer: int
    missing_service: int
    gate_withheld: int  # missing customer facts the gate was asked for and did not release


def read_failure(trace: Trace, facts: list[Fact], required_calls: list[dict]) -> Reading:
    _key = trace.calls.key
    needed_actions = Counter(
        (c["executor"], c["name"], _key(c["name"], c["arguments"]))
        for c in required_calls
        if c["tool_type"] == "write" or c["name"] in trace.calls.handoffs
    )
    matched = _matched(needed_actions, trace.accepted_actions)
    correct = matched == sum(needed_actions.values())
    outside = sum(trace.accepted_actions.values()) > matched
    missing = [f for f in facts if not _obtained(f, trace)]
    label = classify(missing, [_approached(f, trace) for f in missing], trace.action_attempted, correct, outside)

    def relabel(still_missing: list[Fact], approached=_approached) -> str:
        return classify(
            still_missing, [approached(f, trace) for f in still_missing], trace.action_attempted, correct, outside
        )

    credited = exact = label
    found = non_reference_values(trace, required_calls)
    if found is not None:
        # Appendix B.2 audits: credit every missing service fact to the non-reference reads; the
        # stricter one only a fact whose consumed value one of those reads returned exactly.
        credited = relabel([f for f in missing if f.kind == "customer"])
        exact = relabel([f for f in missing if f.kind == "customer" or not set(f.consumed) & found])
    withheld = sum(f.kind == "customer" and f.key in trace.gate_asked for f in missing)
    return Reading(
        label,
        credited,
        exact,
        relabel(missing, _requested),
        sum(f.kind == "customer" for f in missing),
        sum(f.kind == "service" for f in missing),
        withheld,
    )


def non_reference_values(trace: Trace, required_calls: list[dict]) -> set[str] | None:
    """The scalar values that accepted non-reference reads returned, minus what the customer
    released (a value the customer said is no evidence of a read); None without such reads."""
    _key = trace.calls.key
    reference = {(c["name"], _key(c["name"], c["arguments"])) for c in required_calls}
    results = [d.result for d in trace.accepted_read_decisions if (d.tool, _key(d.tool, d.arguments)) not in reference]
    if not results:
        return None
    return {v for r in results for v in _scalars(r)} - trace.released_values


def non_reference_reads(trace: Trace, required_calls: list[dict]) -> int:
    """Accepted calls that change nothing and are not a required call with its reference arguments."""
    _key = trace.calls.key
    reference = {(c["name"], _key(c["name"], c["arguments"])) for c in required_calls}
    return sum(1 for call in trace.accepted_reads if call not in reference)


def non_reference_actions(trace: Trace, required_calls: list[dict]) -> int:
    _key = trace.calls.key
    needed = Counter((c["executor"], c["name"], _key(c["name"], c["arguments"])) for c in required_calls)
    return sum(trace.accepted_actions.values()) - _matched(needed, trace.accepted_actions)


# --------------------------------------------------------------------------- one trial


def _process(trace: Trace, task: dict, arm: str) -> dict[str, float]:
    spec = task["arms"][arm]
    _key = trace.calls.key
    facts = required_facts(task, arm, trace.calls)
    customer = [f for f in facts if f.kind == "customer"]
    service = [f for f in facts if f.kind == "service"]
    hits_c = sum(_obtained(f, trace) for f in customer)
    hits_s = sum(_obtained(f, trace) for f in service)
    needed = Counter((c["executor"], c["name"], _key(c["name"], c["arguments"])) for c in spec["required_calls"])
    out = {
        "information_acquisition": _fraction(hits_c + hits_s, len(facts)),
        "customer_information": _fraction(hits_c, len(customer)),
        "service_information": _fraction(hits_s, len(service)),
        "execution": _fraction(_matched(needed, trace.accepted), sum(needed.values())),
        "role_identification": NA,
        "holder_contacted": NA,
    }
    roles = spec.get("role_assignments")
    if roles is not None:  # null where holders are declared: the process does not exist there
        # Section 4.2: the holder executed the call (an accepted decision), not merely proposed it.
        out["role_identification"] = _fraction(sum((r["desk"], r["tool"]) in trace.executed for r in roles), len(roles))
        out["holder_contacted"] = _fraction(sum(r["desk"] in trace.contacted for r in roles), len(roles))
    return out


def _flag(value: Any) -> float:
    return NA if value is None else float(bool(value))


def _usage(record: EpisodeRecord) -> dict:
    agent = record.usage.get(AGENT)
    roles = list(record.usage.values())
    return {
        "tokens_agent": (agent.prompt_tokens + agent.completion_tokens) if agent else 0,
        "tokens_episode": sum(u.prompt_tokens + u.completion_tokens for u in roles),
        "cost_agent_usd": float(agent.cost_usd) if agent else 0.0,
        "cost_episode_usd": float(sum(u.cost_usd for u in roles)),
        "cache_hits": sum(u.cache_hits for u in roles),
        "cache_misses": sum(u.cache_misses for u in roles),
    }


def trial_cell(record: EpisodeRecord) -> dict:
    cell = record.cell
    for key in ("arm", "model", "task", "rep"):
        if key not in cell:
            raise InputError(f"episode record {cell}: cell.{key}: missing")
    if not isinstance(cell["arm"], str) or cell["arm"] == NATIVE:
        raise InputError(f"episode record {cell}: cell.arm: {cell['arm']!r} is not an arm of our harness")
    return {
        "arm": cell["arm"],
        "model": str(cell["model"]),
        "task": str(cell["task"]),
        "rep": int(cell["rep"]),
        "seed": int(record.seed),
        "schedule_position": cell.get("schedule_position"),
    }


def read_trial(record: EpisodeRecord, reference_task: dict, audit_inputs=None) -> TrialRow:
    """Read one episode against its task's entry in the coordination reference; with
    `audit_inputs` (participant_audit.AuditInputs) also audit its participants' replies."""
    cell = trial_cell(record)
    arm = cell["arm"]
    if str(reference_task.get("task_id")) != split_task(cell["task"])[1]:
        raise InputError(f"episode {cell}: reference task {reference_task.get('task_id')!r} is not task {cell['task']}")
    if arm not in reference_task["arms"]:
        raise InputError(
            f"episode {cell}: arm {arm!r} is not in the coordination reference (its arms: "
            f"{', '.join(reference_task['arms'])}; rebuild it with the arm registry that ran the episode)"
        )
    trace = Trace(record.events, CallKeys.of(str(record.cell["task"])))
    required = reference_task["arms"][arm]["required_calls"]
    excluded = record.error is not None or record.termination == "error"
    if not excluded and record.success is None:
        raise InputError(f"episode {cell}: success: missing for an episode that ended {record.termination!r}")
    failed = not excluded and record.success is False
    reading = read_failure(trace, required_facts(reference_task, arm, trace.calls), required)
    process = {k: NA for k in PROCESS_COLUMNS} if excluded else _process(trace, reference_task, arm)
    channels = record.channels or {}
    truth = record.ground_truth or {}
    audited = _audit(record, trace, reference_task, audit_inputs, reading.label if failed else None)
    return TrialRow(
        **cell,
        error=record.error if record.error is not None else ("termination: error" if excluded else None),
        excluded=excluded,
        termination=record.termination,
        success=NA if excluded or record.success is None else float(record.success),
        database_only_success=NA if excluded else _flag(record.database_only_success),
        channel_db=NA if excluded else _flag(channels.get("db")),
        channel_communicate=NA if excluded else _flag(channels.get("communicate")),
        channel_nl=NA if excluded else _flag(channels.get("nl")),
        failure_type=reading.label if failed else None,
        failure_type_reads_credited=reading.credited if failed else None,
        failure_type_request_based=reading.request_based if failed else None,
        failure_type_exact_credited=reading.exact_credited if failed else None,
        injected_failure=truth.get("injected"),
        **process,
        agent_actions=len(trace.agent_messages) + len(trace.agent_proposals) + trace.protocol_errors,
        messages=sum(m.message_type == "MESSAGE" for m in trace.agent_messages),
        unanswerable_questions=unanswerable_questions(trace.exchanges),
        non_reference_reads=non_reference_reads(trace, required),
        **_usage(record),
        agent_backend=backend_family((record.models or {}).get("agent")),
        turns=record.turns,
        protocol_errors=trace.protocol_errors,
        action_attempted=trace.action_attempted,
        non_reference_actions=non_reference_actions(trace, required),
        missing_customer_facts=reading.missing_customer,
        missing_service_facts=reading.missing_service,
        gate_withheld_facts=reading.gate_withheld,
        level=reference_task.get("level"),
        injected_slips=truth.get("slips"),
        agent_structured_output=structured_output((record.models or {}).get("agent")),
        **audited,
    )


def _audit(record: EpisodeRecord, trace: Trace, reference_task: dict, inputs, failure_type: str | None) -> dict:
    """The participant-fidelity audit's columns for one episode ({} without its inputs: NA)."""
    from incognita.access.reader.participant_audit import attribute, audit, counts, score_against_injected

    if inputs is None:
        return {}
    cell = record.cell
    arm = cell["arm"]
    needed = [
        (f.holder, f.key[0], json.loads(f.key[1]))
        for f in required_facts(reference_task, arm, trace.calls)
        if f.kind == "service" and f.holder != AGENT and not _obtained(f, trace)
    ]
    card = inputs.card(str(cell["task"]), (record.card or {}).get("sha256"))
    findings = audit(record.events, card, inputs.arm(arm, split_task(str(cell["task"]))[0]), needed)
    replies = sum(1 for e in record.events if isinstance(e, Message) and e.sender != AGENT and e.recipient == AGENT)
    injected = (record.ground_truth or {}).get("participant_faults")
    scored = None if injected is None else score_against_injected(record.events, findings, injected)
    return {
        "participant_messages": replies,
        "failure_attribution": attribute(failure_type, findings),
        **{f"findings_{kind}": n for kind, n in counts(findings).items()},
        # Where scripted participants injected faults: the audit against them (participant_audit).
        "participant_faults_scored": None if scored is None else json.dumps(scored, sort_keys=True),
        "participant_findings": json.dumps([asdict(f) for f in findings]),
    }


def structured_output(entry: str | None) -> str | None:
    """The agent entry's `structured_output` setting, `none` when it has none (None without an entry)."""
    from incognita.common.backends.entry import ModelEntry

    if not entry:
        return None
    return ModelEntry.parse(entry).settings.get("structured_output") or "none"


def backend_family(entry: str | None) -> str:
    """`scripted`, `openai`, ... from a record's model entry (`unknown` when it has none)."""
    from incognita.common.backends.entry import ModelEntry

    if not entry:
        return "unknown"
    return ModelEntry.parse(entry).family
