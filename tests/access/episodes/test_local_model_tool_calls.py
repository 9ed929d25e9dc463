"""A real model's tool calls through the gateway: SmolLM2-135M in the direct arm, shown its tools.

llama.cpp's Python server shows a request's tools only under `chatml-function-calling` and only
when the request sets `tool_choice` (docs/models.md, "Chat format"); `config/local.yaml`'s
`smollm2_tools` entry sets it. The format then lets the model choose between a message and a
call, and holds a call's arguments to the tool's schema, so the model's calls are admissible:
they pass the gateway's checks and run against the task's database. The model's guesses at
an order id are wrong, which the gateway reports back as the tool's error, and the episode goes
on to its turn budget. A separate file from the unconstrained tests so the test runner can
place it on another worker (tests/conftest.py).
"""

from __future__ import annotations

from local_server import TOOLS_FORMAT, llama_server
from workflow_helpers import (
    add_task_stages,
    copy_workflow,
    guarded_env,
    local_model_config,
    local_model_records,
    snakemake,
)

EXECUTED = ("accepted", "error")  # admissible, owned, and run against the database (records.py)


def test_smollm2_shown_its_tools_calls_them_through_the_gateway(tmp_path, task_stages):
    import pandas as pd

    wf = copy_workflow(tmp_path / "wf")
    add_task_stages(wf, task_stages)
    net_log = tmp_path / "net.log"
    env = {**guarded_env(net_log), "OPENAI_API_KEY": "local"}
    with llama_server(tmp_path / "server.log", TOOLS_FORMAT) as base_url:
        # Two turns: under greedy decoding the model's first answer is an empty message, its second a call.
        config = local_model_config(wf, base_url, models=["smollm2_tools"], arms=["direct"], budget=2)
        snakemake(wf, "results/trials.parquet", "--configfile", str(config), env=env)
    assert not net_log.exists(), net_log.read_text()

    [record] = local_model_records(wf, "smollm2_tools").values()
    assert record["error"] is None, record["error"]
    assert record["termination"] in ("final", "truncated")
    assert '"tool_choice":"auto"' in record["models"]["agent"]  # the condition is on record
    events = record["events"]
    proposals = {e["call_id"]: e for e in events if e["type"] == "tool_proposal" and e["proposer"] == "agent"}
    decisions = [e for e in events if e["type"] == "gateway_decision" and e["call_id"] in proposals]
    print([(d["tool"], d["arguments"], d["status"], d["reason"]) for d in decisions])
    executed = [d for d in decisions if d["status"] in EXECUTED and isinstance(d["arguments"], dict)]
    assert executed, f"no call of the model was run by the gateway: {decisions}"
    # The gateway's answer went back to the model as the call's result, and the episode went on.
    assert events[-1]["type"] in ("truncation", "final") and events.index(executed[0]) < len(events) - 1

    trials = pd.read_parquet(wf / "results" / "trials.parquet")
    assert len(trials) == 1 and not trials["excluded"].any()
    assert trials["action_attempted"].iloc[0]  # the reader counts the model's call as its attempt at the task
