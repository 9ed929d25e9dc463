"""Native results read back as trial rows (incognita.access.native.native_results), as plain JSON."""

from __future__ import annotations

import json
import math

import pytest

from incognita.access.native.native_results import native_card_sha, native_trial
from incognita.access.native.native_scripted import AGENT_NAME
from incognita.common.io import InputError


def _result(error=None, implementation=AGENT_NAME) -> dict:
    """The fields of a native result (incognita.access.native.native_run) that its row builder reads."""
    facts = {
        "model": "m",
        "task": "11",
        "rep": 0,
        "seed": 3,
        "overlay_version": 1,
        "card": {"version": 2, "sha256": "a" * 64},
        "error": error,
    }
    sim = {
        "termination_reason": "agent_error" if error else "user_stop",
        "agent_cost": 0.5,
        "user_cost": 0.25,
        "messages": [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "hi"}],
        "reward_info": {"reward": 1.0, "reward_breakdown": {"DB": 1.0}, "info": {"incognita": facts}},
    }
    return {"info": {"agent_info": {"implementation": implementation}}, "simulations": [sim]}


def test_a_native_result_becomes_one_trial_row(tmp_path):
    row = native_trial(tmp_path / "r0.json", _result())
    assert row["arm"] == "native" and row["task"] == "11" and row["success"] == 1.0 and not row["excluded"]
    assert row["channel_db"] == 1.0 and math.isnan(row["channel_communicate"]) and math.isnan(row["channel_nl"])
    # The one assistant message is the harness's greeting, not the agent's: no turn, no action.
    assert row["turns"] == 0 and row["agent_actions"] == 0 and row["messages"] == 0
    assert row["agent_backend"] == "scripted"
    assert row["cost_episode_usd"] == 0.75 and row["overlay_version"] == 1
    assert native_card_sha(_result()) == "a" * 64


def test_a_broken_native_run_is_excluded(tmp_path):
    row = native_trial(tmp_path / "r0.json", _result(error="ConnectionError: gone"))
    assert row["excluded"] and math.isnan(row["success"]) and row["agent_backend"] == "scripted"


def test_native_trial_refuses_foreign_results(tmp_path):
    path = tmp_path / "r0.json"
    path.write_text(json.dumps({"simulations": [{"reward_info": {"info": None}}]}))
    with pytest.raises(InputError, match="not a native result written by incognita"):
        native_trial(path)
    with pytest.raises(InputError, match="r0.json: not a readable native result"):
        native_trial(path, {"simulations": [{"reward_info": {"info": {"incognita": {}}}}]})


def test_turns_are_counted_as_our_arms_count_them():
    """The harness numbers every message; our arms count an agent output and the answers to it.
    The scripted agent runs the same episode in direct and native: the same turns, the same
    actions, and each call at the same turn."""
    from pathlib import Path

    from incognita.access.native.native_results import agent_turns

    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "viewer"
    doc = json.loads((fixtures / "native" / "surveyor" / "retail" / "11" / "r0.json").read_text())
    direct = json.loads((fixtures / "episodes" / "direct" / "surveyor" / "retail" / "11" / "r0.json").read_text())
    row = native_trial("r0.json", doc)
    assert row["turns"] == direct["turns"] == 14
    assert row["agent_actions"] == 14  # the harness's greeting is not the agent's
    messages = doc["simulations"][0]["messages"]
    turns = agent_turns(messages)
    native_calls = [(t, c["name"]) for m, t in zip(messages, turns) for c in m.get("tool_calls") or []]
    direct_calls = [(e["turn"], e["tool"]) for e in direct["events"] if e["type"] == "tool_proposal"]
    assert native_calls == direct_calls
    # The greeting and the customer's opening are turn 0; an earlier conversation the task starts
    # from is too, whoever spoke in it.
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "earlier"}]
    run = [{"role": "user", "content": "again"}, {"role": "assistant", "content": "ok"}, {"role": "user"}]
    assert agent_turns(history + run, history=2) == [0, 0, 0, 1, 1]
    assert agent_turns([{"role": "assistant"}, {"role": "user"}, {"role": "assistant"}, {"role": "tool"}]) == [
        0,
        0,
        1,
        1,
    ]
