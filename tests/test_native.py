"""The native anchor: our scripted agent and user in the unmodified upstream harness."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from incognita.cards import build_card
from incognita.corpus import load_corpus
from incognita.golden import build_golden, load_vocabulary
from incognita.harness import arm_order
from incognita.io import read_json, write_json
from incognita.native import (
    NativeJob,
    NativeSettings,
    native_task,
    native_trial,
    output_path,
    overlay_version,
    redact,
    run_job,
)
from incognita.repairs import apply_overlay, load_overlay

ROOT = Path(__file__).resolve().parent.parent
CORPUS = [str(t) for t in load_corpus(ROOT / "config/corpus.yaml", locks=ROOT / "config/locks.yaml")["tasks"]]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, source_dir, tasks, db, meta):
    """Cards (repaired, plus the rule-built v1 of repaired tasks) and golden files for the corpus."""
    from incognita.replay import RetailWorld

    root = tmp_path_factory.mktemp("native_inputs")
    world = RetailWorld(str(source_dir / "db.json"))
    vocab = load_vocabulary(str(ROOT / "config/vocabulary.yaml"))
    for task_id in CORPUS:
        card = build_card(tasks[task_id], db, meta)
        overlay = ROOT / "config/repairs" / f"{task_id}.yaml"
        if overlay.exists():
            write_json(root / "cards" / "v1" / f"{task_id}.json", card)
            card = apply_overlay(card, load_overlay(overlay), overlay)
        write_json(root / "cards" / f"{task_id}.json", card)
        write_json(root / "golden" / f"{task_id}.json", build_golden(card, world, vocab))
    return root


def job(inputs: Path, out: Path, tasks: list[str], *, tasks_json: str, spec="scripted:oracle",
        archive=False) -> NativeJob:
    return NativeJob(model="m", spec=spec, customer="scripted:customer", tasks=tuple(tasks), reps=1, seed=7,
                     arms=("direct", "indirect", "social", "native"), models_order=("m",), tasks_json=tasks_json,
                     cards_dir=str(inputs / "cards"), golden_dir=str(inputs / "golden"),
                     profiles=str(ROOT / "config/scripted_agents.yaml"), out_dir=str(out), archive_unrepaired=archive)


def test_oracle_scores_one_natively_on_every_corpus_task(inputs, source_dir, tmp_path):
    from tau2.data_model.simulation import Results

    written = run_job(job(inputs, tmp_path, CORPUS, tasks_json=str(source_dir / "tasks.json")), NativeSettings(),
                      log=lambda _: None)
    assert len(written) == len(CORPUS)
    for path in written:
        results = Results.load(path)  # the harness's own loader reads what we write
        sim = results.simulations[0]
        assert sim.reward_info.reward == 1.0, (path, sim.termination_reason, sim.reward_info.info)
        assert sim.termination_reason.value == "user_stop"
        row = native_trial(path)
        assert row["success"] == 1.0 and not row["excluded"] and row["arm"] == "native"


def test_repaired_task_runs_through_the_overlay_and_the_unrepaired_run_is_archived(inputs, source_dir, tmp_path):
    from tau2.data_model.simulation import Results

    j = NativeJob(**{**job(inputs, tmp_path, ["46"], archive=True, tasks_json=str(source_dir / "tasks.json")).__dict__,
                     "corpus": tuple(CORPUS)})
    written = run_job(j, NativeSettings(), log=lambda _: None)
    current, archived = output_path(tmp_path, "m", "46", 0), output_path(tmp_path, "m", "46", 0, archive=True)
    assert written == [current, archived]
    assert "archive" in archived.parts and "archive" not in current.parts
    facts = {p: Results.load(p).simulations[0].reward_info.info["incognita"] for p in written}
    assert facts[current]["overlay_version"] == 1 and facts[archived]["overlay_version"] == 0
    order = arm_order(j.arms, list(j.models_order), "m", CORPUS.index("46"), 0)  # the task's corpus position
    assert facts[current]["schedule_position"] == order.index("native")
    task = Results.load(current).tasks[0]
    card = read_json(inputs / "cards" / "46.json")
    assert task.user_scenario.instructions.reason_for_call.startswith(card["requests"][0]["demand"])


def test_overlay_replaces_only_the_reason_for_call(inputs, source_dir):
    upstream = {str(t["id"]): t for t in read_json(source_dir / "tasks.json")}
    card = read_json(inputs / "cards" / "46.json")
    assert overlay_version(card) == 1 and overlay_version(read_json(inputs / "cards" / "v1" / "46.json")) == 0
    task = native_task(upstream["46"], card)
    before = upstream["46"]["user_scenario"]["instructions"]
    after = task.user_scenario.instructions
    assert after.reason_for_call != before["reason_for_call"]
    assert (after.known_info, after.unknown_info, after.task_instructions) == (
        before["known_info"], before["unknown_info"], before["task_instructions"])
    assert task.evaluation_criteria.model_dump() == native_task(upstream["46"], read_json(
        inputs / "cards" / "v1" / "46.json")).evaluation_criteria.model_dump()


def test_a_crash_is_recorded_with_its_reason_and_excluded(inputs, source_dir, tmp_path, monkeypatch):
    from tau2.data_model.simulation import Results

    from incognita.backends.scripted_customer import ScriptedCustomer

    def broken(self, request):
        raise ConnectionError("model service went away")

    monkeypatch.setattr(ScriptedCustomer, "respond", broken)  # a failure inside the run, mid-episode
    [path] = run_job(job(inputs, tmp_path, ["11"], tasks_json=str(source_dir / "tasks.json")), NativeSettings(),
                     log=lambda _: None)
    sim = Results.load(path).simulations[0]
    assert sim.skipped and sim.reward_info.info["incognita"]["error"] == "ConnectionError: model service went away"
    row = native_trial(path)
    assert row["excluded"] and math.isnan(row["success"]) and row["error"].startswith("ConnectionError")


def test_missing_inputs_stop_the_stage_before_anything_runs(inputs, source_dir, tmp_path):
    from incognita.io import InputError

    j = job(inputs, tmp_path, ["11"], tasks_json=str(source_dir / "tasks.json"))
    j = NativeJob(**{**j.__dict__, "golden_dir": str(tmp_path / "nowhere")})
    with pytest.raises(InputError, match="nowhere/11.json"):
        run_job(j, NativeSettings(), log=lambda _: None)
    assert not any(tmp_path.rglob("r0.json"))


def test_hitting_the_step_limit_is_recorded_as_the_harness_limit(inputs, source_dir, tmp_path):
    from tau2.data_model.simulation import Results

    [path] = run_job(job(inputs, tmp_path, ["11"], tasks_json=str(source_dir / "tasks.json")),
                     NativeSettings(max_steps=4), log=lambda _: None)
    sim = Results.load(path).simulations[0]
    assert sim.termination_reason.value == "max_steps" and sim.reward_info.reward == 0.0
    assert sim.reward_info.info["incognita"]["limit"] == "max_steps"
    row = native_trial(path)
    assert row["termination"] == "max_steps" and not row["excluded"] and row["success"] == 0.0


def test_unknown_model_family_is_refused(inputs, source_dir, tmp_path):
    from incognita.io import InputError

    with pytest.raises(InputError, match="unsupported model spec 'vertex:x'"):
        run_job(job(inputs, tmp_path, ["11"], spec="vertex:x", tasks_json=str(source_dir / "tasks.json")),
                NativeSettings(), log=lambda _: None)


def test_credentials_are_redacted_from_errors(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key-123456")
    text = redact("AuthenticationError: key not-a-real-key-123456 rejected; also sk-abcdef123456 and Bearer xyz")
    assert "not-a-real-key-123456" not in text and "sk-abcdef123456" not in text and "xyz" not in text


def test_native_trial_refuses_foreign_results(tmp_path):
    from incognita.io import InputError

    path = tmp_path / "r0.json"
    path.write_text(json.dumps({"simulations": [{"reward_info": {"info": None}}]}))
    with pytest.raises(InputError, match="not a native result written by incognita"):
        native_trial(path)


def test_one_native_episode_through_the_harness_model_path_on_loopback(inputs, source_dir, tmp_path, monkeypatch):
    """An `openai:` agent and user, through the harness's own LLM classes and litellm, against a
    local OpenAI-compatible server that plays the gold actions of task 11 and then stops."""
    from tau2.data_model.simulation import Results

    from incognita.loopback import LoopbackServer

    gold = next(t for t in read_json(source_dir / "tasks.json") if str(t["id"]) == "11")
    actions = gold["evaluation_criteria"]["actions"]
    seen: list[str] = []

    def responder(model: str, request: dict):
        seen.append(model)
        if model == "agent-model":  # one gold action per turn, then a closing message
            done = sum(1 for m in request["messages"] if m["role"] == "tool")
            if done < len(actions):
                a = actions[done]
                return {"tool_calls": [{"id": f"call_{done}", "name": a["name"], "arguments": a["arguments"]}]}
            return "Both returns are done; the refunds go to the payment methods you asked for."
        last = request["messages"][-1]["content"] or ""
        return "###STOP###" if "refunds go to" in last else "I would like to return everything I ordered."

    monkeypatch.setenv("OPENAI_API_KEY", "loopback-dummy-key")
    with LoopbackServer(responder) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        j = NativeJob(**{**job(inputs, tmp_path, ["11"], tasks_json=str(source_dir / "tasks.json")).__dict__,
                         "spec": {"spec": "openai:agent-model", "temperature": 0},
                         "customer": {"spec": "openai:user-model", "temperature": 0}})
        [path] = run_job(j, NativeSettings(), log=lambda _: None)
        requests = server.requests
    results = Results.load(path)
    sim = results.simulations[0]
    assert sim.reward_info.info["incognita"]["error"] is None, sim.reward_info.info
    assert sim.reward_info.reward == 1.0 and sim.termination_reason.value == "user_stop"
    assert results.info.agent_info.implementation == "llm_agent"
    assert results.info.agent_info.llm == "openai/agent-model"
    assert results.info.user_info.implementation == "user_simulator"
    assert seen.count("agent-model") == len(actions) + 1 and seen.count("user-model") == 2
    assert requests == len(seen)
    assert "loopback-dummy-key" not in path.read_text()  # the key never reaches the harness's record
