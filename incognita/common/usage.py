"""Token usage and cost of model calls, summed per role."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class Usage:
    """Token usage and cost for one role in one episode."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0

    def add(self, other: Usage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
