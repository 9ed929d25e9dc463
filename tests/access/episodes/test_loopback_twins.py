"""Access-family twins behind the loopback: a job's cells run through the openai client against
scripted twins write the records the offline scripted run writes.

The twins (incognita.access.episodes.loopback_twins) know nothing but the cell header and the
served model, as they do behind bench/throughput.py; the cells run at once (`workers`), so the
twins are asked for several cells concurrently, and two repetitions make the customer's first
request the same in both (send_seed keeps them apart in the response cache).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from workflow_helpers import retail_inputs, twin_entry

from incognita.access.episodes.harness import Harness, HarnessSettings
from incognita.access.episodes.loopback_twins import AccessTwins
from incognita.access.taxonomy import HARNESS_ARMS as ARMS
from incognita.common.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[3]
TASK, MODEL, PROFILE, REPS = "retail/59", "bench-model", "surveyor", 2
KEY_ENV = "INCOGNITA_TWINS_TEST_KEY"
# What differs between the two runs of a cell: the clock, the call counters (cache hits, tokens,
# cost), the model entries as configured, and what only a scripted agent in the process can tell.
VOLATILE = ("wall_time_s", "usage", "models", "ground_truth")


def design(models: dict, customer, service) -> HarnessSettings:
    return HarnessSettings(
        arms=ARMS,
        models=models,
        repetitions=REPS,
        seed=20260820,
        budget=300,
        customer=customer,
        service=service,
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )


@pytest.fixture(scope="module")
def harness(source_dir):
    offline = design({MODEL: f"scripted:{PROFILE}"}, "scripted:customer", "scripted:desk")
    return Harness(offline, retail_inputs(source_dir))


@pytest.fixture(scope="module")
def inputs(task_inputs, tmp_path_factory) -> Path:
    return task_inputs(tmp_path_factory.mktemp("inputs"), [TASK.split("/")[1]])


def run(harness: Harness, inputs: Path, out: Path, workers: int) -> dict[str, dict]:
    paths = harness.run_blocks(
        MODEL, TASK, REPS, str(inputs / "cards" / f"{TASK}.json"), str(inputs / "golden" / f"{TASK}.json"),
        str(out), task_position=0, models_order=[MODEL], workers=workers,
    )  # fmt: skip
    return {str(p.relative_to(out)): json.loads(p.read_text()) for p in paths}


def stable(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in VOLATILE}


def test_cells_through_the_twins_write_the_offline_records(harness, inputs, tmp_path, monkeypatch):
    offline = run(harness, inputs, tmp_path / "offline", workers=1)

    twins = AccessTwins(harness, inputs / "cards", inputs / "golden")
    monkeypatch.setenv(KEY_ENV, "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    with LoopbackServer(twins, with_headers=True) as server:

        def entry(model: str) -> dict:
            return twin_entry(server.base_url, model, KEY_ENV)

        served = design({MODEL: entry(f"scripted-{PROFILE}")}, entry("scripted-customer"), entry("scripted-desk"))
        saved, harness.design = harness.design, dataclasses.replace(served, cache_dir=str(tmp_path / "cache"))
        try:
            online = run(harness, inputs, tmp_path / "online", workers=len(ARMS) * REPS)
        finally:
            harness.design = saved
        answered = server.stats().answered

    assert online.keys() == offline.keys() and len(online) == len(ARMS) * REPS
    for path, doc in online.items():
        assert doc["error"] is None and doc["termination"] == "final", path
        assert stable(doc) == stable(offline[path]), path
        assert json.loads(doc["models"]["customer"])["spec"] == "openai:scripted-customer"
    # Every call reached a twin (none came from the cache), each cell's calls under its own header.
    calls = {path: sum(u["calls"] for u in doc["usage"].values()) for path, doc in online.items()}
    assert answered == sum(calls.values()) == sum(twins.calls.values())
    assert sorted(twins.calls.values()) == sorted(calls.values())
    assert all(u["cache_hits"] == 0 for doc in online.values() for u in doc["usage"].values())


def test_a_request_the_twins_cannot_place_is_refused_with_its_reason(harness, inputs):
    twins = AccessTwins(harness, inputs / "cards", inputs / "golden")
    body = {"model": "scripted-customer", "messages": [{"role": "system", "content": "s"}]}
    with pytest.raises(ValueError, match="send_cell: true"):
        twins("scripted-customer", body, {})
    cell = {"family": "access", "arm": "direct", "model": MODEL, "task": TASK, "rep": 0, "role": "USER"}
    header = {"x-incognita-cell": json.dumps(cell)}
    with pytest.raises(ValueError, match="served as scripted-customer"):
        twins("scripted-desk", body, header)
    with pytest.raises(ValueError, match="scripted-<profile>"):
        twins("gpt-5", body, header)
    with pytest.raises(ValueError, match="not a cell of the access family"):
        twins("scripted-customer", body, {"x-incognita-cell": json.dumps({**cell, "family": "collabsim"})})
    desk = {**cell, "role": "Aster"}
    with pytest.raises(ValueError, match="no service participant 'Aster'"):
        twins("scripted-desk", body, {"x-incognita-cell": json.dumps(desk)})
    native = {**cell, "arm": "native", "overlay": 1, "role": "user"}
    with pytest.raises(ValueError, match="given no native responder"):
        twins("scripted-customer", body, {"x-incognita-cell": json.dumps(native)})
