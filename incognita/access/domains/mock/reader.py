"""The mock domain's part of the participant-fidelity audit: the shapes of its identifiers, and the
identifier a faulty scripted customer invents (incognita.access.episodes.scripted.participant_faults)."""

import re

from incognita.access.reader.participant_audit import ValueShapes

VALUE_SHAPES = ValueShapes.of(
    (
        ("task_id", re.compile(r"(?<![A-Za-z0-9_])(task_\d+)(?![A-Za-z0-9_])"), ""),
        ("user_id", re.compile(r"(?<![A-Za-z0-9_])(user_\d+)(?![A-Za-z0-9_])"), ""),
    ),
    memory=("task_id", "user_id"),
)


def invented_id(n: int) -> tuple[str, str]:
    """A task id from the number `n` (what it is, the id): one the customer's card lacks."""
    return "task", f"task_{n % 10**4}"
