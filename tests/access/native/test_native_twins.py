"""Native runs behind the loopback: the harness's own LLM classes, answered by the native twins,
play out as the offline scripted native run.

The twins (incognita.access.native.native_twins, handed native cells by AccessTwins as behind
bench/throughput.py) know nothing but the cell header, the served model and the request. The
runs go at once (`workers`); a repaired task also runs its archived unrepaired task, whose
agent's first requests are those of the repaired run (same seed), so some of its calls come
from the response cache and its twin replays them from the history.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tau2.data_model.simulation import Results
from workflow_helpers import scripted_harness, twin_entry

from incognita.access.episodes.loopback_twins import AccessTwins
from incognita.access.native.native_run import NativeJob, NativeSettings, run_job
from incognita.access.native.native_twins import NativeTwins
from incognita.common.io import write_json
from incognita.common.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[3]
TASKS = ("retail/11", "retail/68")  # a repaired task (with its archived unrepaired run) and an unrepaired one
MODEL, PROFILE, REPS, SEED = "bench-model", "surveyor", 2, 20260820
KEY_ENV = "INCOGNITA_NATIVE_TWINS_TEST_KEY"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, repaired_card, tasks, db, meta, source_dir) -> Path:
    """Cards, the rule-built v1 card of a repaired task, and golden files, as the stages lay them
    out under their roots (<root>/retail/<id>.json)."""
    from incognita.access.cards.card import build_card
    from incognita.access.domain import get_domain, split_task
    from incognita.access.golden.provenance import load_vocabulary
    from incognita.access.golden.trajectory import build_golden
    from incognita.access.golden.upstream_replay import World
    from incognita.access.paths import card_file, golden_file

    root = tmp_path_factory.mktemp("native_twin_inputs")
    retail = get_domain("retail")
    world = World(retail, str(source_dir / "db.json"))
    vocab = load_vocabulary(str(ROOT / "config/domains/retail/vocabulary.yaml"))
    for task in TASKS:
        domain, local = split_task(task)
        card = repaired_card(local)
        if card.get("repairs"):
            rule_built = card_file(domain, local, rule_built=True, root=root / "cards")
            write_json(rule_built, build_card(tasks[local], db, meta, retail))
        write_json(card_file(domain, local, root=root / "cards"), card)
        write_json(golden_file(domain, local, root=root / "golden"), build_golden(card, world, vocab))
    return root


def job(inputs: Path, source_dir: Path, out: Path, spec, customer, cache: Path | None = None) -> NativeJob:
    return NativeJob(
        model=MODEL,
        spec=spec,
        customer=customer,
        tasks=TASKS,
        reps=REPS,
        seed=SEED,
        arms=("direct", "indirect", "social", "native"),
        models_order=(MODEL,),
        source_root=str(source_dir.parent),
        cards_root=str(inputs / "cards"),
        golden_root=str(inputs / "golden"),
        profiles=str(ROOT / "config/scripted_agents.yaml"),
        out_dir=str(out),
        archive_unrepaired=True,
        cache_dir=str(cache) if cache else None,
    )


def simulation(path: Path) -> dict:
    """What the run did: each message's role, text and tool calls, how it ended, its reward."""
    sim = Results.load(path).simulations[0]
    return {
        "messages": [
            (m.role, m.content, [(c.id, c.name, c.arguments) for c in getattr(m, "tool_calls", None) or []])
            for m in sim.messages
        ],
        "termination": sim.termination_reason.value,
        "reward": sim.reward_info.reward,
        "error": sim.reward_info.info["incognita"]["error"],
    }


def access_twins(harness, inputs: Path) -> AccessTwins:
    """The access twins with the native twins beside them, as bench/throughput.py builds them."""
    cards, golden = inputs / "cards", inputs / "golden"
    return AccessTwins(harness, cards, golden, NativeTwins.for_harness(harness, cards, golden))


@pytest.mark.parametrize("workers", [1, 4])
def test_native_runs_through_the_twins_play_out_as_offline(inputs, source_dir, tmp_path, monkeypatch, workers):
    """One at a time, an archived unrepaired run follows its repaired run, so its first calls
    come from the cache and its twin must replay them; at once, the runs' calls interleave."""
    offline_paths = run_job(
        job(inputs, source_dir, tmp_path / "offline", f"scripted:{PROFILE}", "scripted:customer"),
        NativeSettings(),
        log=lambda _: None,
        workers=4,
    )
    harness = scripted_harness(source_dir, ("direct",), {MODEL: f"scripted:{PROFILE}"})
    twins = access_twins(harness, inputs)
    monkeypatch.setenv(KEY_ENV, "local")
    monkeypatch.setenv("INCOGNITA_PACING_DIR", str(tmp_path / "pacing"))
    with LoopbackServer(twins, with_headers=True) as server:

        def entry(model: str) -> dict:
            return twin_entry(server.base_url, model, KEY_ENV)

        online_paths = run_job(
            job(
                inputs,
                source_dir,
                tmp_path / "online",
                entry(f"scripted-{PROFILE}"),
                entry("scripted-customer"),
                tmp_path / "cache",
            ),
            NativeSettings(),
            log=lambda _: None,
            workers=workers,
        )
        answered = server.stats().answered

    rel = [p.relative_to(tmp_path / "offline") for p in offline_paths]
    assert rel == [p.relative_to(tmp_path / "online") for p in online_paths]
    assert len(rel) == (len(TASKS) + 1) * REPS  # task 11 also runs unrepaired, archived
    for offline, online, name in zip(offline_paths, online_paths, rel):
        expected = simulation(offline)
        assert expected["error"] is None and expected["termination"] == "user_stop", name
        assert simulation(online) == expected, name
        assert Results.load(online).info.agent_info.implementation == "llm_agent"
    # Every call was answered by a twin or by the cache, each run's under its own cell.
    usage = [Results.load(p).simulations[0].reward_info.info["incognita"]["usage"] for p in online_paths]
    misses = sum(u[role]["cache_misses"] for u in usage for role in ("agent", "user"))
    assert answered == misses == sum(twins.calls.values())
    cells = {json.loads(key)["overlay"] for key in twins.calls}
    assert len(twins.calls) == len(rel) and cells == {0, 1}
    # Each twin took in every call of its run's role, those the cache answered included (replayed).
    seen = {(json.loads(key)["task"], json.loads(key)["rep"], json.loads(key)["overlay"], role): twin.answered
            for (key, role), twin in twins.native._twins.items()}  # fmt: skip
    for path, u in zip(online_paths, usage):
        facts = Results.load(path).simulations[0].reward_info.info["incognita"]
        for role in ("agent", "user"):
            calls = u[role]["calls"]
            assert seen[(facts["task"], facts["rep"], facts["overlay_version"], role)] == calls, (path, role)
    if workers == 1:  # each archived run's first agent call was its repaired run's: a twin replayed it
        hits = {str(name): sum(u[role]["cache_hits"] for role in u) for name, u in zip(rel, usage)}
        assert all(n > 0 for name, n in hits.items() if name.startswith("archive/")), hits


def test_a_native_call_the_twins_cannot_place_is_refused_with_its_reason(inputs, source_dir):
    harness = scripted_harness(source_dir, ("direct",), {MODEL: f"scripted:{PROFILE}"})
    twins = access_twins(harness, inputs)
    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "Hi"}], "tools": []}
    cell = {
        "family": "access",
        "arm": "native",
        "model": MODEL,
        "task": TASKS[0],
        "rep": 0,
        "overlay": 1,
        "role": "user",
    }

    def ask(model: str, **change) -> dict:
        return twins(model, body, {"x-incognita-cell": json.dumps({**cell, **change})})

    with pytest.raises(ValueError, match="needs model, task, rep and overlay"):
        ask("scripted-customer", task=None, rep="first")
    with pytest.raises(ValueError, match="served as scripted-customer, not scripted-surveyor"):
        ask("scripted-surveyor")
    with pytest.raises(ValueError, match="roles agent and user, not 'USER'"):
        ask("scripted-customer", role="USER")
    with pytest.raises(ValueError, match="no card of overlay version 7"):
        ask("scripted-customer", overlay=7)
    with pytest.raises(ValueError, match="seed 5 is not the run's seed"):
        twins("scripted-surveyor", {**body, "seed": 5}, {"x-incognita-cell": json.dumps({**cell, "role": "agent"})})
    assert ask("scripted-customer")["content"]  # the card's opening line
    with pytest.raises(ValueError, match="its twin is customer"):
        ask("scripted-other")
