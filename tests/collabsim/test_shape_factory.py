"""Shape Factory: dealing, production on the simulated clock, trades checked twice, orders,
metrics from events, the scripted trader's reading of its observation, and the conditions'
directions. Expected numbers are worked out by hand in each test."""

from __future__ import annotations

import math
import random
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from incognita.collabsim.policies.shape_factory import ShapeTraderPolicy, parse_needs
from incognita.collabsim.run import events_bytes, simulate
from incognita.collabsim.tasks.shape_factory import (
    ShapeFactory,
    deal,
    gini,
    shape_factory_metrics,
)
from incognita.collabsim.world.experiment import load_experiment
from incognita.collabsim.world.roster import AgentSpec
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config/collabsim/shape_factory"
SHAPES = ["circle", "square", "triangle"]


class Ctx:
    """The engine's side of the Context: a settable clock and a list of emitted events."""

    def __init__(self) -> None:
        self.step, self.t = 0, 0
        self.events: list[dict] = []

    def emit(self, kind, actor, payload, audience="all"):
        self.events.append({"kind": kind, "actor": actor, "payload": payload, "audience": audience})

    def states(self, name: str) -> list[dict]:
        return [e["payload"] for e in self.events if e["kind"] == "state" and e["payload"]["event"] == name]


def agents(n: int) -> tuple[AgentSpec, ...]:
    return tuple(AgentSpec(chr(ord("A") + i), "trader", "scripted:default") for i in range(n))


def factory(**params) -> tuple[ShapeFactory, Ctx]:
    """A 6-trader factory with A's specialty forced to circle and B's to square, orders cleared
    of surprises: A needs 2 square + 1 triangle, B needs 1 circle + 2 triangle."""
    task = ShapeFactory(params, agents(6), random.Random(1))
    task.traders["A"].specialty, task.traders["A"].order = "circle", {"square": 2, "triangle": 1}
    task.traders["B"].specialty, task.traders["B"].order = "square", {"circle": 1, "triangle": 2}
    ctx = Ctx()
    task.start(ctx)
    return task, ctx


def act(task: ShapeFactory, ctx: Ctx, agent: str, action: str, **args) -> str | None:
    """Validate then apply, as the engine does; returns the refusal reason if any."""
    reason = task.validate(agent, action, args)
    if reason is None:
        task.apply(ctx, agent, action, args)
    return reason


# --- dealing ------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [SHAPES, [*SHAPES, "rectangle"], [*SHAPES, "rectangle", "diamond"]])
def test_each_specialty_goes_to_two_traders_and_no_order_asks_for_its_holders_specialty(shapes):
    ids = [chr(ord("A") + i) for i in range(2 * len(shapes))]
    for seed in range(1, 21):
        dealt = deal(ids, shapes, len(shapes), random.Random(seed))
        assert Counter(spec for spec, _ in dealt.values()) == {s: 2 for s in shapes}
        for spec, order in dealt.values():
            assert spec not in order  # the public code's order builder gets this wrong
            assert sum(order.values()) == len(shapes)
            # len(shapes) slots over len(shapes) - 1 other shapes: every other shape once, one twice
            assert set(order) == set(shapes) - {spec}
            assert sorted(order.values()) == [1] * (len(shapes) - 2) + [2]


def test_the_same_seed_deals_the_same_materials_and_another_seed_may_not():
    ids = list("ABCDEF")
    assert deal(ids, SHAPES, 3, random.Random(5)) == deal(ids, SHAPES, 3, random.Random(5))
    assert any(deal(ids, SHAPES, 3, random.Random(5)) != deal(ids, SHAPES, 3, random.Random(s)) for s in range(6, 12))


def test_parameters_that_cannot_run_are_refused_naming_the_key():
    with pytest.raises(InputError, match="3 shapes need 6 agents"):
        ShapeFactory.check_params({"shapes": SHAPES}, agents(5), "x.yaml: task_params")
    with pytest.raises(InputError, match="unknown key"):
        ShapeFactory.check_params({"bonus": 1}, agents(6), "x.yaml: task_params")
    with pytest.raises(InputError, match="min_price"):
        ShapeFactory.check_params({"min_price": 50, "max_price": 40}, agents(6), "x.yaml: task_params")


# --- production ---------------------------------------------------------------------------
def test_production_costs_by_specialty_is_capped_per_step_and_arrives_after_the_delay():
    task, ctx = factory()
    assert act(task, ctx, "A", "produce_shape", shape="circle", quantity=2) is None  # 2 x 15
    assert act(task, ctx, "A", "produce_shape", shape="square") is None  # 1 x 40
    assert task.traders["A"].money == 200 - 30 - 40
    reason = act(task, ctx, "A", "produce_shape", shape="circle")
    assert "at most 3" in reason and "3 already" in reason
    for t in (0, 10, 20):  # ready at 0 + 30 s: not before
        ctx.t = t
        task.end_step(ctx)
        assert task.traders["A"].inventory == {}
    ctx.t = 30
    task.end_step(ctx)
    assert task.traders["A"].inventory == {"circle": 2, "square": 1}
    assert [(p["shape"], p["quantity"]) for p in ctx.states("production_done")] == [("circle", 2), ("square", 1)]
    assert task.observation("B", ("A",))["peers"]["A"]["production_number"] == 3


def test_production_the_trader_cannot_afford_is_refused_and_changes_nothing():
    task, ctx = factory()
    task.traders["A"].money = 79
    reason = act(task, ctx, "A", "produce_shape", shape="triangle", quantity=2)
    assert reason == "2 triangle cost 80, more than your 79"
    assert task.traders["A"].money == 79 and task.traders["A"].queue == []
    assert "unknown shape 'hexagon'" in act(task, ctx, "A", "produce_shape", shape="hexagon")
    assert "quantity 0" in act(task, ctx, "A", "produce_shape", shape="circle", quantity=0)


# --- trades -------------------------------------------------------------------------------
def test_an_accepted_sell_offer_moves_one_unit_and_the_price():
    task, ctx = factory()
    task.traders["B"].inventory = {"square": 1}
    assert act(task, ctx, "B", "propose_trade_offer", to="A", side="sell", shape="square", price=50) is None
    assert task.observation("A", ())["offers_to_you"][0]["offer_id"] == 1
    assert task.audience("B", "propose_trade_offer", {"to": "A"}) == ["B", "A"]
    assert act(task, ctx, "A", "trade_response", offer_id=1, accept=True) is None
    a, b = task.traders["A"], task.traders["B"]
    assert (a.money, b.money) == (150, 250)
    assert (a.inventory, b.inventory) == ({"square": 1}, {"square": 0})
    assert ctx.states("trade_done")[0]["buyer"] == "A"
    assert act(task, ctx, "A", "trade_response", offer_id=1, accept=True) == "offer 1 is already accepted"


def test_an_accepted_buy_offer_makes_the_proposer_pay():
    task, ctx = factory()
    task.traders["A"].inventory = {"circle": 2}
    assert act(task, ctx, "B", "propose_trade_offer", to="A", side="buy", shape="circle", price=30) is None
    assert act(task, ctx, "A", "trade_response", offer_id=1, accept=True) is None
    assert (task.traders["A"].money, task.traders["B"].money) == (230, 170)
    assert (task.traders["A"].inventory["circle"], task.traders["B"].inventory["circle"]) == (1, 1)


@pytest.mark.parametrize(
    "args, words",
    [
        ({"to": "A", "side": "sell", "shape": "square", "price": 14}, "price 14"),
        ({"to": "A", "side": "sell", "shape": "square", "price": 101}, "price 101"),
        ({"to": "A", "side": "sell", "shape": "square", "price": True}, "price True"),
        ({"to": "B", "side": "sell", "shape": "square", "price": 40}, "unknown trading partner 'B'"),
        ({"to": "Z", "side": "sell", "shape": "square", "price": 40}, "unknown trading partner 'Z'"),
        ({"to": ["A"], "side": "sell", "shape": "square", "price": 40}, "unknown trading partner"),
        ({"to": "A", "side": "gift", "shape": "square", "price": 40}, "side 'gift'"),
        ({"to": "A", "side": "sell", "shape": "circle", "price": 40}, "none in your inventory to sell"),
    ],
)
def test_a_bad_proposal_names_the_bad_argument(args, words):
    task, ctx = factory()
    task.traders["B"].inventory = {"square": 1}
    assert words in act(task, ctx, "B", "propose_trade_offer", **args)
    assert task.offers == []


def test_a_buy_offer_beyond_the_proposers_money_is_refused():
    task, ctx = factory()
    task.traders["B"].money = 39
    assert (
        act(task, ctx, "B", "propose_trade_offer", to="A", side="buy", shape="circle", price=40)
        == "price 40: more than your 39"
    )


def test_an_acceptance_that_can_no_longer_be_honoured_is_refused_and_the_offer_stays_open():
    task, ctx = factory()
    task.traders["B"].inventory = {"square": 1}
    act(task, ctx, "B", "propose_trade_offer", to="A", side="sell", shape="square", price=40)  # offer 1
    act(task, ctx, "B", "propose_trade_offer", to="C", side="sell", shape="square", price=45)  # offer 2
    assert act(task, ctx, "C", "trade_response", offer_id=2, accept=True) is None  # B's only square goes
    before = (task.traders["A"].money, task.traders["B"].money, dict(task.traders["A"].inventory))
    assert (
        act(task, ctx, "A", "trade_response", offer_id=1, accept=True)
        == "offer 1: B has no square in inventory to deliver"
    )
    assert (task.traders["A"].money, task.traders["B"].money, dict(task.traders["A"].inventory)) == before
    assert task.offers[0].status == "pending"
    task.traders["A"].money = 10
    task.traders["B"].inventory["square"] = 1
    assert act(task, ctx, "A", "trade_response", offer_id=1, accept=True) == "offer 1: you cannot pay 40 (money 10)"
    assert act(task, ctx, "A", "trade_response", offer_id=1, accept=False) is None  # declining always works
    assert task.offers[0].status == "declined"


def test_only_the_target_answers_and_only_the_proposer_cancels():
    task, ctx = factory()
    task.traders["B"].inventory = {"square": 1}
    act(task, ctx, "B", "propose_trade_offer", to="A", side="sell", shape="square", price=40)
    assert act(task, ctx, "C", "trade_response", offer_id=1, accept=False) == "offer 1 was made to A, not to you"
    assert act(task, ctx, "A", "trade_response", offer_id=1, accept="yes") == "accept 'yes' must be true or false"
    assert act(task, ctx, "A", "cancel_trade_offer", offer_id=1) == "offer 1 is not yours to cancel"
    assert "unknown offer_id 7" in act(task, ctx, "A", "trade_response", offer_id=7, accept=True)
    assert act(task, ctx, "B", "cancel_trade_offer", offer_id=1) is None
    assert act(task, ctx, "A", "trade_response", offer_id=1, accept=True) == "offer 1 is already cancelled"


# --- orders -------------------------------------------------------------------------------
def test_filling_a_slot_pays_the_incentive_and_a_full_order_is_complete():
    task, ctx = factory()
    a = task.traders["A"]
    a.inventory = {"square": 2, "triangle": 1, "circle": 1}
    assert act(task, ctx, "A", "fulfill_order", shape="circle") == "shape circle: your order has no open slot for it"
    for shape in ("square", "square", "triangle"):
        assert act(task, ctx, "A", "fulfill_order", shape=shape) is None
    assert a.money == 200 + 3 * 60
    assert ctx.states("order_fulfilled")[-1]["complete"] is True
    assert act(task, ctx, "A", "fulfill_order", shape="square") == "shape square: your order has no open slot for it"
    assert act(task, ctx, "B", "fulfill_order", shape="circle") == "shape circle: none in your inventory"
    assert not task.done()  # the others have not finished


def test_the_dashboard_appears_only_for_observed_peers():
    task, _ = factory()
    assert "peers" not in task.observation("A", ())
    row = task.observation("A", ("B",))["peers"]["B"]
    assert row == {
        "money": 200,
        "specialty": "square",
        "production_number": 0,
        "order_progress": {"size": 3, "filled": 0, "remaining": {"circle": 1, "triangle": 2}},
    }


# --- metrics ------------------------------------------------------------------------------
def run_events(money: dict, orders: dict, prices: list[int], offers: int, messages: int) -> list[dict]:
    ev = [{"kind": "run_start", "payload": {"agents": [{"id": a, "role": "trader"} for a in money]}}]
    ev += [{"kind": "state", "payload": {"event": "offer_made", "offer_id": i + 1}} for i in range(offers)]
    ev += [{"kind": "state", "payload": {"event": "trade_done", "price": p}} for p in prices]
    ev += [{"kind": "message", "payload": {"text": "hi"}} for _ in range(messages)]
    ev.append({"kind": "run_end", "payload": {"final_state": {"money": money, "orders": orders}}})
    return ev


def test_metrics_from_events_alone():
    m = shape_factory_metrics(
        run_events(
            {"A": 100, "B": 300},
            {"A": {"size": 3, "filled": 3}, "B": {"size": 3, "filled": 1}},
            prices=[30, 40, 50],
            offers=4,
            messages=6,
        )
    )
    assert m["average_wealth"] == 200.0
    assert m["wealth_gini"] == pytest.approx(0.25)  # |100-300| x 2 pairs / (2 x 2^2 x 200)
    assert m["trade_accept_rate"] == 0.75
    assert m["average_price"] == 40.0
    assert m["fulfilled_slots"] == 2.0
    assert m["order_fulfillment_rate"] == 0.5
    assert m["message_trade_ratio"] == 2.0


def test_rates_without_a_denominator_are_nan():
    m = shape_factory_metrics(
        run_events(
            {"A": 0, "B": 0},
            {"A": {"size": 3, "filled": 0}, "B": {"size": 3, "filled": 0}},
            prices=[],
            offers=0,
            messages=3,
        )
    )
    for key in ("trade_accept_rate", "average_price", "message_trade_ratio", "wealth_gini"):
        assert math.isnan(m[key]), key
    assert gini([5.0, 5.0, 5.0]) == 0.0


# --- the scripted trader ------------------------------------------------------------------
def test_needs_are_read_from_free_text():
    assert parse_needs("I need 2 squares and a triangle", SHAPES) == {"square": 2, "triangle": 1}
    assert parse_needs("My order is complete; I need nothing more.", SHAPES) == {}
    assert parse_needs("I make circles, 40 each", SHAPES) is None


def observation(peers: dict | None = None, events: list | None = None, t: int = 100) -> dict:
    state = {
        "money": 200,
        "specialty": "square",
        "shapes": SHAPES,
        "inventory": {"square": 2},
        "order": {"size": 3, "filled": 3, "remaining": {}},
        "in_production": [],
        "can_start_this_step": 3,
        "costs": {"specialty": 15, "other": 40},
        "incentive": 60,
        "price_range": [15, 100],
        "offers_to_you": [],
        "your_offers": [],
    }
    if peers is not None:
        state["peers"] = peers
    return {
        "you": "B",
        "step": 10,
        "t": t,
        "steps_left": 80,
        "phase": "play",
        "team": [{"id": "A"}, {"id": "C"}],
        "allowed_actions": ["message", "propose_trade_offer"],
        "state": state,
        "events": events or [],
    }


def trader(**knobs) -> ShapeTraderPolicy:
    base = {
        "activity": 1.0,
        "ask_rate": 0.0,
        "advertise_rate": 0.0,
        "cold_offer_rate": 0.0,
        "sell_price": 40,
        "price_spread": 0,
    }
    return ShapeTraderPolicy("t", "trader", {**base, **knobs}, 3)


def test_a_seller_offers_its_stock_to_a_teammate_it_heard_needs_it():
    heard = [{"t": 90, "kind": "message", "actor": "A", "text": "I need 1 square and 1 circle"}]
    actions = trader().decide(observation(events=heard))
    assert actions == [{"action": "propose_trade_offer", "to": "A", "side": "sell", "shape": "square", "price": 40}]


def test_with_a_dashboard_the_seller_trusts_order_progress_over_old_messages():
    heard = [{"t": 90, "kind": "message", "actor": "A", "text": "I need 1 square"}]
    done = {
        "money": 300,
        "specialty": "circle",
        "production_number": 0,
        "order_progress": {"size": 3, "filled": 3, "remaining": {}},
    }
    wants = {**done, "order_progress": {"size": 3, "filled": 2, "remaining": {"square": 1}}}
    assert trader().decide(observation({"A": done, "C": wants}, heard))[0]["to"] == "C"
    # C's need is already covered by another seller's pending offer that the dashboard run shows
    rival = [
        *heard,
        {
            "t": 95,
            "kind": "state",
            "actor": "D",
            "event": "offer_made",
            "offer_id": 4,
            "from": "D",
            "to": "C",
            "side": "sell",
            "shape": "square",
            "price": 35,
        },
    ]
    assert trader().decide(observation({"A": done, "C": wants}, rival)) == [{"action": "do_nothing"}]


def test_a_rate_limited_trader_learns_the_spacing_from_one_rejection():
    p = trader(ask_rate=1.0, activity=0.0)
    obs = observation()
    obs["state"]["order"] = {"size": 3, "filled": 0, "remaining": {"circle": 3}}
    assert p.decide(obs)[0]["action"] == "message"
    sent = {"t": 0, "kind": "message", "actor": "B", "text": "I need 3 circle"}
    refused = {
        "t": 10,
        "kind": "message_rejected",
        "actor": "B",
        "reason": "the next message is allowed in 50 simulated seconds",
    }
    p.decide({**obs, "t": 10, "events": [sent, refused]})
    assert p.gap == 60
    assert p.decide({**obs, "t": 50, "events": []}) == [{"action": "do_nothing"}]
    assert p.decide({**obs, "t": 60, "events": []})[0]["action"] == "message"


# --- whole runs ---------------------------------------------------------------------------
def test_solo_traders_make_their_own_orders_and_end_with_a_known_sum():
    exp = load_experiment(CONFIG / "baseline.yaml", models={"trader": "scripted:solo"})
    result = simulate(exp, 2)
    final = result.events[-1]["payload"]["final_state"]
    assert final["money"] == {a: 200 - 3 * 40 + 3 * 60 for a in "ABCDEF"}  # 3 slots made at 40, paid 60
    assert result.metrics["order_fulfillment_rate"] == 1.0
    assert math.isnan(result.metrics["trade_accept_rate"]) and result.metrics["messages"] == 0.0
    assert result.events[-1]["payload"]["steps"] < 90  # the run stops once every order is complete


def test_a_run_replays_byte_for_byte():
    exp = load_experiment(CONFIG / "awareness_dashboard.yaml")
    assert events_bytes(simulate(exp, 3)) == events_bytes(simulate(exp, 3))


@cache
def seed_metrics(condition: str) -> tuple[dict, ...]:
    exp = load_experiment(CONFIG / f"{condition}.yaml")
    return tuple(simulate(exp, s).metrics for s in range(1, 6))


def mean_metric(condition: str, key: str) -> float:
    return sum(m[key] for m in seed_metrics(condition)) / 5


def test_the_conditions_move_the_metrics_the_papers_way():
    """Appendix 9.1 / Sec. 4.3: dashboard -> more accepted offers; bandwidth limit -> fewer
    messages per trade; a larger group -> more wealth but fewer completed orders."""
    assert mean_metric("awareness_dashboard", "trade_accept_rate") > mean_metric("baseline", "trade_accept_rate")
    assert mean_metric("communication_bandwidth", "messages") < mean_metric("baseline", "messages")
    assert mean_metric("communication_bandwidth", "message_trade_ratio") < mean_metric(
        "baseline", "message_trade_ratio"
    )
    assert mean_metric("group_size_10", "average_wealth") > mean_metric("baseline", "average_wealth")
    assert mean_metric("group_size_10", "order_fulfillment_rate") < mean_metric("baseline", "order_fulfillment_rate")
