"""CollabSim twins behind the loopback: a run whose agents call the openai client against scripted
twins records the events of the offline scripted run.

The twins (incognita.collabsim.loopback_twins) know nothing but the cell header and the served
model, as they do behind bench/throughput.py. The run takes simultaneous turns with probing and
several calls in flight, so the twins are asked for several agents at once.

Probes come after every action, as in the baseline: an agent that sends a message and acts in
one turn is probed twice with the same history, and each probe carries its own seed
(agents.probe_seed), so the second is a call of its own, not the first's cache entry.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from incognita.collabsim.loopback_twins import CollabSimTwins, step_of
from incognita.collabsim.run import simulate
from incognita.collabsim.world.experiment import load_experiment
from incognita.common.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]
SHAPE_FACTORY = ROOT / "config/collabsim/shape_factory/baseline.yaml"
SEED, STEPS = 3, 12
KEY_ENV = "INCOGNITA_TWINS_TEST_KEY"


def experiment(models: dict | None):
    exp = load_experiment(SHAPE_FACTORY, models, design="theory")  # theory: the policy reads its module
    return replace(
        exp,
        protocol=replace(exp.protocol, turn_taking="simultaneous", max_steps=STEPS),
        probe=replace(exp.probe, cadence="action"),
    )


def without_config_hash(events: list[dict]) -> list[dict]:
    """The run's config hash covers its model entries, which are what the two runs differ in."""
    out = json.loads(json.dumps(events))
    assert out[0]["kind"] == "run_start"
    out[0]["payload"].pop("config_hash")
    return out


def test_a_run_through_the_twins_records_the_offline_events(tmp_path, monkeypatch):
    offline = simulate(experiment(None), SEED, cache_dir=str(tmp_path / "unused"))
    assert offline.manifest["probe_cadence"] == "action"

    twins = CollabSimTwins(ROOT / "config/collabsim")
    monkeypatch.setenv(KEY_ENV, "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    with LoopbackServer(twins, with_headers=True) as server:
        entry = {
            "spec": "openai:scripted-default",
            "base_url": server.base_url,
            "api_key_env": KEY_ENV,
            "temperature": 0,
            "send_cell": True,
            "send_seed": True,
            "rpm": None,
            "tpm": None,
        }
        online = simulate(experiment({"*": entry}), SEED, cache_dir=str(tmp_path / "cache"), workers=6)
        answered = server.stats().answered

    assert without_config_hash(online.events) == without_config_hash(offline.events)
    assert online.manifest["state_hash"] == offline.manifest["state_hash"]
    calls = sum(u["calls"] for u in online.manifest["usage"].values())
    probes = sum(u["calls"] for u in online.manifest["probe_usage"].values())
    assert probes > 0 and answered == calls + probes == len(twins.calls)  # no call was a cache hit
    assert {c.kind for c in twins.calls} == {"act", "probe"}
    probed = [(e["step"], e["actor"]) for e in online.events if e["kind"] in ("probe", "probe_error")]
    assert max(probed.count(x) for x in set(probed)) >= 2  # an agent probed twice in one step was covered
    assert {c.step for c in twins.calls if c.kind == "act"} == set(range(online.manifest["steps"]))


def test_a_request_the_twins_cannot_place_is_refused_with_its_reason():
    twins = CollabSimTwins(ROOT / "config/collabsim")
    body = {"model": "scripted-default", "messages": [{"role": "user", "content": "Step 0, ..."}]}
    with pytest.raises(ValueError, match="send_cell: true"):
        twins("scripted-default", body, {})
    cell = {"family": "collabsim", "task": "shape_factory", "agent": "A", "agent_seed": 1, "role": "trader"}
    with pytest.raises(ValueError, match="no scripted profile 'nosuch'"):
        twins("scripted-nosuch", body, {"x-incognita-cell": json.dumps(cell)})
    with pytest.raises(ValueError, match="not a collabsim agent"):
        twins("scripted-default", body, {"x-incognita-cell": json.dumps({**cell, "family": "access"})})


def test_the_step_of_a_request_is_its_latest_observation():
    probe = {"role": "user", "content": "PROBE: the task is paused"}
    act = [{"role": "system", "content": "s"}, {"role": "user", "content": "Step 4, simulated time 40 s"}]
    assert step_of({"messages": act}) == ("act", 4)
    assert step_of({"messages": [*act, {"role": "assistant", "content": "{}"}, probe]}) == ("probe", 4)
    assert step_of({"messages": [probe]}) == ("probe", -1)
