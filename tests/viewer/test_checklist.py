"""The reference panel's data (incognita.viewer.checklist): a required call no decision matched
names its closest attempt and how that attempt differs from the reference."""

from __future__ import annotations

import json
from pathlib import Path

from incognita.access.domain import split_task
from incognita.access.episodes.loop.records import EpisodeRecord
from incognita.access.reader.trial_reading import CallKeys
from incognita.common.io import read_json
from incognita.viewer.checklist import checklist

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "viewer"


def _calls(edit=None) -> list[dict]:
    doc = json.loads((FIXTURES / "episodes" / "direct" / "surveyor" / "retail" / "11" / "r0.json").read_text())
    if edit:
        edit(doc["events"])
    events = EpisodeRecord.from_dict(doc).events
    task = read_json(FIXTURES / "reference" / "retail" / "coordination.json")["tasks"][split_task("retail/11")[1]]
    return checklist(events, task, "direct", CallKeys.of("retail/11"), "retail/11")["calls"]


def _returns(events: list[dict]) -> list[int]:
    return [i for i, e in enumerate(events) if e.get("tool") == "return_delivered_order_items"]


def test_a_matched_call_has_no_closest_attempt():
    calls = _calls()
    assert all(c["at"] is not None for c in calls) and not any("closest" in c for c in calls)


def test_an_unmatched_call_names_the_attempt_nearest_it():
    def refuse_second_return(events):
        proposal, decision = _returns(events)[-2:]
        for i in (proposal, decision):
            events[i]["arguments"]["order_id"] = "#W7387997"
        events[decision].update(status="error", reason="Order not found", result=None, write=False)

    calls = _calls(refuse_second_return)
    missed = [c for c in calls if c["at"] is None]
    assert len(missed) == 1 and missed[0]["tool"] == "return_delivered_order_items"
    closest = missed[0]["closest"]
    assert closest["turn"] == 12 and closest["proposer"] == "agent" and closest["status"] == "error"
    assert closest["differences"] == [
        {"what": "order_id", "want": "#W7387996", "got": "#W7387997"},
        {"what": "status", "want": "accepted", "got": "error", "reason": "Order not found"},
    ]


def test_a_call_never_proposed_has_no_closest_attempt():
    def drop_returns(events):
        for i in reversed(_returns(events)):
            del events[i]

    missed = [c for c in _calls(drop_returns) if c["at"] is None]
    assert missed and all(c["closest"] is None for c in missed)
