"""Turn-taking of the shipped designs (docs/collabsim.md, "Turn-taking"): every task runs its
steps simultaneously, as the paper's turn loop does (Sec. 3.1; Shape Factory's "triggers all
agents every 10 seconds", Appendix 9.1). No turn sees what a teammate did in the same step, and
with `workers` > 1 a step's turns are in flight together (Appendix 8)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.agents import make_participants
from incognita.collabsim.engine import Engine
from incognita.collabsim.run import simulate
from incognita.collabsim.world.experiment import load_experiment
from incognita.collabsim.world.task import TASKS

# Every experiment file of the default design: each task's baseline and its conditions.
FILES = sorted(p for task in TASKS for p in (CONFIG / task).glob("*.yaml"))
GATE_TIMEOUT = 2.0  # seconds; reached only when a step's turns do not overlap


def test_the_design_has_every_tasks_files():
    assert {p.parent.name for p in FILES} == set(TASKS) and len(FILES) == 14


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_turn_of_a_shipped_design_sees_a_teammates_move_of_the_same_step(path):
    exp = load_experiment(path)
    assert exp.protocol.turn_taking == "simultaneous"
    agents = {a.id for a in exp.agents}
    seen_earlier = 0
    for obs in simulate(exp, 1).observations:
        shown, teammates = obs["shown"], agents - {obs["agent"]}
        moves = [e for e in shown["events"] if e["actor"] in teammates]
        assert [e for e in moves if e["t"] == shown["t"]] == [], (obs["agent"], obs["step"])
        seen_earlier += len(moves)
    assert seen_earlier > 0  # teammates' moves do arrive, a step later


class Gated:
    """A participant whose turns wait (at most GATE_TIMEOUT) until `want` turns are in flight."""

    def __init__(self, inner, state: dict, cond: threading.Condition) -> None:
        self.inner, self.state, self.cond = inner, state, cond

    def act(self, observation: dict) -> str:
        with self.cond:
            self.state["inflight"] += 1
            self.state["peak"] = max(self.state["peak"], self.state["inflight"])
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.state["peak"] >= self.state["want"], timeout=GATE_TIMEOUT)
        try:
            return self.inner.act(observation)
        finally:
            with self.cond:
                self.state["inflight"] -= 1

    def probe(self, prompt: str) -> str:
        return self.inner.probe(prompt)


def test_a_shipped_steps_turns_are_in_flight_together():
    exp = load_experiment(CONFIG / "shape_factory/baseline.yaml")
    exp = replace(exp, protocol=replace(exp.protocol, max_steps=1))
    state, cond = {"inflight": 0, "peak": 0, "want": len(exp.agents)}, threading.Condition()
    participants = {a: Gated(p, state, cond) for a, p in make_participants(exp, 1, None, None).items()}
    events = Engine(exp, 1, participants, workers=len(exp.agents)).run()
    assert state["peak"] == len(exp.agents) == 6
    reference = Engine(exp, 1, make_participants(exp, 1, None, None)).run()
    assert events == reference  # the same records as one call at a time
