"""Concurrent model calls (`workers`): a simultaneous step's turns and the probes of several agents
at one moment go out together, and the records stay byte-identical to the sequential loop's.

Overlap is checked with a gate rather than with timings: each call waits (up to a timeout that
only a failure reaches) until the expected number of calls is in flight at once, so the peak
concurrency is an exact count.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from dataclasses import replace

import pytest
from click.testing import CliRunner
from collabsim_paths import CONFIG

from incognita.collabsim.engine import Engine
from incognita.collabsim.paths import MANIFEST, METRICS, RUN_FILES
from incognita.collabsim.run import default_workers, events_bytes, simulate, write_run
from incognita.collabsim.world.experiment import Experiment, load_experiment
from incognita.collabsim.world.roster import AgentSpec
from incognita.common.fan_out import JOB_WORKERS

TASKS = ["daytrader", "shape_factory", "hidden_profile", "map_task"]
# Every task's setup (step 0) and a state event of each task (an `events` cadence ignores the others').
STATE_EVENTS = ("setup", "round_settled", "trade_done", "vote_closed", "undone", "finish_reached")
GATE_TIMEOUT = 5.0  # seconds; reached only when the calls do not overlap as expected


def variant(task: str, turn_taking: str, cadence: str) -> Experiment:
    exp = load_experiment(CONFIG / task / "baseline.yaml")
    return replace(
        exp,
        protocol=replace(exp.protocol, turn_taking=turn_taking),
        probe=replace(exp.probe, cadence=cadence, events=STATE_EVENTS),
    )


# --- the records do not depend on workers ------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    "turn_taking, cadence",
    [("simultaneous", "action"), ("simultaneous", "turn"), ("simultaneous", "events"), ("round_robin", "events")],
)
def test_the_scripted_runs_are_byte_identical_with_one_and_eight_workers(task, turn_taking, cadence, tmp_path):
    exp = variant(task, turn_taking, cadence)
    one, eight = simulate(exp, 2), simulate(exp, 2, workers=8)
    assert any(e["kind"] == "probe" for e in one.events)
    assert events_bytes(one) == events_bytes(eight)
    write_run(one, tmp_path / "one")
    write_run(eight, tmp_path / "eight")
    for name in (METRICS, MANIFEST):  # the manifest holds no wall-clock field
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "eight" / name).read_bytes()


# --- fake participants that count their calls in flight ---------------------------------------


class Gate:
    """Counts calls in flight; the first calls wait until `want` of them are in flight at once
    (the peak only grows, so once it is reached every later call passes at once)."""

    def __init__(self, want: int) -> None:
        self.want = want
        self.cond = threading.Condition()
        self.inflight = 0
        self.peak = 0
        self.busy: set[str] = set()
        self.overlapped: list[str] = []  # agents called while a call of theirs was still out

    def __call__(self, agent: str, delay: float) -> None:
        with self.cond:
            if agent in self.busy:
                self.overlapped.append(agent)
            self.busy.add(agent)
            self.inflight += 1
            self.peak = max(self.peak, self.inflight)
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.peak >= self.want, timeout=GATE_TIMEOUT)
        time.sleep(delay)  # later agents finish first, so completion order is not agent order
        with self.cond:
            self.inflight -= 1
            self.busy.discard(agent)


class Player:
    """A DayTrader player that invests and answers probes after the gates; it keeps the order of
    the calls it received."""

    def __init__(self, agent: str, index: int, acts: Gate, probes: Gate) -> None:
        self.agent, self.index, self.acts, self.probes = agent, index, acts, probes
        self.calls: list[str] = []
        self.turns = 0

    def act(self, observation: dict) -> str:
        self.acts(self.agent, 0.005 * (4 - self.index))
        self.turns += 1
        self.calls.append(f"act {observation['step']}")
        kind = "make_group_investment" if (self.turns + self.index) % 2 else "make_individual_investment"
        return json.dumps({"action": kind, "amount": 15 + 5 * self.index + self.turns})

    def probe(self, prompt: str) -> str:
        self.probes(self.agent, 0.005 * (4 - self.index))
        self.calls.append("probe")
        n = sum(c == "probe" for c in self.calls)
        answers = [
            {"id": q, "answer": f"{self.agent} {q} {n}", "confidence": 0.5, "fields": {}}
            for q in ("situation", "partners", "plan")
        ]
        return json.dumps({"answers": answers if n % 3 else answers[:2]})  # every third probe misses a question


def four_players(turn_taking: str, cadence: str) -> Experiment:
    exp = load_experiment(CONFIG / "daytrader/baseline.yaml")
    model = exp.agents[0].model
    return replace(
        exp,
        agents=tuple(AgentSpec(a, "player", model) for a in "ABCD"),
        params={**exp.params, "rounds": 3, "discussion_every": 0},
        protocol=replace(exp.protocol, turn_taking=turn_taking),
        probe=replace(exp.probe, cadence=cadence, events=("round_settled",)),
    )


def play(exp: Experiment, workers: int, want_acts: int, want_probes: int):
    acts, probes = Gate(want_acts), Gate(want_probes)
    players = {a.id: Player(a.id, i, acts, probes) for i, a in enumerate(exp.agents)}
    events = Engine(exp, 1, players, workers=workers).run()
    assert acts.overlapped == [] and probes.overlapped == []  # one call at a time per participant
    return events, acts, probes, {a: p.calls for a, p in players.items()}


@pytest.mark.parametrize("workers, peak", [(8, 4), (2, 2), (1, 1)])
def test_a_simultaneous_step_sends_every_turn_at_once_up_to_the_workers(workers, peak):
    exp = four_players("simultaneous", "off")
    events, acts, _, calls = play(exp, workers, peak, 1)
    assert acts.peak == peak
    reference, _, _, reference_calls = play(exp, 1, 1, 1)
    assert events == reference and calls == reference_calls


def test_round_robin_turns_stay_one_at_a_time():
    events, acts, _, _ = play(four_players("round_robin", "off"), 8, 1, 1)
    assert acts.peak == 1 and events[-1]["kind"] == "run_end"


@pytest.mark.parametrize(
    "turn_taking, cadence", [("round_robin", "events"), ("simultaneous", "turn"), ("simultaneous", "action")]
)
def test_probes_of_several_agents_at_one_moment_overlap_and_keep_their_order(turn_taking, cadence):
    exp = four_players(turn_taking, cadence)
    events, _, probes, calls = play(exp, 8, 4 if turn_taking == "simultaneous" else 1, 4)
    assert probes.peak == 4
    reference, _, _, reference_calls = play(exp, 1, 1, 1)
    assert events == reference and calls == reference_calls
    probed = [e for e in events if e["kind"] in ("probe", "probe_error")]
    assert probed and any(e["kind"] == "probe_error" for e in probed)
    if turn_taking == "simultaneous":  # each probe right after its agent's turn, before the next agent's
        for e in probed:
            before = events[e["id"] - 1]
            assert before["actor"] in (e["actor"], "system") or before["kind"].startswith("probe")


def test_a_failed_call_stops_the_run():
    class Broken(Player):
        def act(self, observation: dict) -> str:
            raise RuntimeError(f"{self.agent}: the endpoint is down")

    gate = Gate(1)
    players = {a: (Broken if a == "C" else Player)(a, i, gate, gate) for i, a in enumerate("ABCD")}
    with pytest.raises(RuntimeError, match="C: the endpoint is down"):
        Engine(four_players("simultaneous", "off"), 1, players, workers=8).run()


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers"):
        Engine(four_players("simultaneous", "off"), 1, {}, workers=0)


# --- the command ------------------------------------------------------------------------------


def test_default_workers_are_the_shared_default_only_when_a_model_is_called():
    assert default_workers(load_experiment(CONFIG / "daytrader/baseline.yaml")) == 1
    real = load_experiment(CONFIG / "daytrader/baseline.yaml", {"*": "openai:gpt-4o-mini"})
    assert default_workers(real) == JOB_WORKERS


SIMULTANEOUS = """extends: baseline
variable: communication_bandwidth
description: simultaneous turns and a probe after every turn, for the workers test
set:
  task_params.rounds: 4
  protocol.turn_taking: simultaneous
  probe.cadence: turn
"""


def test_the_run_command_writes_the_same_files_for_any_workers(tmp_path):
    from incognita.cli import main

    root = tmp_path / "collabsim"
    shutil.copytree(CONFIG, root)
    (root / "daytrader/simultaneous.yaml").write_text(SIMULTANEOUS)
    files = {}
    for workers in ("1", "4"):
        out = tmp_path / f"w{workers}"
        args = ["collabsim", "run", str(root / "daytrader/simultaneous.yaml"), "--seeds", "1", "--out-root", str(out)]
        result = CliRunner().invoke(main, [*args, "--workers", workers])
        assert result.exit_code == 0, result.output
        files[workers] = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.json*"))}
    assert len(files["1"]) == len(RUN_FILES) and files["1"] == files["4"]
