"""How a value is recognised: in a leaf of a call result, and in a card field.

The golden builder (`incognita.access.golden.trajectory`) sources an argument value or an
information item by matching it, exactly or after one deterministic normalisation, against
the customer's card fields and against the leaves of earlier results. The predicates over
result leaves, the field forms (`part` and `transform` of a `field` provenance, see
`TRANSFORMS`) and the loose word stems that tie texts together live here; nothing here
reads the database.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from incognita.access.cards.source_words import US_STATES

# Deterministic normalisations a field may need to equal an argument. Each is exact after
# the normalisation; none guesses.
TRANSFORMS = {
    "casefold": "equal ignoring letter case and runs of whitespace",
    "order_id": "the same order id with or without the leading '#' and 'W' (#W1234567 = W1234567 = 1234567)",
    "state_name": "a US state name and its two-letter postal abbreviation (address fields only)",
    "user_id_name": "first/last name read off a user id of the form first_last_1234 (case-insensitive)",
}
# (part, transform) in the order they are tried, over all fields each.
FIELD_PLANS = [
    (None, None),
    ("first", None),
    ("last", None),
    (None, "casefold"),
    ("first", "casefold"),
    ("last", "casefold"),
    (None, "order_id"),
    (None, "state_name"),
    ("first", "user_id_name"),
    ("last", "user_id_name"),
]

_STATE_CODES = set(US_STATES.values())
ORDER_ID = re.compile(r"#?[Ww]?(\d{7})")
USER_ID = re.compile(r"([a-z]+)_([a-z]+(?:_[a-z]+)*)_(\d+)")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
INTEGER = re.compile(r"\d+")
# Words too common to tie a request or a description to anything.
_STOPWORDS = frozenset(
    {
        "the",
        "and",
        "for",
        "but",
        "with",
        "you",
        "your",
        "that",
        "this",
        "from",
        "are",
        "was",
        "not",
        "can",
        "cannot",
        "user",
        "agent",
        "help",
        "wants",
        "want",
    }
)


def single_spaced(text: str) -> str:
    return " ".join(text.split())


def is_number_text(text: Any) -> bool:
    return isinstance(text, str) and NUMBER.fullmatch(text) is not None


def string_equals(value: str) -> Callable[[str, Any], bool]:
    return lambda ptr, leaf: isinstance(leaf, str) and leaf == value


def number_equals(value: str | float) -> Callable[[str, Any], bool]:
    """Numbers compare to the cent; a bare numeric string result (calculate) counts as a number."""
    target = round(float(value), 2)

    def pred(ptr: str, leaf: Any) -> bool:
        if isinstance(leaf, bool):
            return False
        if isinstance(leaf, (int, float)):
            return round(float(leaf), 2) == target
        return ptr == "" and is_number_text(leaf) and round(float(leaf), 2) == target

    return pred


def word_stems(text: str) -> set[str]:
    """Lower-case word stems for loose description matching ('Headphones' ~ 'headphone')."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if len(w) < 3 or w in _STOPWORDS:
            continue
        out.add(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return out


def field_form(field: dict, part: str | None, transform: str | None, value: str) -> bool:
    """Does `value` equal this field under the given part and transform?"""
    fv: str = field["value"]
    token_base = field["token"].split(":")[0]
    base = re.sub(r"_\d+$", "", token_base)
    if transform == "user_id_name":
        m = USER_ID.fullmatch(fv.strip().lower())
        if base != "user_id" or not m:
            return False
        name = m.group(1) if part == "first" else m.group(2).replace("_", " ")
        return name.casefold() == single_spaced(value).casefold()
    if part is not None:
        if field["kind"] != "identity" or base != "name":
            return False
        words = fv.split()
        if len(words) < 2:
            return False
        fv = words[0] if part == "first" else words[-1]
    if transform is None:
        return fv == value
    if transform == "casefold":
        return single_spaced(fv).casefold() == single_spaced(value).casefold() and fv != value
    if transform == "order_id":
        a, b = ORDER_ID.fullmatch(fv.strip()), ORDER_ID.fullmatch(value.strip())
        return bool(a and b and a.group(1) == b.group(1))
    if transform == "state_name":
        if field["kind"] != "address":
            return False

        def code(x: str) -> str | None:
            x = single_spaced(x)
            return US_STATES.get(x.casefold()) or (x.upper() if x.upper() in _STATE_CODES else None)

        return fv != value and code(fv) is not None and code(fv) == code(value)
    raise ValueError(f"unknown transform {transform}")
