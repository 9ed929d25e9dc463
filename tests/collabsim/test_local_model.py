"""CollabSim with a real model: SmolLM2-135M behind llama.cpp's OpenAI-compatible server plays
every DayTrader player through the shared openai backend and response cache.

The model is too weak to follow the JSON answer format reliably, which is the point: its
malformed answers must become invalid_action events while the run goes on, and a rerun with
the server stopped must come wholly from the cache with a byte-identical event log. Under
structured output (the entry's `structured_output`, answers constrained to the role's action
schema and the probe's answer schema) the same model's answers all parse, and its moves reach
the task and are played to the end of the run.
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

# One round: each of the three players answers once and is probed once, in both runs. Every call
# costs seconds of the server's CPU; a second round would repeat what the first shows.
SHORT = """extends: baseline
variable: communication_bandwidth
description: one round for the local-model test, messages of at most 12 words, a probe after every turn
set:
  task_params.rounds: 1
  task_params.discussion_every: 0
  communication.max_words: 12
  probe.cadence: turn
"""


FORMAT_ERRORS = ("not JSON", "expected {", "no action", "each action needs")


def run(root: Path, out: Path, models: dict, env: dict, condition: str = "short") -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "incognita",
        "collabsim",
        "run",
        str(root / f"daytrader/{condition}.yaml"),
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
        entry = {
            "spec": "openai:smollm2-135m-instruct",
            "base_url": base_url,
            "temperature": 0,
            "max_tokens": 64,
            "max_tokens_param": "max_tokens",
            "max_retries": 1,
        }
        models = {"*": entry}
        first = run(root, tmp_path / "first", models, env)
        # A probe's three schema-complete answers need more than 64 tokens.
        structured = {"*": {**entry, "structured_output": "json_object", "max_tokens": 256}}
        constrained = run(root, tmp_path / "structured", structured, env)
    assert first.returncode == 0, first.stderr
    assert constrained.returncode == 0, constrained.stderr
    run_dir = Path("runs/daytrader/short/smollm2/persona/s1")
    events = [json.loads(line) for line in (tmp_path / "first" / run_dir / "events.jsonl").read_text().splitlines()]
    assert events[-1]["kind"] == "run_end"
    manifest = json.loads((tmp_path / "first" / run_dir / "manifest.json").read_text())
    usage = manifest["usage"]
    assert sum(u["calls"] for u in usage.values()) == 3  # 1 round x 3 players
    assert all(u["cache_misses"] > 0 for u in usage.values())
    problems = [e for e in events if e["kind"] in ("invalid_action", "message_rejected")]
    print(f"{len(problems)} refused answers of 3, e.g. {problems[0]['payload']['reason'] if problems else '-'}")
    probes = [e for e in events if e["kind"] in ("probe", "probe_error")]  # one probe after every turn
    assert len({e["payload"]["probe"] for e in probes}) == 3 and all(e["visibility"] == [] for e in probes)
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

    # Structured output: every answer parses; refusals left are the game's (an amount over the
    # player's money, a message over the word limit), and accepted moves reach the task.
    out = tmp_path / "structured" / run_dir
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    manifest = json.loads((out / "manifest.json").read_text())
    assert events[-1]["kind"] == "run_end"
    assert all('"structured_output":"json_object"' in entry for entry in manifest["models"].values())
    refused = [e["payload"]["reason"] for e in events if e["kind"] == "invalid_action"]
    assert not [r for r in refused if r.startswith(FORMAT_ERRORS)], refused
    moves = [e for e in events if e["kind"] == "action" and e["payload"]["action"] != "do_nothing"]
    assert moves, "no move of the model reached the task"
    probe_errors = [e["payload"]["reason"] for e in events if e["kind"] == "probe_error"]
    assert not [r for r in probe_errors if r.startswith(FORMAT_ERRORS)], probe_errors
    answered = sum(len(e["payload"]["answers"]) for e in events if e["kind"] == "probe")
    asked = len({e["payload"]["probe"] for e in events if e["kind"] in ("probe", "probe_error")})
    print(f"structured: {len(moves)} moves, refused {refused}, {answered} of {3 * asked} probe answers")
    assert asked == 3 and answered >= 2 * asked  # 3 questions each; unconstrained, none parsed
