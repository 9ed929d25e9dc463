"""Plain-text helpers every domain's card rules and the card audit share: how source text is
cleaned, compared, split into sentences and searched for a phrase. Nothing here knows a domain's
words (a domain's own word rules live in its package, e.g. incognita.access.domains.retail.source_words)."""

from __future__ import annotations

import re

_EMPTY = {"", ".", "none", "null"}


def clean(text: str | None) -> str:
    text = (text or "").strip()
    return "" if text.lower() in _EMPTY else text


def norm(text: str) -> str:
    """Case- and punctuation-blind form used for every value comparison."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def split_sentences(text: str) -> list[str]:
    text = re.sub(r"\s+", " ", clean(text)).strip()
    if not text:
        return []
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'])", text)
    return [p.strip() for p in parts if p.strip(" .")]


def find_span(text: str, phrase: str) -> str | None:
    """Return the source's own spelling of `phrase` (case-insensitive, word-bounded), if present."""
    pattern = r"(?<![A-Za-z0-9])" + re.escape(phrase).replace(r"\ ", r"\s+") + r"(?![A-Za-z0-9])"
    m = re.search(pattern, text, re.IGNORECASE)
    return m.group(0) if m else None


def contains_span(text: str, span: str) -> bool:
    return re.sub(r"\s+", " ", span.lower()).strip() in re.sub(r"\s+", " ", text.lower())


def opening_line(reason: str, intents: list[tuple[str, str]], fallback: str) -> str:
    """A neutral first message from the reason for calling: the kinds of help it asks for (each
    intent's phrase, in the order the reason names them, at most three), never a field value.
    `intents` are a domain's (pattern, phrase) pairs; `fallback` says what no pattern found."""
    found = []
    for pattern, phrase in intents:
        m = re.search(pattern, reason, re.IGNORECASE)
        if m:
            found.append((m.start(), phrase))
    phrases = list(dict.fromkeys(p for _, p in sorted(found)))[:3]
    if not phrases:
        return fallback
    joined = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    return f"Hi, I need some help: {joined}."
