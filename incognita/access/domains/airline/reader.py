"""The airline domain's part of the participant-fidelity audit (incognita.access.reader.
participant_audit): the shapes of the airline's identifiers a participant may state, which of them a
customer holds in its memory, and the identifier a faulty scripted customer invents
(incognita.access.episodes.scripted.participant_faults)."""

import re

from incognita.access.reader.participant_audit import ValueShapes

VALUE_SHAPES = ValueShapes.of(
    (
        # Six capitals and digits with at least one digit: a reservation (confirmation) number.
        # Ids of six letters only exist too; they cannot be told from a shouted word by shape.
        # A flight number (HAT and three digits) has that shape too and is none: no reservation
        # of upstream's 2,000 is one, and reading one as a reservation made every restated
        # flight a confirmation outside the customer's memory.
        (
            "reservation_id",
            re.compile(r"(?<![A-Za-z0-9_])(?!HAT\d{3}(?![A-Za-z0-9_]))((?=[A-Z]*\d)[A-Z0-9]{6})(?![A-Za-z0-9_])"),
            "",
        ),
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


def invented_id(n: int) -> tuple[str, str]:
    """A reservation number from the number `n` (what it is, the id): five capitals and a digit, as
    upstream's EHGLP3, so that it has the shape of one (`reservation_id` above) and holds no run of
    digits another shape (a zip code) would read."""
    letters = []
    for _ in range(5):
        n, k = divmod(n, 26)
        letters.append(chr(ord("A") + k))
    return "reservation", "".join(letters) + str(n % 10)
