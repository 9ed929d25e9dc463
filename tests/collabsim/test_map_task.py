"""Map Task: the map, the drawing rules, the scores, the scripted guide and follower, and the
conditions' directions. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import math
import random
from itertools import pairwise

import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.agents import make_participants
from incognita.collabsim.engine import Engine, task_rng
from incognita.collabsim.policies.map_task import Follower, Guide
from incognita.collabsim.run import events_bytes, simulate
from incognita.collabsim.tasks.map_task import (
    DEFAULTS,
    MapTask,
    cell_weight,
    leg_cells,
    make_route,
    map_task_metrics,
    place_landmarks,
    route_scores,
)
from incognita.collabsim.world.experiment import load_experiment
from incognita.collabsim.world.roster import AgentSpec
from incognita.common.io import InputError

MAP = CONFIG / "map_task"
AGENTS = (AgentSpec("guide", "guide", "scripted:default"), AgentSpec("follower", "follower", "scripted:default"))
SEEDS = range(1, 6)


class Recorder:
    """A stand-in for the engine's Context."""

    step, t = 0, 0

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def emit(self, kind, actor, payload, audience="all"):
        self.events.append((kind, actor, payload, audience))


def small_task() -> MapTask:
    """A task whose route is replaced by a hand-made one: right 3 from (5, 5), then down 2.
    Cells: (5,5) (6,5) (7,5) (8,5) (8,6) (8,7); the finish is (8,7)."""
    task = MapTask({}, AGENTS, random.Random(0))
    task.start_cell, task.legs = (5, 5), [{"direction": "right", "cells": 3}, {"direction": "down", "cells": 2}]
    task.route = leg_cells(task.start_cell, task.legs)
    return task


def act(task: MapTask, action: str, **args) -> str | None:
    problem = task.validate("follower", action, args)
    if problem is None:
        task.apply(Recorder(), "follower", action, args)
    return problem


# --- the map ----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(1, 21))
def test_the_route_is_a_simple_path_of_straight_legs_inside_the_grid(seed):
    rng = task_rng("map_task", seed)
    start, legs = make_route(DEFAULTS, rng)
    cells = leg_cells(start, legs)
    assert 60 <= len(cells) <= 120
    assert len(set(cells)) == len(cells)  # never crosses itself
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in pairwise(cells))  # 4-connected
    assert all(0 <= x < 60 and 0 <= y < 40 for x, y in cells)
    axes = ["x" if leg["direction"] in ("left", "right") else "y" for leg in legs]
    assert all(a != b for a, b in pairwise(axes))  # every leg turns
    assert all(3 <= leg["cells"] <= 12 for leg in legs)
    marks = place_landmarks(start, legs, DEFAULTS, rng)
    assert 8 <= len(marks) <= 12
    for spot in marks.values():
        assert spot not in set(cells) and 1 <= min(max(abs(spot[0] - c[0]), abs(spot[1] - c[1])) for c in cells) <= 2


def test_the_follower_map_lacks_two_landmarks_and_the_route():
    task = MapTask({}, AGENTS, task_rng("map_task", 3))
    guide, follower = task.observation("guide", ()), task.observation("follower", ())
    assert set(follower["landmarks"]) < set(guide["landmarks"])
    assert len(guide["landmarks"]) - len(follower["landmarks"]) == 2
    assert "route" not in follower and "finish" not in follower and "canvas_of" not in guide
    assert follower["start"] == guide["start"] and follower["canvas"] == []
    assert sum(leg["cells"] for leg in guide["route"]) + 1 == guide["route_length"]


def test_every_condition_of_a_seed_gets_the_same_map():
    maps = [
        simulate(load_experiment(MAP / f"{c}.yaml"), 4).events[-1]["payload"]["final_state"]["route"]
        for c in ("baseline", "communication_bandwidth", "canvas_visibility")
    ]
    assert maps[0] == maps[1] == maps[2]


# --- drawing rules ----------------------------------------------------------------------------
def test_the_first_cell_must_be_the_start_and_later_ones_must_touch_the_line():
    task = small_task()
    assert "first cell must be the start [5, 5]" in act(task, "draw", x=6, y=5)
    assert act(task, "draw", x=5, y=5) is None
    assert "already drawn" in act(task, "draw", x=5, y=5)
    assert "does not touch" in act(task, "draw", x=6, y=6)  # diagonal only
    assert "outside the 60x40 grid" in act(task, "draw", x=60, y=5)
    assert "whole numbers" in act(task, "draw", x="6", y=5)
    assert act(task, "draw", x=6, y=5) is None
    assert task.drawn() == [(5, 5), (6, 5)]


def test_erase_undo_and_reset_change_only_what_they_say():
    task = small_task()
    assert act(task, "undo") == "nothing to undo" and act(task, "reset") == "the canvas is already empty"
    for x in (5, 6, 7):
        act(task, "draw", x=x, y=5)
    assert "not drawn" in act(task, "erase", x=9, y=9)
    assert act(task, "erase", x=6, y=5) is None
    assert task.drawn() == [(5, 5), (7, 5)]
    assert act(task, "undo") is None  # reverts the erase: (6, 5) returns to its place in the order
    assert task.drawn() == [(5, 5), (6, 5), (7, 5)]
    assert act(task, "undo") is None  # reverts the draw of (7, 5)
    assert task.drawn() == [(5, 5), (6, 5)]
    assert act(task, "reset") is None and task.drawn() == [] and act(task, "undo") == "nothing to undo"


def test_the_task_is_done_when_the_finish_is_drawn():
    task = small_task()
    for x, y in [(5, 5), (6, 5), (7, 5), (8, 5), (8, 6)]:
        act(task, "draw", x=x, y=y)
    assert not task.done()
    act(task, "draw", x=8, y=7)
    assert task.done() and task.final_state()["finish_drawn"] is True


# --- scores -----------------------------------------------------------------------------------
def test_cells_weigh_three_two_one_by_chebyshev_distance():
    route = [(0, 0), (1, 0), (2, 0)]
    assert [cell_weight(c, route) for c in [(1, 0), (3, 1), (4, 2), (5, 0)]] == [3, 2, 1, 0]


def test_route_score_can_pass_one_and_precision_catches_it():
    route = [(0, 0), (1, 0)]
    scores = route_scores([(0, 0), (1, 0), (0, 1), (1, 1)], route)
    assert scores["route_score"] == pytest.approx(10 / 6)  # 3 + 3 + 2 + 2 over 3 x 2
    assert scores["route_precision"] == 0.5 and scores["route_recall"] == 1.0


def _event(kind, payload, actor="system"):
    return {"kind": kind, "actor": actor, "payload": payload}


def log(actions: list[str], messages: int, canvas: list, route: list) -> list[dict]:
    agents = [{"id": "g", "role": "guide"}, {"id": "f", "role": "follower"}]
    return (
        [_event("run_start", {"task": "map_task", "agents": agents})]
        + [_event("action", {"action": a, "args": {}}, "f") for a in actions]
        + [_event("action", {"action": "do_nothing", "args": {}}, "g")]
        + [_event("message", {"text": "hi", "words": 1}, "g") for _ in range(messages)]
        + [_event("run_end", {"final_state": {"route": route, "canvas": canvas}})]
    )


def test_metrics_on_a_hand_made_log():
    route = [[0, 0], [1, 0], [2, 0], [3, 0]]
    canvas = [[0, 0], [1, 0], [2, 1]]  # 3 + 3 + 2 = 8 of 12
    m = map_task_metrics(log(["draw", "draw", "draw", "undo", "draw", "erase", "do_nothing"], 4, canvas, route))
    assert m["route_score"] == pytest.approx(8 / 12)
    assert m["route_precision"] == pytest.approx(2 / 3) and m["route_recall"] == 0.5
    assert m["revision_rate"] == pytest.approx(2 / 6)  # undo + erase over 6 drawing actions
    assert m["communication_efficiency"] == pytest.approx(8 / 12 / 4)
    assert m["completed"] == 0.0


def test_rates_without_a_denominator_are_nan():
    m = map_task_metrics(log([], 0, [], [[0, 0], [1, 0]]))
    assert math.isnan(m["revision_rate"]) and math.isnan(m["communication_efficiency"])
    assert math.isnan(m["route_precision"]) and m["route_score"] == 0.0 and m["completed"] == 0.0


# --- scripted agents --------------------------------------------------------------------------
GUIDE_STATE = {
    "grid": {"width": 60, "height": 40},
    "start": [5, 5],
    "finish": [12, 10],
    "route_length": 13,
    "route": [{"direction": "right", "cells": 7, "to": [12, 5]}, {"direction": "down", "cells": 5, "to": [12, 10]}],
    "landmarks": {"old mill": [12, 3]},
}


def obs(state: dict, events: list, step: int = 0, you: str = "guide") -> dict:
    return {"you": you, "step": step, "state": state, "events": events}


def test_the_guide_names_landmarks_and_packs_legs_until_a_word_limit_refuses():
    guide = Guide("default", "guide", {"granularity": 16}, 1)
    first = guide.decide(obs(GUIDE_STATE, []))
    # the old mill is 2 cells above the end of the first leg, so that leg ends "to the old mill"
    assert first == [{"action": "message", "to": "all", "text": "go right 7 to the old mill, then down 5"}]
    refused = {
        "kind": "message_rejected",
        "actor": "guide",
        "reason": "9 words is over the limit of 6 words per message",
    }
    again = guide.decide(obs(GUIDE_STATE, [refused], step=1))
    assert again[0]["text"] == "right 7 to the old mill"  # 6 words: the second leg waits
    heard = {"kind": "message", "actor": "follower", "text": "done, what next?"}
    own = {"kind": "message", "actor": "guide", "text": "right 7 to the old mill"}
    assert guide.decide(obs(GUIDE_STATE, [own, heard], step=2))[0]["text"] == "go down 5"


def test_a_guide_who_sees_the_canvas_go_off_the_route_says_how_far_to_go_back():
    guide = Guide("default", "guide", {"granularity": 16, "repair": 1.0}, 1)
    guide.decide(obs(GUIDE_STATE, []))
    # the follower overshot: (13, 5) is past the corner, (13, 6) is beside the second leg
    canvas = [[5, 5], [6, 5], [7, 5], [8, 5], [9, 5], [10, 5], [11, 5], [12, 5], [13, 5], [13, 6]]
    own = {"kind": "message", "actor": "guide", "text": "go right 7 to the old mill, then down 5"}
    said = guide.decide(obs({**GUIDE_STATE, "canvas_of": {"follower": canvas}}, [own], step=3))
    assert said[0]["text"] == "no, go back 2, then down 5"  # back to (12, 5), route index 7


FOLLOWER_STATE = {
    "grid": {"width": 60, "height": 40},
    "start": [5, 5],
    "landmarks": {"old mill": [12, 3]},
    "canvas": [],
}


def draws(actions: list[dict]) -> list[tuple]:
    return [(a["x"], a["y"]) for a in actions if a["action"] == "draw"]


def test_a_careful_follower_draws_what_it_hears_four_cells_a_turn_then_answers():
    follower = Follower("default", "follower", {"slip": 0.0, "batch": 4}, 1)
    heard = {"kind": "message", "actor": "guide", "text": "go right 3, then down 2"}
    turn1 = follower.decide(obs(FOLLOWER_STATE, [heard], you="follower"))
    assert draws(turn1) == [(5, 5), (6, 5), (7, 5), (8, 5)] and len(turn1) == 4
    mine = [
        {"kind": "action", "actor": "follower", "action": "draw", "args": {"x": x, "y": y}} for x, y in draws(turn1)
    ]
    state = {**FOLLOWER_STATE, "canvas": [list(c) for c in draws(turn1)]}
    turn2 = follower.decide(obs(state, mine, step=1, you="follower"))
    assert draws(turn2) == [(8, 6), (8, 7)]
    assert turn2[-1] == {"action": "message", "to": "all", "text": "done, what next?"}


def test_a_follower_goes_back_with_undo_then_erase_when_corrected():
    follower = Follower("default", "follower", {"slip": 0.0, "check": 1.0}, 1)
    canvas = [(5, 5), (6, 5), (7, 5)]
    # its own history: drew the three cells, erased (7, 5), undid that erase
    mine = [{"kind": "action", "actor": "follower", "action": "draw", "args": {"x": x, "y": y}} for x, y in canvas]
    mine += [
        {"kind": "action", "actor": "follower", "action": "erase", "args": {"x": 7, "y": 5}},
        {"kind": "action", "actor": "follower", "action": "undo", "args": {}},
    ]
    fix = {"kind": "message", "actor": "guide", "text": "no, go back 2, then down 1"}
    state = {**FOLLOWER_STATE, "canvas": [list(c) for c in canvas]}
    actions = follower.decide(obs(state, mine + [fix], you="follower"))
    # the top of its undo history is the draw of (7, 5): undo; then the draw of (6, 5): undo again
    assert actions[:2] == [{"action": "undo"}, {"action": "undo"}]
    assert draws(actions) == [(5, 6)]


def test_a_follower_that_stops_short_of_a_named_landmark_finishes_the_move():
    follower = Follower("default", "follower", {"slip": 0.0, "check": 1.0, "batch": 10}, 1)
    # it is told 2 cells but the old mill (12, 3) stands level with x = 12, 7 cells right of the start
    heard = {"kind": "message", "actor": "guide", "text": "go right 2 to the old mill"}
    actions = follower.decide(obs(FOLLOWER_STATE, [heard], you="follower"))
    assert draws(actions) == [(5, 5), (6, 5), (7, 5), (8, 5), (9, 5), (10, 5), (11, 5), (12, 5)]


# --- whole runs -------------------------------------------------------------------------------
def means(condition: str) -> dict[str, float]:
    exp = load_experiment(MAP / f"{condition}.yaml")
    runs = [simulate(exp, s).metrics for s in SEEDS]
    return {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}


def test_the_conditions_move_the_metrics_the_way_the_paper_reports():
    base, narrow, seen = means("baseline"), means("communication_bandwidth"), means("canvas_visibility")
    assert seen["revision_rate"] > base["revision_rate"] and seen["route_score"] > base["route_score"]
    assert narrow["communication_efficiency"] < base["communication_efficiency"]
    assert narrow["messages"] > base["messages"] and narrow["rejected_messages"] >= 1
    assert base["invalid_actions"] == narrow["invalid_actions"] == seen["invalid_actions"] == 0


def test_with_a_visible_canvas_the_guide_sees_the_follower_act_and_draw():
    exp = load_experiment(MAP / "canvas_visibility.yaml")

    class Watch:
        def __init__(self, inner):
            self.inner, self.obs = inner, []

        def act(self, observation):
            self.obs.append(observation)
            return self.inner.act(observation)

        def probe(self, prompt):
            return self.inner.probe(prompt)

    people = {a: Watch(p) for a, p in make_participants(exp, 1, None, None).items()}
    events = Engine(exp, 1, people).run()
    draws_ = [e for e in events if e["kind"] == "action" and e["payload"]["action"] == "draw"]
    assert draws_ and all(e["visibility"] == ["follower", "guide"] for e in draws_)
    seen = people["guide"].obs[-1]["state"]["canvas_of"]["follower"]
    assert seen and seen[0] == events[-1]["payload"]["final_state"]["route"][0]  # the start, drawn first
    base = load_experiment(MAP / "baseline.yaml")
    plain = simulate(base, 1).events
    assert all(e["visibility"] == ["follower"] for e in plain if e["kind"] == "action" and e["actor"] == "follower")


def test_a_run_replays_byte_for_byte():
    # (how long a run takes is measured in bench/collabsim.py, not asserted here)
    exp = load_experiment(MAP / "baseline.yaml")
    assert events_bytes(simulate(exp, 2)) == events_bytes(simulate(exp, 2))


def test_bad_parameters_stop_with_the_key_named():
    with pytest.raises(InputError, match="unknown key"):
        MapTask.check_params({"widht": 60}, AGENTS, "x.yaml: task_params")
    with pytest.raises(InputError, match="one guide and one follower"):
        MapTask.check_params({}, AGENTS[:1] + AGENTS[:1], "x.yaml: task_params")
    with pytest.raises(InputError, match="no route"):
        MapTask.check_params({"width": 12, "height": 10}, AGENTS, "x.yaml: task_params")
