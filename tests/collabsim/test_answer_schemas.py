"""The answer schemas of structured output (incognita.collabsim.answer_schemas), checked against
the two things they must agree with and do not come from: the engine's parser with its record of
accepted actions, and the probe parser.

- Every action the engine accepted in a scripted run of each task (the policies write complete
  arguments) is admitted by the schema: a constrained model is not kept from any move they make.
- Every answer the schema admits parses without a format error (one instance per alternative,
  built from the schema alone): the schema never steers a model into a refused format.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.answer_schemas import action_schema, probe_schema
from incognita.collabsim.engine import parse_actions
from incognita.collabsim.run import simulate
from incognita.collabsim.world.experiment import load_experiment
from incognita.collabsim.world.probes import parse_probe
from incognita.collabsim.world.task import TASKS


def instance(schema: dict):
    """One value the schema admits, from the schema alone (first enum value, first type)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return instance(schema["anyOf"][0])
    kind = schema["type"][0] if isinstance(schema["type"], list) else schema["type"]
    if kind == "object":
        return {name: instance(sub) for name, sub in schema["properties"].items()}
    if kind == "array":  # one item of every kind
        return [instance(alt) for alt in schema.get("prefixItems") or schema["items"]["anyOf"]]
    return {"string": "yes", "integer": 1, "number": 0.5, "boolean": True, "null": None}[kind]


def strict_shape(schema: dict) -> None:
    """What strict modes require: every object closed with every property required."""
    if schema.get("type") == "object":
        assert schema["additionalProperties"] is False and schema["required"] == list(schema["properties"])
    for sub in [*schema.get("properties", {}).values(), *schema.get("anyOf", []), schema.get("items") or {}]:
        if sub:
            strict_shape(sub)


@pytest.mark.parametrize("task", TASKS)
def test_every_action_the_engine_accepted_is_admitted_by_the_schema(task):
    exp = load_experiment(CONFIG / task / "baseline.yaml")
    result = simulate(exp, 1)
    roles = {a.id: a.role for a in exp.agents}
    schemas = {role: action_schema(exp, role) for role in set(roles.values())}
    checked = set()
    for e in result.events:
        if e["kind"] == "action":
            item = {"action": e["payload"]["action"], **e["payload"]["args"]}
        elif e["kind"] == "message":
            item = {"action": "message", "text": e["payload"]["text"], "to": e["payload"]["to"]}
        else:
            continue
        jsonschema.validate({"actions": [item]}, schemas[roles[e["actor"]]]["schema"])
        checked.add(item["action"])
    assert {"message", "do_nothing"} < checked  # and at least one task action
    for schema in schemas.values():
        strict_shape(schema["schema"])
        with pytest.raises(jsonschema.ValidationError):  # the schema does constrain
            jsonschema.validate({"actions": [{"action": "fly_away"}]}, schema["schema"])


@pytest.mark.parametrize("task", TASKS)
def test_every_answer_the_schemas_admit_parses_without_a_format_error(task):
    exp = load_experiment(CONFIG / task / "baseline.yaml")
    for role in {a.role for a in exp.agents}:
        for form in ("schema", "grammar_schema"):
            schema = action_schema(exp, role)[form]
            every = instance(schema)  # one item of each action
            assert {a["action"] for a in every["actions"]} == {*exp.action_space[role], "message", "do_nothing"}
            for item in every["actions"]:
                jsonschema.validate({"actions": [item]}, schema)
                actions, error = parse_actions(json.dumps({"actions": [item]}))
                assert error is None and actions == [item], form
            most = exp.protocol.actions_per_turn + exp.communication.max_messages_per_turn
            too_many = {"actions": (every["actions"] * most)[: most + 1]}
            assert not jsonschema.Draft202012Validator(schema).is_valid(too_many)  # more than a turn takes
    template = exp.probe_template
    for form in ("schema", "grammar_schema"):
        schema = probe_schema(template)[form]
        answer = instance(schema)
        jsonschema.validate(answer, schema)
        answers, errors = parse_probe(json.dumps(answer), template)
        assert errors == [] and len(answers) == len(template.questions), form
        assert all("field_errors" not in a for a in answers)
    strict_shape(probe_schema(template)["schema"])
    # The grammar form admits no repeated question (which the strict form cannot rule out).
    twice = answer["answers"][:1] * len(template.questions)
    assert not jsonschema.Draft202012Validator(probe_schema(template)["grammar_schema"]).is_valid({"answers": twice})
