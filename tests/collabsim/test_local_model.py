"""CollabSim with a real model: SmolLM2-135M behind llama.cpp's OpenAI-compatible server plays
every DayTrader player through the shared openai backend and response cache.

The model is too weak to follow the JSON answer format reliably, which is the point: its
malformed answers must become invalid_action events while the run goes on, and a rerun with
the server stopped must come wholly from the cache with a byte-identical event log.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from collabsim_paths import CONFIG
from local_server import PLAIN_FORMAT, llama_server

SHORT = """extends: baseline
variable: communication_bandwidth
description: two rounds for the local-model test, messages of at most 12 words, a probe after every turn
set:
  task_params.rounds: 2
  task_params.discussion_every: 0
  communication.max_words: 12
  probe.cadence: turn
"""


def run(root: Path, out: Path, models: dict, env: dict) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "incognita",
        "collabsim",
        "run",
        str(root / "daytrader/short.yaml"),
        "--seeds",
        "1",
        "--models",
        json.dumps(models),
        "--model-label",
        "smollm2",
        "--out-root",
        str(out),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def test_smollm2_plays_daytrader_and_the_rerun_comes_from_the_cache(tmp_path):
    root = tmp_path / "collabsim"
    shutil.copytree(CONFIG, root)
    (root / "daytrader/short.yaml").write_text(SHORT)
    env = {**os.environ, "OPENAI_API_KEY": "local", "INCOGNITA_CACHE_DIR": str(tmp_path / "cache")}
    with llama_server(tmp_path / "server.log", PLAIN_FORMAT) as base_url:  # no tools in CollabSim
        models = {
            "*": {
                "spec": "openai:smollm2-135m-instruct",
                "base_url": base_url,
                "temperature": 0,
                "max_tokens": 64,
                "max_tokens_param": "max_tokens",
                "max_retries": 1,
            }
        }
        first = run(root, tmp_path / "first", models, env)
    assert first.returncode == 0, first.stderr
    run_dir = Path("runs/daytrader/short/smollm2/persona/s1")
    events = [json.loads(line) for line in (tmp_path / "first" / run_dir / "events.jsonl").read_text().splitlines()]
    assert events[-1]["kind"] == "run_end"
    manifest = json.loads((tmp_path / "first" / run_dir / "manifest.json").read_text())
    usage = manifest["usage"]
    assert sum(u["calls"] for u in usage.values()) == 6  # 2 rounds x 3 players
    assert all(u["cache_misses"] > 0 for u in usage.values())
    problems = [e for e in events if e["kind"] in ("invalid_action", "message_rejected")]
    print(f"{len(problems)} refused answers of 6, e.g. {problems[0]['payload']['reason'] if problems else '-'}")
    probes = [e for e in events if e["kind"] in ("probe", "probe_error")]  # one probe after every turn
    assert len({e["payload"]["probe"] for e in probes}) == 6 and all(e["visibility"] == [] for e in probes)
    print(
        f"probe answers: {sum(e['kind'] == 'probe' for e in probes)}, probe errors: "
        f"{sum(e['kind'] == 'probe_error' for e in probes)}"
    )
    assert sum(u["calls"] for u in manifest["probe_usage"].values()) == len({e["payload"]["probe"] for e in probes})

    again = run(root, tmp_path / "again", models, env)  # the server is gone: only the cache can answer
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / run_dir / "events.jsonl").read_bytes() == (
        tmp_path / "first" / run_dir / "events.jsonl"
    ).read_bytes()
    usage = json.loads((tmp_path / "again" / run_dir / "manifest.json").read_text())["usage"]
    assert all(u["cache_misses"] == 0 and u["cache_hits"] == u["calls"] for u in usage.values())
    probe_usage = json.loads((tmp_path / "again" / run_dir / "manifest.json").read_text())["probe_usage"]
    assert all(u["cache_misses"] == 0 for u in probe_usage.values())
