"""How the airline's card builder and golden rules read a customer's words: the phrases by which
an airline task's instructions state airports, dates, cabins, bags, payment methods, passengers and
the selectors that pick one flight or reservation among several.

The rules hold for every task alike: none names a task, an id, a flight or a person. Identifiers
(reservation numbers, flight numbers) are recognised by their shape and confirmed against the
database; airports by upstream's own airport list (`upstream.airports`) and the everyday short names
of its cities; dates by month name and day, in the year of the policy's current time.
"""

from __future__ import annotations

import datetime as dt
import re

from incognita.access.cards.text import clean

# The policy's current time ("The current time is 2024-05-15 15:00:00 EST."): a date the customer
# gives without a year is in this year, a day without a month in this month
# (tests/access/domains/airline/ checks it against the policy file).
POLICY_TODAY = dt.date(2024, 5, 15)

# Everyday short names of the cities in upstream's airport list, which no word of the list yields.
CITY_SHORT_NAMES = {"ny": "New York", "nyc": "New York", "sf": "San Francisco"}

MONTHS = "january february march april may june july august september october november december".split()
_MONTH = r"(?:" + "|".join(m.capitalize() for m in MONTHS) + r")"
# "May 26", "May 22nd"; "the 19th" (a day of the current month).
MONTH_DAY = re.compile(r"\b(" + _MONTH + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b")
DAY_ONLY = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b")
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
# A shift of a date the customer has by a number of days: "the day after", "next day", "by one
# day", "2 days".
DATE_SHIFT = re.compile(
    r"\b(?:(?:the\s+)?day\s+after|next\s+day|(?:by|out)\s+(?:one|1|a)\s+day|(\d+|two|three)\s+days)\b",
    re.IGNORECASE,
)
NUMBER_WORDS = {"no": 0, "zero": 0, "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_COUNT = r"(\d+|one|two|three|four|five)"
_BAG = r"(?:checked\s+)?(?:bags?|baggages?|suitcases?|luggage)"
# Bags the customer has, wants to add, or has none of.
BAGS = re.compile(
    r"\b(?:" + _COUNT + r"\s+(?:more\s+|extra\s+)?" + _BAG + r"|"
    r"(?:no\s+|(?:don't|do\s+not)\s+(?:have|need|want)\s+(?:any\s+)?)" + _BAG + r"|"
    r"free\s+baggage\s+allowance)\b",
    re.IGNORECASE,
)
CABIN = re.compile(r"\b(?:basic\s+economy|economy|business)\b", re.IGNORECASE)
FLIGHT_TYPE = re.compile(r"\b(?:one[- ]way|round[- ]?trip)\b", re.IGNORECASE)
INSURANCE = re.compile(
    r"\b(?:(?:don't|do\s+not|doesn't|no|not)\b[^.;]{0,40}?\binsurance|travel\s+insurance|insurance)\b",
    re.IGNORECASE,
)
# Longer phrases first: the first alternative that matches at a place is the one taken.
PAYMENT = re.compile(
    r"\b(?:gift\s+card\s+with\s+the\s+smallest\s+balance|(?:smaller|larger|smallest|largest)\s+(?:GC|gift\s+card)|"
    r"(?:credit\s+)?card\s+ending\s+in\s+\d{4}|\d{4}\s+card|master\s*card|visa|"
    r"(?:gift_card|credit_card|certificate)_\d{7}|(?:\d+\s+dollar\s+)?certificates?|"
    r"original\s+(?:payment(?:\s+method)?|form\s+of\s+payment)|larger\s+one|gift\s+cards?|GC|CC)\b",
    re.IGNORECASE,
)
BUDGET = re.compile(r"\$\s?\d[\d,]*|\b\d+\s+dollars?\b", re.IGNORECASE)
TIME = re.compile(
    r"\b(?:(?:before|after|departs?|arrive\s+before|leave\s+after)\s+)?\d{1,2}(?::\d{2})?\s*(?:am|pm)\b(?:\s+est\b)?",
    re.IGNORECASE,
)
# Words that pick one flight, reservation or payment among several.
SELECTOR = re.compile(
    r"\b(?:second\s+cheapest|cheapest|lowest\s+price|fastest|shortest|nonstop|non-stop|direct\s+flights?|"
    r"one[- ]stop(?:over)?|stopover|stop\s+over|most\s+recent|last\s+reservation|recent\s+(?:reservation|\w+\s+flight)|"
    r"earliest|later\s+flight|exact(?:ly)?\s+(?:the\s+)?same|same\s+dates?|same\s+day|longer\s+than\s+\d+\s+hours|"
    r"at\s+most\s+\d+\s+hours|within\s+[\d-]+\s+hours|only\s+have\s+one\s+passenger|upcoming|"
    r"West\s+Coast|all\s+(?:of\s+)?(?:your\s+|my\s+|the\s+)?(?:upcoming\s+|future\s+)?(?:business\s+)?"
    r"(?:flights|reservations))\b",
    re.IGNORECASE,
)


def source_text(instructions: dict) -> str:
    """The airline user scenario's instructions as one text: what fields are found in."""
    parts = [clean(instructions.get(k)) for k in ("known_info", "unknown_info", "reason_for_call", "task_instructions")]
    return "\n".join(p for p in parts if p)


def month_day_date(phrase: str) -> str | None:
    """The ISO date a customer's date phrase means ('May 26' -> 2024-05-26, 'the 19th' -> 2024-05-19),
    in the policy's year and, without a month, its month; an ISO date as it is."""
    phrase = phrase.strip()
    m = ISO_DATE.fullmatch(phrase)
    if m:
        return phrase
    m = MONTH_DAY.fullmatch(phrase)
    if m:
        month, day = MONTHS.index(m.group(1).lower()) + 1, int(m.group(2))
    else:
        m = DAY_ONLY.fullmatch(phrase)
        if not m:
            return None
        month, day = POLICY_TODAY.month, int(m.group(1))
    try:
        return dt.date(POLICY_TODAY.year, month, day).isoformat()
    except ValueError:
        return None


def shift_days(phrase: str) -> int | None:
    """How many days a date-shift phrase moves a date ('the day after' 1, '2 days' 2)."""
    m = DATE_SHIFT.fullmatch(phrase.strip())
    if not m:
        return None
    n = m.group(1)
    if n is None:
        return 1
    return int(n) if n.isdigit() else NUMBER_WORDS.get(n.lower())


def bag_count(phrase: str) -> int | None:
    """The number of bags a bag phrase states ('3 checked bags' 3, 'no baggage' 0); None for the
    allowance phrase, which states no number."""
    m = BAGS.fullmatch(phrase.strip())
    if not m:
        return None
    if m.group(1):
        word = m.group(1).lower()
        return int(word) if word.isdigit() else NUMBER_WORDS[word]
    return None if "allowance" in phrase.lower() else 0
