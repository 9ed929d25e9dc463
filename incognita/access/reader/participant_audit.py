"""The participant-fidelity audit: did the simulated participants say what their evidence allows?

The reader labels where a trajectory stopped and never reads a message's words; this module
reads the other side of every exchange, the replies of the service participants (the desks,
Vega) and of the customer, and records each departure from what that participant could know
as a finding that points at its event (docs/fidelity.md). Deterministic and model-free: it
looks only for values of fixed shapes (order, user, payment, item and product identifiers,
amounts, dates, emails, zip codes) and for a few marks of conduct, so a paraphrase that
changes a meaning without changing a value passes unseen.

Who calls it: the reader (trial_reading.read_trial), once per Incognita episode, with the
task's card and the arm's holders. What it returns: the findings, and from them the
attribution of an acquisition failure (`attribute`), which the trials table carries and the
statistics stage tables (participant_fidelity, attribution).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from incognita.access.episodes.loop.records import Disclosure, GatewayDecision, Message, ToolProposal
from incognita.access.episodes.scripted.language import KINDS as TAG_KINDS
from incognita.access.episodes.scripted.scripted_customer import masking_rules
from incognita.access.taxonomy import ATTRIBUTED_FAILURES, FINDING_KINDS
from incognita.common.io import InputError, read_json, sha256_file

AGENT, USER = "agent", "USER"

# Findings that make a participant's answer wrong (not merely out of manner): they attribute a failure.
WRONG_ANSWER_KINDS = frozenset(
    {
        "ungrounded_value",
        "misreported_value",
        "claimed_unmade_change",
        "customer_invented_value",
        "customer_gate_bypass",
        "customer_confirmed_outside_memory",
    }
)


@dataclass(frozen=True)
class Finding:
    kind: str
    participant: str
    event: int  # index in the record's events (the viewer's permalink to it)
    turn: int
    detail: str


# --------------------------------------------------------------------------- values of fixed shapes

# Shapes of values every domain's participants may state (name, pattern, prefix of the normalised
# value); a domain adds its identifiers ahead of them (`ValueShapes.of`: retail's order, user,
# payment and item ids, incognita.access.domains.retail.reader).
GENERIC_SHAPES = (
    ("date", re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)"), ""),
    ("email", re.compile(r"(?<![\w.+-])([\w.+-]+@[\w-]+(?:\.[\w-]+)+)"), ""),
    (
        "amount",
        re.compile(r"(?<![\w.])\$?(\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+\.\d{1,2})(?![\d])|\$(\d+)(?![\d.,])"),
        "",
    ),
    ("zip", re.compile(r"(?<![\d.$#,-])(\d{5})(?!\d|[.,]\d)"), ""),
)
AMOUNT = "amount"  # compared in cents, and derivable as sums and differences (_ungrounded)


@dataclass(frozen=True)
class ValueShapes:
    """The values of fixed shapes the audit looks for in one domain's messages, and the
    identifiers a customer holds in its memory (a restated one that is not its card's is not its
    own; not zip codes or addresses: a change to a new address restates one the card rightly lacks)."""

    shapes: tuple[tuple[str, re.Pattern, str], ...]
    memory: tuple[str, ...]

    @classmethod
    def of(cls, domain_shapes: tuple, memory: tuple[str, ...]) -> ValueShapes:
        return cls((*domain_shapes, *GENERIC_SHAPES), memory)

    def is_identifier(self, text: str) -> bool:
        """Is `text` as a whole one of the domain's identifiers (not a generic shape: a date, an
        amount)? The desks' injected misreports alter those (participant_faults)."""
        generic = {name for name, _, _ in GENERIC_SHAPES}
        return any(pattern.fullmatch(text) for name, pattern, _ in self.shapes if name not in generic)

    def values(self, text: str) -> set[tuple[str, str]]:
        """Every (shape, normalised value) in `text`: a shape's prefix and the matched digits or
        words (retail's order ids as #W+digits), amounts in cents, the rest in lower case."""
        out = set()
        for shape, pattern, prefix in self.shapes:
            for m in pattern.finditer(text):
                raw = next(g for g in m.groups() if g is not None)
                if shape == AMOUNT:
                    out.add((shape, str(round(float(raw.replace(",", "")) * 100))))
                elif prefix:
                    out.add((shape, prefix + raw))
                else:
                    out.add((shape, raw.lower()))
        return out


def _derivable(cents: int, amounts: list[int]) -> bool:
    """An amount a faithful participant can state from amounts it has: a sum of up to three of
    them, or the difference of two (a total, a refund, a price difference)."""
    for r in (2, 3):
        if any(sum(c) == cents for c in itertools.combinations(amounts, r)):
            return True
    return any(abs(a - b) == cents for a, b in itertools.combinations(amounts, 2))


def _ungrounded(stated: set, grounds: set) -> list[tuple[str, str]]:
    amounts = sorted({int(v) for s, v in grounds if s == AMOUNT})[:40]  # bound the sums' search
    return sorted(
        (s, v) for s, v in stated - grounds if not (s == AMOUNT and len(amounts) > 1 and _derivable(int(v), amounts))
    )


# --------------------------------------------------------------------------- prose and conduct

_TAG_LINE = re.compile(r"^\s*#(" + "|".join(re.escape(k) for k in sorted(TAG_KINDS, key=len, reverse=True)) + r")\b")
_LIST_LINE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+\S|^\s*#{1,6}\s+\S")
# Words that send the asker somewhere else without naming a participant.
_ELSEWHERE = re.compile(
    r"\b(?:another|other|a different|the right|the appropriate|the relevant) "
    r"(?:desk|team|department|colleague|participant|person|agent)s?\b|\bsomeone else\b|\belsewhere\b|"
    r"\breach out to\b|\bcontact (?:the|another|a)\b",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:has|have) been (?:cancell?ed|changed|updated|modified|returned|exchanged|refunded|processed)\b|"
    r"\b(?:I have|I've|I) (?:now )?(?:cancell?ed|changed|updated|modified|returned|exchanged|refunded|processed)\b|"
    r"\b(?:change|cancellation|return|exchange) is (?:done|complete|completed)\b",
    re.IGNORECASE,
)
_AFFIRM = re.compile(r"^\s*(?:#yes\b|yes\b|yeah\b|yep\b|correct\b|that'?s (?:right|correct)\b|sure\b|confirm)", re.I)


def prose(text: str) -> str:
    """A message without the scripted participants' tag lines (their wire format, not their manner)."""
    return "\n".join(line for line in (text or "").splitlines() if not _TAG_LINE.match(line))


def _asks(text: str) -> bool:
    """A reply that asks the agent for something (a missing detail, a confirmation)."""
    return "?" in prose(text) or bool(re.search(r"^\s*#(?:missing|confirm\?)", text or "", re.M))


# --------------------------------------------------------------------------- the audit


@dataclass(frozen=True)
class ArmView:
    """What the audit needs to know of the arm: its holders and their tools, every tool's
    name, and whether holders refer (then naming one other holder is the arm's conduct)."""

    holders: dict[str, frozenset[str]]
    tools: frozenset[str]
    referral: bool
    shapes: ValueShapes  # the domain's (incognita.access.domain: its reader part)


def audit(
    events: list, card: dict | None, arm: ArmView, needed_reads: Iterable[tuple[str, str, dict]] = ()
) -> list[Finding]:
    """The findings of one episode. `needed_reads`: (holder, tool, arguments) of each reference
    read the episode never obtained, for the in-remit refusal check; `card` None: no customer checks."""
    findings: list[Finding] = []
    findings += _service_findings(events, arm)
    findings += _refusals(events, needed_reads, arm.shapes)
    if card is not None:
        findings += _customer_findings(events, card, arm.shapes)
    return sorted(findings, key=lambda f: (f.event, FINDING_KINDS.index(f.kind)))


def _service_findings(events: list, arm: ArmView) -> list[Finding]:
    values = arm.shapes.values
    out = []
    sent: dict[str, list[str]] = {}  # holder -> the agent's messages to it so far
    results: dict[str, list[str]] = {}  # holder -> what the gateway answered its calls, as text
    wrote_since: dict[str, bool] = {}  # holder -> an accepted change since the agent's last message
    tool_words = [(t, re.compile(rf"(?<![A-Za-z0-9_]){re.escape(t)}(?![A-Za-z0-9_])")) for t in sorted(arm.tools)]
    for i, e in enumerate(events):
        if isinstance(e, Message) and e.sender == AGENT and e.recipient in arm.holders:
            sent.setdefault(e.recipient, []).append(e.text)
            wrote_since[e.recipient] = False
        elif isinstance(e, GatewayDecision) and e.proposer in arm.holders:
            results.setdefault(e.proposer, []).append(
                json.dumps([e.result, e.reason, e.arguments], default=str, ensure_ascii=False)
            )
            if e.status == "accepted" and e.write:
                wrote_since[e.proposer] = True
        elif isinstance(e, Message) and e.sender in arm.holders and e.recipient == AGENT:
            who = e.sender

            def add(kind: str, detail: str, who=who, i=i, e=e) -> None:
                out.append(Finding(kind, who, i, e.turn, detail))

            own = set().union(*(values(r) for r in results.get(who, [])))
            heard = set().union(*(values(m) for m in sent.get(who, [])))
            own_shapes = {s for s, _ in own}
            for shape, value in _ungrounded(values(e.text), own | heard):
                kind = "misreported_value" if shape in own_shapes else "ungrounded_value"
                add(kind, f"{shape} {value}")
            text = prose(e.text)
            done = _DONE.search(text)
            if done and not wrote_since.get(who):
                add("claimed_unmade_change", done.group(0))
            if not arm.referral:
                others = [h for h in arm.holders if h != who and re.search(rf"\b{re.escape(h)}\b", text)]
                if others:
                    add("named_participant", ", ".join(others))
                elsewhere = _ELSEWHERE.search(text)
                if elsewhere:
                    add("referred_elsewhere", elsewhere.group(0))
            if any(_LIST_LINE.match(line) for line in text.splitlines()):
                add("formatted_list", next(line.strip() for line in text.splitlines() if _LIST_LINE.match(line)))
            named = [tool for tool, word in tool_words if word.search(text)]
            if named:
                add("named_tool", ", ".join(named))
    return out


def _contains_arguments(text: str, arguments: dict, values) -> bool:
    """Every scalar argument is in `text`: as a value of its shape where it has one, else as words."""
    have = values(text)
    for v in arguments.values():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            continue
        shaped = values(str(v))
        if not (shaped <= have if shaped else str(v).lower() in text.lower()):
            return False
    return True


def _refusals(events: list, needed_reads: Iterable[tuple[str, str, dict]], shapes: ValueShapes) -> list[Finding]:
    """A needed read's holder got its arguments and then neither proposed a read of that tool
    nor asked for anything: a refusal inside its remit (docs/fidelity.md)."""
    out = []
    for holder, tool, arguments in needed_reads:
        if not any(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in arguments.values()):
            continue  # a read without arguments (the catalog's list): nothing shows it was asked for
        start = next(
            (
                i
                for i, e in enumerate(events)
                if isinstance(e, Message)
                and e.sender == AGENT
                and e.recipient == holder
                and _contains_arguments(e.text, arguments, shapes.values)
            ),
            None,
        )
        if start is None:
            continue
        later = events[start + 1 :]
        proposed = any(isinstance(e, ToolProposal) and e.proposer == holder and e.tool == tool for e in later)
        replies = [
            (start + 1 + k, e)
            for k, e in enumerate(later)
            if isinstance(e, Message) and e.sender == holder and e.recipient == AGENT
        ]
        if proposed or not replies or any(_asks(e.text) for _, e in replies):
            continue
        # The refusal is the first reply that reports no call of its: the message carrying the
        # read's argument values may have asked for another read (an airline one-stop search
        # between the same airports), which the holder made and reported first.
        index, first_reply = replies[0]
        reported = False  # the holder proposed a call since its last reply
        for k, e in enumerate(later):
            if isinstance(e, ToolProposal) and e.proposer == holder:
                reported = True
            elif isinstance(e, Message) and e.sender == holder and e.recipient == AGENT:
                if not reported:
                    index, first_reply = start + 1 + k, e
                    break
                reported = False
        out.append(Finding("refused_in_remit", holder, index, first_reply.turn, f"{tool} {json.dumps(arguments)}"))
    return out


def _customer_findings(events: list, card: dict, shapes: ValueShapes) -> list[Finding]:
    values = shapes.values
    out = []
    fields = {f["token"]: f for f in card.get("fields", [])}
    pattern, _ = masking_rules(card)
    field_rules = {token: masking_rules({"fields": [f]})[0] for token, f in fields.items()}
    field_values = {token: values(str(f["value"])) for token, f in fields.items()}
    card_values = set().union(set(), *field_values.values())
    visible = " ".join(
        [
            card.get("opening_line") or "",
            *card.get("sentences", []),
            *card.get("not_known", []),
            *(r.get("demand", "") for r in card.get("requests", [])),
            *(fb for r in card.get("requests", []) for fb in r.get("fallbacks", [])),
        ]
    )
    # What the customer sees of its card: the request text with every field value masked.
    seen = values(pattern.sub(" ", visible) if pattern is not None else visible)
    released: set[str] = set()
    told = ""  # the agent's messages to the customer so far
    last_agent: Message | None = None
    for i, e in enumerate(events):
        if isinstance(e, Disclosure) and e.status in ("released", "already_released"):
            released.add(e.token)
        elif isinstance(e, Message) and e.sender == AGENT and e.recipient == USER:
            told += "\n" + e.text
            last_agent = e
        elif isinstance(e, Message) and e.sender == USER and e.recipient == AGENT:

            def add(kind: str, detail: str, i=i, e=e) -> None:
                out.append(Finding(kind, USER, i, e.turn, detail))

            # A placeholder for a field ("<item:skateboard>") names the field, not its value.
            said = re.sub("|".join(re.escape(f"<{t}>") for t in fields) or "$^", " ", e.text)
            # A released value may contain another field's (an email holds the first name): blank it first.
            known, _ = masking_rules({"fields": [fields[t] for t in released if t in fields]})
            said = known.sub(" ", said) if known is not None else said
            for token, rule in field_rules.items():
                if token in released or rule is None:
                    continue
                m = rule.search(said)
                if m and not rule.search(told):
                    add("customer_gate_bypass", f"{token}: {m.group(0)}")
            memory = set().union(set(), *(field_values[t] for t in released))
            allowed = seen | memory | values(told) | card_values  # an unreleased field's value is a bypass above
            for shape, value in sorted(values(e.text) - allowed):
                add("customer_invented_value", f"{shape} {value}")
            if last_agent is not None and _AFFIRM.match(prose(e.text) or e.text):
                restated = values(last_agent.text)
                for shape, value in sorted(restated):
                    holds = {v for s, v in card_values if s == shape}
                    if shape in shapes.memory and holds and value not in holds and (shape, value) not in seen:
                        add("customer_confirmed_outside_memory", f"{shape} {value} (card: {', '.join(sorted(holds))})")
            last_agent = None
    return out


def attribute(failure_type: str | None, findings: list[Finding]) -> str | None:
    """The attribution of an acquisition failure (ATTRIBUTED_FAILURES), None for any other trial.

    A refusal inside the remit names the missing read itself, so it comes first; then any wrong
    answer by a participant; else the replies were faithful as far as the audit sees, and the
    failure is the agent's side."""
    if failure_type not in ATTRIBUTED_FAILURES:
        return None
    kinds = {f.kind for f in findings}
    if "refused_in_remit" in kinds:
        return "participant_refused_in_remit"
    if kinds & WRONG_ANSWER_KINDS:
        return "participant_misreported"
    return "no_participant_fault_found"


def counts(findings: list[Finding]) -> dict[str, int]:
    """Findings per kind, every kind present (0 when none)."""
    tally = dict.fromkeys(FINDING_KINDS, 0)
    for f in findings:
        tally[f.kind] += 1
    return tally


# --------------------------------------------------------------------------- inputs


class AuditInputs:
    """The audit's inputs beyond a record: each registered arm's holders in each domain
    (config/arms.yaml over the domain's partition), the domain's value shapes, and the task cards
    the episodes ran with (checked by their sha256)."""

    def __init__(self, cards_root: str | Path, partitions: dict[str, str | Path], registry_path: str | Path):
        from incognita.access.arm_registry import arm_registry
        from incognita.access.domain import get_domain
        from incognita.access.reference.partition import load_partition

        registry = arm_registry(registry_path)
        self.cards_root = Path(cards_root)
        self.arms: dict[tuple[str, str], ArmView] = {}
        for domain, path in partitions.items():
            partition = load_partition(path)
            shapes = get_domain(domain).part("reader").VALUE_SHAPES
            for name in registry.names:
                entry = registry.arm(name)
                holders = {} if entry.agent_executes else entry.owners(partition)
                self.arms[(domain, name)] = ArmView(holders, frozenset(partition.tools), entry.referral, shapes)
        self._cards: dict[str, dict] = {}

    def arm(self, name: str, domain: str) -> ArmView:
        if (domain, name) not in self.arms:
            raise InputError(
                f"arm {name!r} of domain {domain!r} is not among the arms the audit read "
                f"({', '.join(sorted({a for _, a in self.arms}))}; domains {', '.join(sorted({d for d, _ in self.arms}))})"
            )
        return self.arms[(domain, name)]

    def card(self, task: str, sha256: str | None) -> dict:
        """The card of `task` (a qualified id), refused unless it is the one the episode ran with."""
        from incognita.access.domain import split_task
        from incognita.access.paths import card_file

        path = card_file(*split_task(task), root=self.cards_root)
        if task not in self._cards:
            if not path.exists():
                raise InputError(f"{path}: no card for task {task} (the audit reads the cards the episodes ran with)")
            self._cards[task] = {"doc": read_json(path), "sha256": sha256_file(path)}
        cached = self._cards[task]
        if sha256 is not None and cached["sha256"] != sha256:
            raise InputError(
                f"{path}: sha256 {cached['sha256'][:12]} is not the card the episode ran with ({sha256[:12]}); "
                "rebuild the cards or re-run the episodes"
            )
        return cached["doc"]


# --------------------------------------------------------------------------- scored against injected faults


def score_against_injected(events: list, findings: list[Finding], injected: list[dict]) -> dict:
    """How the findings meet the faults a scripted participant injected (its ground truth,
    incognita.access.episodes.scripted.participant_faults): per finding kind, the faults injected,
    those found (a finding of that kind on that participant's reply), the findings, and those
    that found an injected fault. A fault is found by a finding on the very reply that carries it."""
    reply_of: dict[int, int] = {}
    seen: dict[str, int] = {}
    for i, e in enumerate(events):
        if isinstance(e, Message) and e.recipient == AGENT and e.sender != AGENT:
            seen[e.sender] = seen.get(e.sender, 0) + 1
            reply_of[i] = seen[e.sender]
    marks = {(f.kind, f.participant, reply_of.get(f.event)) for f in findings}
    truth = {(i["finding"], i["participant"], i["reply"]) for i in injected}
    out = {}
    for kind in FINDING_KINDS:
        t = {x for x in truth if x[0] == kind}
        m = {x for x in marks if x[0] == kind}
        n_findings = sum(1 for f in findings if f.kind == kind)
        out[kind] = {
            "injected": len(t),
            "found": len(t & m),
            "findings": n_findings,
            "true_findings": sum(
                1 for f in findings if f.kind == kind and (kind, f.participant, reply_of.get(f.event)) in truth
            ),
        }
    return out
