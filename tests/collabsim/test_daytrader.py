"""DayTrader's settlement, bonus and metrics against hand-computed values."""

from __future__ import annotations

import pytest
from collabsim_paths import CONFIG

from incognita.collabsim.run import simulate
from incognita.collabsim.tasks.daytrader import (
    GROUP,
    INDIVIDUAL,
    bonus_split,
    daytrader_metrics,
    settle,
)
from incognita.collabsim.world.experiment import load_experiment


def test_three_players_pool_tripled_and_divided_by_three():
    pool, share, returns = settle({"A": (GROUP, 30), "B": (GROUP, 60), "C": (INDIVIDUAL, 50)}, ["A", "B", "C"], 2, 3)
    # pool 90, x3 = 270, / 3 players = 90 each; C also gets 2 x 50 back
    assert (pool, share) == (90, 90)
    assert returns == {"A": 90, "B": 90, "C": 190}


def test_six_players_pool_divided_by_six_including_those_who_gave_nothing():
    inv = {"A": (GROUP, 60), "B": (GROUP, 60), "C": (GROUP, 60), "D": (INDIVIDUAL, 100), "F": (INDIVIDUAL, 15)}
    pool, share, returns = settle(inv, list("ABCDEF"), 2, 3)
    # pool 180, x3 = 540, / 6 = 90 each
    assert (pool, share) == (180, 90)
    assert returns == {"A": 90, "B": 90, "C": 90, "D": 290, "E": 90, "F": 120}


def test_nine_players_get_a_ninth_of_the_tripled_pool_not_the_whole_pool():
    inv = {p: (GROUP, 100) for p in "ABCDEFGHI"}
    pool, share, returns = settle(inv, list("ABCDEFGHI"), 2, 3)
    # pool 900, x3 = 2700, / 9 = 300 each (the public code would pay each player 900)
    assert (pool, share) == (900, 300)
    assert set(returns.values()) == {300}


@pytest.mark.parametrize(
    "earnings, expected",
    [
        ({"A": 60, "B": 30, "C": 140}, {"C": 90}),
        ({"A": 50, "B": 50, "C": 10, "D": 0, "E": 0, "F": 0}, {"A": 45, "B": 45}),
        ({p: 200 for p in "ABCDEFGHI"}, {p: 10 for p in "ABCDEFGHI"}),
        ({"A": 5, "B": 5, "C": 5, "D": 5, "E": 1}, {"A": 22, "B": 22, "C": 22, "D": 22}),
    ],
)
def test_the_top_earners_split_the_bonus_by_integer_division(earnings, expected):
    assert bonus_split(earnings, 90) == expected


def test_a_round_in_a_run_pays_what_the_rules_say():
    exp = load_experiment(CONFIG / "daytrader/group_size_6.yaml")
    events = simulate(exp, 2).events
    first = next(e["payload"] for e in events if e["kind"] == "state" and e["payload"].get("event") == "round_settled")
    invest = {
        e["actor"]: (e["payload"]["action"], e["payload"]["args"]["amount"])
        for e in events
        if e["kind"] == "action" and e["step"] == 0 and e["payload"]["action"] != "do_nothing"
    }
    pool = sum(a for kind, a in invest.values() if kind == GROUP)
    assert first["pool"] == pool and first["share"] == pool * 3 / 6
    for p in "ABCDEF":  # round 1 has no bonus
        kind, amount = invest.get(p, ("", 0))
        expected = 200 - amount + pool * 3 / 6 + (2 * amount if kind == INDIVIDUAL else 0)
        assert first["money"][p] == expected


def _event(kind, payload, actor="system"):
    return {"kind": kind, "actor": actor, "payload": payload}


def test_metrics_on_a_hand_made_log():
    events = [
        _event(
            "run_start", {"task": "daytrader", "agents": [{"id": "A", "role": "player"}, {"id": "B", "role": "player"}]}
        ),
        _event("state", {"event": "setup", "start_money": 200}),
        _event("action", {"action": GROUP, "args": {"amount": 50}}, "A"),
        _event("action", {"action": INDIVIDUAL, "args": {"amount": 20}}, "B"),
        _event("action", {"action": "do_nothing", "args": {}}, "B"),
        _event("state", {"event": "round_settled", "pool": 50}),
        _event("action", {"action": GROUP, "args": {"amount": 30}}, "A"),
        _event("action", {"action": GROUP, "args": {"amount": 70}}, "B"),
        _event("state", {"event": "round_settled", "pool": 100}),
        _event("run_end", {"final_state": {"money": {"A": 300, "B": 500}}}),
    ]
    m = daytrader_metrics(events)
    assert m["cooperation_rate"] == 3 / 4  # do_nothing is not an investment
    assert m["average_pool"] == 75
    assert m["average_wealth"] == 400
    assert m["net_return"] == pytest.approx(((300 - 200) + (500 - 200)) / 2 / 200)
    assert m["rounds_played"] == 2
