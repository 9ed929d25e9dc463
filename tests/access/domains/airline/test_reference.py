"""The airline domain's coordination reference, do-nothing check and corpus (issue #54, item 4):
the reference rebuilt from the session's cards and golden trajectories covers every registered arm
and equals its frozen lock; the frozen corpus is the selection rule's on that reference; a corpus
edited by hand is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from incognita.access.arm_registry import load_arm_registry
from incognita.access.episodes.loop.agent_plan import plan_from_golden
from incognita.access.freeze import LockError, load_locks, verify_lock
from incognita.access.reference.partition import load_partition
from incognita.access.selection import corpus as cp
from incognita.access.selection.idle import passed
from incognita.cli import main
from incognita.common.io import read_json

ROOT = Path(__file__).resolve().parents[4]
CONFIG = ROOT / "config" / "domains" / "airline"
LOCKS = CONFIG / "locks.yaml"
CORPUS = CONFIG / "corpus.yaml"
RULE = yaml.safe_load((CONFIG / "domain.yaml").read_text())["corpus"]


def run(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, f"incognita {args[0]} failed:\n{res.output}\n{res.exception!r}"
    return res.output


@pytest.fixture(scope="module")
def reference(stages, tmp_path_factory) -> dict:
    """Built by the command the workflow runs, which checks it against the lock (exit 0: it matches)."""
    out = tmp_path_factory.mktemp("airline-reference") / "coordination.json"
    run("reference", "--domain", "airline", "--golden-dir", str(stages / "golden"), "--cards-dir",
        str(stages / "cards"), "--partition", str(CONFIG / "partition.yaml"), "--out", str(out),
        "--locks", str(LOCKS), "--corpus", str(CORPUS))  # fmt: skip
    return {"doc": read_json(out), "path": out}


def test_the_reference_of_all_50_tasks_matches_its_lock(reference):
    assert len(reference["doc"]["tasks"]) == 50
    run("verify-locks", "--locks", str(LOCKS), "--artifact", f"coordination={reference['path']}",
        "--artifact", f"corpus={CORPUS}")  # fmt: skip


def test_the_reference_covers_every_arm(reference):
    """Every task is projected onto every registered arm; each arm requires the task's counted calls,
    each executed by one of the arm's own holders (the agent in the direct arm)."""
    doc = reference["doc"]
    registry = load_arm_registry(ROOT / "config/arms.yaml")
    partition = load_partition(CONFIG / "partition.yaml")
    assert doc["arms"] == list(registry.names)
    for task, entry in doc["tasks"].items():
        assert set(entry["arms"]) == set(registry.names), task
        for name, arm in registry.arms.items():
            projected = entry["arms"][name]
            assert projected["n_required_calls"] == entry["n_counted"], (task, name)
            holders = arm.holder_of(partition)
            executor = {"direct": "agent"}.get(name)  # the agent holds every tool in the direct arm
            for call in projected["required_calls"]:
                assert call["executor"] in (holders[call["name"]], executor), (task, name, call["name"])
            assert set(projected["executors"]) == {c["executor"] for c in projected["required_calls"]}, (task, name)
        social = entry["arms"]["social"]
        assert entry["level"] == len(set(social["executors"])) == len(entry["desks_engaged"]), task


def test_every_airline_golden_trajectory_gives_a_scripted_plan(golden):
    """The do-nothing check and every scripted episode start from the plan: derived and unsourced
    arguments (airline's fares, bag counts, shifted dates, the one invented birth date) enter it."""
    kinds = set()
    for task, doc in golden.items():
        plan = plan_from_golden(doc)
        kinds |= {src.kind for c in plan.calls for src in c.args.values()}
        assert len(plan.calls) == sum(c["counted"] for c in doc["calls"]), task
    assert {"derived", "unsourced"} <= kinds


def test_an_agent_that_does_nothing_passes_a_task_with_no_required_call_and_fails_a_write(
    stages, reference, golden, tmp_path
):
    """The do-nothing check on airline, by its command, on two tasks the reference characterises:
    one that requires no call and tells nothing, one that requires a write of a derived value."""
    tasks = reference["doc"]["tasks"]
    silent = next(t for t, e in tasks.items() if not e["n_counted"] and not golden[t]["information_channel"])
    # A write with a derived argument: the plan of such a task is what the check first failed on.
    write = next(t for t, e in tasks.items() if e["has_write"] and '"derived"' in json.dumps(golden[t]))
    cards = tmp_path / "cards"
    cards.mkdir()
    for t in (silent, write):
        shutil.copy(stages / "cards" / f"{t}.json", cards / f"{t}.json")
    out = tmp_path / "idle.tsv"
    run("idle", "--domain", "airline", "--no-native", "--out", str(out), "--cards-dir", str(cards),
        "--golden-dir", str(stages / "golden"), "--db", str(stages / "source" / "db.json"),
        "--partition", str(CONFIG / "partition.yaml"), "--vocabulary", str(CONFIG / "vocabulary.yaml"),
        "--domain-prompts", str(CONFIG / "prompts"))  # fmt: skip
    assert passed(out) == {silent: ["direct", "indirect", "social"]}


def _idle_from_corpus(doc: dict) -> dict[str, list[str]]:
    """The do-nothing check's passes as the frozen corpus records them (task -> arms)."""
    out = {}
    for e in doc["exclusions"]:
        for reason in e["reason"].split("; "):
            if reason.startswith("arms: "):
                out[e["task"]] = reason.removeprefix("arms: ").split(", ")
    return out


def test_the_frozen_corpus_is_the_rules_selection_on_the_frozen_reference(reference):
    doc = yaml.safe_load(CORPUS.read_text())
    assert doc["selected_from"]["reference_sha256"] == load_locks(LOCKS)["coordination"]["sha256"]
    idle = _idle_from_corpus(doc)
    again = cp.select(
        reference["doc"],
        seed=RULE["seed"],
        per_level=RULE["per_level"],
        levels=RULE["levels"],
        include=RULE["include"],
        idle=idle,
    )
    for key in ("tasks", "levels", "shortfalls", "candidates", "exclusions"):
        assert doc[key] == again[key], key
    tasks = reference["doc"]["tasks"]
    # The levels are those the reference finds: every level from 1 to the highest has tasks.
    found = {e["level"] for e in tasks.values()} - {0}
    assert RULE["levels"] == list(range(1, max(found) + 1)) and found == set(RULE["levels"])
    # Each level holds min(per_level, its eligible) tasks of its own; a short level's slots go to
    # the nearest level with spare candidates; nothing a silent agent passes is in.
    per_level = RULE["per_level"]
    missing = 0
    for level in RULE["levels"]:
        own = [t for t in doc["tasks"] if tasks[t]["level"] == level]
        eligible = doc["candidates"][level]["eligible"]
        assert len(own) >= min(per_level, eligible), level
        missing += max(0, per_level - eligible)
    assert len(doc["tasks"]) == per_level * len(RULE["levels"])
    assert sum(len(s["filled_with"]) for s in doc["shortfalls"]) == missing
    assert not set(doc["tasks"]) & set(idle)
    assert all(not tasks[t]["withholds_disclosure"] and tasks[t]["match"] for t in doc["tasks"])


def test_a_corpus_edited_by_hand_is_refused(tmp_path):
    verify_lock("corpus", CORPUS, LOCKS)
    doc = yaml.safe_load(CORPUS.read_text())
    edited = tmp_path / "corpus.yaml"
    swapped = next(e["task"] for e in doc["exclusions"])
    edited.write_text(CORPUS.read_text().replace(f"'{doc['tasks'][0]}'", f"'{swapped}'", 1))
    with pytest.raises(LockError, match="changed since it was frozen"):
        verify_lock("corpus", edited, LOCKS)
