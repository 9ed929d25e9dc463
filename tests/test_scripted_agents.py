"""Scripted evaluated agents on the real corpus: the oracle, the population, injected failures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from incognita.backends.scripted_agent import FAILURE_TYPES
from incognita.cards import build_card
from incognita.corpus import load_corpus
from incognita.golden import build_golden, load_vocabulary
from incognita.harness import Design, Harness, arm_order
from incognita.repairs import apply_overlay, load_overlay

ROOT = Path(__file__).resolve().parent.parent
ARMS = ("direct", "indirect", "social")


@pytest.fixture(scope="module")
def harness(source_dir):
    design = Design(arms=ARMS, models={}, repetitions=1, seed=20260820, budget=300,
                    customer="scripted:customer", service="scripted:desk",
                    prompts_dir=str(ROOT / "config/prompts"), scripted_agents=str(ROOT / "config/scripted_agents.yaml"))
    return Harness(design, str(source_dir / "db.json"), str(ROOT / "config/partition.yaml"))


@pytest.fixture(scope="module")
def corpus_inputs(harness, tasks, db, meta):
    """Cards (repairs applied) and golden trajectories of the frozen corpus, built in-process."""
    vocab = load_vocabulary(str(ROOT / "config/vocabulary.yaml"))
    ids = [str(t) for t in load_corpus(ROOT / "config/corpus.yaml", locks=ROOT / "config/locks.yaml")["tasks"]]
    out = {}
    for task_id in ids:
        card = build_card(tasks[task_id], db, meta)
        overlay = ROOT / "config/repairs" / f"{task_id}.yaml"
        if overlay.exists():
            card = apply_overlay(card, load_overlay(overlay), overlay)
        out[task_id] = (card, build_golden(card, harness.world, vocab))
    return out


def run(harness, model, spec, arm, task, card, golden, rep=0):
    harness.design.models[model] = spec
    return harness.run_cell(arm, model, task, rep, card, "-", golden, "-")


def test_oracle_solves_every_corpus_task_in_every_arm(harness, corpus_inputs):
    failures = []
    for task, (card, golden) in corpus_inputs.items():
        for arm in ARMS:
            r = run(harness, "oracle", "scripted:oracle", arm, task, card, golden)
            if not (r.success and r.channels["db"] and r.termination == "final"):
                failures.append((task, arm, r.channels))
    assert failures == []


def test_population_separates_only_where_holders_must_be_found(harness, corpus_inputs):
    rates = Counter()
    for model in ("surveyor", "prober", "hasty", "impatient"):
        for task, (card, golden) in corpus_inputs.items():
            for arm in ARMS:
                rates[(model, arm)] += run(harness, model, f"scripted:{model}", arm, task, card, golden).success

    def spread(arm):
        values = [rates[(m, arm)] for m in ("surveyor", "prober", "hasty", "impatient")]
        return max(values) - min(values)

    n = len(corpus_inputs)
    assert spread("direct") <= 0.2 * n and spread("indirect") <= 0.2 * n
    assert spread("social") >= 0.3 * n
    assert rates[("impatient", "social")] < rates[("surveyor", "social")]


@pytest.mark.parametrize("failure", FAILURE_TYPES)
def test_each_failure_type_can_be_injected(harness, corpus_inputs, failure):
    profiles = harness.profiles
    profiles[f"inject_{failure}"] = {"discovery": "oracle", "inject": {failure: 1.0}}
    task = next(t for t, (card, g) in corpus_inputs.items()
                if card["information_channel"]["communicate_info"] and any(c["tool_type"] == "write" for c in g["calls"])
                and any(i["provenance"] for i in g["information_channel"]))
    card, golden = corpus_inputs[task]
    r = run(harness, f"inject_{failure}", f"scripted:inject_{failure}", "social", task, card, golden)
    assert r.ground_truth["injected"] == failure
    assert r.success is False and r.termination == "final"


def test_latin_square_rotates_arm_positions():
    models = ["a", "b", "c"]
    orders = [tuple(arm_order(ARMS, models, m, t, 0)) for m in models for t in range(3)]
    for arm in ARMS:
        positions = Counter(order.index(arm) for order in orders)
        assert set(positions.values()) == {3}  # each arm takes each position equally often
