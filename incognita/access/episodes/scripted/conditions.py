"""The kinds of condition a card's fallback sentence carries, read off its wording.

Used by the scripted customer (incognita.access.episodes.scripted.scripted_customer), which raises a
fallback only when the agent's message meets its condition, and by the count of condition
kinds over the cards (`condition_counts`, reported in docs/episodes.md). A card's fallback
is a sentence of the source instructions that follows a demand and opens with a condition
("If not, ...", "When the agent asks for confirmation, ..."): what the customer wants
instead, or also, once that condition holds. The kinds, judged in this order:

- `refusal`: what came before cannot be done ("If not", "Otherwise", "If that is not
  possible", "If you cannot ...", "If it refuses"): met when the agent says `#cannot`.
- `confirmation`: the agent asks the customer to confirm ("If the agent asks for
  confirmation", "when the agent asks you to confirm before proceeding", anywhere in the
  sentence): met when the agent's message carries `#confirm`, and only then. The customer
  changes its mind there instead of saying yes.
- `question`: the agent asks for a detail ("When asked for the order number", "If the agent
  asks which laptop"): answered through the gate's fields, never raised as a demand.
- `options`: several options are offered ("If multiple colors are available", "If and only
  if the agent provides several options"): a preference, answered through the gate's
  fields.
- `outcome`: what came before can be done ("If so", "If cancelling partial items is
  possible", "If it can"): the other branch of a refusal fallback; never raised on its own.
- `state`: a value the records show ("If the price is greater than $300", "If it has not
  been shipped yet", "If the same item is available online"; and "If not, ..." right after
  one, its negation): met only by what the agent reports after a read; not raised by the
  scripted customer.
- `other`: a sentence that opens with no condition.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

KINDS = ("refusal", "confirmation", "question", "options", "outcome", "state", "other")

_REFUSAL = re.compile(
    r"""^\W*(?:but\s+)?(?:
        otherwise\b                                     # Otherwise, ...
      | (?:only\s+)?if\s+(?:
            not\b                                       # If not, ... / If not possible, ...
          | (?:[^,;]|,(?=\s*\d))*?                        # the condition, up to its comma ...
            (?:(?:n['’]t|\bnot)\s+(?:be\s+)?(?:possible|available|an\s+option|work)  # ... is not possible
              | \bcan(?:not|\s+not|['’]t|\s+only)\b      # you cannot / it can't / can only
              | \bcould(?:n['’]t|\s+not)\b
              | \brefuses?\b                             # it refuses
              | \bno\s+way\b | \bthere\s+is\s+no\b        # there is no (way) ...
              | \bno\b(?:[^,;]|,(?=\s*\d))*?\bavailable\b  # no ... is available
              | \bthere\s+are\s+(?:any\s+)?(?:issues|problems)\b
            )
        )
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# "asks for confirmation", "asks you for confirm", "asks for final confirmation", "asks you to confirm"
_CONFIRMATION = re.compile(r"\bask(?:s|ed)?\b(?:\s+\w+){0,2}?\s+(?:for\s+(?:\w+\s+)?confirm|to\s+confirm)", re.I)
_OPENING = re.compile(r"^\W*(?:but\s+|and\s+)?(?:(?:if\s+and\s+)?only\s+if|if|when|once)\b\s*(?P<cond>[^,;]*)", re.I)
_QUESTION = re.compile(r"^(?:the\s+agent\s+)?(?:asks?|asked)\b", re.I)
_OPTIONS = re.compile(
    r"\b(?:several|multiple|both)\b.*\b(?:available|options?)\b|\b(?:provides?|gives?|offers?)\b.*\b(?:several|multiple)\b",
    re.I,
)
_OUTCOME = re.compile(r"^(?:so|it\s+can|that\s+works)\b|\b(?:is|are)\s+possible\b", re.I)


def is_refusal_condition(sentence: str) -> bool:
    """Whether a fallback's condition is a refusal of what came before it.

    Judged on the sentence's opening only: "Otherwise", "If not", or an "If" (also "But
    if", "Only if") whose condition (up to its first comma) says that something is not
    possible, not available or does not work, that someone cannot (or can only ...) do it,
    refuses, or that there is no (way to do) it.
    """
    return _REFUSAL.match(sentence) is not None


def condition_kind(sentence: str) -> str:
    """The kind of condition a fallback sentence opens with (see the module docstring)."""
    if is_refusal_condition(sentence):
        return "refusal"
    if _CONFIRMATION.search(sentence):
        return "confirmation"
    opening = _OPENING.match(sentence)
    if opening is None:
        return "other"
    cond = opening.group("cond").strip()
    if _QUESTION.match(cond):
        return "question"
    if _OPTIONS.search(cond):
        return "options"
    if _OUTCOME.search(cond):
        return "outcome"
    return "state"


# "If not, ..." / "Otherwise, ...": the condition just before, negated.
_NEGATES_BEFORE = re.compile(r"^\W*(?:but\s+)?(?:if\s+not|otherwise)\b", re.IGNORECASE)


def fallback_kinds(fallbacks: list[str]) -> list[str]:
    """The condition kind of each of a request's fallbacks, in card order: read off its own
    wording (`condition_kind`), except that "If not" / "Otherwise" right after a `state`
    fallback negates that state ("If the same item is available online, exchange it. If not,
    return it"): a state condition too, met by what the records show, not by a refusal."""
    kinds: list[str] = []
    for sentence in fallbacks:
        kind = condition_kind(sentence)
        if kind == "refusal" and kinds and kinds[-1] == "state" and _NEGATES_BEFORE.match(sentence):
            kind = "state"
        kinds.append(kind)
    return kinds


# The tags of the agent's message at which the scripted customer raises a fallback, by kind:
# none for a question or several options (answered through the gate's fields), an outcome or
# a state (never raised).
FIRES_ON = {"refusal": frozenset({"cannot"}), "confirmation": frozenset({"confirm"})}


def fallback_events(fallbacks: list[str]) -> list[frozenset[str]]:
    """For each of a request's fallbacks, the tags at which the scripted customer raises it:
    `cannot` for a refusal, `confirm` for a confirmation (only there), none for the rest."""
    return [FIRES_ON.get(kind, frozenset()) for kind in fallback_kinds(fallbacks)]


def condition_counts(cards: Iterable[dict]) -> Counter:
    """How many of the cards' fallbacks carry each kind of condition."""
    counts: Counter = Counter({kind: 0 for kind in KINDS})
    for card in cards:
        for request in card.get("requests", []):
            counts.update(fallback_kinds(request.get("fallbacks", [])))
    return counts
