"""The `exploratory` block of a workflow config: which comparisons beyond the frozen
pre-specified analysis the statistics stage adds (incognita.access.stats.exploratory computes
them). Light on purpose: the workflow checks the block at parse time, and names its outputs.

    exploratory:
      contrasts: [[social+map, social], ...]   # minuend, subtrahend
      unbundle: {from: social, to: indirect}   # every other arm of the design placed between
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from incognita.common.io import InputError


@dataclass(frozen=True)
class ExploratorySpec:
    contrasts: tuple[tuple[str, str], ...] = ()
    unbundle_from: str | None = None
    unbundle_to: str | None = None

    @property
    def empty(self) -> bool:
        return not self.contrasts and self.unbundle_from is None

    @property
    def arms(self) -> set[str]:
        return {a for pair in self.contrasts for a in pair} | {a for a in (self.unbundle_from, self.unbundle_to) if a}

    def to_json(self) -> str:
        doc = {"contrasts": [list(c) for c in self.contrasts]}
        if self.unbundle_from is not None:
            doc["unbundle"] = {"from": self.unbundle_from, "to": self.unbundle_to}
        return json.dumps(doc, separators=(",", ":"))


def spec_from_doc(doc, arms: tuple[str, ...] | None, where: str = "exploratory") -> ExploratorySpec:
    """The spec of an `exploratory` block (None: none). With `arms` (the design's), every arm it
    names must be one of them. Errors name the key."""
    if doc is None:
        return ExploratorySpec()
    if not isinstance(doc, dict) or not set(doc) <= {"contrasts", "unbundle"}:
        raise InputError(f"config key {where}: expected a mapping with contrasts and/or unbundle")

    def arm(value, key: str) -> str:
        if not isinstance(value, str) or (arms is not None and value not in arms):
            raise InputError(
                f"config key {where}.{key}: {value!r} is not an arm of design.arms ({', '.join(arms or ())})"
            )
        return value

    contrasts = []
    for i, pair in enumerate(doc.get("contrasts") or []):
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]:
            raise InputError(f"config key {where}.contrasts[{i}]: expected [minuend, subtrahend], two different arms")
        contrasts.append((arm(pair[0], f"contrasts[{i}][0]"), arm(pair[1], f"contrasts[{i}][1]")))
    unbundle = doc.get("unbundle")
    if unbundle is None:
        return ExploratorySpec(tuple(contrasts))
    if not isinstance(unbundle, dict) or set(unbundle) != {"from", "to"}:
        raise InputError(f"config key {where}.unbundle: expected {{from: <arm>, to: <arm>}}")
    low, high = arm(unbundle["from"], "unbundle.from"), arm(unbundle["to"], "unbundle.to")
    if low == high:
        raise InputError(f"config key {where}.unbundle: from and to are the same arm")
    return ExploratorySpec(tuple(contrasts), low, high)


def spec_from_config(config: dict, arms: tuple[str, ...]) -> ExploratorySpec:
    return spec_from_doc(config.get("exploratory"), arms)
