"""The `scripted` backend family: the offline default for every role.

`scripted:<profile>` for the evaluated agent names a profile in config/scripted_agents.yaml
(its context carries the loaded profile and the domain, whose knowledge makes the agent's class). For the customer the spec is `scripted:customer`,
for Vega and the desks `scripted:desk`, for the judge `scripted:judge`.
"""

from __future__ import annotations

from incognita.access.episodes.scripted.scripted_agent import Profile, agent_class
from incognita.access.episodes.scripted.scripted_customer import ScriptedCustomer
from incognita.access.episodes.scripted.scripted_desk import ScriptedDesk
from incognita.access.episodes.scripted.scripted_judge import ScriptedJudge


def make_scripted(name: str, role: str, context: dict):
    if role == "agent":
        profile = context.get("profile")
        if profile is None or profile.get("name") != name:
            raise ValueError(f"scripted agent profile {name!r} was not supplied (see config/scripted_agents.yaml)")
        agent = agent_class(context["domain"])  # its domain's knowledge of its records (picks.py)
        return agent(Profile.from_dict(name, {k: v for k, v in profile.items() if k != "name"}), context)
    if role == "USER":
        if name != "customer":
            raise ValueError(f"the scripted customer spec is scripted:customer, not scripted:{name}")
        return ScriptedCustomer(name, context)
    if role == "judge":
        if name != "judge":
            raise ValueError(f"the scripted judge spec is scripted:judge, not scripted:{name}")
        return ScriptedJudge()
    if name != "desk":
        raise ValueError(f"scripted service participants use scripted:desk, not scripted:{name}")
    return ScriptedDesk(name, role, context)
