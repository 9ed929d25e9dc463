"""The frozen interpretation table of the pre-specified analysis and the decisions it fixes.

The table (each domain's interpretation.yaml) names the primary contrast and the direction that
supports the hypothesis, the supporting contrasts, the floor and ceiling of a cell, the
interval level and the wording of every decision. It is hash-locked (artifact
`interpretation` in the domain's locks.yaml); `load_interpretation` refuses a table that differs
from its lock. The one rule that no wording can change: an interval that includes zero is
reported as insufficient evidence, never as the absence of an effect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from incognita.access.taxonomy import ALL_ARMS as _ARMS
from incognita.common.io import InputError, read_yaml

LOCK_NAME = "interpretation"
DECISION_KEYS = (
    "supports",
    "opposes",
    "insufficient",
    "supporting_excludes_zero",
    "supporting_includes_zero",
    "floor_ceiling",
    "unavailable",
)


@dataclass(frozen=True)
class Contrast:
    """`minuend - subtrahend`, per model, on task-level success."""

    name: str
    minuend: str
    subtrahend: str
    reads_as: str = ""


@dataclass(frozen=True)
class Interpretation:
    version: int
    confidence: float
    primary: Contrast
    direction: int  # +1: the hypothesis predicts a positive contrast; -1: negative
    supporting: tuple[Contrast, ...]
    floor: float
    ceiling: float
    decisions: dict[str, str]
    sha256: str = ""
    lock_version: int | None = None

    @property
    def contrasts(self) -> tuple[Contrast, ...]:
        return (self.primary, *self.supporting)

    def on_bound(self, success: float) -> bool:
        return bool(success <= self.floor or success >= self.ceiling)


def _contrast(path: Path, field: str, entry: object) -> Contrast:
    if not isinstance(entry, dict) or not isinstance(entry.get("contrast"), str):
        raise InputError(f"{path}: {field}.contrast: expected a string like 'indirect-social'")
    name = entry["contrast"]
    parts = name.split("-")
    if len(parts) != 2 or not all(p in _ARMS for p in parts) or parts[0] == parts[1]:
        raise InputError(
            f"{path}: {field}.contrast: {name!r} is not '<arm>-<arm>' with two different arms from {', '.join(_ARMS)}"
        )
    return Contrast(name, parts[0], parts[1], str(entry.get("reads_as", "")))


def _number(path: Path, doc: dict, key: str, low: float, high: float) -> float:
    value = doc.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
        raise InputError(f"{path}: {key}: expected a number in [{low}, {high}], got {value!r}")
    return float(value)


def parse_interpretation(path: str | Path) -> Interpretation:
    """Read and check the table, without the lock (use `load_interpretation` in the pipeline)."""
    path = Path(path)
    doc = read_yaml(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping at the top level")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError(f"{path}: version: expected an integer, got {version!r}")
    primary = _contrast(path, "primary", doc.get("primary"))
    direction = doc["primary"].get("direction")
    if direction not in ("positive", "negative"):
        raise InputError(f"{path}: primary.direction: expected 'positive' or 'negative', got {direction!r}")
    supporting = doc.get("supporting") or []
    if not isinstance(supporting, list):
        raise InputError(f"{path}: supporting: expected a list of contrasts")
    support = tuple(_contrast(path, f"supporting[{i}]", e) for i, e in enumerate(supporting))
    names = [c.name for c in (primary, *support)]
    if len(set(names)) != len(names):
        raise InputError(f"{path}: a contrast is listed twice ({', '.join(names)})")
    floor = _number(path, doc, "floor", 0.0, 1.0)
    ceiling = _number(path, doc, "ceiling", 0.0, 1.0)
    if floor >= ceiling:
        raise InputError(f"{path}: floor ({floor}) must be below ceiling ({ceiling})")
    decisions = doc.get("decisions")
    if not isinstance(decisions, dict):
        raise InputError(f"{path}: decisions: expected a mapping of decision to wording")
    for key in DECISION_KEYS:
        if not isinstance(decisions.get(key), str) or not decisions[key].strip():
            raise InputError(f"{path}: decisions.{key}: missing or empty")
    return Interpretation(
        version,
        _number(path, doc, "confidence", 0.5, 0.999),
        primary,
        1 if direction == "positive" else -1,
        support,
        floor,
        ceiling,
        {k: decisions[k] for k in DECISION_KEYS},
    )


def load_interpretation(path: str | Path, locks_path: str | Path) -> Interpretation:
    """The table after checking it against its sha256 lock (in its domain's locks file); a changed
    table is refused."""
    from dataclasses import replace

    from incognita.access.freeze import verify_lock

    entry = verify_lock(LOCK_NAME, path, locks_path)
    return replace(parse_interpretation(path), sha256=entry["sha256"], lock_version=entry["version"])


def load_design_interpretation(tables: list[tuple[str | Path, str | Path]]) -> Interpretation:
    """The interpretation table of a design's domains (`tables`: each domain's table and locks
    file), each checked against its lock. One analysis pools the domains' tasks, so their tables
    must say the same; a design whose domains pre-specified different analyses is refused."""
    from incognita.common.io import InputError

    if not tables:
        raise InputError("no interpretation table given (each design domain has one: config/domains/<name>/)")
    loaded = [(path, load_interpretation(path, locks)) for path, locks in tables]
    first_path, first = loaded[0]
    for path, interp in loaded[1:]:
        if interp.sha256 != first.sha256:
            raise InputError(
                f"{path}: differs from {first_path}; the domains' tasks are pooled under one pre-specified "
                "analysis, so their interpretation tables must be the same"
            )
    return first


def decide(interp: Interpretation, contrast: Contrast, ci_low: float, ci_high: float, on_bound: bool) -> str:
    """The table's wording for one contrast of one model."""
    d = interp.decisions
    if math.isnan(ci_low) or math.isnan(ci_high):  # no interval could be formed
        return d["unavailable"]
    if on_bound:
        return d["floor_ceiling"]
    excludes = ci_low > 0 or ci_high < 0
    if contrast.name != interp.primary.name:
        return d["supporting_excludes_zero"] if excludes else d["supporting_includes_zero"]
    if not excludes:
        return d["insufficient"]
    positive = ci_low > 0
    return d["supports"] if positive == (interp.direction > 0) else d["opposes"]
