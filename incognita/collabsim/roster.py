"""An experiment's agents: who they are (AgentSpec) and how the config's `agents` list expands.

`experiment.build` expands the list when it loads a config file; the tasks (`tasks/`) take the
expanded agents to learn each one's role, so both import this module and neither the other.
"""

from __future__ import annotations

import string
from dataclasses import dataclass


@dataclass(frozen=True)
class AgentSpec:
    id: str
    role: str
    model: str | dict  # a model entry as in Incognita's `models:` (spec string or {spec, settings})
    persona: bool = False


def expand_agents(items: list[dict]) -> tuple[AgentSpec, ...]:
    """Named agents keep their id; counted ones are lettered A, B, C, ... across the list."""
    letters = iter(string.ascii_uppercase)
    agents = []
    for item in items:
        persona = bool(item.get("persona", False))
        if "id" in item:
            agents.append(AgentSpec(item["id"], item["role"], item["model"], persona))
            continue
        for _ in range(item["count"]):
            agents.append(AgentSpec(next(letters), item["role"], item["model"], persona))
    return tuple(agents)
