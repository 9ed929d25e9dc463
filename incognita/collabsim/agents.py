"""Participants: any model entry behind the shared backend interface.

Every agent, scripted or real, gets the same system prompt (its role's task instructions and
the answer format) and the same user turns (its observation as JSON) and answers with text.
Scripted policies (`policies/`) parse that JSON, exactly what a real model is shown, so they
know nothing a model would not.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path

from incognita.collabsim.engine import agent_seed
from incognita.collabsim.events import canonical
from incognita.collabsim.experiment import AgentSpec, Experiment
from incognita.common.backends.base import (
    Backend,
    ModelRequest,
    Turn,
    make_backend,
    split_entry,
)
from incognita.common.io import InputError
from incognita.common.usage import Usage

ANSWER_FORMAT = """
## How to answer
Each turn you receive your observation as JSON. Reply with JSON only:
{"actions": [{"action": "<name>", ...arguments...}, ...]}
Your actions: $actions. `message` takes "text" and "to" ("all", or a teammate's id when
messages are direct); `do_nothing` passes. An action that cannot be taken is refused and you are
told why in your next observation."""


PERSONA_TAG, MODULE_TAG = "persona", "collaboration-guidance"


def system_prompt(exp: Experiment, agent: AgentSpec, seed: int) -> str:
    """The role's instructions with the task parameters filled in ($name placeholders), then the
    agent's persona (when on), the collaboration module (theory design) and the answer format.
    Persona and module are wrapped in tags, so a reader (or a scripted policy) can find them."""
    path: Path = exp.prompts[agent.role]
    values = {k: _show(v) for k, v in exp.params.items()}
    values.update(
        id=agent.id,
        role=agent.role,
        n_agents=str(len(exp.agents)),
        max_steps=str(exp.protocol.max_steps),
        step_seconds=str(exp.protocol.step_seconds),
        actions_per_turn=str(exp.protocol.actions_per_turn),
        max_words="no" if exp.communication.max_words is None else str(exp.communication.max_words),
        actions=", ".join(exp.action_space[agent.role] + ("message", "do_nothing")),
    )
    try:
        body = string.Template(path.read_text(encoding="utf-8")).substitute(values)
        answer = string.Template(ANSWER_FORMAT).substitute(values)
    except KeyError as exc:
        raise InputError(f"{path}: unknown placeholder ${exc.args[0]} (known: {', '.join(sorted(values))})") from None
    except ValueError as exc:
        raise InputError(f"{path}: bad placeholder ({exc})") from None
    parts = [body.rstrip()]
    if agent.persona:
        from incognita.collabsim.personas import persona_for

        parts.append(
            f"<{PERSONA_TAG}>\n{persona_for(list(exp.personas), seed, agent.id)['description']}\n</{PERSONA_TAG}>"
        )
    if exp.collaboration_module is not None:
        module = exp.collaboration_module.read_text(encoding="utf-8").strip()
        parts.append(f"<{MODULE_TAG}>\n{module}\n</{MODULE_TAG}>")
    return "\n\n".join(parts) + "\n" + answer


def _show(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def render(observation: dict) -> str:
    return (
        f"Step {observation['step']}, simulated time {observation['t']} s, {observation['steps_left']} "
        f"step(s) left. Your observation:\n{canonical(observation)}"
    )


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

    def act(self, observation: dict) -> str:
        self.history.append(Turn("user", render(observation)))
        request = ModelRequest(role=self.agent.id, system=self.system, messages=tuple(self.history), seed=self.seed)
        response = self.backend.respond(request)
        self.usage.add(response.usage)
        self.usage.calls += 1
        text = response.text or ""
        self.history.append(Turn("assistant", text))
        return text

    def probe(self, prompt: str) -> str:
        """The conversation so far plus the probe; the probe is not added to the history."""
        messages = (*self.history, Turn("user", prompt))
        response = self.backend.respond(
            ModelRequest(role=self.agent.id, system=self.system, messages=messages, seed=self.seed)
        )
        self.probe_usage.add(response.usage)
        self.probe_usage.calls += 1
        return response.text or ""


def make_participants(
    exp: Experiment, seed: int, cache_dir: str | None, prices: str | None
) -> dict[str, ModelParticipant]:
    from incognita.collabsim.policies import make_scripted

    out = {}
    for agent in exp.agents:
        spec, settings = split_entry(agent.model, f"agent {agent.id} model")
        s = agent_seed(seed, agent.id)
        context = {
            "settings": settings,
            "cache_dir": cache_dir,
            "prices": prices,
            "task": exp.task,
            "profiles": exp.profiles,
            "seed": s,
        }
        backend = make_backend(spec, agent.role, context, scripted=make_scripted)
        out[agent.id] = ModelParticipant(agent, backend, system_prompt(exp, agent, seed), s)
    return out
