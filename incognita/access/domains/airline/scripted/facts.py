"""What a customer's words state about the airline's records, in the forms the records hold: a
date as the customer says it ("May 10") and in ISO form, a city ("sf") and its airports' codes, a
passenger's name and its words; and which superlative a selector states ("the most recent", "the
cheapest"). General rules of the domain's words (incognita.access.domains.airline.source_words);
none names a task, an id or a flight.
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.airline import source_words as sw
from incognita.access.domains.airline.upstream import airports
from incognita.access.episodes.scripted.discovery import STOP_WORDS

# A superlative a selector states, and what it orders the entries by (direction: +1 the largest).
SUPERLATIVES = (
    (re.compile(r"second\s+cheapest", re.I), "second_cheapest"),
    (re.compile(r"cheapest|lowest\s+price|smallest\s+balance|smaller|smallest", re.I), "least"),
    (re.compile(r"larger|largest", re.I), "most"),
    (re.compile(r"most\s+recent|last\s+reservation|recent\s+(?:reservation|\w+\s+flight)", re.I), "latest"),
    (re.compile(r"earliest", re.I), "earliest"),
    (re.compile(r"fastest|shortest", re.I), "fastest"),
    (re.compile(r"later\s+flight", re.I), "later"),
    (re.compile(r"non-?stop|direct\s+flights?", re.I), "nonstop"),
)


# An amount of money stated with its unit: "500 dollar", "$500".
AMOUNT = re.compile(r"\$\s*(\d+(?:\.\d+)?)\b|\b(?<![\w.])(\d+(?:\.\d+)?)\s*(?:dollars?|usd)\b", re.I)
# Everyday short names of payment kinds and brands, in the records' words.
ABBREVIATIONS = (
    (re.compile(r"\bGC\b", re.I), "gift card"),
    (re.compile(r"\bCC\b", re.I), "credit card"),
    (re.compile(r"\bmaster\s+card\b", re.I), "mastercard"),
)
# A time of day a journey must keep to: "before 11am", "arrive before 7am", "departs 3pm", "after 8am".
TIME = re.compile(
    r"\b(?:(arrive)\s+)?(before|after|departs?|leave\s+after)?\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b", re.I
)


def expanded(value: str) -> str:
    for pattern, words in ABBREVIATIONS:
        value = pattern.sub(words, value)
    return value


def time_holds(phrase: str, entry) -> bool | None:
    """Does a journey (a flight, or the flights of a one-stop journey) keep to a stated time of
    day: its first departure (or, "arrive before", its last arrival)? None: no time or no journey."""
    m = TIME.search(phrase)
    legs = entry if isinstance(entry, list) else [entry]
    if not m or not legs or not all(isinstance(f, dict) and "scheduled_departure_time_est" in f for f in legs):
        return None
    arrive, how, hour, minute, half = m.groups()
    stated = (int(hour) % 12 + (12 if half.lower() == "pm" else 0)) * 60 + int(minute or 0)
    when = legs[-1].get("scheduled_arrival_time_est") if arrive else legs[0]["scheduled_departure_time_est"]
    h, mm = (int(x) for x in str(when).split(":")[:2])
    actual = h * 60 + mm
    how = (how or "").lower()
    if how == "before":
        return actual < stated
    if how in ("after", "leave after"):
        return actual > stated
    return actual == stated


def forms(value: str) -> set[str]:
    """The forms a stated value may take in a record (lower case)."""
    text = " ".join(str(value).split()).lower()
    out = {text}
    ending = re.search(r"\bending\s+in\s+(\d{4})\b", text)
    if ending:
        out.add(ending.group(1))  # a card by its last four digits
    iso = sw.month_day_date(str(value))
    if iso:
        out.add(iso)
    city = sw.CITY_SHORT_NAMES.get(text, text).casefold()
    out |= {code.lower() for code, c in airports() if c.casefold() == city}
    return out


def words(value: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_-]+", str(value).lower()) if len(w) > 1}


def leaves(node: Any) -> list[str]:
    """Every scalar of a record, lower case."""
    if isinstance(node, dict):
        return [t for v in node.values() for t in leaves(v)]
    if isinstance(node, list):
        return [t for v in node for t in leaves(v)]
    return [] if node is None else [str(node).lower()]


def keys(node: Any) -> list[str]:
    """Every field name of a record, lower case."""
    if isinstance(node, dict):
        return [str(k).lower() for k in node] + [t for v in node.values() for t in keys(v)]
    if isinstance(node, list):
        return [t for v in node for t in keys(v)]
    return []


def states(value: str, texts: list[str]) -> bool:
    """Does a record whose scalars are `texts` hold the stated value: one of its forms as a
    scalar, or (a name) each of its words as a scalar? A thing by its amount ("the 500 dollar
    certificate"): the amount as a scalar, and the thing's words."""
    held = set(texts)
    value = expanded(str(value))
    amount = AMOUNT.search(value)
    if amount:
        number = float(amount.group(1) or amount.group(2))
        rest = _stems(AMOUNT.sub(" ", value))
        return {f"{number:g}", str(number)} & held != set() and rest <= _stems(" ".join(held))
    if forms(value) & held:
        return True
    ws = words(value)
    if len(ws) > 1 and ws <= held:
        return True
    # A kind of thing, in its own words ("certificates", "gift card"): every content word of it
    # among the record's (an id's words too: certificate_8045380).
    said = _stems(str(value))
    return bool(said) and said <= _stems(" ".join(held))


def _stems(text: str) -> set[str]:
    """Content words, singular: 'certificates' and 'certificate_8045380' share 'certificate'."""
    found = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in found if len(w) > 2 and w not in STOP_WORDS}


def superlatives(facts: list[str]) -> list[str]:
    """The superlatives the facts state, in the order of SUPERLATIVES."""
    text = " ".join(facts)
    return [name for pattern, name in SUPERLATIVES if pattern.search(text)]
