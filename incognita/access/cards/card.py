"""Task cards: a source task turned into data the environment renders selectively.

A card holds what only the customer knows, split into named fields that the disclosure
gate releases one at a time (each a token with its value), the customer's own demands in
order with their fallbacks, and the upstream reference actions verbatim. The card is never
shown to the evaluated agent.

Who writes: `incognita cards` (incognita.access.cards.commands). Each domain's card rules build
a card's fields, opening line and demand sentences from its source task (`Domain.cards`, for
retail incognita.access.domains.retail.card_rules); this module holds what every card shares:
the field set, how demand sentences become requests with their conditional fallbacks, the
document's layout (`card_document`), the upstream task's evaluation facts a card carries
verbatim, and the check every card passes (`validate_card`). Every field value is made of
spans copied from the source instructions. Per-task corrections are data, not code: YAML
overlays in the domain's `repairs/` folder (see incognita.access.cards.repairs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from incognita.access.cards.text import norm

if TYPE_CHECKING:
    from incognita.access.domain import Domain

SCHEMA_VERSION = 1
# Bump when a rule change alters cards: the workflow passes it as a param, so cards (and
# everything built from them) are rebuilt; plain code edits never invalidate results.
BUILDER_VERSION = 4

# Sentence openers that make a sentence a condition on the demand before it.
FALLBACK = re.compile(
    r"^(if|but if|if not|only if|if and only if|otherwise|unless|when the agent|but when|when asked|"
    r"in case|if so|if that|if there|if the agent|if several|if no|if cancelling|if you)\b",
    re.IGNORECASE,
)
# A demand's own clause that waits for the agent's confirmation ("You want to cancel the grill,
# but if the agent asks you to confirm, you regret and want to keep it"): a fallback of it.
_AT_CONFIRMATION = re.compile(
    r",\s+but\s+(?=(?:if|when)\s+the\s+agent\s+asks?\s+(?:you\s+)?(?:for\s+(?:\w+\s+)?confirm|to\s+confirm))",
    re.IGNORECASE,
)
# Phrases by which the source tells the customer to keep something back on purpose.
WITHHOLD = re.compile(
    r"(do not|don't|never)\s+(want to\s+)?reveal\b|without revealing|do not mention|don't mention",
    re.IGNORECASE,
)


@dataclass
class Field:
    token: str
    kind: str
    value: str
    spans: list[str]
    note: str | None = None

    def as_dict(self) -> dict:
        out = {"token": self.token, "kind": self.kind, "value": self.value, "spans": self.spans}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class FieldSet:
    """Collects fields, keeping tokens unique (a second distinct value gets `_2`, `_3`...)."""

    fields: list[Field] = field(default_factory=list)

    def add(self, token: str, kind: str, value: str, spans: list[str], note: str | None = None) -> None:
        for f in self.fields:
            # One value is one field; a preference is one per product ("cheapest" for two).
            same_product = kind != "preference" or re.sub(r"_\d+$", "", f.token) == token
            if f.kind == kind and norm(f.value) == norm(value) and same_product:
                return
        base, n, candidate = token, 1, token
        while any(f.token == candidate for f in self.fields):
            n += 1
            candidate = f"{base}_{n}"
        self.fields.append(Field(candidate, kind, value, spans, note))


# --------------------------------------------------------------------------- requests


def build_requests(sentences: list[str]) -> list[dict]:
    """Each sentence of the reason for calling is a demand; conditional sentences are fallbacks.
    A demand's clause that waits for the agent's confirmation (", but if the agent asks you to
    confirm, ...") is split off as a fallback of that demand, so it keeps its trigger."""
    requests: list[dict] = []
    for i, sentence in enumerate(sentences):
        if requests and FALLBACK.match(sentence):
            requests[-1]["fallbacks"].append(sentence)
            requests[-1]["covers"].append(i)
            continue
        demand, *clause = _AT_CONFIRMATION.split(sentence, maxsplit=1)
        requests.append({"demand": demand, "fallbacks": clause, "covers": [i]})
    return requests


# --------------------------------------------------------------------------- the card

# The upstream evaluation facts a card carries verbatim when its task has them (none of
# retail's tasks does, so a retail card has none of these keys): the reward basis (which
# channels decide success; upstream's default is the database and the information channel),
# the environment assertions, and the task's initial state (initialization data and actions,
# a message history), which the golden replay, the episodes and the native run start from.
UPSTREAM_EXTRAS = ("reward_basis", "env_assertions", "initial_state")


def card_document(
    task: dict,
    source_meta: dict,
    *,
    instructions: Any,
    opening_line: str,
    fields: FieldSet,
    not_known: list[str],
    sentences: list[str],
    persona: str,
    withholds_disclosure: bool,
) -> dict:
    """The rule-built (version 1) card of one upstream task, in the layout every domain's card has."""
    criteria = task.get("evaluation_criteria") or {}
    actions = criteria.get("actions") or []
    card = {
        "schema_version": SCHEMA_VERSION,
        "task_id": str(task["id"]),
        "card_version": 1,
        "builder_version": BUILDER_VERSION,
        "source": {
            "package": source_meta["package"],
            "version": source_meta["version"],
            "tasks_sha256": source_meta["tasks_sha256"],
            "instructions": instructions,
        },
        "opening_line": opening_line,
        "fields": [f.as_dict() for f in fields.fields],
        "not_known": not_known,
        "sentences": sentences,
        "requests": build_requests(sentences),
        "persona": persona,
        "reference_actions": [_reference_action(a) for a in actions],
        "information_channel": {
            "communicate_info": list(criteria.get("communicate_info") or []),
            "nl_assertions": list(criteria.get("nl_assertions") or []),
        },
        "withholds_disclosure": withholds_disclosure,
        "repairs": [],
    }
    extras = {
        "reward_basis": criteria.get("reward_basis"),
        "env_assertions": criteria.get("env_assertions"),
        "initial_state": task.get("initial_state"),
    }
    card.update({k: v for k, v in extras.items() if v})
    return card


def _reference_action(action: dict) -> dict:
    out = {"action_id": action.get("action_id"), "name": action["name"], "arguments": action["arguments"]}
    # What upstream's action check compares (absent: every argument); kept only where a task sets it.
    if action.get("compare_args") is not None:
        out["compare_args"] = list(action["compare_args"])
    if (action.get("requestor") or "assistant") != "assistant":
        out["requestor"] = action["requestor"]
    return out


def build_card(task: dict, db: dict, source_meta: dict, domain: Domain) -> dict:
    """The rule-built card of one upstream task, by its domain's card rules."""
    return domain.cards.build_card(task, db, source_meta)


def validate_card(card: dict, where: str) -> None:
    """Schema check plus the invariants the schema cannot express."""
    from incognita.common.io import InputError
    from incognita.common.schema import validate

    validate(card, "card.schema.json", where)
    tokens = [f["token"] for f in card["fields"]]
    dupes = sorted({t for t in tokens if tokens.count(t) > 1})
    if dupes:
        raise InputError(f"{where}: field tokens must be unique, repeated: {', '.join(dupes)}")
