"""Golden trajectories: the upstream reference actions plus the reads they depend on.

For one task card this stage produces the ordered list of tool calls that one verified
solution performs, where every leaf argument of every call carries a *provenance*: where an
agent could have got that exact value. The upstream reference actions are the anchors: kept
verbatim, in their order, including those that raise on a clean database (marked
`intended_failure`). Reads are inserted only where an argument, or an item the customer
must be told, would otherwise have no source. Executing the calls on a clean database must
reproduce upstream's gold-state hash (`incognita.access.golden.upstream_replay`).

Provenance kinds (see `incognita/schemas/golden.schema.json`)
------------------------------------------------------------
* `opening`: the value is written in the customer's opening line.
* `field`: a card field (`token`), possibly one word of it (`part`: first/last, names only)
  and possibly after one deterministic normalisation (`transform`: the generic ones of
  `value_matching.GENERIC_TRANSFORMS` and the domain's, `Domain.golden.TRANSFORMS`).
* `request`: free text the agent composes from the customer's request (`demand` index);
  only the summary of a hand-off tool (the domain's tool with role `handoff`).
* `policy`: a value from the policy vocabulary (`config/vocabulary.yaml`, keyed by argument
  name); `selected_by` lists card fields whose kind equals that name (e.g. `reason`).
* `read`: a leaf of the result of an earlier call `call` at JSON pointer `path`;
  `selected_by` names the card fields that describe the chosen element when the element sits
  in a collection of several (the domain's golden rules decide which: retail's item,
  preference, payment and selector fields).
* `computed`: the expression of an arithmetic tool (role `arithmetic`: `calculate`); `from`
  holds one `read` per number in it.
* `derived`: a value a domain rule (`rule`, named in the domain's `DERIVATIONS`) computes from
  other provenances (`from`: fields and reads), without a call (airline: a date shifted by the
  days the customer states, a bag count, a fare share, a compensation amount).
* `unsourced`: on intended failures whose argument no rule can trace (a wrong id the source task
  invented; `why: intended_failure`), and on a call that succeeds only for a value upstream's
  gold invents against its own records, where the domain's upstream_ambiguities.yaml lists the
  argument with its reason (`why: upstream_ambiguity`; `ambiguities` of `build_golden`).

Resolution order for one argument value (the first rule that matches wins)
-------------------------------------------------------------------------
A call's arguments are resolved one leaf at a time, the domain's subject arguments (the record
the call acts on: retail's `order_id` and `user_id`) first, then the rest in document order:
the other arguments of a write describe parts of that record (the lines of an order, its
payment), so once the record is identified the reads that open it are the nearest source.
(Without this, a breadth-first search from an empty trajectory reaches a returned item's id
through the catalog, two reads deep, before it reaches it through the customer's own order,
three reads deep.)

1. An arithmetic tool's `expression` -> computed; a hand-off tool's `summary` -> request.
2. The arguments of an identity lookup (role `identity`: retail's `find_user_id_*`) come only
   from the customer (opening line or card field; a value read from the database would
   identify nothing).
3. The opening line, 4. a card field, 5. the policy vocabulary.
6. The earliest earlier call whose result holds the value in the task's entity scope
   (the domain's rule; document order inside it).
6a. A value the domain's rules derive from fields and earlier results (`derived`: airline's dates
   shifted by the days the customer states, its bag counts and fares); for a number this is tried
   before the reads, since a number a read happens to hold is no source of it, and a domain whose
   rules derive every number (`NUMBERS_FROM_READS = False`: airline) takes none from a read.
   Retail and the plain rules derive nothing.
7. Read insertion: the builder's breadth-first search (`_search`) over the reads the domain's
   rules name as candidates, in their order and to their depth (a domain's own insertion, such
   as airline's flight searches, is tried first). If nothing matches and the call succeeds on
   the replay, the stage fails with an `InputError` naming task, call index, tool and argument.

What the customer says is preferred over what a read returns, for every argument and with
no exception for identity (generator 3 on): a `user_id` that equals a card field is that
field, a customer fact, even when an identity lookup earlier in the trajectory returned
the same id. (Generators 1 and 2 sourced such a user id from the lookup; that was the
only argument for which a read beat a card field.)

A task that starts from an initial state (its message history holds tool calls) begins its
trajectory with those calls, `origin: initial_state`: their results are known (the history's
tool messages), they are part of the state and never run again, and their results source
values like any read's (`why_not_counted: initial_state`).

The rules that know a domain's records are the domain's (`Domain.golden.RULES`, a mixin of the
builder: the entity scope a read must come from, the candidate reads of the read search and its
depth, the selectors of a pick; for retail incognita.access.domains.retail.golden); the generic ones have their own
modules: the information channel (`incognita.access.golden.information_tracing`) and counting
(`incognita.access.golden.call_counting`); JSON pointers and the policy vocabulary are in
`incognita.access.golden.provenance`, the matching of values in
`incognita.access.golden.value_matching`. This module holds the builder that combines
them, the stage's entry points (`build_golden`, `check_golden`, `golden_summary`) and
`GENERATOR_VERSION`.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from incognita.access.golden.call_counting import CallCounting
from incognita.access.golden.information_tracing import InformationTracing
from incognita.access.golden.provenance import (
    ERROR_DOC,
    find_leaf,
    leaves,
    policy_source,
    result_doc,
    top_argument,
)
from incognita.access.golden.upstream_replay import INITIAL_STATE, result_to_json
from incognita.access.golden.value_matching import (
    NUMBER,
    number_equals,
    string_equals,
    word_stems,
)
from incognita.common.io import InputError, sha256_obj

if TYPE_CHECKING:
    from incognita.access.golden.upstream_replay import World

GOLDEN_SCHEMA_VERSION = 1
# Bump when a rule of this package changes what a golden trajectory contains.
GENERATOR_VERSION = 5


def check_card(card: Any, where: str) -> None:
    """The card schema plus the invariants this stage relies on (the card stage's own check)."""
    from incognita.access.cards.card import validate_card

    validate_card(card, where)


# --------------------------------------------------------------------------- the builder


class _BuilderCore:
    """One golden trajectory as it is built: what every domain's builder shares. The builder of a
    domain (`builder_class`) is this with the domain's rules and the generic information tracing
    and counting mixed in; the rules of each part are in its mixin's module."""

    def __init__(
        self, card: dict, world: World, vocabulary: dict[str, list[str]], where: str, ambiguous: frozenset = frozenset()
    ):
        domain = world.domain
        # The task's arguments its domain's upstream_ambiguities.yaml lists (`<tool>.<argument>`):
        # a value of a successful call there may have no source (upstream's gold invents it).
        self.ambiguous = ambiguous
        self.card = card
        self.world = world
        self.vocab = vocabulary
        self.where = where
        self.task = card["task_id"]
        self.fields: list[dict] = card["fields"]
        self.opening: str = card["opening_line"]
        self.golden_rules = domain.golden
        self.subject_arguments = domain.subject_arguments
        self.identity_tools = domain.tools_with("identity")
        self.arithmetic_tools = domain.tools_with("arithmetic")
        self.handoff_tools = domain.tools_with("handoff")
        # Given back by build_golden once the calls ran; a task's initial state is set on it.
        self.tools = world.start(card.get("initial_state"))
        self.calls: list[dict] = []
        self.docs: list[Any] = []  # parsed result per call, ERROR_DOC if it raised
        self._detail = ""  # why the last resolution failed (for the error message)
        self._catalog: dict[str, Any] = {}  # product id -> its catalog entry, for describing order lines
        self.action: dict | None = None  # the reference action whose arguments are being resolved
        self.scope = self._entity_scope()  # on the task's first state, before any call of it runs
        self._history()

    def _history(self) -> None:
        """The tool calls of the task's message history, in order, with the results its tool
        messages hold: already made (the state has them), sources like any read."""
        history = (self.card.get("initial_state") or {}).get("message_history") or []
        answers = {m.get("id"): m.get("content") for m in history if m.get("role") == "tool"}
        for message in history:
            for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
                content = answers.get(call.get("id"))
                try:
                    result = json.loads(content) if isinstance(content, str) else content
                except json.JSONDecodeError:
                    result = content
                index = len(self.calls)
                self.calls.append(
                    {
                        "index": index,
                        "origin": INITIAL_STATE,
                        "action_id": None,
                        "name": call["name"],
                        "tool_type": self.world.tool_types[call["name"]],
                        "requestor": "assistant",
                        "arguments": copy.deepcopy(call.get("arguments") or {}),
                        "provenance": {},
                        "inserted_for": None,
                        "result": result,
                        "error": None,
                        "intended_failure": False,
                        "counted": False,
                        "why_not_counted": INITIAL_STATE,
                    }
                )
                self.docs.append(result_doc(result))

    # ----------------------------------------------------------------- execution

    def _execute(self, name: str, args: dict) -> tuple[Any, str | None]:
        try:
            return result_to_json(self.tools.use_tool(name, **args)), None
        except Exception as exc:  # noqa: BLE001 - tool errors are data
            return None, str(exc) or exc.__class__.__name__

    def _append(
        self,
        *,
        origin: str,
        action_id: str | None,
        name: str,
        requestor: str,
        args: dict,
        prov: dict,
        inserted_for: dict | None,
    ) -> int:
        result, error = self._execute(name, args)
        index = len(self.calls)
        self.calls.append(
            {
                "index": index,
                "origin": origin,
                "action_id": action_id,
                "name": name,
                "tool_type": self.world.tool_types[name],
                "requestor": requestor,
                "arguments": copy.deepcopy(args),
                "provenance": prov,
                "inserted_for": inserted_for,
                "result": result,
                "error": error,
                "intended_failure": error is not None,
                "counted": None,
                "why_not_counted": None,
            }
        )
        self.docs.append(ERROR_DOC if error is not None else result_doc(result))
        return index

    # ----------------------------------------------------------------- anchors

    def add_reference(self, action: dict) -> None:
        name = action["name"]
        self.world.check_tool(name, f"{self.where}: reference action {action.get('action_id')}")
        args = action["arguments"]
        requestor = action.get("requestor") or "assistant"
        self.action = action
        first_inserted = len(self.calls)
        prov: dict[str, dict | None] = {}
        missing: list[tuple[str, Any, str]] = []
        for ptr, value in sorted(leaves(args), key=lambda pv: top_argument(pv[0]) not in self.subject_arguments):
            self._detail = ""
            p = self._resolve(name, ptr, value, ptr, allow_insert=True)
            prov[ptr] = p
            if p is None:
                missing.append((ptr, value, self._detail))
        index = len(self.calls)
        for call in self.calls[first_inserted:]:
            call["inserted_for"]["call"] = index
        self._append(
            origin="reference",
            action_id=action.get("action_id"),
            name=name,
            requestor=requestor,
            args=args,
            prov=prov,
            inserted_for=None,
        )
        why = "intended_failure" if self.calls[index]["error"] is not None else "upstream_ambiguity"
        unlisted = [
            m for m in missing if why == "upstream_ambiguity" and f"{name}.{top_argument(m[0])}" not in self.ambiguous
        ]
        if missing:
            if unlisted:
                ptr, value, detail = unlisted[0]
                looked = (
                    "an identity lookup takes only the customer's words: not in the opening line, no card field"
                    if name in self.identity_tools
                    else "not in the opening line, no card field, not policy vocabulary, not in the "
                    "result of an earlier call or of any insertable read"
                )
                raise InputError(
                    f"{self.where}: task {self.task}, call {index} ({name}, action "
                    f"{action.get('action_id')}): argument {ptr} = {value!r} has no provenance "
                    f"({looked}){detail}"
                )
            for ptr, _value, _detail in missing:
                prov[ptr] = {"kind": "unsourced", "why": why}

    # ----------------------------------------------------------------- resolution

    def _resolve(self, tool: str, ptr: str, value: Any, consumer_ptr: str, allow_insert: bool) -> dict | None:
        arg = top_argument(ptr)
        if tool in self.arithmetic_tools and arg == "expression":
            return self._computed(value, consumer_ptr, allow_insert)
        if tool in self.handoff_tools and arg == "summary":
            return self._request(value)
        if not isinstance(value, str):
            pred = (
                number_equals(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool)
                else (lambda p, leaf: leaf == value)
            )
            if not self.NUMBERS_FROM_READS:  # the domain's numbers are all derived (airline)
                return self._derive(tool, ptr, value, allow_insert)
            return (
                self._derive(tool, ptr, value, allow_insert)
                or self._from_reads(pred, arg)
                or (self._insert_for(pred, consumer_ptr) if allow_insert else None)
            )
        if tool in self.identity_tools:
            # Authentication checks what the customer says against the database; a value read
            # from the database would prove nothing, so only the customer's words count here.
            return self._from_opening(value) or self._from_field(value)
        p = (
            self._from_opening(value)
            or self._from_field(value)
            or self._from_vocabulary(arg, value)
            or self._from_reads(string_equals(value), arg)
            or self._derive(tool, ptr, value, allow_insert)
        )
        if p is None and allow_insert:
            p = self._insert_for(string_equals(value), consumer_ptr)
        return p

    def _from_opening(self, value: str) -> dict | None:
        if len(value.strip()) < 2:
            return None
        pattern = r"(?<![A-Za-z0-9])" + re.escape(value.strip()) + r"(?![A-Za-z0-9])"
        if re.search(pattern, self.opening, re.IGNORECASE):
            return {"kind": "opening"}
        return None

    def _from_field(self, value: str) -> dict | None:
        if value == "":
            return None
        for part, transform in self.golden_rules.FIELD_PLANS:
            for field in self.fields:
                if self.golden_rules.field_form(field, part, transform, value):
                    return {"kind": "field", "token": field["token"], "part": part, "transform": transform}
        return None

    def _from_vocabulary(self, arg: str, value: str) -> dict | None:
        return policy_source(self.vocab, self.fields, arg, value)

    def _find_scoped(self, name: str, args: dict, doc: Any, pred: Callable[[str, Any], bool]) -> str | None:
        """The first leaf of a result that matches and that the task's entity scope admits."""
        return find_leaf(doc, lambda ptr, leaf: pred(ptr, leaf) and self.scope.admits(name, args, ptr, leaf))

    # ----------------------------------------------------------------- read insertion

    def _peek(self, name: str, args: dict) -> Any:
        result, error = self._execute(name, args)  # reads only: the database is not changed
        return ERROR_DOC if error is not None else result_doc(result)

    def _insert_for(self, pred: Callable[[str, Any], bool], consumer_ptr: str) -> dict | None:
        """Insert the reads that source an argument value; the value's provenance, or None. The
        domain's own way is tried first (`_insert_before_search`: airline's flight search)."""
        p = self._insert_before_search(pred, consumer_ptr)
        if p is not None:
            return p
        chain = self._search(lambda name, args, doc: self._find_scoped(name, args, doc, pred) is not None)
        if chain is None:
            return None
        # `call` is filled in by add_reference once the consumer's index is known.
        self._insert_chain(chain, {"call": None, "argument": consumer_ptr, "reason": "value"})
        return self._from_reads(pred, top_argument(consumer_ptr))

    def _search(
        self, hit: Callable[[str, dict, Any], bool], skip: frozenset[str] = frozenset()
    ) -> list[tuple[str, dict]] | None:
        """Breadth-first search for the shortest chain of new reads whose last result is a `hit`
        (called with the read's tool, arguments and result); tools in `skip` are not tried.

        What the domain knows is data its rules give: the reads the card's fields open
        (`_field_candidates`) and those a result opens (`_candidates_from`), the reads that need
        no argument (`LISTING_READS`, tried at depth 1 after the others), the order the tools are
        tried in (`CANDIDATE_ORDER`; within one tool, in order of discovery) and the depth
        (`MAX_INSERT_DEPTH`; 0: the domain inserts no reads)."""

        def key(n, a):
            return (n, json.dumps(a, sort_keys=True))

        rank = {tool: i for i, tool in enumerate(self.CANDIDATE_ORDER)}

        def order(candidate: tuple[str, dict, list]) -> int:
            if candidate[0] not in rank:
                raise AssertionError(f"candidate read {candidate[0]} is not in the domain's CANDIDATE_ORDER")
            return rank[candidate[0]]

        # A read already made since the last successful write would return the same again.
        last_write = max(
            (c["index"] for c in self.calls if c["tool_type"] == "write" and c["error"] is None), default=-1
        )
        tried = {key(c["name"], c["arguments"]) for c in self.calls[last_write + 1 :] if c["error"] is None}
        frontier: list[tuple[str, Any, list]] = [(c["name"], d, []) for c, d in zip(self.calls, self.docs)]
        for depth in range(1, self.MAX_INSERT_DEPTH + 1):
            candidates: list[tuple[str, dict, list]] = []
            if depth == 1:
                candidates += [(n, a, []) for n, a in self._field_candidates()]
            for name, doc, chain in frontier:
                candidates += [(n, a, chain) for n, a in self._candidates_from(name, doc)]
            if depth == 1:
                candidates += [(n, dict(a), []) for n, a in self.LISTING_READS]
            candidates = [c for c in candidates if c[0] not in skip]
            candidates.sort(key=order)  # stable: discovery order within a tool
            next_frontier = []
            for name, args, chain in candidates:
                k = key(name, args)
                if k in tried:
                    continue
                tried.add(k)
                doc = self._peek(name, args)
                if doc is ERROR_DOC:
                    continue
                path = chain + [(name, args)]
                if hit(name, args, doc):
                    return path
                next_frontier.append((name, doc, path))
            if not next_frontier:
                break
            frontier = next_frontier
        return None

    def _append_inserted(self, name: str, args: dict, prov: dict, inserted_for: dict) -> int:
        """Append a read the builder inserts (the agent's, not upstream's); its index."""
        return self._append(
            origin="inserted",
            action_id=None,
            name=name,
            requestor="assistant",
            args=args,
            prov=prov,
            inserted_for=inserted_for,
        )

    def _insert_chain(self, chain: list[tuple[str, dict]], inserted_for: dict) -> None:
        """Append a chain of reads found by `_search`, each argument resolved without insertion."""
        for name, args in chain:
            prov = {}
            for ptr, value in leaves(args):
                p = self._resolve(name, ptr, value, ptr, allow_insert=False)
                if p is None:  # cannot happen: candidates are built from sourced values
                    raise AssertionError(f"inserted {name}{args} has an unsourced argument {ptr}")
                prov[ptr] = p
            index = self._append_inserted(name, args, prov, dict(inserted_for))
            if self.calls[index]["error"] is not None:
                raise AssertionError(f"inserted read {name}{args} failed: {self.calls[index]['error']}")

    def _from_reads(self, pred: Callable[[str, Any], bool], role: str | None = None) -> dict | None:
        """The earliest scoped read that holds the value; `role` is the argument it sources."""
        for j, doc in enumerate(self.docs):
            ptr = self._find_scoped(self.calls[j]["name"], self.calls[j]["arguments"], doc, pred)
            if ptr is not None:
                return {"kind": "read", "call": j, "path": ptr, "selected_by": self._selectors(doc, ptr, role)}
        return None

    def _computed(self, expression: Any, consumer_ptr: str, allow_insert: bool) -> dict | None:
        if not isinstance(expression, str) or not all(ch in "0123456789+-*/(). " for ch in expression):
            self._detail = "; the expression has characters the arithmetic tool does not accept"
            return None
        parts = []
        for number in NUMBER.findall(expression):
            pred = number_equals(number)
            p = self._from_reads(pred) or (self._insert_for(pred, consumer_ptr) if allow_insert else None)
            if p is None:
                self._detail = f"; the operand {number} is in no result"
                return None
            parts.append(dict(p, operand=number))
        return {"kind": "computed", "from": parts}

    def _request(self, summary: Any) -> dict | None:
        requests = self.card.get("requests") or []
        if not isinstance(summary, str) or not requests:
            self._detail = "; the card has no request to summarise"
            return None
        said = word_stems(summary)
        best, best_score = 0, -1
        for i, req in enumerate(requests):
            text = " ".join([req["demand"], *req.get("fallbacks", [])])
            score = len(said & word_stems(text))
            if score > best_score:
                best, best_score = i, score
        return {"kind": "request", "demand": best}


# --------------------------------------------------------------------------- public API


@functools.cache
def builder_class(rules: type) -> type:
    """The golden builder of a domain: its rules (`Domain.golden.RULES`), then the generic parts."""
    # The core first: its methods come before the mixins', as a class body's come before its bases'.
    return type(f"GoldenBuilder[{rules.__module__}]", (_BuilderCore, rules, InformationTracing, CallCounting), {})


def build_golden(
    card: dict,
    world: World,
    vocabulary: dict[str, list[str]],
    *,
    card_sha256: str | None = None,
    where: str | None = None,
    verify_replay: bool = True,
    ambiguities: dict[str, dict[str, str]] | None = None,
) -> dict:
    """The golden trajectory of one (already validated) card, with its replay check.

    `card_sha256` is recorded as the card's identity (the CLI passes the file's digest; the
    default is the digest of the canonical JSON, which equals it for files written by
    `incognita.common.io.write_json`). `where` prefixes error messages.
    """
    from incognita.access.golden.upstream_replay import verify

    where = where or f"card {card.get('task_id')}"
    ambiguous = frozenset((ambiguities or {}).get(str(card["task_id"]), {}))
    builder = builder_class(world.domain.golden.RULES)(card, world, vocabulary, where, ambiguous)
    for action in card["reference_actions"]:
        builder.add_reference(action)
    information = builder.trace_information()
    builder.mark_counted(information)
    world.finish(builder.tools)
    calls = builder.calls
    doc = {
        "schema_version": GOLDEN_SCHEMA_VERSION,
        "generator_version": GENERATOR_VERSION,
        "task_id": card["task_id"],
        "card": {"sha256": card_sha256 or sha256_obj(card), "card_version": card["card_version"]},
        "inputs": {"db_sha256": world.db_sha256, "vocabulary_sha256": sha256_obj(vocabulary)},
        "calls": calls,
        "information_channel": information,
        "scope": builder.scope.to_json(),
        "counts": {
            "calls": len(calls),
            "reference": sum(c["origin"] == "reference" for c in calls),
            "inserted": sum(c["origin"] == "inserted" for c in calls),
            "counted": sum(bool(c["counted"]) for c in calls),
            "intended_failure": sum(c["why_not_counted"] == "intended_failure" for c in calls),
            "exploration_only": sum(c["why_not_counted"] == "exploration_only" for c in calls),
            "information_traced": sum(i["provenance"] is not None for i in information),
            "information": len(information),
        },
        "replay": None,
    }
    if verify_replay:
        doc["replay"] = verify(world, doc, card["reference_actions"], card.get("initial_state"))
    return doc


def check_golden(doc: dict, where: str) -> None:
    """Validate a golden trajectory against incognita/schemas/golden.schema.json."""
    from incognita.common.schema import validate

    validate(doc, "golden.schema.json", where)


def golden_summary(doc: dict) -> str:
    c, r = doc["counts"], doc["replay"] or {}
    return (
        f"task {doc['task_id']}: {c['calls']} calls ({c['reference']} reference, {c['inserted']} inserted), "
        f"{c['counted']} counted, {c['intended_failure']} intended failure(s), "
        f"{c['exploration_only']} exploration-only, info {c['information_traced']}/{c['information']} traced; "
        f"replay {'match' if r.get('match') else 'MISMATCH'}"
    )
