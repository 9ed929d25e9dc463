"""Customer wording that names a record value the general fact matching cannot see.

Used by incognita.access.domains.retail.scripted.picking (`EntryPicker._said`, `_best_entry` and `_score`) when a
scripted agent chooses an entry of a result. incognita.access.domains.retail.scripted.choosing compares the
customer's words with an entry's words; three everyday ways of naming a value escape it:

- *Abbreviations* of payment words ("refund to GC" is to the gift card, "CC" a credit card):
  a short general table, expanded only when written in capitals as a word of its own.
  Abbreviations that also name other things (DC, a city: incognita.access.domains.retail.scripted.relations) are
  left out.
- *Identifiers* the customer states: an all-digit word of six or more digits in what it
  said ("change item ID 1656367028") selects an entry holding that value anywhere (a line
  whose product id it is); the general matching skips numbers, which in passing are often
  prices or counts.
- *Absence*: "without X", "no X", "non-X" match an option whose value states the absence
  ("not resistant", "no", "none", "non-X") when the option's name or that value shares a
  word stem with X ("without water resistance" is the "water resistance: not resistant").
- *Action words*: the kind of change a demand asks for (`action_words`: "switch", "swap",
  "upgrade" are a change of items, "refund" a return), read against the planned calls' names
  by the agent (`_can_do`), the set rules and the relation rules.
"""

from __future__ import annotations

import re
from typing import Any

ABBREVIATIONS = {
    "GC": "gift card",
    "CC": "credit card",
}
_CAPS = re.compile(r"\b([A-Z]{2,4})\b")
_DIGITS = re.compile(r"(?<![\w.])(\d{6,})(?![\w.])")
_WITHOUT = re.compile(r"\b(?:without|no)\s+([a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)|\bnon-([a-z]+)", re.IGNORECASE)
_ABSENT = re.compile(r"^\s*(?:no|none|not\b.*|non-.*|without\b.*)\s*$", re.IGNORECASE)


def expand_abbreviations(text: str) -> str:
    """The text with each everyday abbreviation (in capitals, a word of its own) spelled out."""
    return _CAPS.sub(lambda m: ABBREVIATIONS.get(m.group(1), m.group(1)), text)


def stated_ids(facts: list[str]) -> set[str]:
    """The all-digit identifiers written in the customer's words."""
    return {m.group(1) for fact in facts for m in _DIGITS.finditer(fact)}


def _stems(text: str) -> set[str]:
    return {w[:6] for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4}


def absence_score(facts: list[str], entry: Any) -> int:
    """How many "without X" the customer states that an option of the entry meets by a value
    stating the absence of X."""
    options = entry.get("options") if isinstance(entry, dict) else None
    if not isinstance(options, dict):
        return 0
    score = 0
    for fact in facts:
        for m in _WITHOUT.finditer(fact):
            wanted = _stems(m.group(1) or m.group(2))
            score += any(
                wanted and isinstance(value, str) and _ABSENT.match(value) and (_stems(name) | _stems(value)) & wanted
                for name, value in options.items()
            )
    return score


# Everyday words for the kinds of change the retail tools make (word stems: "cancelled" is
# "cancel"), by the word of the tools' names they stand for (cancel_pending_order, ...).
_ACTIONS = (
    ("cancel", "cancel"),
    ("return", "return"),
    ("refund", "return"),
    ("exchang", "exchange"),
    ("modif", "modify"),
    ("chang", "modify"),
    ("switch", "modify"),
    ("swap", "modify"),
    ("replac", "modify"),
    ("upgrad", "modify"),
    ("remov", "modify"),  # removing a line from an order is a change of its items
    ("updat", "modify"),
    ("address", "address"),
    ("payment", "payment"),
    ("pay", "payment"),
)


def action_words(text: str) -> set[str]:
    """The kinds of change a demand (or a tool's name) asks for: {"cancel"}, {"address"} ..."""
    words = re.findall(r"[a-z]+", text.lower().replace("_", " "))
    found = {action for w in words for stem, action in _ACTIONS if w.startswith(stem)}
    # "modify" with an address or payment word is that change, not a change of items.
    return found - {"modify"} if found & {"address", "payment"} else found
