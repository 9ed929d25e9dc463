"""How the card audit's `selectors_reachable` check reads the customer's words.

Used by incognita.access.cards.reachability only (and its tests): word matching of database values against
what the customer can release (`_Said`: tokens, plural forms, compounds, units, sizes, yes/no
options), and the general selectors found anywhere in the customer's words (`_Words`: status,
price and option ranks, recency, "all"/"except", counts, "same", relations of records, a
budget). Like the rest of the check it is the audit's own reading, written independently of
the scripted agent's choosing code (incognita.access.episodes.scripted), so that it checks it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_STATUS_WORDS = {"pending": "pending", "delivered": "delivered", "received": "delivered", "cancelled": "cancelled"}
_STATUS_WORDS |= {"canceled": "cancelled", "processed": "processed", "shipped": "processed"}
# Selectors pick an entry by rank or by reference to the old item, not by a value.
_PRICE_RANK = {
    "cheapest": re.compile(
        r"\b(cheapest|cheaper|least expensive|less expensive|lowest[- ]price[d]?|costs? the least)\b"
    ),
    "priciest": re.compile(
        r"\b(most expensive|more expensive|priciest|pricier|highest[- ]price[d]?|costs? the most)\b"
    ),
}
_RECENCY = {
    "latest": re.compile(
        r"\b(most recent(ly)?|latest|newest|recent order|last (placed|ordered|order)|recently placed|just (bought|placed|ordered|purchased))\b"
    ),
    "earliest": re.compile(r"\b(earliest|oldest|first (placed|ordered|order))\b"),
}
# "same"/"keep" keep the old item's option values ("the same order" says nothing about options).
_SAME = re.compile(r"\b(same|keep|keeping|without changing|unchanged)\b(?!\s+(order|orders|time|day|address)\b)")
# A reference to another item the customer has: "the same type as the one you already received".
_OWNED = re.compile(
    r"\b(same|the (type|one|kind|model|version|bottle) (that |which )?you (just |already )?(ordered|received|bought|placed|purchased|have))\b"
)
# A universal selector over an order's lines: every line is meant, none is a wrong choice.
_EVERYTHING = re.compile(
    r"\b(everything(?! (is|was|will|goes|works|has)\b)|(all|every|each)( of)?( the| my| your| its| their)? (items?|things|products|of them))\b"
)
_EXCEPT = re.compile(r"\b(except|other than|apart from|besides|but not|everything but|all but)\b")
# The phrase an exclusion names runs to the end of its clause: "everything except a keyboard and
# a mouse, but ..." excludes the keyboard and the mouse; a list goes on past a comma ("a mouse,
# a pet bed").
_EXCEPTED = re.compile(
    _EXCEPT.pattern
    + r"\s+((?:[^,.;:!?()]|,(?=\s+(?:and\s+|or\s+)?(?:a|an|the|my|your)\b))+?)(?=\s+but\b|,(?!\s+(?:and\s+|or\s+)?(?:a|an|the|my|your)\b)|[.;:!?()]|$)"
)
# "your other order", "another order": the order meant is not the one of the item named.
_OTHER_ORDER = re.compile(r"\b(another|other|different|second) order\b")
# A budget: the new item may cost no more than the old one ("with the previous price").
_BUDGET = re.compile(
    r"\b(with(in)?|for|under|at)\s+(the|your|my)\s+(previous|old|original|same)(\s+\w+)?\s+(price|cost|amount)\b"
    r"|\bwithin what (you|i) (paid|spent)\b|\b(no|not) more than (what )?(you|i) paid\b"
)
# "the color to be the same as your other bottle": an option copied from another item the customer has.
_SAME_AS_OTHER = re.compile(r"((?:\w+\s+){0,5})same(\s+\w+)?\s+as\s+(your|my|the)\s+(other|previous|old|first)\b")
_NEGATION = {"no", "not", "non", "without", "dont", "doesnt"}
# Ranks of option values: superlatives rank among the variants, comparatives against the old item.
_RANK_WORDS = [
    (re.compile(r"\b(maximum|max|maximi[sz]ed?|largest|biggest|highest|longest|brightest|greatest|most)\b"), "max"),
    (re.compile(r"\b(minimum|min|smallest|lowest|least|fewest|shortest|easiest|dimmest)\b"), "min"),
    (re.compile(r"\b(bigger|larger|higher|longer|brighter|greater|harder|more)\b"), "up"),
    (re.compile(r"\b(smaller|lower|shorter|dimmer|fewer|easier|less)\b"), "down"),
]
# The option a rank word is about when it does not name one ("brighter": brightness).
_RANK_TOPIC = {
    "bright": "brightness", "long": "length", "short": "length", "easy": "difficulty", "easi": "difficulty",
    "hard": "difficulty", "few": "pieces", "big": "size capacity", "larg": "size capacity",
    "small": "size capacity", "dim": "brightness",
}  # fmt: skip
_SCALES = [("low", "m", "high"), ("xs", "s", "m", "l", "xl", "xxl"), ("beginner", "intermediate", "expert")]
_SIZES = [  # longest first; both sides map to the catalogue's letter codes
    (re.compile(r"\b(double[\s-]+extra|xx|2x)[\s-]*large\b"), " xxl "),
    (re.compile(r"\b(extra|x)[\s-]*large\b"), " xl "),
    (re.compile(r"\b(extra|x)[\s-]*small\b"), " xs "),
    (re.compile(r"\bsmall\b"), " s "),
    (re.compile(r"\bmedium\b"), " m "),
    (re.compile(r"\blarge\b"), " l "),
]
# A unit joins its number into one word: '34 inch' = '34-inch' = '34inch' != '31 inch'.
_UNITS = {
    "inch": "inch", "inches": "inch", "ft": "ft", "feet": "ft", "foot": "ft", "mm": "mm", "cm": "cm",
    "ml": "ml", "l": "l", "liter": "l", "liters": "l", "litre": "l", "litres": "l", "gb": "gb", "tb": "tb",
    "mp": "mp", "x": "x", "bar": "bar", "hour": "hour", "hours": "hour", "lb": "lb", "lbs": "lb",
    "kg": "kg", "oz": "oz", "w": "w", "mah": "mah", "hz": "hz",
}  # fmt: skip
_GENERIC = {"item", "thing", "product", "variant", "option"}
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "both": 2}
_STOP = {"the", "and", "with", "for", "one", "new", "set", "kit", "type", "size", "color", "not", "other", "yes"}
_RAW_WORD = re.compile(r"[a-z0-9]+(?:['’.,-][a-z0-9]+)*")
_PIECE = re.compile(r"\d+(?:[.-]\d+)*|[a-z]+")


@functools.lru_cache(maxsize=16384)
def _tokens(text: str) -> tuple[str, ...]:
    """Words for matching: lower case, hyphenated words whole ('v-neck' -> 'vneck', never
    'neck'), numbers joined to their unit, sizes as letter codes ('small' -> 's')."""
    text = text.lower()
    for pattern, code in _SIZES:
        text = pattern.sub(code, text)
    words: list[str] = []
    for raw in _RAW_WORD.findall(text):
        raw = re.sub(r"(?<=\d),(?=\d{3})", "", raw)
        words += _PIECE.findall(re.sub(r"(?<=[a-z])['’-](?=[a-z])|['’]", "", raw))
    out: list[str] = []
    for w in words:
        if out and w in _UNITS and out[-1][-1].isdigit():
            out[-1] += _UNITS[w]
        else:
            out.append(w)
    return tuple(out)


@functools.lru_cache(maxsize=16384)
def _forms(word: str) -> frozenset[str]:
    """The word and its possible singulars (bookshelves -> bookshelf, batteries -> battery)."""
    forms = {word}
    if len(word) > 3 and word.isalpha() and word[-1] == "s" and word[-2] not in "su":
        forms.add(word[:-1])
        if word.endswith("es"):
            forms.add(word[:-2])
        if word.endswith("ies"):
            forms.add(word[:-3] + "y")
        if word.endswith("ves"):
            forms.update({word[:-3] + "f", word[:-3] + "fe"})
    return frozenset(forms)


def _same_word(said: frozenset[str], value: frozenset[str]) -> bool:
    """Same word, or the customer's word ends a compound of the catalogue ('watch' of 'Wristwatch')."""
    return bool(said & value) or any(v.endswith(s) for s in said if len(s) >= 4 and s.isalpha() for v in value)


@functools.lru_cache(maxsize=16384)
def _value_forms(value: str) -> tuple[frozenset[str], ...]:
    return tuple(_forms(t) for t in _tokens(value))


def _ranks(*values: str) -> list[float] | None:
    """Where option values sit on their scale: their numbers, or their places on one shared
    scale (low/medium/high, the sizes); None when they are not comparable."""
    toks = [_tokens(v) for v in values]
    if not all(toks):
        return None
    numbers = [re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]*)", t[0]) for t in toks]
    if all(numbers) and len({m.group(2) for m in numbers}) == 1:  # one unit: 4K and 1080p do not compare
        return [float(m.group(1)) for m in numbers]
    for scale in _SCALES:
        if all(len(t) == 1 and t[0] in scale for t in toks):
            return [float(scale.index(t[0])) for t in toks]
    return None


class _Said:
    """Words the customer can release, to match entry values against."""

    def __init__(self, texts: list[str]):
        self.phrases = [tuple(_forms(w) for w in _tokens(t)) for t in texts]
        self.raw = [_tokens(t) for t in texts]
        self.at: dict[str, list[tuple[int, int]]] = {}  # word form -> where it is said
        for p, phrase in enumerate(self.phrases):
            for i, forms in enumerate(phrase):
                for f in forms:
                    self.at.setdefault(f, []).append((p, i))
        self.words = set(self.at) | {a + b for toks in self.raw for a, b in zip(toks, toks[1:])}  # 't shirt'
        self.stems = [w for w in self.at if len(w) >= 4 and w.isalpha()]  # may end a compound

    def _run(self, want: tuple[frozenset[str], ...]) -> bool:
        """All of `want`'s words said in a row."""
        if not want:
            return False
        starts = {pos for f in want[0] for pos in self.at.get(f, ())}
        starts |= {pos for s in self.stems if any(v.endswith(s) for v in want[0]) for pos in self.at[s]}
        return any(
            i + len(want) <= len(self.phrases[p])
            and all(_same_word(self.phrases[p][i + j], want[j]) for j in range(1, len(want)))
            for p, i in starts
        )

    def states(self, label: str, value: str, alt_words: set[str]) -> bool:
        """The customer states `value` (of option `label`): its words in a row, all of them as
        one word ('giftcard'), one distinctive word of it that no alternative has ('Google Home'
        reaches 'Google Assistant' when no other variant says 'Google'), or for yes/no options
        the option named with or without a negation ('no backlight' reaches backlight: none)."""
        want = _value_forms(value)
        if not want:
            return False
        toks = _tokens(value)
        if toks[0] in ("no", "none", "not", "non") or toks == ("yes",):
            return self._polar(label, toks[0] != "yes", [t for t in toks if t not in ("no", "none", "not", "non")])
        if self._run(want) or "".join(toks) in self.words:
            return True
        return any(
            any(_same_word(frozenset({s}), forms) for s in self.words) and not forms & alt_words
            for forms in want
            if (w := min(forms, key=len)).isalpha() and len(w) >= 3 and w not in _STOP
        )

    def _polar(self, label: str, negative: bool, extra: list[str]) -> bool:
        topic = {f for w in _tokens(label) + tuple(extra) if len(w) >= 4 for f in _forms(w)}
        topic |= {w[: len(w) - 3] for w in topic if w.endswith(("ant", "ance"))}  # resistance ~ resistant
        for toks in self.raw:
            for i, w in enumerate(toks):
                if any(_same_word(_forms(w), frozenset({t})) or w.startswith(t) for t in topic if len(t) >= 4):
                    if any(p in _NEGATION for p in toks[max(0, i - 3) : i]) == negative:
                        return True
        return False


@dataclass
class _Words:
    """The general selectors in all the customer's words (fields, requests, opening line)."""

    price: list[tuple[str, _Said]]  # (cheapest/priciest, the words around it: what it is about)
    recency: set[str]
    statuses: set[str]
    same: bool
    owned: bool
    excepted: bool
    everything: bool
    ranks: list[tuple[str, set[str], float | None]]  # (max/min/up/down, topic words, exact delta)
    counts: list[tuple[int, frozenset[str]]]  # ("two", forms of "watches")
    excepts: _Said  # what an exclusion names ("everything except the coffee machine")
    named: _Said  # every word: records named by what they hold or where they went (relations)
    other_order: bool  # "your other order": not the order of the item named
    budget: bool  # the new item costs no more than the old one
    same_as: set[str]  # option words copied from another item the customer has ("same colour as")

    @classmethod
    def of(cls, texts: list[str]) -> _Words:
        text = " ".join(" ".join(t.split()) for t in texts).lower()
        toks = _tokens(text)
        ranks = []
        for i, w in enumerate(toks):
            direction = next((d for pattern, d in _RANK_WORDS if pattern.fullmatch(w)), None)
            if direction is None:
                continue
            # The option a rank word is about is named next to it ("one size smaller", "maximum zoom").
            topic = {f for t in toks[max(0, i - 2) : i + 4] for f in _forms(t)}
            topic |= {t for stem, ts in _RANK_TOPIC.items() if w.startswith(stem) for t in ts.split()}
            delta = next(
                (float(t) for t in reversed(toks[max(0, i - 2) : i]) if t.isdigit()), None
            )  # "500 pieces less"
            ranks.append((direction, topic, delta))
        # A price rank is about the item named in its sentence or the two before ("You received two
        # tablets. Return the more expensive one.").
        sentences = [x for t in texts for x in re.split(r"(?<=[.!?;])\s+", " ".join(t.split()).lower()) if x]
        price = [
            (k, _Said(sentences[max(0, i - 2) : i + 1]))
            for i, x in enumerate(sentences)
            for k, pattern in _PRICE_RANK.items()
            if pattern.search(x)
        ]
        counts = [
            (_NUMBERS.get(w, int(w) if w.isdigit() and len(w) == 1 else 0), _forms(toks[i + 1]))
            for i, w in enumerate(toks[:-1])
            if w in _NUMBERS or (w.isdigit() and len(w) == 1)
        ]
        return cls(
            price=price,
            recency={k for k, p in _RECENCY.items() if p.search(text)},
            statuses={s for w, s in _STATUS_WORDS.items() if re.search(rf"\b{w}\b", text)},
            same=bool(_SAME.search(text)),
            owned=bool(_OWNED.search(text)),
            excepted=bool(_EXCEPT.search(text)),
            everything=bool(_EVERYTHING.search(text)),
            ranks=ranks,
            counts=[(n, forms) for n, forms in counts if n > 1],
            excepts=_Said([m.group(m.lastindex) for m in _EXCEPTED.finditer(text)]),
            named=_Said([_EXCEPTED.sub(" ", " ".join(t.split()).lower()) for t in texts]),  # not what is excluded
            other_order=bool(_OTHER_ORDER.search(text)),
            budget=bool(_BUDGET.search(text)),
            same_as={
                f.replace("colour", "color")
                for m in _SAME_AS_OTHER.finditer(text)
                for t in _tokens(m.group(1) + (m.group(2) or ""))
                for f in _forms(t)
            },
        )
