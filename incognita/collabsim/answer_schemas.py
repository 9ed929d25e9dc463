"""The JSON schemas of an agent's two kinds of answer, for model entries with `structured_output`.

Who reads them: `agents.ModelParticipant` puts them on its requests (ModelRequest.output_schema);
a backend sends them only when the agent's model entry asks for it (docs/models.md, "Structured
output"); scripted policies ignore them. The invariant: every answer a schema admits is one the
parsers take as well-formed (`engine.parse_actions`, `world.probes.parse_probe`). Whether an action may
be taken now, or a probe's confidence lies in [0, 1], stays the engine's, the task's and the
prober's call, so a constrained model can still make a refused move and is told why, as an
unconstrained one is. The shape is the one strict modes accept (OpenAI, Anthropic): every object
closed, every property required, whole numbers in a short range listed (`world.task.whole_number`)
rather than bounded. Arrays carry a minimum length, since a weak model otherwise takes the empty
list: at least one action (the parser refuses none), and one answer per probe question (the
anthropic family relaxes this to at least one, all its API takes). The probe schema's
`grammar_schema` form, for servers that compile schemas to grammars, also fixes the answers'
order, one per question, which strict modes cannot state (a weak model repeats a question); the
action schema's grammar form caps a message's text at CHARS_PER_WORD characters per allowed word
when the condition limits words, since a weak model under a grammar writes on until the token cap
and the cut answer is no JSON at all (the engine still counts the words).
"""

from __future__ import annotations

from incognita.collabsim.world.events import ALL
from incognita.collabsim.world.experiment import Experiment
from incognita.collabsim.world.probes import Template
from incognita.collabsim.world.task import MESSAGE, NOTHING, task_class

CHARS_PER_WORD = 12


def _closed(properties: dict[str, dict]) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def action_schema(exp: Experiment, role: str) -> dict:
    """`{"actions": [...]}` where each item is one of the role's actions with its arguments (the
    answer format of `world.agent_prompts.ANSWER_FORMAT`), at most as many as a turn takes."""
    ids = tuple(a.id for a in exp.agents)
    cls = task_class(exp.task)
    arguments = cls.argument_schemas({**cls.DEFAULTS, **exp.params}, ids)
    most = exp.protocol.actions_per_turn + exp.communication.max_messages_per_turn

    def schema(text: dict) -> dict:
        per_action = {name: arguments[name] for name in exp.action_space[role]}
        per_action[MESSAGE] = {"text": text, "to": {"type": "string", "enum": [ALL, *ids]}}
        per_action[NOTHING] = {}
        items = [_closed({"action": {"type": "string", "enum": [name]}, **args}) for name, args in per_action.items()]
        return _closed({"actions": {"type": "array", "items": {"anyOf": items}, "minItems": 1, "maxItems": most}})

    words = exp.communication.max_words
    capped = {"type": "string"} if words is None else {"type": "string", "maxLength": words * CHARS_PER_WORD}
    return {
        "name": f"{exp.task}_{role}_actions",
        "schema": schema({"type": "string"}),
        "grammar_schema": schema(capped),
    }


def _field_schema(field: dict) -> dict:
    # null is "I do not know", which parse_probe accepts for every field.
    if field["type"] == "enum":
        return {"enum": [*field["values"], None]}
    return {"type": [{"number": "number", "integer": "integer", "text": "string"}[field["type"]], "null"]}


def probe_schema(template: Template) -> dict:
    """`{"answers": [...]}` with one kind of item per question: its id, an answer, a confidence and
    that question's fields (the reply format of `probes.probe_prompt`)."""
    items = [
        _closed(
            {
                "id": {"type": "string", "enum": [q["id"]]},
                "answer": {"type": "string"},
                "confidence": {"type": "number"},
                "fields": _closed({name: _field_schema(f) for name, f in template.fields_of(q["id"]).items()}),
            }
        )
        for q in template.questions
    ]
    n = len(template.questions)
    answers = {"type": "array", "items": {"anyOf": items}, "minItems": n, "maxItems": n}
    in_order = {"type": "array", "prefixItems": items, "items": False, "minItems": n}
    return {
        "name": "probe_answers",
        "schema": _closed({"answers": answers}),
        "grammar_schema": _closed({"answers": in_order}),
    }
