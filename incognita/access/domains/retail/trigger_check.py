"""The card check `triggers_kept`: each condition the source states keeps the event that fires it.

The source's conditional sentences say *when* the customer does something: when the agent asks
for a confirmation ("But when the agent asks for confirmation, you change your mind ..."),
when what came before cannot be done ("If cancelling partial items is not possible, ..."),
when the agent asks for a detail ("When asked for order ID, ..."), or when the records show
something ("If the same item is available online, ..."). On the card a condition lives in a
fallback, and the scripted customer raises a fallback at the event its wording names
(incognita.access.episodes.scripted.conditions.fires_on). The check reads the source's events
with its own patterns and fails a card where

- a confirmation condition is not a fallback the customer raises at a confirmation, and only
  there (not at a refusal, and not a demand raised at once);
- a refusal condition is not a fallback raised at a refusal;
- any other condition is raised at once as a demand (its event is lost);
- the two branches of one condition ("If X is possible, ..." / "If X is not possible, ...";
  "If ..., ..." / "If not, ...") sit in different requests, so the negative branch answers a
  refusal of some other demand (a flattened chain).

Rule-built cards carry the source sentences verbatim, so each is found as its demand or
fallback; a repaired card's requests say which sentences they `cover`, and a sentence is then
judged by the fallbacks of the requests covering it.
"""

from __future__ import annotations

import re

from incognita.access.cards.text import norm
from incognita.access.episodes.scripted.conditions import fires_on

_OPENS_CONDITION = re.compile(r"^\W*(?:but\s+|and\s+)?(?:if|when|once|unless|otherwise|in\s+case)\b", re.I)
_CONFIRMATION = re.compile(
    r"\b(?:if|when|once)\s+(?:the\s+agent\s+)?ask(?:s|ed)?\s+(?:you\s+)?(?:for\s+(?:\w+\s+)?confirm|to\s+confirm)",
    re.I,
)
_REFUSAL = re.compile(
    r"^\W*(?:but\s+)?(?:otherwise\b|if\s+not\b|(?:only\s+)?if\b[^,.;]*?"
    r"(?:\bnot\s+(?:be\s+)?(?:possible|available)|\bcan(?:not|\s+not|['’]t|\s+only)\b|\brefuses?\b"
    r"|\b(?:doesn['’]t|does\s+not)\s+work|\bfails?\b|\bno\s+way\b|\bthere\s+is\s+no\b|\bno\b[^,]*\bavailable\b))",
    re.I,
)
_QUESTION = re.compile(r"^\W*(?:but\s+)?(?:if|when)\s+(?:the\s+agent\s+)?ask(?:s|ed)?\b(?!\s+(?:you\s+)?(?:for\s+(?:\w+\s+)?confirm|to\s+confirm))", re.I)
# The two branches of one condition.
_POSITIVE = re.compile(r"^\W*(?:but\s+)?if\s+(?P<p>[^,.;]+?)\s+(?:is|are)\s+possible\b", re.I)
_NEGATIVE = re.compile(r"^\W*(?:but\s+)?if\s+(?P<p>[^,.;]+?)\s+(?:is|are)\s+not\s+possible\b", re.I)
_IF_NOT = re.compile(r"^\W*(?:if\s+not|otherwise)\b", re.I)


def source_event(sentence: str) -> str | None:
    """The event a source sentence's condition names: confirmation, refusal, question or
    other (a state or an outcome); None for a sentence with no condition."""
    if _CONFIRMATION.search(sentence):
        return "confirmation"
    if not _OPENS_CONDITION.match(sentence):
        return None
    if _REFUSAL.match(sentence):
        return "refusal"
    if _QUESTION.match(sentence):
        return "question"
    return "other"


def branch_pairs(sentences: list[str]) -> list[tuple[int, int]]:
    """(positive, negative) sentence numbers of the conditions the source states both ways."""
    pairs = []
    for j, s in enumerate(sentences):
        neg = _NEGATIVE.match(s)
        if neg:
            pos = [i for i in range(j) if (m := _POSITIVE.match(sentences[i])) and norm(m["p"]) == norm(neg["p"])]
            pairs += [(pos[-1], j)] if pos else []
        elif _IF_NOT.match(s) and j > 0 and source_event(sentences[j - 1]) not in (None, "refusal", "confirmation"):
            pairs.append((j - 1, j))  # "If <state>, ... If not, ...": the same condition, negated
    return pairs


def _carriers(card: dict, i: int) -> tuple[str, list[str]]:
    """How the card carries source sentence i: ("demand", []) when it is raised at once,
    ("fallback", [the fallback]) when verbatim a fallback, else ("covered", [the fallbacks of
    every request covering it]) or ("missing", [])."""
    sentence = card["sentences"][i]
    for r in card["requests"]:
        if r["demand"] == sentence:
            return "demand", []
        if sentence in r["fallbacks"]:
            return "fallback", [sentence]
    covering = [r for r in card["requests"] if i in r.get("covers", [])]
    if not covering:
        return "missing", []
    return "covered", [f for r in covering for f in r["fallbacks"]]


def _request_of(card: dict, i: int) -> set[int]:
    return {k for k, r in enumerate(card["requests"]) if i in r.get("covers", [])}


def check_triggers_kept(card: dict) -> tuple[str, str, str]:
    """(check, verdict, detail) of one card (see the module docstring)."""
    sentences = card.get("sentences", [])
    problems, n = [], 0
    for i, sentence in enumerate(sentences):
        event = source_event(sentence)
        if event is None:
            continue
        n += 1
        how, fallbacks = _carriers(card, i)
        fired = [fires_on(f) for f in fallbacks]
        if how == "demand":
            problems.append(f"[{i}] {event} condition raised at once as a demand")
        elif how == "missing":
            problems.append(f"[{i}] {event} condition on no request")
        elif event == "confirmation" and not any(e == {"confirm"} for e in fired):
            seen = " / ".join(sorted("+".join(sorted(e)) or "never" for e in fired)) or "no fallback"
            problems.append(f"[{i}] confirmation condition raised at: {seen}")
        elif event == "refusal" and not any("cannot" in e for e in fired):
            problems.append(f"[{i}] refusal condition not raised at a refusal")
    for pos, neg in branch_pairs(sentences):
        if not _request_of(card, pos) & _request_of(card, neg):
            problems.append(f"[{pos}]/[{neg}] the two branches of one condition are in different requests")
    if problems:
        return ("triggers_kept", "fail", "; ".join(problems))
    return ("triggers_kept", "pass", f"{n} condition(s), each raised at its event")
