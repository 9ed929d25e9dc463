"""An experiment's agents: who they are (AgentSpec) and how the config's `agents` list expands.

`experiment.build` expands the list when it loads a config file; the tasks (`task.Task`, and the
paradigms in `tasks/`) take the expanded agents to learn each one's role, so both import this
module and neither the other.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from incognita.common.backends.entry import ModelEntry


@dataclass(frozen=True)
class AgentSpec:
    id: str
    role: str
    # The agent's model entry (incognita.common.backends.entry); a config value given here (a spec
    # string or {spec, settings}, as in Incognita's `models:`) is parsed once, when the agent is made.
    model: ModelEntry
    persona: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", ModelEntry.parse(self.model, f"agent {self.id} model"))


def expand_agents(items: list[dict], where: str = "") -> tuple[AgentSpec, ...]:
    """Named agents keep their id; counted ones are lettered A, B, C, ... across the list. A bad
    model entry is an InputError naming `where` (the file) and the agent."""
    letters = iter(string.ascii_uppercase)
    agents = []

    def agent(agent_id: str, item: dict) -> AgentSpec:
        model = ModelEntry.parse(item["model"], f"{where}agent {agent_id} model")
        return AgentSpec(agent_id, item["role"], model, bool(item.get("persona", False)))

    for item in items:
        if "id" in item:
            agents.append(agent(item["id"], item))
            continue
        for _ in range(item["count"]):
            agents.append(agent(next(letters), item))
    return tuple(agents)
