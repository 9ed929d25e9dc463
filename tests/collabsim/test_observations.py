"""observations.jsonl.gz: what each agent was shown at each turn (Section 3.1 of the CollabSim paper
logs observations beside actions and probes). Checked against the conversations the agents
actually had, which the engine does not write."""

from __future__ import annotations

import gzip
import json
from collections import Counter

from collabsim_paths import CONFIG

from incognita.collabsim.agents import make_participants
from incognita.collabsim.engine import Engine
from incognita.collabsim.paths import OBSERVATIONS, RUN_FILES
from incognita.collabsim.run import simulate, write_run
from incognita.collabsim.world.agent_prompts import render
from incognita.collabsim.world.experiment import load_experiment


def test_every_user_turn_an_agent_got_is_logged_in_order():
    exp = load_experiment(CONFIG / "shape_factory/baseline.yaml")
    participants = make_participants(exp, 2, None, None)
    engine = Engine(exp, 2, participants)
    events = engine.run()
    for agent, participant in participants.items():
        turns = [t.content for t in participant.history if t.role == "user"]
        logged = [render(o["shown"]) for o in engine.observations if o["agent"] == agent]
        assert turns and logged == turns, agent
    # Each observation sits between events and shows exactly the events since the agent's last
    # one that were visible to it.
    marks = [o["before_event"] for o in engine.observations]
    assert marks == sorted(marks) and marks[-1] <= len(events)
    last = dict.fromkeys(participants, 0)
    for o in engine.observations:
        agent = o["agent"]
        visible = [
            e for e in events[last[agent] : o["before_event"]] if e["visibility"] == "all" or agent in e["visibility"]
        ]
        assert [(e["kind"], e["actor"]) for e in visible] == [(e["kind"], e["actor"]) for e in o["shown"]["events"]]
        last[agent] = o["before_event"]


def test_the_run_writes_them_beside_the_events_and_the_manifest_counts_them(tmp_path):
    result = simulate(load_experiment(CONFIG / "daytrader/baseline.yaml"), 1)
    write_run(result, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(RUN_FILES)
    rows = [json.loads(line) for line in gzip.decompress((tmp_path / OBSERVATIONS).read_bytes()).splitlines()]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert len(rows) == manifest["observations"] > 0
    per_agent = Counter(r["agent"] for r in rows)
    assert per_agent == {a: u["calls"] for a, u in manifest["usage"].items()}  # one per turn, probes excluded
