"""Participants: any model entry behind the shared backend interface.

Every agent, scripted or real, gets the same system prompt (its role's task instructions and
the answer format) and the same user turns (its observation as JSON) and answers with text;
both are written by `world.agent_prompts`. Scripted policies (`policies/`) parse that JSON, exactly
what a real model is shown, so they know nothing a model would not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from incognita.collabsim.answer_schemas import action_schema, probe_schema
from incognita.collabsim.engine import agent_seed
from incognita.collabsim.policies import make_scripted
from incognita.collabsim.world.agent_prompts import render, system_prompt
from incognita.collabsim.world.experiment import Experiment
from incognita.collabsim.world.roster import AgentSpec
from incognita.common.backends.base import (
    Backend,
    ModelRequest,
    Runtime,
    Turn,
    make_backend,
)
from incognita.common.usage import Usage


@dataclass
class ModelParticipant:
    """An agent's conversation with its backend: one user turn per observation."""

    agent: AgentSpec
    backend: Backend
    system: str
    seed: int
    history: list[Turn] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    probe_usage: Usage = field(default_factory=Usage)
    probes: int = 0  # probes asked so far; each has a seed of its own (probe_seed)
    # The answers' JSON schemas (answer_schemas), sent only when the model entry sets structured_output.
    action_schema: dict | None = None
    probe_schema: dict | None = None

    def act(self, observation: dict) -> str:
        self.history.append(Turn("user", render(observation)))
        request = ModelRequest(
            role=self.agent.id,
            system=self.system,
            messages=tuple(self.history),
            seed=self.seed,
            output_schema=self.action_schema,
        )
        response = self.backend.respond(request)
        self.usage.add(response.usage)
        self.usage.calls += 1
        text = response.text or ""
        self.history.append(Turn("assistant", text))
        return text

    def probe(self, prompt: str) -> str:
        """The conversation so far plus the probe; the probe is not added to the history.

        An agent that sends a message and acts in one turn is probed after each, with the same
        history: the probe's own seed keeps the second from being the first's cache entry when
        the model samples (and lets a loopback's twin see both calls)."""
        self.probes += 1
        messages = (*self.history, Turn("user", prompt))
        response = self.backend.respond(
            ModelRequest(
                role=self.agent.id,
                system=self.system,
                messages=messages,
                seed=probe_seed(self.seed, self.probes),
                output_schema=self.probe_schema,
            )
        )
        self.probe_usage.add(response.usage)
        self.probe_usage.calls += 1
        return response.text or ""


def make_participants(
    exp: Experiment, seed: int, cache_dir: str | None, prices: str | None
) -> dict[str, ModelParticipant]:
    out = {}
    # One answer schema per role, and one for the probes: the same for every agent that shares them.
    actions = {role: action_schema(exp, role) for role in {a.role for a in exp.agents}}
    probes = probe_schema(exp.probe_template) if exp.probe_template else None
    for agent in exp.agents:
        s = agent_seed(seed, agent.id)
        knowledge = {"task": exp.task, "profiles": exp.profiles, "seed": s}
        runtime = Runtime(cache_dir=cache_dir, prices=prices, cell=run_cell(exp, seed, agent, s))
        backend = make_backend(agent.model, agent.role, knowledge, runtime, scripted=make_scripted)
        out[agent.id] = ModelParticipant(
            agent,
            backend,
            system_prompt(exp, agent, seed),
            s,
            action_schema=actions[agent.role],
            probe_schema=probes,
        )
    return out


def run_cell(exp: Experiment, seed: int, agent: AgentSpec, s: int) -> dict:
    """What one agent of one run is, for a loopback whose scripted twins answer in its place
    (the openai family's `send_cell`; incognita.collabsim.loopback_twins): enough to build the
    policy `make_scripted` would (task, agent seed; the profile is the served model's name, the
    agent's role is added by the backend) and to tell concurrent runs apart (condition, design,
    run seed and the config hash, which the model overrides change)."""
    return {
        "family": "collabsim",
        "task": exp.task,
        "condition": exp.condition,
        "design": exp.design,
        "config": exp.config_hash[:16],
        "seed": seed,
        "agent": agent.id,
        "agent_seed": s,
    }


def probe_seed(agent_seed: int, number: int) -> int:
    """The seed of an agent's `number`-th probe (from 1): a function of the agent's seed and the
    count alone, so it never depends on the order in which agents' calls finish."""
    import random

    return random.Random(f"collabsim-probe:{agent_seed}:{number}").randrange(2**31)
