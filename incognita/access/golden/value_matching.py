"""How a value is recognised: in a leaf of a call result, and in a card field.

The golden builder (`incognita.access.golden.trajectory`) sources an argument value or an
information item by matching it, exactly or after one deterministic normalisation, against
the customer's card fields and against the leaves of earlier results. The predicates over
result leaves, the generic field forms (`part` and `transform` of a `field` provenance, see
`GENERIC_TRANSFORMS`; a domain adds its own) and the loose word stems that tie texts together
live here; nothing here reads the database.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# Deterministic normalisations any domain's field may need to equal an argument. Each is exact
# after the normalisation; none guesses. A domain's golden rules add their own (Domain.golden:
# TRANSFORMS, FIELD_PLANS, field_form, field_value).
GENERIC_TRANSFORMS = {"casefold": "equal ignoring letter case and runs of whitespace"}
# (part, transform) in the order they are tried, over all fields each.
GENERIC_PLANS = [
    (None, None),
    ("first", None),
    ("last", None),
    (None, "casefold"),
    ("first", "casefold"),
    ("last", "casefold"),
]

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
    """Does `value` equal this field under the given part and one of the generic transforms
    (GENERIC_PLANS)? A domain's golden rules add their own transforms around this."""
    fv: str = field["value"]
    if part is not None:
        fv = name_part(field, part)
        if fv is None:
            return False
    if transform is None:
        return fv == value
    if transform == "casefold":
        return single_spaced(fv).casefold() == single_spaced(value).casefold() and fv != value
    raise ValueError(f"unknown transform {transform}")


def name_part(field: dict, part: str) -> str | None:
    """The first or last word of a customer's name field (an identity field whose token is `name`)."""
    base = re.sub(r"_\d+$", "", field["token"].split(":")[0])
    if field["kind"] != "identity" or base != "name":
        return None
    words = field["value"].split()
    if len(words) < 2:
        return None
    return words[0] if part == "first" else words[-1]
