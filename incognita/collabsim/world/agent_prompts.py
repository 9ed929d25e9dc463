"""What every agent is shown, as text, and how a scripted policy reads it back.

The one home of the format: the system prompt (the role's task instructions with the task
parameters filled in, the persona and the collaboration module in their tags, the answer format)
and the user turn that carries an observation as JSON. `agents.ModelParticipant` sends them to
its backend; the scripted policies (`policies/`) parse the same text with `read_observation` and
look for the tags, so they know nothing a model would not.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

from incognita.collabsim.world.events import canonical
from incognita.collabsim.world.experiment import Experiment
from incognita.collabsim.world.persona_library import persona_for
from incognita.collabsim.world.roster import AgentSpec
from incognita.common.backends.base import ModelRequest
from incognita.common.io import InputError

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
    """The user turn of one observation: the step line, then the observation as canonical JSON."""
    return (
        f"Step {observation['step']}, simulated time {observation['t']} s, {observation['steps_left']} "
        f"step(s) left. Your observation:\n{canonical(observation)}"
    )


def read_observation(request: ModelRequest) -> dict:
    """The observation JSON of the last user turn (the turn `render` wrote)."""
    text = request.messages[-1].content or ""
    return json.loads(text[text.index("{") :])
