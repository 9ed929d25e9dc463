"""ModelEntry: the one parse of a model entry, its one-string form, and the commands' click type."""

from __future__ import annotations

import copy
import json
import pickle

import click
import pytest
from click.testing import CliRunner

from incognita.common.backends.entry import ModelEntry, calls_api, entry_param, entry_type, pacing_map
from incognita.common.io import InputError

PACED = {"spec": "openai:gpt-x", "temperature": 0, "rpm": 600, "reasoning_effort": "high", "tpm": 1_200_000}


@pytest.mark.parametrize(
    "value, spec, settings",
    [
        ("openai:gpt-5", "openai:gpt-5", {}),
        ({"spec": "openai:gpt-5", "temperature": 1}, "openai:gpt-5", {"temperature": 1}),
        ('{"spec":"openai:gpt-5","temperature":1}', "openai:gpt-5", {"temperature": 1}),
        (
            ' {"spec": "scripted:customer", "faults": {"invent_value": 0.5}}',
            "scripted:customer",
            {"faults": {"invent_value": 0.5}},
        ),
        ({"spec": "openai:gpt-5"}, "openai:gpt-5", {}),
    ],
)
def test_every_form_parses_to_the_spec_and_its_settings(value, spec, settings):
    entry = ModelEntry.parse(value, "models.m")
    assert (entry.spec, dict(entry.settings)) == (spec, settings)
    assert entry.family == spec.partition(":")[0] and entry.name == spec.partition(":")[2]
    assert ModelEntry.parse(entry) is entry  # an entry is never parsed twice


def test_the_one_string_form_round_trips_and_is_what_the_workflow_always_passed():
    entry = ModelEntry.parse(PACED)
    # Byte for byte the form jobs' params, pacing keys and records have held: sorted compact JSON.
    assert entry.param == ('{"reasoning_effort":"high","rpm":600,"spec":"openai:gpt-x","temperature":0,"tpm":1200000}')
    assert ModelEntry.parse(entry.param) == entry and ModelEntry.parse(entry.param).param == entry.param
    assert ModelEntry.parse("scripted:desk").param == "scripted:desk"
    assert ModelEntry.parse({"spec": "openai:m"}).param == "openai:m"
    assert entry_param(PACED) == entry.param and entry_param(None) == "none"
    assert str(entry) == entry.param
    # The settings keep the order given (the native harness's llm_args keep it in the run record).
    assert list(entry.mapping()) == ["spec", "temperature", "rpm", "reasoning_effort", "tpm"]
    assert entry.to_config() == PACED and ModelEntry.parse("openai:m").to_config() == "openai:m"


def test_an_entry_is_a_frozen_value_of_its_own():
    source = {"spec": "openai:m", "extra_body": {"top_p": 0.9}}
    entry = ModelEntry.parse(source)
    source["extra_body"]["top_p"] = 0.1  # the config's dict stays the config's
    assert entry.settings["extra_body"] == {"top_p": 0.9}
    with pytest.raises(TypeError):
        entry.settings["temperature"] = 1
    with pytest.raises(AttributeError):
        entry.spec = "openai:other"
    same = ModelEntry("openai:m", {"extra_body": {"top_p": 0.9}})
    assert entry == same and hash(entry) == hash(same) and len({entry, same}) == 1
    assert entry != ModelEntry("openai:m")
    assert pickle.loads(pickle.dumps(entry)) == entry and copy.deepcopy(entry) == entry


@pytest.mark.parametrize(
    "value, message",
    [
        ({"temperature": 1}, "models.m: expected a spec string or a mapping with a 'spec' string"),
        ({"spec": 5}, "models.m: expected a spec string or a mapping with a 'spec' string"),
        (7, "models.m: expected a spec string or a mapping with a 'spec' string"),
        ('{"spec": "openai:m",', "models.m: not a valid JSON model entry"),
    ],
)
def test_a_bad_entry_is_an_input_error_naming_where(value, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        ModelEntry.parse(value, "models.m")


def test_a_spec_is_never_an_entrys_json_form():
    with pytest.raises(TypeError, match="ModelEntry.parse"):
        ModelEntry('{"spec":"openai:m"}')


def test_an_absent_role_and_calls_api():
    assert ModelEntry.optional(None) is None and ModelEntry.optional("none") is None
    assert ModelEntry.optional("") is None and ModelEntry.optional("scripted:judge") == ModelEntry("scripted:judge")
    assert not ModelEntry("scripted:desk").calls_api and ModelEntry("anthropic:c").calls_api
    assert calls_api(["scripted:desk", None, "none", ModelEntry("openai:m")])
    assert not calls_api(["scripted:desk", None, {"spec": "scripted:customer", "faults": {}}])


def test_pacing_goes_apart_and_comes_back_whole():
    entry = ModelEntry.parse(PACED)
    assert entry.pacing == {"rpm": 600, "tpm": 1_200_000}
    received = entry.without_pacing()
    assert received.param == '{"reasoning_effort":"high","spec":"openai:gpt-x","temperature":0}'
    pacing = json.loads(pacing_map([PACED, "scripted:desk", None]))
    assert pacing == {received.param: {"rpm": 600, "tpm": 1_200_000}}
    assert received.with_pacing(pacing) == entry and received.with_pacing(pacing).param == entry.param
    plain = ModelEntry("openai:y", {"temperature": 1})
    assert plain.without_pacing() is plain and plain.with_pacing(pacing) is plain


def test_the_commands_click_type_parses_once_and_names_the_option():
    seen = {}

    @click.command()
    @click.option("--spec", type=entry_type(), required=True)
    @click.option("--judge", type=entry_type(optional=True), default="none")
    def command(spec, judge):
        seen.update(spec=spec, judge=judge)

    runner = CliRunner()
    result = runner.invoke(command, ["--spec", '{"spec":"openai:m","temperature":0}'])
    assert result.exit_code == 0, result.output
    assert seen == {"spec": ModelEntry("openai:m", {"temperature": 0}), "judge": None}
    result = runner.invoke(command, ["--spec", "scripted:surveyor", "--judge", "openai:j"])
    assert result.exit_code == 0 and seen["judge"] == ModelEntry("openai:j")
    bad = runner.invoke(command, ["--spec", '{"temperature": 0}'])
    assert bad.exit_code == 2
    assert "--spec" in bad.output and "expected a spec string" in bad.output and "temperature" in bad.output
