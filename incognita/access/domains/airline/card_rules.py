"""The airline domain's card rules: the customer's fields, demands and opening line, read off an
airline task's user scenario (incognita.access.domain.CardRules; the card's layout and its requests
are incognita.access.cards.card's).

An airline scenario has the same four parts as a retail one (known and unknown information, the
reason for calling, the further instructions). What the customer knows and may release is every
phrase of those parts that states a value a solution consumes or a choice it makes: who they are
(name, user id), which reservation or flight (its number, its airports, its dates), what they want
(cabin, trip type, bags, insurance, passengers), how they pay and up to what budget, and the
selectors that pick one flight or reservation among several ("the cheapest", "nonstop", "before
11am"). Each is a field made of the source's own words (incognita.access.domains.airline.
source_words says how each is found); identifiers are confirmed against the database. What the
service side must find (a reservation the customer cannot name, the flights a search returns, a
payment method's id) is no field: the golden trajectory traces it to the reads that return it.

The demands are the sentences of the reason for calling and those of the further instructions that
ask for something or set a condition; sentences that only set the customer's manner ("You are
calm.") are not demands. A conditional sentence ("If the agent says ..., you ...") is kept whole,
so its trigger stays with it, and is a fallback of the demand before it. No rule names a task, an
id, a flight or a person.
"""

from __future__ import annotations

import re

from incognita.access.cards.card import WITHHOLD, FieldSet, card_document
from incognita.access.cards.text import clean, find_span, split_sentences
from incognita.access.cards.text import opening_line as text_opening_line
from incognita.access.domains.airline import source_words as sw
from incognita.access.domains.airline.upstream import airports

_NAME = re.compile(r"(?:[Yy]ou are|[Yy]our name is|[Nn]ame is)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)")
USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{4}\b")
_RESERVATION = re.compile(r"(?<![A-Za-z0-9_])[A-Z0-9]{6}(?![A-Za-z0-9_])")
_FLIGHT = re.compile(r"(?<![A-Za-z0-9_])[A-Z]{3}\d{3}(?![A-Za-z0-9_])")
_IATA = re.compile(r"(?<![A-Za-z0-9_])[A-Z]{3}(?![A-Za-z0-9_])")
_DOB = re.compile(r"\b(?:DOB|date of birth|born on)\s*:?\s*(\d{4}-\d{2}-\d{2})\b", re.IGNORECASE)
# A person the customer names as a passenger: after the words that introduce one.
# After "to", a name is a passenger's only when the records or a birth date say it is a person.
_PERSON_CUE = re.compile(
    r"\b(passengers?|companion|remove|for|friend(?:'s|s)?\s+name\s+is|name\s+from|to)\s+"
    r"([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
)
_YOURSELF = re.compile(r"\bpassengers?\b[^.]*?\byourself\b|\byourself\b[^.]*?\bpassengers?\b", re.IGNORECASE)


# --------------------------------------------------------------------------- extraction rules


def identity_fields(fs: FieldSet, known: str, text: str) -> None:
    m = _NAME.search(known) or _NAME.search(text)
    if m:
        fs.add("name", "identity", m.group(1), [m.group(1)])
    for uid in dict.fromkeys(USER_ID.findall(known) or USER_ID.findall(text)):
        fs.add("user_id", "identity", uid, [uid])


def record_fields(fs: FieldSet, text: str, db: dict) -> None:
    """Reservation numbers and flight numbers the customer states: the identifier's shape, and a
    record of the database under it (a shouted six-letter word is no reservation)."""
    for rid in dict.fromkeys(_RESERVATION.findall(text)):
        if rid in db["reservations"]:
            fs.add("reservation_id", "reservation", rid, [rid])
    for number in dict.fromkeys(_FLIGHT.findall(text)):
        if number in db["flights"]:
            fs.add("flight_number", "flight", number, [number])


def airport_fields(fs: FieldSet, text: str) -> None:
    """Airports by their code or their city in upstream's airport list, or a city's short name."""
    codes = {code for code, _ in airports()}
    found: list[tuple[int, str]] = []
    for m in _IATA.finditer(text):
        if m.group(0) in codes:
            found.append((m.start(), m.group(0)))
    for _, city in airports():
        for m in re.finditer(r"(?<![A-Za-z])" + re.escape(city) + r"(?![A-Za-z])", text, re.IGNORECASE):
            found.append((m.start(), m.group(0)))
    for short in sw.CITY_SHORT_NAMES:
        for m in re.finditer(r"(?<![A-Za-z])" + short + r"(?![A-Za-z])", text, re.IGNORECASE):
            found.append((m.start(), m.group(0)))
    for _, span in sorted(found):
        fs.add("airport", "airport", span, [span])


def date_fields(fs: FieldSet, text: str) -> None:
    dobs = {m.group(1) for m in _DOB.finditer(text)}
    for m in _DOB.finditer(text):
        fs.add("dob", "dob", m.group(1), [m.group(1)])
    spans = [(m.start(), m.group(0)) for m in sw.MONTH_DAY.finditer(text)]
    spans += [(m.start(), m.group(0)) for m in sw.DAY_ONLY.finditer(text)]
    spans += [(m.start(), m.group(0)) for m in sw.ISO_DATE.finditer(text) if m.group(0) not in dobs]
    for _, span in sorted(spans):
        fs.add("date", "date", span, [span])
    for m in sw.DATE_SHIFT.finditer(text):
        fs.add("date_shift", "date_shift", m.group(0), [m.group(0)])


# (token and kind, pattern): phrases kept as they are written.
_WORD_FIELDS = (
    ("cabin", sw.CABIN),
    ("flight_type", sw.FLIGHT_TYPE),
    ("insurance", sw.INSURANCE),
    ("baggage", sw.BAGS),
    ("payment", sw.PAYMENT),
    ("budget", sw.BUDGET),
    ("time", sw.TIME),
    ("selector", sw.SELECTOR),
)


def word_fields(fs: FieldSet, text: str) -> None:
    for kind, pattern in _WORD_FIELDS:
        seen: list[tuple[int, int]] = []
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in seen):
                continue  # inside a longer phrase of the same kind
            seen.append((m.start(), m.end()))
            fs.add(kind, kind, m.group(0), [m.group(0)])


def _people(db: dict, user_ids: list[str]) -> set[str]:
    """First names of the people on the customer's records: the profile, its saved passengers and
    the passengers of its reservations."""
    names: set[str] = set()
    for uid in user_ids:
        user = db["users"].get(uid)
        if not user:
            continue
        names.add(user["name"]["first_name"])
        names.update(p["first_name"] for p in user.get("saved_passengers") or [])
        for rid in user.get("reservations") or []:
            names.update(p["first_name"] for p in (db["reservations"].get(rid) or {}).get("passengers") or [])
    return names


def passenger_fields(fs: FieldSet, text: str, db: dict) -> None:
    """People the customer names as passengers: after a word that introduces one ("passenger Kevin
    Smith", "remove Ethan", "for Aarav"; after "to" only a person of the customer's records or one
    the source gives a birth date with, since "to" also introduces places); and "yourself" where a
    passenger is meant."""
    users = [f.value for f in fs.fields if f.token == "user_id"]
    people = _people(db, users)
    months = {m.capitalize() for m in sw.MONTHS}
    cities = {w for _, city in airports() for w in city.split()}
    for m in _PERSON_CUE.finditer(text):
        name = m.group(2)
        first = name.split()[0]
        if first in months or first in cities or first in {"You", "Your", "The", "Basic", "Economy", "Business"}:
            continue
        dated = re.match(r",?\s*(?:DOB|date of birth)", text[m.end() :], re.IGNORECASE)
        if m.group(1) != "to" or first in people or dated:
            fs.add("passenger", "passenger", name, [name])
    for m in _YOURSELF.finditer(text):
        span = find_span(m.group(0), "yourself")
        fs.add("passenger", "passenger", span, [span])


# --------------------------------------------------------------------------- requests, opening

# A sentence of the further instructions that only sets the customer's manner: it opens with
# "You are"/"Be"/"Sound" and neither asks for anything nor sets a condition.
_MANNER = re.compile(r"^(?:you\s+are|you're|be|sound|try\s+to\s+sound)\b", re.IGNORECASE)
_ASKS = re.compile(
    r"\b(?:want|wants|need|would like|prefer|willing|fine with|ok with|okay with|happy with|insist|"
    r"accept|pay|budget|refund|cancel|change|book|upgrade|downgrade|if|only|unless|ask|asks|"
    r"transfer|transferred|compensation)\b",
    re.IGNORECASE,
)


def demand_sentences(task_instructions: str) -> list[str]:
    """Sentences of the further instructions that ask for something or set a condition."""
    return [s for s in split_sentences(task_instructions) if not (_MANNER.match(s) and not _ASKS.search(s))]


_INTENTS = [  # (pattern over the reason for calling, phrase for the opening line)
    (r"\bbook", "a booking"),
    (r"\bcancel", "a cancellation"),
    (r"\b(?:change|modify|modification|upgrade|downgrade|push back|move|remove|add|insurance)\b", "a change to a trip"),
    (r"\b(?:compensat|complain|delay|frustrat)", "a complaint"),
    (r"\brefund", "a refund"),
    (r"\b(?:know|figure out|how many|how much|check|mixup)\b", "a question"),
]


def opening_line(reason: str) -> str:
    """A neutral first message: what kind of help, never a field value."""
    return text_opening_line(reason, _INTENTS, "Hi, I need some help with my trip.")


# --------------------------------------------------------------------------- the card


def build_card(task: dict, db: dict, source_meta: dict) -> dict:
    """The rule-built (version 1) card of one airline task."""
    instr = task["user_scenario"]["instructions"]
    known, reason = clean(instr.get("known_info")), clean(instr.get("reason_for_call"))
    further = clean(instr.get("task_instructions"))
    text = sw.source_text(instr)

    fs = FieldSet()
    identity_fields(fs, known, text)
    record_fields(fs, text, db)
    airport_fields(fs, text)
    date_fields(fs, text)
    word_fields(fs, text)
    passenger_fields(fs, text, db)

    unknown = clean(instr.get("unknown_info"))
    return card_document(
        task,
        source_meta,
        instructions={k: instr.get(k) for k in ("known_info", "unknown_info", "reason_for_call", "task_instructions")},
        opening_line=opening_line(reason),
        fields=fs,
        not_known=[unknown] if unknown else [],
        sentences=split_sentences(reason) + demand_sentences(further),
        persona=further,
        withholds_disclosure=bool(WITHHOLD.search(text)),
    )
