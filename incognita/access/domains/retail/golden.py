"""The retail domain's golden rules (incognita.access.domain.GoldenRules): the forms a card field
takes to equal an argument, and the golden builder's rules that know retail's records.

`RULES` is the mixin the generic builder (incognita.access.golden.trajectory) is made with: the
entity scope of a task (incognita.access.domains.retail.entity_scope), the read-insertion rule
(incognita.access.domains.retail.read_insertion) and the selectors of a pick out of a collection
(incognita.access.domains.retail.element_selectors). The field forms are shared with the
scripted agent, which writes a value in the form the golden file says it takes (`field_value`).
"""

from __future__ import annotations

import re

from incognita.access.domains.retail.element_selectors import ElementSelection
from incognita.access.domains.retail.entity_scope import EntityScoping
from incognita.access.domains.retail.read_insertion import ORDER_ID, USER_ID, ReadInsertion
from incognita.access.domains.retail.source_words import US_STATES
from incognita.access.golden import value_matching
from incognita.access.golden.value_matching import GENERIC_PLANS, GENERIC_TRANSFORMS, single_spaced

# Deterministic normalisations a retail field may need to equal an argument, beside the
# generic ones. Each is exact after the normalisation; none guesses.
TRANSFORMS = {
    **GENERIC_TRANSFORMS,
    "order_id": "the same order id with or without the leading '#' and 'W' (#W1234567 = W1234567 = 1234567)",
    "state_name": "a US state name and its two-letter postal abbreviation (address fields only)",
    "user_id_name": "first/last name read off a user id of the form first_last_1234 (case-insensitive)",
}
# (part, transform) in the order they are tried, over all fields each.
FIELD_PLANS = [
    *GENERIC_PLANS,
    (None, "order_id"),
    (None, "state_name"),
    ("first", "user_id_name"),
    ("last", "user_id_name"),
]

_STATE_CODES = set(US_STATES.values())


class RULES(ElementSelection, EntityScoping, ReadInsertion):
    """The retail rules of the golden builder (each part's rules are in its mixin's module)."""

    NUMBERS_FROM_READS = True  # a number argument may be a read's number (no rule derives one)

    def _derive(self, tool: str, ptr: str, value: object, allow_insert: bool) -> dict | None:
        return None  # retail derives no value: each is said, a policy term, read or calculated


def field_form(field: dict, part: str | None, transform: str | None, value: str) -> bool:
    """Does `value` equal this field under the given part and transform?"""
    fv: str = field["value"]
    base = re.sub(r"_\d+$", "", field["token"].split(":")[0])
    if transform == "user_id_name":
        m = USER_ID.fullmatch(fv.strip().lower())
        if base != "user_id" or not m:
            return False
        name = m.group(1) if part == "first" else m.group(2).replace("_", " ")
        return name.casefold() == single_spaced(value).casefold()
    if transform == "order_id":
        a, b = ORDER_ID.fullmatch(fv.strip()), ORDER_ID.fullmatch(value.strip())
        return part is None and bool(a and b and a.group(1) == b.group(1))
    if transform == "state_name":
        if field["kind"] != "address" or part is not None:
            return False

        def code(x: str) -> str | None:
            x = single_spaced(x)
            return US_STATES.get(x.casefold()) or (x.upper() if x.upper() in _STATE_CODES else None)

        return fv != value and code(fv) is not None and code(fv) == code(value)
    return value_matching.field_form(field, part, transform, value)


def field_value(value: str, part: str | None, transform: str | None) -> str:
    """The argument an agent writes from a released field value in the form the golden file names."""
    if transform == "user_id_name":
        m = re.fullmatch(r"([a-z]+)_([a-z_]+)_\d+", value.strip().lower())
        if m:
            return (
                m.group(1).capitalize() if part == "first" else " ".join(w.capitalize() for w in m.group(2).split("_"))
            )
    if part is not None:
        words = value.split()
        value = words[0] if part == "first" else words[-1]
    if transform == "order_id":
        digits = re.sub(r"\D", "", value)
        return f"#W{digits}"
    if transform == "state_name":
        return US_STATES.get(value.strip().lower(), value)
    return value
