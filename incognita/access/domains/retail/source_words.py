"""How the card builder finds the customer's words for database values in the source text.

The source instructions name products and their options the way a person does; the
database names them its own way. These rules relate the two, for every task alike (none
names a task, an id or a product, apart from the short table of everyday product names no
sub-phrase of the catalogue name yields): product names with their plural and singular
forms, option values (sizes and their abbreviations, numbers with their units, hyphenated
words whole, values an item lacks), price superlatives and phrases that pick an order by
when it was placed. incognita.access.domains.retail.card_rules builds the fields with them; the golden rules
(incognita.access.domains.retail.element_selectors) use the same rules to decide which fields select an entry, so a card and its golden file agree.
"""

from __future__ import annotations

import re

from incognita.access.cards.text import clean, find_span, norm

# US state names and their postal codes: customers write either ("New York", "NY").
US_STATES = {
    "alabama": "AL",
    "alaska": "AK",
    "arizona": "AZ",
    "arkansas": "AR",
    "california": "CA",
    "colorado": "CO",
    "connecticut": "CT",
    "delaware": "DE",
    "florida": "FL",
    "georgia": "GA",
    "hawaii": "HI",
    "idaho": "ID",
    "illinois": "IL",
    "indiana": "IN",
    "iowa": "IA",
    "kansas": "KS",
    "kentucky": "KY",
    "louisiana": "LA",
    "maine": "ME",
    "maryland": "MD",
    "massachusetts": "MA",
    "michigan": "MI",
    "minnesota": "MN",
    "mississippi": "MS",
    "missouri": "MO",
    "montana": "MT",
    "nebraska": "NE",
    "nevada": "NV",
    "new hampshire": "NH",
    "new jersey": "NJ",
    "new mexico": "NM",
    "new york": "NY",
    "north carolina": "NC",
    "north dakota": "ND",
    "ohio": "OH",
    "oklahoma": "OK",
    "oregon": "OR",
    "pennsylvania": "PA",
    "rhode island": "RI",
    "south carolina": "SC",
    "south dakota": "SD",
    "tennessee": "TN",
    "texas": "TX",
    "utah": "UT",
    "vermont": "VT",
    "virginia": "VA",
    "washington": "WA",
    "west virginia": "WV",
    "wisconsin": "WI",
    "wyoming": "WY",
    "district of columbia": "DC",
}


def source_text(instructions: dict) -> str:
    """The retail user scenario's instructions as one text: what fields are found in."""
    parts = [clean(instructions.get(k)) for k in ("known_info", "unknown_info", "reason_for_call", "task_instructions")]
    return "\n".join(p for p in parts if p)


def _name_phrases(product_name: str) -> list[str]:
    """Ways a customer may name a product, longest first: 'Mechanical Keyboard' -> [.., 'keyboard']."""
    words = product_name.lower().replace("-", " ").split()
    phrases = [" ".join(words[i:j]) for i in range(len(words)) for j in range(len(words), i, -1)]
    phrases += ["".join(words)] if len(words) > 1 else []
    generic = {"set", "kit", "smart", "electric", "digital", "wireless", "indoor", "portable", "t"}
    out = [p for p in phrases if p not in generic and len(p) >= 3]
    return sorted(dict.fromkeys(out), key=lambda p: (-len(p), p))


# Everyday names that no sub-phrase of the catalog name yields.
_ALIASES = {
    "Wristwatch": ["watch"],
    "E-Reader": ["ereader", "e reader", "kindle"],
    "Sneakers": ["sneaker", "shoes"],
    "Running Shoes": ["shoes", "shoe"],
    "Hiking Boots": ["boot", "boots"],
}


def word_forms(phrase: str) -> list[str]:
    """A phrase and the English plural and singular forms of its last word, in that order.

    Plurals: f/fe -> ves ('bookshelf' -> 'bookshelves'), consonant + y -> ies, s/x/z/ch/sh
    -> es, and the plain s of every noun. Singulars: ies -> y, ves -> f/fe, (s|x|z|ch|sh)es
    -> drop es, and a final s dropped ('boots' -> 'boot', never 'glass' -> 'glas')."""
    head, _, last = phrase.rpartition(" ")
    head = head + " " if head else ""
    forms = [last]
    if last.endswith("fe"):
        forms.append(last[:-2] + "ves")
    elif last.endswith("f"):
        forms.append(last[:-1] + "ves")
    if re.search(r"[^aeiou]y$", last):
        forms.append(last[:-1] + "ies")
    if re.search(r"(s|x|z|ch|sh)$", last):
        forms.append(last + "es")
    if not last.endswith("s"):
        forms.append(last + "s")
    if last.endswith("ies"):
        forms.append(last[:-3] + "y")
    if last.endswith("ves"):
        forms += [last[:-3] + "f", last[:-3] + "fe"]
    if re.search(r"(s|x|z|ch|sh)es$", last):
        forms.append(last[:-2])
    if re.search(r"[^s]s$", last):
        forms.append(last[:-1])
    return list(dict.fromkeys(head + f for f in forms))


def find_product(text: str, product_name: str) -> str | None:
    """The source's words for a product ('bookshelves' for Bookshelf), if the text names it."""
    for phrase in _name_phrases(product_name) + _ALIASES.get(product_name, []):
        for variant in word_forms(phrase):
            span = find_span(text, variant)
            if span:
                return span
    return None


# --------------------------------------------------------------------------- option values

# Clothing sizes: an abbreviation and its word are one value. A card span is always the
# source's own word ("small"), whichever of the two the database holds.
SIZE_WORDS = {
    "XXS": "extra extra small",
    "XS": "extra small",
    "S": "small",
    "M": "medium",
    "L": "large",
    "XL": "extra large",
    "XXL": "extra extra large",
}
# Spellings of one unit after a number ('34 inch' = '34-inch' = '34 inches').
_UNIT_SPELLINGS = [
    ("inch", "inches"),
    ("ft", "feet", "foot"),
    ("lbs", "lb", "pounds", "pound"),
    ("l", "liter", "liters", "litre", "litres"),
    ("ml", "milliliter", "milliliters", "millilitre", "millilitres"),
    ("mm", "millimeter", "millimeters", "millimetre", "millimetres"),
]
_NUMBER_VALUE = re.compile(r"(\d+(?:\.\d+)?(?:\s*-\s*\d+(?:\.\d+)?)?)\s*-?\s*(.*)")
# An option value is matched whole: not inside a longer word, nor as one half of a
# hyphenated word ('neck' is not stated by 'v-neck').
_BEFORE = r"(?<![A-Za-z0-9-])"
_AFTER = r"(?![A-Za-z0-9]|-[A-Za-z0-9])"
_BOOLEAN = {"yes", "no"}
_NEGATIVE = {"none", "no"}


def _unit_pattern(unit: str) -> str:
    """The spellings of a unit ('inch' -> inch|inches), words after it kept in order."""
    first, *rest = unit.split()
    spellings = next((s for s in _UNIT_SPELLINGS if first.lower() in s), (first.lower(),))
    forms = {f for s in spellings for f in word_forms(s)}
    out = "(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)) + ")"
    return out + "".join(r"[\s-]*" + re.escape(w) for w in rest)


def _option_patterns(key: str, value: str) -> list[tuple[str, int]]:
    """Regexes (with their flags) for the ways the source may state one option value."""
    value = value.strip()
    size = SIZE_WORDS.get(value.upper()) or (value.lower() if value.lower() in SIZE_WORDS.values() else None)
    if size is not None:
        abbrev = next(a for a, w in SIZE_WORDS.items() if w == size)
        word = r"[\s-]*".join(re.escape(w) for w in size.split())
        # 'large' is not stated by 'extra large'.
        longer = "" if size.startswith("extra extra") else r"(?<!extra\s)"
        out = [(_BEFORE + longer + word + _AFTER, re.IGNORECASE)]
        if len(abbrev) > 1:  # 'XL' in capitals, bare or quoted, never a possessive ('s)
            out.append((r"(?<![A-Za-z0-9-])(?<![A-Za-z]['\u2019])" + abbrev + r"(?![A-Za-z0-9]|-[A-Za-z0-9])", 0))
        else:  # a single letter only next to the word 'size': 'size S', 's size', "'size': 'S'"
            out.append(
                (
                    r"(?<![A-Za-z0-9])['\"]?size['\"]?:?(?:\s*['\"]|\s+)" + abbrev + r"(?![A-Za-z0-9])['\"]?",
                    re.IGNORECASE,
                )
            )
            out.append((r"(?<![A-Za-z0-9'\u2019])" + abbrev + r"\s+size\b", re.IGNORECASE))
        return out
    m = _NUMBER_VALUE.fullmatch(value)
    if m:
        lo_hi = re.split(r"\s*-\s*", m.group(1))
        number = r"\s*-\s*".join(re.escape(n) for n in lo_hi)
        lead = r"(?<![0-9.,$-])(?<![0-9]\s-\s)"
        if m.group(2):
            return [(lead + number + r"[\s-]*" + _unit_pattern(m.group(2)) + r"(?![A-Za-z0-9])", re.IGNORECASE)]
        # A bare number is stated only next to the option's name: 'size 10', '2000 pieces'.
        name = _unit_pattern(key)
        return [
            (lead + number + r"[\s-]*" + name + r"(?![A-Za-z0-9])", re.IGNORECASE),
            (_BEFORE + name + r"\s*(?:of\s+)?" + number + r"(?![0-9.]|[A-Za-z])", re.IGNORECASE),
        ]
    out = []
    if value.lower() in _NEGATIVE or value.lower().startswith("not "):
        # An option the item lacks is stated through the option's name: 'no backlight',
        # 'without water resistance' (backlight: none, water resistance: not resistant).
        name = r"[\s-]*".join(re.escape(w) for w in key.lower().split()[:-1])
        last = key.lower().split()[-1]
        forms = "(?:" + "|".join(re.escape(f) for f in sorted(word_forms(last), key=len, reverse=True)) + ")"
        name = (name + r"[\s-]*" if name else "") + forms
        out.append((_BEFORE + r"(?:no|without(?:\s+(?:any|a|an))?)\s+" + name + _AFTER, re.IGNORECASE))
    if value.lower() in _BOOLEAN or (len(norm(value)) < 3 and not re.search(r"\d", value)):
        return out  # 'yes', 'no' and other short words state nothing by themselves
    *head, last = [p for p in re.split(r"[\s-]+", value) if p]
    # The last word in any number ('animal' states 'animals', 'battery' 'batteries').
    lasts = "(?:" + "|".join(re.escape(f) for f in sorted(word_forms(last), key=len, reverse=True)) + ")"
    pattern = r"[\s-]*".join([re.escape(p) for p in head] + [lasts])
    return out + [(_BEFORE + pattern + _AFTER, re.IGNORECASE)]


def find_option(text: str, key: str, value: str) -> str | None:
    """The source's own words for one option value (`key: value` of a variant), if it states it.

    Sizes and their abbreviations are one value (S = small, XL = extra large); a number with
    its unit is matched as a whole in any spelling of the unit ('34-inch' states '34 inch',
    nothing states it but 34); a bare number only next to the option's name ('size 10');
    hyphenated words are matched whole. The earliest statement in the text wins."""
    found = option_matches(text, key, value)
    return found[0].group(0) if found else None


def states_option(span: str, key: str, value: str) -> bool:
    """Is `span` (a card span) exactly a statement of the option value `key: value`?"""
    found = find_option(span, key, value)
    return found is not None and norm(found) == norm(span)


# Price superlatives a customer states for the item they ask for.
PRICE_SUPERLATIVE = re.compile(
    r"\b(?:cheapest|least expensive|lowest[- ]price[d]?|lowest cost|most expensive|priciest|highest[- ]price[d]?)\b",
    re.IGNORECASE,
)
# A phrase that picks one of the customer's orders by when it was placed.
RECENCY = re.compile(
    r"\b(?:most\s+recent(?:ly)?(?:\s+(?:placed|made|ordered))?(?:\s+orders?)?|"
    r"(?:latest|newest|last|first|earliest|oldest)\s+orders?|(?:last|first)\s+placed|placed\s+(?:last|first)|"
    r"earliest)\b",
    re.IGNORECASE,
)


def price_superlative(span: str) -> str | None:
    """'min' or 'max' when a span is a price superlative ("the cheapest"), else None."""
    m = PRICE_SUPERLATIVE.fullmatch(span.strip())
    if not m:
        return None
    return "max" if re.match(r"(most|highest|priciest)", m.group(0), re.IGNORECASE) else "min"


def recency_end(phrase: str) -> str | None:
    """Which end of the customer's order list (the database lists orders as they were
    placed) a recency phrase picks: 'last' ("most recently placed"), 'first' ("earliest")."""
    if not RECENCY.search(phrase):
        return None
    return "first" if re.search(r"\b(first|earliest|oldest)\b", phrase, re.IGNORECASE) else "last"


def option_matches(text: str, key: str, value: str) -> list[re.Match]:
    out = []
    for pattern, flags in _option_patterns(key, value):
        out += list(re.finditer(pattern, text, flags))
    return sorted(out, key=lambda m: m.start())


def product_mentions(sentence: str, product_name: str) -> list[tuple[int, int]]:
    """(start, end) of every place a sentence names a product, longest phrases first, disjoint."""
    found: list[tuple[int, int]] = []
    for phrase in _name_phrases(product_name) + _ALIASES.get(product_name, []):
        for form in word_forms(phrase):
            pattern = r"(?<![A-Za-z0-9])" + re.escape(form).replace(r"\ ", r"\s+") + r"(?![A-Za-z0-9])"
            for m in re.finditer(pattern, sentence, re.IGNORECASE):
                if not any(s < m.end() and m.start() < e for s, e in found):
                    found.append((m.start(), m.end()))
    return sorted(found)
