"""The native anchor: our scripted agent and user in the unmodified upstream harness."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from workflow_helpers import retail_inputs, stable_native

from incognita.access.cards.card import build_card
from incognita.access.cards.repairs import apply_overlay, load_overlay
from incognita.access.cells import load_corpus
from incognita.access.domain import domain_files, get_domain, qualify
from incognita.access.episodes.harness import arm_order
from incognita.access.golden.provenance import load_vocabulary
from incognita.access.golden.trajectory import build_golden
from incognita.access.native.native_results import native_trial
from incognita.access.native.native_run import (
    NativeJob,
    NativeSettings,
    native_task,
    overlay_version,
    redact,
    run_job,
)
from incognita.access.paths import card_file, golden_file, native_result
from incognita.common.io import read_json, sha256_file, write_json

ROOT = Path(__file__).resolve().parents[3]
RETAIL = domain_files("retail", ROOT / "config/domains")
CORPUS_IDS = [str(t) for t in load_corpus(RETAIL.corpus, locks=RETAIL.locks)["tasks"]]  # upstream ids
CORPUS = [qualify("retail", t) for t in CORPUS_IDS]  # the design's tasks


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, source_dir, tasks, db, meta):
    """Cards (repaired, plus the rule-built v1 of repaired tasks) and golden files for the retail
    corpus, under the cards and golden roots as the stages lay them out (<root>/retail/<id>.json)."""
    from incognita.access.golden.upstream_replay import World

    root = tmp_path_factory.mktemp("native_inputs")
    world = World(get_domain("retail"), str(source_dir / "db.json"))
    vocab = load_vocabulary(str(RETAIL.vocabulary))
    for task_id in CORPUS_IDS:
        card = build_card(tasks[task_id], db, meta, get_domain("retail"))
        overlay = RETAIL.repairs / f"{task_id}.yaml"
        if overlay.exists():
            write_json(card_file("retail", task_id, rule_built=True, root=root / "cards"), card)
            card = apply_overlay(card, load_overlay(overlay), overlay)
        write_json(card_file("retail", task_id, root=root / "cards"), card)
        write_json(golden_file("retail", task_id, root=root / "golden"), build_golden(card, world, vocab))
    return root


def card_of(inputs: Path, task: str, rule_built: bool = False) -> Path:
    """A task's card (`task` a qualified id) among the inputs."""
    return card_file(*task.split("/"), rule_built=rule_built, root=inputs / "cards")


def job(
    inputs: Path, out: Path, tasks: list[str], *, source_root: str, spec="scripted:oracle", archive=False
) -> NativeJob:
    return NativeJob(
        model="m",
        spec=spec,
        customer="scripted:customer",
        tasks=tuple(tasks),
        reps=1,
        seed=7,
        arms=("direct", "indirect", "social", "native"),
        models_order=("m",),
        source_root=source_root,
        cards_root=str(inputs / "cards"),
        golden_root=str(inputs / "golden"),
        profiles=str(ROOT / "config/scripted_agents.yaml"),
        out_dir=str(out),
        archive_unrepaired=archive,
    )


def test_oracle_scores_natively_what_it_scores_in_our_direct_arm(inputs, source_dir, tmp_path):
    """The oracle has no randomness, so the upstream harness must score each corpus task as our
    direct arm does. (It no longer solves every task: it chooses entries from what the
    customer says, and some cards hold nothing that picks the golden entry.)"""
    from tau2.data_model.simulation import Results

    from incognita.access.episodes.harness import Harness, HarnessSettings

    design = HarnessSettings(
        arms=("direct",),
        models={"m": "scripted:oracle"},
        repetitions=1,
        seed=7,
        budget=300,
        customer="scripted:customer",
        service="scripted:desk",
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )
    harness = Harness(design, retail_inputs(source_dir))
    written = run_job(
        job(inputs, tmp_path, CORPUS, source_root=str(source_dir.parent)), NativeSettings(), log=lambda _: None
    )
    assert len(written) == len(CORPUS)
    solved = 0
    for task_id, path in zip(CORPUS, written):
        results = Results.load(path)  # the harness's own loader reads what we write
        sim = results.simulations[0]
        ours = harness.run_cell(
            "direct",
            "m",
            task_id,
            0,
            read_json(card_of(inputs, task_id)),
            "-",
            read_json(golden_file(*task_id.split("/"), root=inputs / "golden")),
            "-",
        )
        assert sim.reward_info.reward == float(ours.success), (path, sim.termination_reason, sim.reward_info.info)
        assert sim.termination_reason.value == "user_stop"
        row = native_trial(path)
        assert row["success"] == float(ours.success) and not row["excluded"] and row["arm"] == "native"
        solved += ours.success
    assert solved >= 5  # the tasks whose cards say enough to choose every entry


def test_repaired_task_runs_through_the_overlay_and_the_unrepaired_run_is_archived(inputs, source_dir, tmp_path):
    from tau2.data_model.simulation import Results

    j = NativeJob(
        **{
            **job(inputs, tmp_path, ["retail/46"], archive=True, source_root=str(source_dir.parent)).__dict__,
            "corpus": tuple(CORPUS),
        }
    )
    written = run_job(j, NativeSettings(), log=lambda _: None)
    current = native_result("m", "retail/46", 0, tmp_path)
    archived = native_result("m", "retail/46", 0, tmp_path, unrepaired=True)
    assert written == [current, archived]
    assert "archive" in archived.parts and "archive" not in current.parts
    facts = {p: Results.load(p).simulations[0].reward_info.info["incognita"] for p in written}
    assert facts[current]["overlay_version"] == 1 and facts[archived]["overlay_version"] == 0
    # each result names the card it read, so the reader never pools runs of two card versions
    assert facts[current]["card"] == {"version": 2, "sha256": sha256_file(card_of(inputs, "retail/46"))}
    assert facts[archived]["card"]["sha256"] == sha256_file(card_of(inputs, "retail/46", rule_built=True))
    order = arm_order(j.arms, list(j.models_order), "m", CORPUS.index("retail/46"), 0)  # the task's corpus position
    assert facts[current]["schedule_position"] == order.index("native")
    task = Results.load(current).tasks[0]
    card = read_json(card_of(inputs, "retail/46"))
    assert task.user_scenario.instructions.reason_for_call.startswith(card["requests"][0]["demand"])


def test_overlay_replaces_only_the_reason_for_call(inputs, source_dir):
    upstream = {str(t["id"]): t for t in read_json(source_dir / "tasks.json")}
    card = read_json(card_of(inputs, "retail/46"))
    assert overlay_version(card) == 1 and overlay_version(read_json(card_of(inputs, "retail/46", rule_built=True))) == 0
    task = native_task(upstream["46"], card)
    before = upstream["46"]["user_scenario"]["instructions"]
    after = task.user_scenario.instructions
    assert after.reason_for_call != before["reason_for_call"]
    assert (after.known_info, after.unknown_info, after.task_instructions) == (
        before["known_info"],
        before["unknown_info"],
        before["task_instructions"],
    )
    assert (
        task.evaluation_criteria.model_dump()
        == native_task(upstream["46"], read_json(card_of(inputs, "retail/46", True))).evaluation_criteria.model_dump()
    )


def test_a_crash_is_recorded_with_its_reason_and_excluded(inputs, source_dir, tmp_path, monkeypatch):
    from tau2.data_model.simulation import Results

    from incognita.access.episodes.scripted.scripted_customer import ScriptedCustomer

    def broken(self, request):
        raise ConnectionError("model service went away")

    monkeypatch.setattr(ScriptedCustomer, "respond", broken)  # a failure inside the run, mid-episode
    [path] = run_job(
        job(inputs, tmp_path, ["retail/11"], source_root=str(source_dir.parent)), NativeSettings(), log=lambda _: None
    )
    sim = Results.load(path).simulations[0]
    assert sim.skipped and sim.reward_info.info["incognita"]["error"] == "ConnectionError: model service went away"
    row = native_trial(path)
    assert row["excluded"] and math.isnan(row["success"]) and row["error"].startswith("ConnectionError")


def test_missing_inputs_stop_the_stage_before_anything_runs(inputs, source_dir, tmp_path):
    from incognita.common.io import InputError

    j = job(inputs, tmp_path, ["retail/11"], source_root=str(source_dir.parent))
    j = NativeJob(**{**j.__dict__, "golden_root": str(tmp_path / "nowhere")})
    with pytest.raises(InputError, match="nowhere/retail/11.json"):
        run_job(j, NativeSettings(), log=lambda _: None)
    assert not any(tmp_path.rglob("r0.json"))


def test_hitting_the_step_limit_is_recorded_as_the_harness_limit(inputs, source_dir, tmp_path):
    from tau2.data_model.simulation import Results

    [path] = run_job(
        job(inputs, tmp_path, ["retail/11"], source_root=str(source_dir.parent)),
        NativeSettings(max_steps=4),
        log=lambda _: None,
    )
    sim = Results.load(path).simulations[0]
    assert sim.termination_reason.value == "max_steps" and sim.reward_info.reward == 0.0
    assert sim.reward_info.info["incognita"]["limit"] == "max_steps"
    row = native_trial(path)
    assert row["termination"] == "max_steps" and not row["excluded"] and row["success"] == 0.0


def test_unknown_model_family_is_refused(inputs, source_dir, tmp_path):
    from incognita.common.io import InputError

    with pytest.raises(InputError, match="unknown backend family 'vertex'"):
        run_job(
            job(inputs, tmp_path, ["retail/11"], spec="vertex:x", source_root=str(source_dir.parent)),
            NativeSettings(),
            log=lambda _: None,
        )


def test_credentials_are_redacted_from_errors(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key-123456")
    text = redact("AuthenticationError: key not-a-real-key-123456 rejected; also sk-abcdef123456 and Bearer xyz")
    assert "not-a-real-key-123456" not in text and "sk-abcdef123456" not in text and "xyz" not in text


def _gold_responder(actions: list[dict], seen: list[tuple[str, dict]]):
    """A loopback responder for task 11: the agent plays the gold actions one per turn, then
    closes; the user asks for the returns and stops once told the refunds are made."""

    def responder(model: str, request: dict):
        seen.append((model, request))
        if model == "agent-model":
            done = sum(1 for m in request["messages"] if m["role"] == "tool")
            if done < len(actions):
                a = actions[done]
                return {"tool_calls": [{"id": f"call_{done}", "name": a["name"], "arguments": a["arguments"]}]}
            return "Both returns are done; the refunds go to the payment methods you asked for."
        last = request["messages"][-1]["content"] or ""
        return "###STOP###" if "refunds go to" in last else "I would like to return everything I ordered."

    return responder


def _openai_job(
    inputs, source_dir, out: Path, agent: dict, user: dict, cache: Path, prices: Path | None = None
) -> NativeJob:
    return NativeJob(
        **{
            **job(inputs, out, ["retail/11"], source_root=str(source_dir.parent)).__dict__,
            "spec": agent,
            "customer": user,
            "cache_dir": str(cache),
            "prices": str(prices) if prices else None,
        }
    )


def test_openai_entries_run_the_harness_llm_classes_through_our_backend_and_cache(
    inputs, source_dir, tmp_path, monkeypatch
):
    """`openai:` agent and user in the harness's own LLM classes: their calls reach the server
    named by `base_url` in the entry alone (no OPENAI_BASE_URL), carry the entry's settings,
    land in our response cache, and an unchanged rerun makes no call and writes the same run."""
    from tau2.data_model.simulation import Results

    from incognita.common.loopback import LoopbackServer

    gold = next(t for t in read_json(source_dir / "tasks.json") if str(t["id"]) == "11")
    actions = gold["evaluation_criteria"]["actions"]
    seen: list[tuple[str, dict]] = []
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("MY_LOCAL_KEY", "loopback-dummy-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cache = tmp_path / "cache"
    prices = tmp_path / "prices.yaml"  # the shipped table plus a price for the agent's model
    prices.write_text((ROOT / "config/prices.yaml").read_text() + "  agent-model: {input: 1.0, output: 2.0}\n")
    with LoopbackServer(_gold_responder(actions, seen)) as server:
        entry = {
            "base_url": server.base_url,
            "api_key_env": "MY_LOCAL_KEY",
            "temperature": 0,
            "max_tokens": 99,
            "max_tokens_param": "max_tokens",
            "extra_body": {"top_k": 3},
        }
        agent = {"spec": "openai:agent-model", **entry, "reasoning_effort": "low"}
        user = {"spec": "openai:user-model", **entry}
        [first] = run_job(
            _openai_job(inputs, source_dir, tmp_path / "a", agent, user, cache, prices),
            NativeSettings(),
            log=lambda _: None,
        )
        requests = server.requests
        [second] = run_job(
            _openai_job(inputs, source_dir, tmp_path / "b", agent, user, cache, prices),
            NativeSettings(),
            log=lambda _: None,
        )
        assert server.requests == requests  # the rerun was served wholly from the cache

    results = Results.load(first)
    sim = results.simulations[0]
    facts = sim.reward_info.info["incognita"]
    assert facts["error"] is None, facts
    assert sim.reward_info.reward == 1.0 and sim.termination_reason.value == "user_stop"
    assert results.info.agent_info.implementation == "llm_agent"
    assert results.info.agent_info.llm == "incognita/agent/agent-model"
    assert results.info.user_info.implementation == "user_simulator"
    models = [m for m, _ in seen]
    assert models.count("agent-model") == len(actions) + 1 and models.count("user-model") == 2
    assert requests == len(seen)
    agent_body = next(body for m, body in seen if m == "agent-model")
    assert agent_body["max_tokens"] == 99 and agent_body["top_k"] == 3 and agent_body["temperature"] == 0.0
    assert agent_body["reasoning_effort"] == "low" and len(agent_body["tools"]) == 15
    assert facts["usage"]["agent"]["calls"] == len(actions) + 1 and facts["usage"]["user"]["calls"] == 2
    assert facts["usage"]["agent"]["cache_misses"] == len(actions) + 1
    agent_usage = facts["usage"]["agent"]
    price = (agent_usage["prompt_tokens"] * 1.0 + agent_usage["completion_tokens"] * 2.0) / 1e6
    assert agent_usage["cost_usd"] == pytest.approx(price) and price > 0
    row = native_trial(first)  # the reader prices the run from our usage, not litellm's (zero) cost
    assert row["cost_agent_usd"] == pytest.approx(price) and row["cost_episode_usd"] == pytest.approx(price)
    again = Results.load(second).simulations[0].reward_info.info["incognita"]["usage"]
    assert again["agent"]["cache_hits"] == len(actions) + 1 and again["agent"]["cache_misses"] == 0
    assert stable_native(read_json(first)) == stable_native(read_json(second))
    for path in (first, second, *cache.rglob("*.json")):
        assert "loopback-dummy-key" not in path.read_text()  # the key never reaches a record or the cache


def test_a_refused_key_stops_the_native_job(inputs, source_dir, tmp_path, monkeypatch):
    """401 is a configuration error: the job stops with one line instead of writing error runs."""
    from incognita.common.backends.base import BackendConfigError
    from incognita.common.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "loopback-dummy-key")
    with LoopbackServer(lambda model, request: "hi", faults={1: "401"}) as server:
        agent = {"spec": "openai:agent-model", "base_url": server.base_url}
        with pytest.raises(BackendConfigError, match="HTTP 401"):
            run_job(
                _openai_job(
                    inputs, source_dir, tmp_path / "a", agent, agent | {"spec": "openai:u"}, tmp_path / "cache"
                ),
                NativeSettings(),
                log=lambda _: None,
            )
    assert not list((tmp_path / "a").rglob("*.json"))


def test_an_unknown_scripted_profile_is_refused(inputs, source_dir, tmp_path):
    from incognita.common.io import InputError

    with pytest.raises(InputError, match="unknown scripted profile 'nosuch'"):
        run_job(
            job(inputs, tmp_path, ["retail/11"], spec="scripted:nosuch", source_root=str(source_dir.parent)),
            NativeSettings(),
            log=lambda _: None,
        )


def test_runs_at_once_write_the_results_of_runs_one_by_one(inputs, source_dir, tmp_path):
    """Concurrent native runs (issue #26): each run's usage and ground truth are its thread's."""
    tasks = CORPUS[:4]
    out = {}
    for workers in (1, 4):
        j = job(inputs, tmp_path / f"w{workers}", tasks, source_root=str(source_dir.parent), archive=True)
        j = NativeJob(**{**j.__dict__, "spec": "scripted:surveyor", "reps": 2})
        written = run_job(j, NativeSettings(), log=lambda _: None, workers=workers)
        out[workers] = [(p.relative_to(tmp_path / f"w{workers}"), stable_native(read_json(p))) for p in written]
    assert len(out[1]) >= 8
    assert out[1] == out[4]
    truths = [doc["simulations"][0]["reward_info"]["info"]["incognita"].get("ground_truth") for _, doc in out[4]]
    assert all(t is not None for t in truths)
