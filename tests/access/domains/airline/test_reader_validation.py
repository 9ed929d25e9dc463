"""Airline's hand-labelled reader fixtures (config/domains/airline/reader_validation/) are built on
real tasks: their reference is what the reference stage builds for those tasks from the airline
golden trajectories and holder maps, and they cover the tasks the definitions treat specially.
(The reader's agreement with them is checked with every domain's set, tests/access/reader/
test_validation.py.)"""

from __future__ import annotations

from pathlib import Path

from incognita.access.domain import domain_files, local_id
from incognita.access.reader.validation import load_labelled
from incognita.access.reference.coordination import build_reference
from incognita.common.io import read_json

ROOT = Path(__file__).resolve().parents[4]
LABELLED = domain_files("airline", ROOT / "config/domains").reader_validation


def test_the_fixtures_reference_is_the_reference_stage_s(stages):
    """A change to the airline golden rules or holder maps that moves a fixture's task fails here,
    so its label is re-examined instead of being scored against a stale reference."""
    built = build_reference(stages / "golden", stages / "cards", ROOT / "config/domains/airline/partition.yaml")
    frozen = read_json(LABELLED / "reference.json")
    assert frozen["tasks"], "no tasks in the fixtures' reference"
    for task, entry in frozen["tasks"].items():
        assert entry == built["tasks"][task], f"reference.json: task {task} differs from the reference stage's"
    assert frozen["partition"] == built["partition"] and frozen["arms"] == built["arms"]


def test_the_fixtures_spread_over_tasks_including_one_without_action_and_a_derived_argument(golden):
    _, fixtures = load_labelled(LABELLED, "airline")
    tasks = {local_id(f.task) for f in fixtures}
    assert len(fixtures) >= 12 and len(tasks) >= 8
    # A task whose reference requires no action (a refusal such as 48, or a question such as 3): its
    # golden trajectory writes nothing and hands nothing off.
    refusals = {t for t in tasks if not any(c["tool_type"] == "write" or c["name"] == "transfer_to_human_agents"
                                            for c in golden[t]["calls"])}  # fmt: skip
    assert {f.expected for f in fixtures if local_id(f.task) in refusals} >= {"success", "delivered_incorrect"}
    # A task whose golden has an argument derived from reads (an amount, a bag count).
    derived = {t for t in tasks for c in golden[t]["calls"] for p in c["provenance"].values() if p["kind"] == "derived"}
    assert len({f.expected for f in fixtures if local_id(f.task) in derived}) >= 4
