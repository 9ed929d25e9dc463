"""How a scripted agent reads what the customer said against the entries of a result.

A scripted agent chooses an entry of a collection (an order line, a product variant, one
of the customer's orders, a payment method) by how many of the customer's facts the
entry states (incognita.access.episodes.scripted.scripted_agent, `_best_entry`). This module holds the
language rules of that comparison, all general: none names a task, an id or a product.

- Terms: lower-case words, hyphenated words kept whole ("v-neck" is not "neck"), a number
  and the unit after it one term ("34 inch" is not "31 inch"), plurals made singular
  ("bookshelves" -> "bookshelf", "batteries" -> "battery"); stop words and words under
  three letters carry nothing.
- Sizes: an entry value that is a size abbreviation (S, M, L, XL ...) reads as its word
  ("small"), so "small" in the customer's words matches size S.
- Negation: terms after "instead of", "rather than", "other than", "except", "apart from"
  or "everything but" are what the customer does not want: an entry stating them is marked
  down. ("Not" and "without" are left
  alone: "not resistant" is itself an option value.)
- Superlatives over a list: "cheapest" (least expensive, lowest price) and "most
  expensive" (and "the more expensive one" of two) pick by the entries' `price`; when the
  phrase is about an "item" it applies to the lines of an order only. "Most recent", "latest",
  "newest" and "last placed" pick the last entry of a list as the database orders it (a
  profile lists orders in the order they were placed); "earliest", "oldest" and "first
  placed" the first.
- Placeholders: a raised demand carries `<token>` placeholders where a card value was
  masked; they are never read as the customer's words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from incognita.access.episodes.scripted.discovery import STOP_WORDS
from incognita.access.episodes.scripted.language import strip_placeholders

SIZES = {
    "xxs": "extra extra small",
    "xs": "extra small",
    "s": "small",
    "m": "medium",
    "l": "large",
    "xl": "extra large",
    "xxl": "extra extra large",
}
_SIZE_PHRASE = re.compile(r"\b(extra extra small|extra small|extra extra large|extra large)\b")
_NUMBER_UNIT = re.compile(
    r"\b(\d+(?:\.\d+)?(?:\s*-\s*\d+(?:\.\d+)?)?)\s*(%|inch(?:es)?|in|ft|feet|foot|cm|mm|m|ml|l|oz|lbs?|kg|g|"
    r"w|watts?|v|volts?|mah|gb|tb|mp|hours?|pieces?|pcs|cups?|liters?|litres?|people|person|seats?)(?![a-z])"
)
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_NEGATION = re.compile(
    r"\b(?:instead of|rather than|other than|except(?: for)?|apart from|(?:everything|all) but)\s+(?:the\s+|a\s+|an\s+)?"
    r"((?:[a-z0-9-]+\s*){1,3})",
    re.IGNORECASE,
)

# Price superlatives, and the comparatives that pick one of two ("the more expensive one").
PRICE_MIN = re.compile(
    r"\b(cheapest|least expensive|lowest[- ]price[d]?|lowest cost|costs? the least|less expensive|cheaper)\b"
)
PRICE_MAX = re.compile(r"\b(most expensive|priciest|highest[- ]price[d]?|most costly|costs? the most|more expensive)\b")
RECENT = re.compile(r"\b(most recent(?:ly)?|latest|newest|last placed|placed last|last order)\b")
EARLIEST = re.compile(r"\b(earliest|oldest|first placed|placed first|first order)\b")
_AFTER_ITEM = re.compile(r"^\W*(?:\w+\W+){0,2}?items?\b")  # "the most expensive item"
_BEFORE_ITEM = re.compile(r"\bitems?\W+(?:\w+\W+){0,4}$")  # "which item in the order costs the most"


def singular(word: str) -> str:
    """A crude English singular: bookshelves -> bookshelf, batteries -> battery, boxes -> box."""
    if len(word) <= 3 or "-" in word or word.isdigit():
        return word
    for plural, single in (("ves", "f"), ("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh")):
        if word.endswith(plural) and len(word) - len(plural) >= 2:
            return word[: -len(plural)] + single
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _unit(unit: str) -> str:
    unit = unit.lower()
    return {"inches": "inch", "in": "inch", "feet": "ft", "foot": "ft", "lb": "lbs"}.get(unit, singular(unit))


# A scripted agent compares the same few hundred record texts against the customer's facts
# thousands of times per episodes job: the term functions are pure, so their results are kept
# (as frozensets, which no caller can change).
@lru_cache(maxsize=1 << 16)
def terms(text: str) -> frozenset[str]:
    """The comparable terms of a text (module docstring)."""
    text = strip_placeholders(text).lower()
    out: set[str] = set()
    for m in _NUMBER_UNIT.finditer(text):
        out.add(re.sub(r"\s+", "", m.group(1)) + " " + _unit(m.group(2)))
    text = _NUMBER_UNIT.sub(" ", text)
    for m in _SIZE_PHRASE.finditer(text):
        out.add(m.group(1))
    text = _SIZE_PHRASE.sub(" ", text)
    for word in _WORD.findall(text.replace("_", " ")):
        if word in STOP_WORDS or (len(word) < 3 and not word.isdigit()):
            continue
        out.add(singular(word))
    return frozenset(out)


@lru_cache(maxsize=1 << 16)
def value_terms(value: str) -> frozenset[str]:
    """The terms of one entry value: a size abbreviation is its word."""
    size = SIZES.get(value.strip().lower())
    return frozenset({size}) if size else terms(value)


def negated_terms(facts: list[str]) -> set[str]:
    """What the customer says it does not want ("instead of Apple HomeKit", "without water resistance")."""
    out: set[str] = set()
    for fact in facts:
        for m in _NEGATION.finditer(strip_placeholders(fact)):
            out |= terms(m.group(1))
    return out


@lru_cache(maxsize=1 << 16)
def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def match_score(facts: list[str], texts: list[str]) -> float:
    """How many of the customer's facts (each part of a ';'- or ','-list on its own) an entry's
    texts state: the same text once case, spaces and punctuation are ignored, contained in a
    longer text, or every term of it among the entry's terms (half, for a short fact some of
    whose terms are there); plus, for a long fact (a demand
    the customer raised), each entry value it names in passing; minus each value the
    customer said it does not want."""
    facts = [strip_placeholders(f) for f in facts]
    squashed = [_squash(t) for t in texts]
    entry_terms = set().union(*(value_terms(t) for t in texts)) if texts else set()
    score = 0
    for fact in facts:
        for part in re.split(r"[;,]", fact):
            sq = _squash(part)
            if not sq:
                continue
            part_terms = terms(part) or ({SIZES[part.strip().lower()]} if part.strip().lower() in SIZES else set())
            if part.strip().lower() in SIZES.values():
                part_terms = {part.strip().lower()}
            whole = any(sq == t or (len(sq) >= 4 and sq in t and not sq.isdigit()) for t in squashed)
            # "Brand A" is not "Brand B": a value ending in a one-letter or one-digit word is
            # matched whole, never by its other words.
            lettered = re.search(r"\w\s+[a-z0-9]$", part.strip().lower()) is not None
            if whole or (part_terms and part_terms <= entry_terms and not lettered):
                score += 1
            elif not lettered and 2 <= len(part_terms) <= 3 and part_terms & entry_terms:
                # A short description the record words differently ("Google Home" for a
                # "Google Assistant" option) counts half for the words it shares.
                score += 0.5
    # A long fact (a demand the customer raised) may name an entry's values in passing.
    long_facts = [f for f in facts if len(f.split()) > 3]
    said = set().union(*(terms(f) for f in long_facts)) if long_facts else set()
    said_squashed = " ".join(_squash(f) for f in long_facts)
    negated = negated_terms(facts)
    for text in set(texts):
        vt, sq = value_terms(text), _squash(text)
        if not vt or any(t.isdigit() for t in vt) or sq.isdigit():
            continue
        if vt & negated and vt <= negated | said:
            score -= 1
        elif vt <= said or (len(sq) >= 4 and sq in said_squashed):  # "book shelf" names a Bookshelf
            score += 1
    return score


def superlative(facts: list[str]) -> list[tuple[str, str]]:
    """(kind, target) for each superlative the customer states: kind price_min, price_max,
    recent or earliest; target `line` when a price phrase is about an order's items, else
    `any` (recency is about a list: target `list`)."""
    out = []
    for fact in facts:
        text = strip_placeholders(fact).lower()
        for kind, pattern in (("price_min", PRICE_MIN), ("price_max", PRICE_MAX)):
            for m in pattern.finditer(text):
                # "the cheapest item" is about an order's lines; so is "which item ... costs
                # the most"; anything else ("the cheapest option", "the cheapest lamp") is
                # about whatever priced entries are being chosen from.
                verb = m.group(1).startswith("cost")
                about_items = _BEFORE_ITEM.search(text[: m.start()]) if verb else _AFTER_ITEM.match(text[m.end() :])
                out.append((kind, "line" if about_items else "any"))
        for kind, pattern in (("recent", RECENT), ("earliest", EARLIEST)):
            if pattern.search(text):
                out.append((kind, "list"))
    return list(dict.fromkeys(out))


def entry_kind(entry: Any) -> str | None:
    """What an entry is, for the superlatives: a product `variant`, an order `line`, or None."""
    if not isinstance(entry, dict) or "price" not in entry:
        return None
    if "available" in entry or "options" in entry and "product_id" not in entry:
        return "variant"
    if "product_id" in entry and "item_id" in entry:
        return "line"
    return None


def superlative_picks(stated: list[tuple[str, str]], entries: list[tuple[Any, Any]], is_list: bool) -> set:
    """Keys of the entries a stated superlative picks out of `entries` (key, entry)."""
    picks: set = set()
    for kind, target in stated:
        if kind in ("recent", "earliest"):
            if is_list and entries:
                picks.add(entries[-1][0] if kind == "recent" else entries[0][0])
            continue
        priced = [
            (k, float(e["price"]))
            for k, e in entries
            if entry_kind(e) in ((target,) if target == "line" else ("line", "variant"))
            and isinstance(e.get("price"), (int, float))
        ]
        if len(priced) >= 2:
            best = min(p for _, p in priced) if kind == "price_min" else max(p for _, p in priced)
            picks |= {k for k, p in priced if p == best}
    return picks


# --------------------------------------------------------------------------- option goals

# Ordered scales of everyday option words, lowest first. A value on one of them, or a value
# with a number in it ("500", "10x", "20MP", "1.5L"), can be ranked against the others.
ORDINAL_SCALES = (
    ("beginner", "intermediate", "expert"),
    ("low", "medium", "high"),
    ("small", "medium", "large"),
    ("extra extra small", "extra small", "small", "medium", "large", "extra large", "extra extra large"),
)
_MAX_WORDS = r"maximum|max|highest|largest|biggest|longest|most|greatest|best"
_MIN_WORDS = r"minimum|min|lowest|smallest|fewest|least|shortest"
_EXTREME = re.compile(rf"\b(?:the\s+)?({_MAX_WORDS}|{_MIN_WORDS})\s+((?:[a-z-]+\s*){{1,2}})")
_EASIEST = re.compile(r"\b(easiest|simplest|hardest|most difficult)\b")
# Comparative words and the option they compare, by stem: "brighter" compares brightness.
_COMPARATIVE = re.compile(
    r"\b(?:(less|more|fewer|lower|higher)\s+([a-z]+)|(bigger|larger|smaller|longer|shorter|brighter|dimmer|"
    r"heavier|lighter|higher|lower))\b"
)
_COMPARED = {
    "bigger": ("size capacity", 1),
    "larger": ("size capacity", 1),
    "smaller": ("size capacity", -1),
    "longer": ("length", 1),
    "shorter": ("length", -1),
    "brighter": ("brightness", 1),
    "dimmer": ("brightness", -1),
    "heavier": ("weight", 1),
    "lighter": ("weight", -1),
}
# "4K" is four thousand (a resolution above "1080p"), as a person reads it.
_THOUSANDS = {"k": 1000.0}
_TO_ML = {"ml": 1.0, "l": 1000.0, "liter": 1000.0, "liters": 1000.0, "litre": 1000.0, "litres": 1000.0}


def option_rank(value: str) -> float | None:
    """A value's place on its scale: a number (volumes in ml), or a position on an ordinal scale."""
    text = str(value).strip().lower()
    word = SIZES.get(text, text)
    for scale in ORDINAL_SCALES:
        if word in scale:
            return float(scale.index(word))
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([a-z%]*)", text)
    if not m:
        return None
    number, unit = float(m.group(1)), m.group(2)
    return number * _TO_ML.get(unit, _THOUSANDS.get(unit, 1.0))


def option_goals(facts: list[str]) -> list[tuple[str, str, int]]:
    """(kind, option words, direction) for each extreme ("the maximum zoom", "fewest pieces",
    "the easiest") or comparison ("a brighter one", "less bright", "one size smaller") the
    customer states. Kind `extreme` picks the highest (+1) or lowest (-1) value of that option;
    `relative` the nearest value above (+1) or below (-1) the replaced item's."""
    goals = []
    for fact in facts:
        text = strip_placeholders(fact).lower()
        for m in _EXTREME.finditer(text):
            words = m.group(2).split()
            if words and words[0] in ("expensive", "recent", "recently", "costly"):
                continue  # price and recency are superlatives of their own (superlative())
            direction = 1 if re.fullmatch(_MAX_WORDS, m.group(1)) else -1
            goals.append(("extreme", " ".join(words), direction))
        for m in _EASIEST.finditer(text):
            goals.append(("extreme", "difficulty level", -1 if m.group(1) in ("easiest", "simplest") else 1))
        for m in _COMPARATIVE.finditer(text):
            if m.group(3):
                option, direction = _COMPARED.get(m.group(3), ("", 0))
                if m.group(3) in ("higher", "lower"):
                    continue  # "higher/lower" alone names no option
            else:
                if m.group(2) in ("than", "expensive", "price", "pricey", "cost"):
                    continue
                option = m.group(2)
                direction = 1 if m.group(1) in ("more", "higher") else -1
            if option and direction:
                goals.append(("relative", option, direction))
    return list(dict.fromkeys(goals))


def _option_for(goal_words: str, options: dict) -> str | None:
    """The option key a goal's words name: a key sharing a word stem with them."""
    wanted = {w[:5] for w in terms(goal_words)} | {w[:5] for w in goal_words.split()}
    for key in options:
        if {w[:5] for w in terms(key)} & wanted:
            return key
    return None


def goal_picks(goals: list[tuple[str, str, int]], entries: list[tuple[Any, Any]], old: Any) -> dict:
    """Key -> how many stated goals the entry meets best, among `entries` (product variants)."""
    met: dict = {}
    old_options = old.get("options") if isinstance(old, dict) else None
    for kind, words, direction in goals:
        ranked = []
        for key, entry in entries:
            options = entry.get("options") if isinstance(entry, dict) else None
            if not isinstance(options, dict):
                continue
            option = _option_for(words, options)
            rank = option_rank(options[option]) if option else None
            if rank is not None:
                ranked.append((key, option, rank))
        if len(ranked) < 2:
            continue
        if kind == "extreme":
            best = max(r for _, _, r in ranked) if direction > 0 else min(r for _, _, r in ranked)
            chosen = {k for k, _, r in ranked if r == best}
        else:
            option = ranked[0][1]
            base = option_rank(old_options.get(option, "")) if isinstance(old_options, dict) else None
            if base is None:
                continue
            beyond = [(k, r) for k, _, r in ranked if (r - base) * direction > 0]
            if not beyond:
                continue
            nearest = min(abs(r - base) for _, r in beyond)
            chosen = {k for k, r in beyond if abs(r - base) == nearest}
        for key in chosen:
            met[key] = met.get(key, 0) + 1
    return met


def leaf_texts(node: Any) -> list[str]:
    """Every scalar leaf of a result, as text."""
    if isinstance(node, dict):
        return [t for v in node.values() for t in leaf_texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in leaf_texts(v)]
    return [] if node is None else [str(node)]


def reading_tool(tools: dict[str, dict], arg: str | None) -> str | None:
    """The read tool that takes exactly this one argument (get_order_details for an order_id)."""
    found = [name for name, t in sorted(tools.items()) if not t.get("write") and t.get("params") == [arg]]
    return found[0] if len(found) == 1 else None


def value_at(doc: Any, steps: tuple[str, ...]) -> Any:
    """The value under a path of field names (None when a step is missing)."""
    for step in steps:
        if not isinstance(doc, dict) or step not in doc:
            return None
        doc = doc[step]
    return doc
