"""The retail domain's part of the participant-fidelity audit (incognita.access.reader.
participant_audit): the shapes of retail's identifiers a participant may state, which of them a
customer holds in its memory, and the identifier a faulty scripted customer invents
(incognita.access.episodes.scripted.participant_faults)."""

import re

from incognita.access.reader.participant_audit import ValueShapes

VALUE_SHAPES = ValueShapes.of(
    (
        ("order_id", re.compile(r"(?<![A-Za-z0-9])#?W(\d{7})(?!\d)"), "#W"),
        ("user_id", re.compile(r"(?<![A-Za-z0-9_])([a-z]+_[a-z]+_\d{4})(?![A-Za-z0-9_])"), ""),
        ("payment_id", re.compile(r"(?<![A-Za-z0-9_])((?:credit_card|gift_card|paypal)_\d{5,})(?![0-9])"), ""),
        ("item_id", re.compile(r"(?<![\d.])(\d{10})(?!\d|\.\d)"), ""),
    ),
    memory=("order_id", "email", "user_id"),
)


def invented_id(n: int) -> tuple[str, str]:
    """An order number from the number `n` (what it is, the id): one the customer's card lacks."""
    return "order", f"#W{n % 10**7:07d}"
