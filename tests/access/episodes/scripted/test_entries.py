"""Model entries checked before anything runs (incognita.access.episodes.scripted.entries)."""

from __future__ import annotations

import pytest

from incognita.access.episodes.scripted.entries import check_entries, check_entry
from incognita.access.planning.workflow_config import load_config
from incognita.common.io import InputError, read_yaml

PROFILES = ["surveyor", "hasty"]


@pytest.mark.parametrize(
    "entry",
    [
        "scripted:surveyor",
        "openai:gpt-5",
        {"spec": "openai:gpt-5", "temperature": 0, "base_url": "http://127.0.0.1:1/v1"},
    ],
)
def test_valid_agent_entries_pass(entry):
    assert check_entry(entry, "models.m", PROFILES).spec == (entry if isinstance(entry, str) else entry["spec"])


@pytest.mark.parametrize(
    "entry, participant, message",
    [
        ("foo:bar", None, "config key models.m: unknown backend family 'foo' in 'foo:bar'"),
        ("openai", None, "unknown backend family 'openai' in 'openai'"),
        ("scripted:nosuch", None, "config key models.m: unknown scripted profile 'nosuch'"),
        ({"spec": "scripted:hasty", "temperature": 0}, None, "scripted:hasty takes no settings, got temperature"),
        ({"spec": "openai:gpt-5", "temprature": 0}, None, "unknown setting(s) temprature"),
        ({"spec": "openai:gpt-5", "max_tokens": -3}, None, "max_tokens: expected a positive integer or null, got -3"),
        ({"temperature": 0}, None, "expected a spec string or a mapping with a 'spec' string"),
        ("scripted:desk", "customer", "unknown scripted profile 'desk' (the scripted customer is scripted:customer)"),
        ("scripted:customer", "judge", "unknown scripted profile 'customer' (the scripted judge is scripted:judge)"),
        ("scripted:desk", "assessor", "there is no scripted assessor"),
    ],
)
def test_bad_entries_name_the_key_and_the_value(entry, participant, message):
    key = f"participants.{participant}" if participant else "models.m"
    with pytest.raises(InputError) as err:
        check_entry(entry, key, PROFILES, participant=participant)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_shipped_configs_pass_and_a_broken_one_is_refused(tmp_path):
    for name in ("config/config.yaml", "config/paper.yaml"):
        load_config(name)
    cfg = read_yaml("config/config.yaml")
    cfg["participants"]["service"] = "scripted:clerk"
    with pytest.raises(InputError, match="config key participants.service: unknown scripted profile 'clerk'"):
        check_entries(cfg)


def test_the_judged_channel_needs_a_judge():
    cfg = read_yaml("config/config.yaml")
    cfg["evaluation"] = {"information_channel": "judge"}
    with pytest.raises(InputError, match="evaluation.information_channel: 'judge' needs participants.judge"):
        check_entries(cfg)
    cfg["participants"]["judge"] = "scripted:judge"
    check_entries(cfg)
