"""Golden rules for a domain that knows nothing particular about its records (incognita.access.
domain.GoldenRules): every read may source a value, no read is inserted, no pick has selectors,
and a card field equals an argument as it is or in a generic form (one word of a name, letter
case). A domain whose values all come from the customer's words, the policy vocabulary or the
results of upstream's own reference reads (and of its message history) needs nothing more; one
whose agent must open records the reference never reads, or choose among them by what the
customer says, gives rules of its own (retail: incognita.access.domains.retail.golden).
"""

from __future__ import annotations

from typing import Any

from incognita.access.golden import value_matching
from incognita.access.golden.value_matching import GENERIC_PLANS, GENERIC_TRANSFORMS

TRANSFORMS = dict(GENERIC_TRANSFORMS)
FIELD_PLANS = list(GENERIC_PLANS)


class Unrestricted:
    """A scope that admits every read (recorded as an empty scope)."""

    def admits(self, name: str, args: dict, ptr: str, leaf: Any) -> bool:
        return True

    def to_json(self) -> dict:
        return {}


class RULES:
    """The golden builder's part for such a domain (see trajectory's mixins for what each method is)."""

    CATALOG_TOOLS = frozenset()  # no public listing to look in last: there is none
    NUMBERS_FROM_READS = True  # a number argument may be any read's number (no rule derives one)

    def _entity_scope(self) -> Unrestricted:
        return Unrestricted()

    def _selectors(self, doc: Any, ptr: str, role: str | None) -> list[str]:
        return []

    # The builder's read search (trajectory's `_search`) has nothing to try: no read is inserted.
    MAX_INSERT_DEPTH = 0
    CANDIDATE_ORDER = ()
    LISTING_READS = ()

    def _field_candidates(self) -> list[tuple[str, dict]]:
        return []

    def _candidates_from(self, name: str, doc: Any) -> list[tuple[str, dict]]:
        return []

    def _insert_before_search(self, pred, consumer_ptr: str) -> dict | None:
        return None

    def _derive(self, tool: str, ptr: str, value: Any, allow_insert: bool) -> dict | None:
        return None  # no value is derived: each is said, a policy term or read


def field_form(field: dict, part: str | None, transform: str | None, value: str) -> bool:
    return value_matching.field_form(field, part, transform, value)


def field_value(value: str, part: str | None, transform: str | None) -> str:
    if transform == "casefold":
        return value
    if part is not None:
        words = value.split()
        return words[0] if part == "first" else words[-1]
    return value
