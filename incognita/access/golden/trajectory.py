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
  and possibly after one deterministic normalisation (`transform`, see `value_matching.TRANSFORMS`).
* `request`: free text the agent composes from the customer's request (`demand` index);
  only the summary of `transfer_to_human_agents`.
* `policy`: a value from the policy vocabulary (`config/vocabulary.yaml`, keyed by argument
  name); `selected_by` lists card fields whose kind equals that name (e.g. `reason`).
* `read`: a leaf of the result of an earlier call `call` at JSON pointer `path`;
  `selected_by` names item/preference/payment/selector fields that describe the chosen
  element when the element sits in a collection of several (`element_selectors`).
* `computed`: the expression of `calculate`; `from` holds one `read` per number in it.
* `unsourced`: only on intended failures whose argument no rule can trace (a wrong id the
  source task invented); it never occurs on a call that succeeds.

Resolution order for one argument value (the first rule that matches wins)
-------------------------------------------------------------------------
A call's arguments are resolved one leaf at a time, `order_id` and `user_id` (the record
the call acts on) first, then the rest in document order: the other arguments of a write
describe parts of that record (the lines of an order, its payment), so once the record is
identified the reads that open it are the nearest source. (Without this, a breadth-first
search from an empty trajectory reaches a returned item's id through the catalog, two reads
deep, before it reaches it through the customer's own order, three reads deep.)

1. `calculate.expression` -> computed; `transfer_to_human_agents.summary` -> request.
2. The arguments of an identity lookup (`find_user_id_*`) come only from the customer
   (opening line or card field; a value read from the database would identify nothing).
3. The opening line, 4. a card field, 5. the policy vocabulary.
6. The earliest earlier call whose result holds the value in the task's entity scope
   (`incognita.access.golden.entity_scope`; document order inside it).
7. Read insertion (`incognita.access.golden.read_insertion`). If nothing matches and the
   call succeeds on the replay, the stage fails with an `InputError` naming task, call
   index, tool and argument.

What the customer says is preferred over what a read returns, for every argument and with
no exception for identity (generator 3 on): a `user_id` that equals a card field is that
field, a customer fact, even when an identity lookup earlier in the trajectory returned
the same id. (Generators 1 and 2 sourced such a user id from the lookup; that was the
only argument for which a read beat a card field.)

The other rules have their own modules: the entity scope a read must come from
(`incognita.access.golden.entity_scope`), the read-insertion rule
(`incognita.access.golden.read_insertion`), the selectors of a pick
(`incognita.access.golden.element_selectors`), the information channel
(`incognita.access.golden.information_tracing`) and counting
(`incognita.access.golden.call_counting`); JSON pointers and the policy vocabulary are in
`incognita.access.golden.provenance`, the matching of values in
`incognita.access.golden.value_matching`. This module holds the builder that combines
them, the stage's entry points (`build_golden`, `check_golden`, `golden_summary`) and
`GENERATOR_VERSION`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from incognita.access.golden.call_counting import CallCounting
from incognita.access.golden.element_selectors import ElementSelection
from incognita.access.golden.entity_scope import EntityScoping
from incognita.access.golden.information_tracing import InformationTracing
from incognita.access.golden.provenance import (
    ERROR_DOC,
    find_leaf,
    leaves,
    policy_source,
    result_doc,
    top_argument,
)
from incognita.access.golden.read_insertion import IDENTITY_TOOLS, ReadInsertion
from incognita.access.golden.upstream_replay import result_to_json
from incognita.access.golden.value_matching import (
    FIELD_PLANS,
    NUMBER,
    field_form,
    number_equals,
    string_equals,
    word_stems,
)
from incognita.common.io import InputError, sha256_obj

if TYPE_CHECKING:
    from incognita.access.golden.upstream_replay import RetailWorld

GOLDEN_SCHEMA_VERSION = 1
# Bump when a rule of this package changes what a golden trajectory contains.
GENERATOR_VERSION = 5
# Arguments naming the record a call acts on; they are resolved before the call's other
# arguments, which describe parts of that record (the lines of an order, its payment).
_SUBJECT_ARGUMENTS = ("order_id", "user_id")


def check_card(card: Any, where: str) -> None:
    """The card schema plus the invariants this stage relies on (the card stage's own check)."""
    from incognita.access.cards.card import validate_card

    validate_card(card, where)


# --------------------------------------------------------------------------- the builder


class _Builder(ElementSelection, EntityScoping, ReadInsertion, InformationTracing, CallCounting):
    """One golden trajectory as it is built; the rules of each part are in its mixin's module."""

    def __init__(self, card: dict, world: RetailWorld, vocabulary: dict[str, list[str]], where: str):
        self.card = card
        self.world = world
        self.vocab = vocabulary
        self.where = where
        self.task = card["task_id"]
        self.fields: list[dict] = card["fields"]
        self.opening: str = card["opening_line"]
        self.tools = world.private_toolkit()  # given back by build_golden once the calls ran
        self.calls: list[dict] = []
        self.docs: list[Any] = []  # parsed result per call, ERROR_DOC if it raised
        self._detail = ""  # why the last resolution failed (for the error message)
        self._catalog: dict[str, Any] = {}  # product id -> its catalog entry, for describing order lines
        self.scope = self._entity_scope()  # on the clean database, before any call runs

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
        first_inserted = len(self.calls)
        prov: dict[str, dict | None] = {}
        missing: list[tuple[str, Any, str]] = []
        for ptr, value in sorted(leaves(args), key=lambda pv: top_argument(pv[0]) not in _SUBJECT_ARGUMENTS):
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
        if missing:
            if self.calls[index]["error"] is None:
                ptr, value, detail = missing[0]
                looked = (
                    "an identity lookup takes only the customer's words: not in the opening line, no card field"
                    if name in IDENTITY_TOOLS
                    else "not in the opening line, no card field, not policy vocabulary, not in the "
                    "result of an earlier call or of any insertable read"
                )
                raise InputError(
                    f"{self.where}: task {self.task}, call {index} ({name}, action "
                    f"{action.get('action_id')}): argument {ptr} = {value!r} has no provenance "
                    f"({looked}){detail}"
                )
            for ptr, _value, _detail in missing:
                prov[ptr] = {"kind": "unsourced", "why": "intended_failure"}

    # ----------------------------------------------------------------- resolution

    def _resolve(self, tool: str, ptr: str, value: Any, consumer_ptr: str, allow_insert: bool) -> dict | None:
        arg = top_argument(ptr)
        if tool == "calculate" and arg == "expression":
            return self._computed(value, consumer_ptr, allow_insert)
        if tool == "transfer_to_human_agents" and arg == "summary":
            return self._request(value)
        if not isinstance(value, str):
            pred = (
                number_equals(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool)
                else (lambda p, leaf: leaf == value)
            )
            return self._from_reads(pred, arg) or (self._insert_for(pred, consumer_ptr) if allow_insert else None)
        if tool in IDENTITY_TOOLS:
            # Authentication checks what the customer says against the database; a value read
            # from the database would prove nothing, so only the customer's words count here.
            return self._from_opening(value) or self._from_field(value)
        p = (
            self._from_opening(value)
            or self._from_field(value)
            or self._from_vocabulary(arg, value)
            or self._from_reads(string_equals(value), arg)
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
        for part, transform in FIELD_PLANS:
            for field in self.fields:
                if field_form(field, part, transform, value):
                    return {"kind": "field", "token": field["token"], "part": part, "transform": transform}
        return None

    def _from_vocabulary(self, arg: str, value: str) -> dict | None:
        return policy_source(self.vocab, self.fields, arg, value)

    def _find_scoped(self, name: str, args: dict, doc: Any, pred: Callable[[str, Any], bool]) -> str | None:
        """The first leaf of a result that matches and that the task's entity scope admits."""
        return find_leaf(doc, lambda ptr, leaf: pred(ptr, leaf) and self.scope.admits(name, args, ptr, leaf))

    def _from_reads(self, pred: Callable[[str, Any], bool], role: str | None = None) -> dict | None:
        """The earliest scoped read that holds the value; `role` is the argument it sources."""
        for j, doc in enumerate(self.docs):
            ptr = self._find_scoped(self.calls[j]["name"], self.calls[j]["arguments"], doc, pred)
            if ptr is not None:
                return {"kind": "read", "call": j, "path": ptr, "selected_by": self._selectors(doc, ptr, role)}
        return None

    def _computed(self, expression: Any, consumer_ptr: str, allow_insert: bool) -> dict | None:
        if not isinstance(expression, str) or not all(ch in "0123456789+-*/(). " for ch in expression):
            self._detail = "; the expression has characters calculate does not accept"
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


def build_golden(
    card: dict,
    world: RetailWorld,
    vocabulary: dict[str, list[str]],
    *,
    card_sha256: str | None = None,
    where: str | None = None,
    verify_replay: bool = True,
) -> dict:
    """The golden trajectory of one (already validated) card, with its replay check.

    `card_sha256` is recorded as the card's identity (the CLI passes the file's digest; the
    default is the digest of the canonical JSON, which equals it for files written by
    `incognita.common.io.write_json`). `where` prefixes error messages.
    """
    from incognita.access.golden.upstream_replay import verify

    where = where or f"card {card.get('task_id')}"
    builder = _Builder(card, world, vocabulary, where)
    for action in card["reference_actions"]:
        builder.add_reference(action)
    information = builder.trace_information()
    builder.mark_counted(information)
    world.release(builder.tools)
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
        doc["replay"] = verify(world, doc, card["reference_actions"])
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
