"""The mock domain's card rules (incognita.access.domain.CardRules).

A mock task's user scenario is one text (its `instructions`, with an optional persona). The
customer's fields are the reference actions' argument values that text spells out (a task's
title, a user id, a task id, a status), each a field named by its argument; what the text does
not spell out (a task id a message history gave) is no field, so the golden stage traces it
elsewhere. Its demands are the text's sentences; the opening line says only that it is about
the customer's tasks. No rule names a task or an id.
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.cards.card import WITHHOLD, FieldSet, card_document
from incognita.access.cards.text import clean, find_span, split_sentences

OPENING_LINE = "Hi, I need some help with my tasks."


def source_text(instructions: Any) -> str:
    return clean(instructions if isinstance(instructions, str) else "")


def _span(text: str, value: str) -> str | None:
    """The text's own spelling of a value: as written when it is there (a quoted title after the
    same words in lower case), else in any letter case."""
    exact = re.search(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", text)
    return exact.group(0) if exact else find_span(text, value)


def _fields(text: str, actions: list[dict]) -> FieldSet:
    fs = FieldSet()
    for action in actions:
        for arg, value in (action.get("arguments") or {}).items():
            if isinstance(value, str) and len(value.strip()) > 1:
                span = _span(text, value.strip())
                if span:
                    fs.add(arg, "value", span, [span])
    return fs


def build_card(task: dict, db: dict, source_meta: dict) -> dict:
    """The rule-built (version 1) card of one mock task."""
    scenario = task["user_scenario"]
    text = source_text(scenario.get("instructions"))
    actions = (task.get("evaluation_criteria") or {}).get("actions") or []
    return card_document(
        task,
        source_meta,
        instructions=scenario.get("instructions"),
        opening_line=OPENING_LINE,
        fields=_fields(text, actions),
        not_known=[],
        sentences=split_sentences(text),
        persona=clean(scenario.get("persona")),
        withholds_disclosure=bool(WITHHOLD.search(text)),
    )


def audit_checks(card: dict, db: dict, vocabulary: dict, ambiguities: dict) -> list[tuple[str, str, str]]:
    """The mock domain adds no checks to the generic ones (incognita.access.cards.audit)."""
    return []
