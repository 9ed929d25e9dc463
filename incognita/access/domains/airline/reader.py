"""The airline domain's part of the participant-fidelity audit (incognita.access.reader.
participant_audit): the shapes of the airline's identifiers a participant may state, and which of
them a customer holds in its memory."""

import re

from incognita.access.reader.participant_audit import ValueShapes

VALUE_SHAPES = ValueShapes.of(
    (
        # Six capitals and digits with at least one digit: a reservation (confirmation) number.
        # Ids of six letters only exist too; they cannot be told from a shouted word by shape.
        ("reservation_id", re.compile(r"(?<![A-Za-z0-9_])((?=[A-Z]*\d)[A-Z0-9]{6})(?![A-Za-z0-9_])"), ""),
        ("user_id", re.compile(r"(?<![A-Za-z0-9_])([a-z]+_[a-z]+_\d{4})(?![A-Za-z0-9_])"), ""),
        ("flight_number", re.compile(r"(?<![A-Za-z0-9_])(HAT\d{3})(?!\d)"), ""),
        (
            "payment_id",
            re.compile(r"(?<![A-Za-z0-9_])((?:credit_card|gift_card|certificate)_\d{7})(?![0-9])"),
            "",
        ),
    ),
    memory=("reservation_id", "user_id"),
)
