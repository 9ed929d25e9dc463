"""The mock domain's part of the participant-fidelity audit: the shapes of its identifiers."""

import re

from incognita.access.reader.participant_audit import ValueShapes

VALUE_SHAPES = ValueShapes.of(
    (
        ("task_id", re.compile(r"(?<![A-Za-z0-9_])(task_\d+)(?![A-Za-z0-9_])"), ""),
        ("user_id", re.compile(r"(?<![A-Za-z0-9_])(user_\d+)(?![A-Za-z0-9_])"), ""),
    ),
    memory=("task_id", "user_id"),
)
