"""The airline domain's card part (incognita.access.domain.CardRules): the card rules, the text a
card's fields are found in, and the airline card checks."""

from incognita.access.domains.airline.card_checks import audit_checks
from incognita.access.domains.airline.card_rules import build_card
from incognita.access.domains.airline.source_words import source_text

__all__ = ["audit_checks", "build_card", "source_text"]
