"""The card check `triggers_kept`: each condition the source states keeps the event that fires it.

The source's conditional sentences say *when* the customer does something: when the agent asks
for a confirmation ("But when the agent asks for confirmation, you change your mind ..."),
when what came before cannot be done ("If cancelling partial items is not possible, ..."),
when the agent asks for a detail ("When asked for order ID, ..."), when several options are
offered, or when the records show something ("If the same item is available online, ...";
"If not, ..." right after it is that condition negated). On the card a condition lives in a
fallback, and the scripted customer raises a fallback at the event its wording names
(incognita.access.episodes.scripted.conditions.fallback_events). The check reads the source's
events with its own patterns and fails a card where

- a condition is raised at once as a demand (its event is lost);
- a confirmation condition is not a fallback raised at the confirmation, and only there;
- a refusal condition is not a fallback raised at a refusal;
- any other condition (a question, options, an outcome, a state) is raised at a refusal or a
  confirmation;
- the two branches of one condition ("If X is possible, ..." / "If X is not possible, ...";
  "If <state>, ..." / "If not, ...") sit in different requests, so the negative branch answers
  a refusal of some other demand (a flattened chain).

It warns where a repair states a refusal condition to the agent inside a demand (the paper's
repair of task 59: "If the agent cannot guarantee it will be processed within 5 days, have it
cancelled"): the agent judges the condition itself, but the scripted customer does not wait
for the refusal.

Rule-built cards carry the source sentences verbatim, so each is found as its demand or
fallback; a repaired card's requests say which sentences they `cover`, and a sentence is then
judged by the fallbacks of the requests covering it.
"""

from __future__ import annotations

import re

from incognita.access.cards.text import norm
from incognita.access.episodes.scripted.conditions import fallback_events

_OPENS_CONDITION = re.compile(r"^\W*(?:but\s+|and\s+)?(?:if|when|once|unless|otherwise|in\s+case)\b", re.I)
_CONFIRM_WORDS = r"(?:for\s+(?:\w+\s+)?confirm|to\s+confirm)"
_CONFIRMATION = re.compile(r"\b(?:if|when|once)\s+(?:the\s+agent\s+)?ask(?:s|ed)?\s+(?:you\s+)?" + _CONFIRM_WORDS, re.I)
_REFUSAL = re.compile(
    r"^\W*(?:but\s+)?(?:otherwise\b|if\s+not\b|(?:(?:if\s+and\s+)?only\s+)?if\b(?:[^,.;]|,(?=\s*\d))*?"
    r"(?:\bnot\s+(?:be\s+)?(?:possible|available|an\s+option)|\bcan(?:not|\s+not|['’]t|\s+only)\b|\brefuses?\b"
    r"|\b(?:doesn['’]t|does\s+not)\s+work|\bfails?\b|\bno\s+way\b|\bthere\s+is\s+no\b|\bno\b[^,]*\bavailable\b"
    r"|\bthere\s+are\s+(?:any\s+)?(?:issues|problems)\b))",
    re.I,
)
_QUESTION = re.compile(r"^\W*(?:but\s+)?(?:if|when)\s+(?:the\s+agent\s+)?ask(?:s|ed)?\b", re.I)
_OPTIONS = re.compile(
    r"^\W*(?:but\s+)?(?:if\s+and\s+only\s+)?if\b[^,.;]*\b(?:several|multiple)\b[^,.;]*\b(?:available|options?)\b", re.I
)
_OUTCOME = re.compile(r"^\W*(?:but\s+)?if\s+(?:so\b|it\s+can\b|that\s+works\b|[^,.;]*\b(?:is|are)\s+possible\b)", re.I)
# The two branches of one condition.
_POSITIVE = re.compile(r"^\W*(?:but\s+)?if\s+(?P<p>[^,.;]+?)\s+(?:is|are)\s+possible\b", re.I)
_NEGATIVE = re.compile(r"^\W*(?:but\s+)?if\s+(?P<p>[^,.;]+?)\s+(?:is|are)\s+not\s+possible\b", re.I)
_IF_NOT = re.compile(r"^\W*(?:but\s+)?(?:if\s+not|otherwise)\b", re.I)

# What each source event may be raised at by the scripted customer (None: any fallback).
_ALLOWED = {
    "confirmation": {frozenset({"confirm"})},
    "refusal": {frozenset({"cannot"})},
    "question": {frozenset()},
    "options": {frozenset()},
    "outcome": {frozenset()},
    "state": {frozenset()},
}


def source_events(sentences: list[str]) -> list[str | None]:
    """The event each source sentence's condition names (None: no condition): confirmation,
    refusal, question, options, outcome or state. "If not" / "Otherwise" after a state is
    that state negated."""
    events: list[str | None] = []
    for sentence in sentences:
        if _CONFIRMATION.search(sentence):
            event = "confirmation"
        elif not _OPENS_CONDITION.match(sentence):
            event = None
        elif _IF_NOT.match(sentence) and events and events[-1] == "state":
            event = "state"
        elif _REFUSAL.match(sentence):
            event = "refusal"
        elif _QUESTION.match(sentence):
            event = "question"
        elif _OPTIONS.match(sentence):
            event = "options"
        elif _OUTCOME.match(sentence):
            event = "outcome"
        else:
            event = "state"
        events.append(event)
    return events


def branch_pairs(sentences: list[str]) -> list[tuple[int, int]]:
    """(positive, negative) sentence numbers of the conditions the source states both ways."""
    events = source_events(sentences)
    pairs = []
    for j, s in enumerate(sentences):
        neg = _NEGATIVE.match(s)
        if neg:
            pos = [i for i in range(j) if (m := _POSITIVE.match(sentences[i])) and norm(m["p"]) == norm(neg["p"])]
            pairs += [(pos[-1], j)] if pos else []
        elif _IF_NOT.match(s) and j > 0 and events[j - 1] == "state":
            pairs.append((j - 1, j))  # "If <state>, ... If not, ...": the same condition, negated
    return pairs


def _carriers(card: dict, i: int) -> tuple[str, list[frozenset[str]]]:
    """How the card carries source sentence i, with the tags the scripted customer raises its
    fallbacks at: ("demand", []) when raised at once; ("fallback", [its tags]) when verbatim a
    fallback; else ("covered", [the tags of each fallback of the requests covering it]) or
    ("missing", [])."""
    sentence = card["sentences"][i]
    for r in card["requests"]:
        if r["demand"] == sentence:
            return "demand", []
        if sentence in r["fallbacks"]:
            return "fallback", [fallback_events(r["fallbacks"])[r["fallbacks"].index(sentence)]]
    covering = [r for r in card["requests"] if i in r.get("covers", [])]
    if not covering:
        return "missing", []
    return "covered", [e for r in covering for e in fallback_events(r["fallbacks"])]


def _requests_of(card: dict, i: int) -> set[int]:
    return {k for k, r in enumerate(card["requests"]) if i in r.get("covers", [])}


def _shown(tags: frozenset[str]) -> str:
    return "+".join(f"#{t}" for t in sorted(tags)) or "never"


def check_triggers_kept(card: dict) -> tuple[str, str, str]:
    """(check, verdict, detail) of one card (see the module docstring)."""
    sentences = card.get("sentences", [])
    problems: list[str] = []
    notes: list[str] = []
    n = 0
    for i, event in enumerate(source_events(sentences)):
        if event is None:
            continue
        n += 1
        how, raised = _carriers(card, i)
        if how == "demand":
            problems.append(f"[{i}] {event} condition raised at once as a demand")
        elif how == "missing":
            problems.append(f"[{i}] {event} condition on no request")
        elif how == "fallback" and raised[0] not in _ALLOWED[event]:
            problems.append(f"[{i}] {event} condition raised at {_shown(raised[0])}")
        elif how == "covered" and event in ("confirmation", "refusal") and not set(raised) & _ALLOWED[event]:
            if event == "refusal" and _stated_in_demand(card, i):
                notes.append(f"[{i}] refusal condition stated to the agent in a demand, not raised at a refusal")
                continue
            seen = ", ".join(sorted({_shown(t) for t in raised})) or "no fallback"
            problems.append(f"[{i}] {event} condition: the covering requests' fallbacks are raised at {seen}")
    for pos, neg in branch_pairs(sentences):
        if not _requests_of(card, pos) & _requests_of(card, neg):
            problems.append(f"[{pos}]/[{neg}] the two branches of one condition are in different requests")
    if problems:
        return ("triggers_kept", "fail", "; ".join(problems + notes))
    if notes:
        return ("triggers_kept", "warn", "; ".join(notes))
    return ("triggers_kept", "pass", f"{n} condition(s), each raised at its event")


def _stated_in_demand(card: dict, i: int) -> bool:
    """Does a repaired request covering sentence i state a refusal condition in its demand ("If
    the agent cannot guarantee ..., have it cancelled")? The agent then hears the condition and
    judges it itself, which keeps the event with the party that meets it; the scripted customer
    does not wait for the refusal, so the check warns rather than passes."""
    clauses = [c for r in card["requests"] if i in r.get("covers", []) for c in re.split(r"(?<=[.;:])\s+", r["demand"])]
    return any(_REFUSAL.match(c) for c in clauses)
