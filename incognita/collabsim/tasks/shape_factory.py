"""Shape Factory (CollabSim Sec. 3.4, Appendix 9.1): specialist producers who need each other.

Every trader makes one specialty shape cheaply (`specialty_cost`) and any other shape dearly
(`regular_cost`); each specialty goes to exactly two traders, so every shape has two competing
suppliers. A trader's order asks only for shapes other than its own specialty, and each slot it
fills pays `incentive`, so the cheap way to fill an order is to buy from the specialists.
Production is paced by the simulated clock: at most `max_production_per_step` units may be
started per step and a unit is ready `production_delay_sec` after it was started. Trades are
one-to-one offers (buy or sell one unit at a price in [min_price, max_price]) that the target
accepts or declines and the proposer may cancel; both are checked when made and again when
accepted, because money and stock may have moved in between. The run ends when every order is
complete or the steps run out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from incognita.collabsim.world.task import Context, Task, whole_number
from incognita.common.io import InputError

PRODUCE, PROPOSE, RESPOND, CANCEL, FULFILL = (
    "produce_shape",
    "propose_trade_offer",
    "trade_response",
    "cancel_trade_offer",
    "fulfill_order",
)
BUY, SELL = "buy", "sell"
DEFAULTS = {
    "shapes": ["circle", "square", "triangle"],
    "start_money": 200,
    "specialty_cost": 15,
    "regular_cost": 40,
    "max_production_per_step": 3,
    "production_delay_sec": 30,
    "order_size": 3,
    "incentive": 60,
    "min_price": 15,
    "max_price": 100,
}
PER_SPECIALTY = 2  # traders sharing each specialty (Sec. 3.4)


@dataclass
class Offer:
    id: int
    proposer: str
    to: str
    side: str  # BUY: the proposer pays and receives the shape; SELL: it gives the shape and is paid
    shape: str
    price: int
    made_at: int
    status: str = "pending"

    @property
    def buyer(self) -> str:
        return self.proposer if self.side == BUY else self.to

    @property
    def seller(self) -> str:
        return self.to if self.side == BUY else self.proposer

    def view(self) -> dict:
        return {
            "offer_id": self.id,
            "from": self.proposer,
            "to": self.to,
            "side": self.side,
            "shape": self.shape,
            "price": self.price,
            "made_at": self.made_at,
        }


@dataclass
class Trader:
    specialty: str
    money: int
    order: dict[str, int]  # shape -> slots ordered
    filled: dict[str, int] = field(default_factory=dict)
    inventory: dict[str, int] = field(default_factory=dict)
    queue: list[tuple[int, str, int]] = field(default_factory=list)  # (ready_at, shape, quantity)
    started_this_step: int = 0
    produced: int = 0

    def remaining(self) -> dict[str, int]:
        return {s: n - self.filled.get(s, 0) for s, n in sorted(self.order.items()) if n > self.filled.get(s, 0)}

    def complete(self) -> bool:
        return not self.remaining()


def deal(agents: list[str], shapes: list[str], order_size: int, rng) -> dict[str, tuple[str, dict[str, int]]]:
    """Specialties dealt in turn over a shuffled seating (each shape to len(agents)/len(shapes)
    traders), then each order cycles through the *other* shapes in a shuffled sequence, so an
    order never contains its holder's specialty and spreads over as many suppliers as it can."""
    seating = sorted(agents)
    rng.shuffle(seating)
    specialty = {a: shapes[i % len(shapes)] for i, a in enumerate(seating)}
    out = {}
    for a in sorted(agents):
        others = [s for s in shapes if s != specialty[a]]
        rng.shuffle(others)
        order: dict[str, int] = {}
        for i in range(order_size):
            order[others[i % len(others)]] = order.get(others[i % len(others)], 0) + 1
        out[a] = (specialty[a], dict(sorted(order.items())))
    return out


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class ShapeFactory(Task):
    name = "shape_factory"
    title = "Shape Factory"
    actions: ClassVar[dict[str, tuple[str, ...]]] = {"trader": (PRODUCE, PROPOSE, RESPOND, CANCEL, FULFILL)}
    METRICS = (
        "average_wealth",
        "wealth_gini",
        "trade_accept_rate",
        "average_price",
        "fulfilled_slots",
        "order_fulfillment_rate",
        "message_trade_ratio",
    )
    DEFAULTS = DEFAULTS  # the module's table, checked by Task.check_params

    def __init__(self, params, agents, rng):
        super().__init__(params, agents, rng)
        p = self.params
        self.shapes = list(p["shapes"])
        dealt = deal([a.id for a in agents], self.shapes, p["order_size"], rng)
        self.traders = {a: Trader(spec, p["start_money"], order) for a, (spec, order) in dealt.items()}
        self.offers: list[Offer] = []

    @classmethod
    def check_params(cls, params, agents, where):
        super().check_params(params, agents, where)
        p = {**DEFAULTS, **params}
        shapes = p["shapes"]
        if (
            not isinstance(shapes, list)
            or len(shapes) < 2
            or len(set(shapes)) != len(shapes)
            or not all(isinstance(s, str) and s for s in shapes)
        ):
            raise InputError(f"{where}: shapes must list at least 2 distinct shape names")
        if len(agents) != PER_SPECIALTY * len(shapes):
            raise InputError(
                f"{where}: each specialty goes to exactly {PER_SPECIALTY} traders, so "
                f"{len(shapes)} shapes need {PER_SPECIALTY * len(shapes)} agents (got {len(agents)})"
            )
        for key in (
            "start_money",
            "specialty_cost",
            "regular_cost",
            "max_production_per_step",
            "production_delay_sec",
            "order_size",
            "incentive",
            "min_price",
            "max_price",
        ):
            if not _whole(p[key]) or p[key] < 0:
                raise InputError(f"{where}: {key} must be a whole number >= 0")
        if p["order_size"] < 1 or p["max_production_per_step"] < 1:
            raise InputError(f"{where}: order_size and max_production_per_step must be at least 1")
        if not 0 < p["min_price"] <= p["max_price"]:
            raise InputError(f"{where}: need 0 < min_price <= max_price")

    # --- the run ----------------------------------------------------------------------------
    def start(self, ctx: Context) -> None:
        p = self.params
        ctx.emit(
            "state",
            "system",
            {
                "event": "setup",
                "shapes": list(self.shapes),
                "start_money": p["start_money"],
                "order_size": p["order_size"],
                "incentive": p["incentive"],
            },
        )
        for a, tr in self.traders.items():
            ctx.emit("private", a, {"specialty": tr.specialty, "order": dict(tr.order), "money": tr.money}, [a])
        ctx.emit("phase", "system", {"phase": "play"})

    def cost(self, agent: str, shape: str) -> int:
        key = "specialty_cost" if shape == self.traders[agent].specialty else "regular_cost"
        return self.params[key]

    def validate(self, agent, action, args):
        check = {
            PRODUCE: self._check_produce,
            PROPOSE: self._check_propose,
            RESPOND: self._check_response,
            CANCEL: self._check_cancel,
            FULFILL: self._check_fulfill,
        }[action]
        return check(agent, args)

    @classmethod
    def argument_schemas(cls, params, agent_ids):
        shape = {"type": "string", "enum": list(params["shapes"])}
        offer = whole_number(1)
        return {
            PRODUCE: {"shape": shape, "quantity": whole_number(1, params["max_production_per_step"])},
            PROPOSE: {
                "to": {"type": "string", "enum": list(agent_ids)},
                "side": {"type": "string", "enum": [BUY, SELL]},
                "shape": shape,
                "price": whole_number(params["min_price"], params["max_price"]),
            },
            RESPOND: {"offer_id": offer, "accept": {"type": "boolean"}},
            CANCEL: {"offer_id": offer},
            FULFILL: {"shape": shape},
        }

    def _check_shape(self, shape: object) -> str | None:
        return None if shape in self.shapes else f"unknown shape {shape!r} (shapes: {', '.join(self.shapes)})"

    def _check_produce(self, agent: str, args: dict) -> str | None:
        shape, qty = args.get("shape"), args.get("quantity", 1)
        me, cap = self.traders[agent], self.params["max_production_per_step"]
        if self._check_shape(shape):
            return self._check_shape(shape)
        if not _whole(qty) or qty < 1:
            return f"quantity {qty!r} must be a whole number of at least 1"
        if me.started_this_step + qty > cap:
            return f"quantity {qty}: at most {cap} units may be started per step ({me.started_this_step} already)"
        price = qty * self.cost(agent, shape)
        return f"{qty} {shape} cost {price}, more than your {me.money}" if price > me.money else None

    def _check_propose(self, agent: str, args: dict) -> str | None:
        to, side, shape, price = args.get("to"), args.get("side"), args.get("shape"), args.get("price")
        lo, hi = self.params["min_price"], self.params["max_price"]
        if not isinstance(to, str) or to not in self.traders or to == agent:
            return f"unknown trading partner {to!r}: name one teammate"
        if side not in (BUY, SELL):
            return f"side {side!r} must be 'buy' or 'sell'"
        if self._check_shape(shape):
            return self._check_shape(shape)
        if not _whole(price) or not lo <= price <= hi:
            return f"price {price!r} must be a whole number from {lo} to {hi}"
        # Only the proposer's own side is checked now: the target's money and stock are its own
        # business until it accepts (and may change before then).
        me = self.traders[agent]
        if side == BUY and me.money < price:
            return f"price {price}: more than your {me.money}"
        if side == SELL and me.inventory.get(shape, 0) < 1:
            return f"shape {shape}: none in your inventory to sell"
        return None

    def _honourable(self, offer: Offer, asking: str) -> str | None:
        """Whether the buyer can pay and the seller can deliver now (named from `asking`'s view)."""

        def who(a: str) -> str:
            return "you" if a == asking else a

        buyer, seller = self.traders[offer.buyer], self.traders[offer.seller]
        if buyer.money < offer.price:
            return f"offer {offer.id}: {who(offer.buyer)} cannot pay {offer.price} (money {buyer.money})"
        if seller.inventory.get(offer.shape, 0) < 1:
            return f"offer {offer.id}: {who(offer.seller)} has no {offer.shape} in inventory to deliver"
        return None

    def _pending(self, offer_id: object) -> Offer | str:
        if not _whole(offer_id) or not 0 < offer_id <= len(self.offers):
            return f"unknown offer_id {offer_id!r} (ids are the numbers in offers_to_you and your_offers)"
        offer = self.offers[offer_id - 1]
        return offer if offer.status == "pending" else f"offer {offer_id} is already {offer.status}"

    def _check_response(self, agent: str, args: dict) -> str | None:
        offer, accept = self._pending(args.get("offer_id")), args.get("accept")
        if isinstance(offer, str):
            return offer
        if offer.to != agent:
            return f"offer {offer.id} was made to {offer.to}, not to you"
        if not isinstance(accept, bool):
            return f"accept {accept!r} must be true or false"
        return self._honourable(offer, agent) if accept else None

    def _check_cancel(self, agent: str, args: dict) -> str | None:
        offer = self._pending(args.get("offer_id"))
        if isinstance(offer, str):
            return offer
        return None if offer.proposer == agent else f"offer {offer.id} is not yours to cancel"

    def _check_fulfill(self, agent: str, args: dict) -> str | None:
        shape, me = args.get("shape"), self.traders[agent]
        if self._check_shape(shape):
            return self._check_shape(shape)
        if me.remaining().get(shape, 0) < 1:
            return f"shape {shape}: your order has no open slot for it"
        return None if me.inventory.get(shape, 0) >= 1 else f"shape {shape}: none in your inventory"

    def audience(self, agent, action, args):
        if action == PROPOSE:
            return [agent, args["to"]]
        if action in (RESPOND, CANCEL):
            offer = self.offers[args["offer_id"] - 1]
            return [offer.proposer, offer.to]
        return [agent]

    def apply(self, ctx, agent, action, args):
        handler = {
            PRODUCE: self._produce,
            PROPOSE: self._propose,
            RESPOND: self._respond,
            CANCEL: self._cancel,
            FULFILL: self._fulfill,
        }.get(action)
        if handler:  # do_nothing reaches here too and changes nothing
            handler(ctx, agent, args)

    def _produce(self, ctx: Context, agent: str, args: dict) -> None:
        me, shape, qty = self.traders[agent], args["shape"], args.get("quantity", 1)
        cost = qty * self.cost(agent, shape)
        ready = ctx.t + self.params["production_delay_sec"]
        me.money -= cost
        me.started_this_step += qty
        me.queue.append((ready, shape, qty))
        ctx.emit(
            "state",
            agent,
            {
                "event": "production_started",
                "shape": shape,
                "quantity": qty,
                "cost": cost,
                "ready_at": ready,
                "money": me.money,
            },
            [agent],
        )

    def _propose(self, ctx: Context, agent: str, args: dict) -> None:
        offer = Offer(len(self.offers) + 1, agent, args["to"], args["side"], args["shape"], args["price"], ctx.t)
        self.offers.append(offer)
        ctx.emit("state", agent, {"event": "offer_made", **offer.view()}, [agent, offer.to])

    def _respond(self, ctx: Context, agent: str, args: dict) -> None:
        offer = self.offers[args["offer_id"] - 1]
        parties = [offer.proposer, offer.to]
        if not args["accept"]:
            offer.status = "declined"
            ctx.emit("state", agent, {"event": "offer_declined", **offer.view()}, parties)
            return
        offer.status = "accepted"
        buyer, seller = self.traders[offer.buyer], self.traders[offer.seller]
        buyer.money -= offer.price
        seller.money += offer.price
        seller.inventory[offer.shape] -= 1
        buyer.inventory[offer.shape] = buyer.inventory.get(offer.shape, 0) + 1
        ctx.emit(
            "state",
            agent,
            {"event": "trade_done", **offer.view(), "buyer": offer.buyer, "seller": offer.seller},
            parties,
        )

    def _cancel(self, ctx: Context, agent: str, args: dict) -> None:
        offer = self.offers[args["offer_id"] - 1]
        offer.status = "cancelled"
        ctx.emit("state", agent, {"event": "offer_cancelled", **offer.view()}, [offer.proposer, offer.to])

    def _fulfill(self, ctx: Context, agent: str, args: dict) -> None:
        me, shape = self.traders[agent], args["shape"]
        me.inventory[shape] -= 1
        me.filled[shape] = me.filled.get(shape, 0) + 1
        me.money += self.params["incentive"]
        ctx.emit(
            "state",
            agent,
            {
                "event": "order_fulfilled",
                "shape": shape,
                "reward": self.params["incentive"],
                "filled": sum(me.filled.values()),
                "order_size": sum(me.order.values()),
                "complete": me.complete(),
                "money": me.money,
            },
            [agent],
        )

    def end_step(self, ctx: Context) -> None:
        """Units whose ready time has come join their maker's inventory; the per-step cap resets."""
        for agent, me in self.traders.items():
            me.started_this_step = 0
            done = [job for job in me.queue if job[0] <= ctx.t]
            me.queue = [job for job in me.queue if job[0] > ctx.t]
            for _, shape, qty in done:
                me.inventory[shape] = me.inventory.get(shape, 0) + qty
                me.produced += qty
                ctx.emit(
                    "state",
                    agent,
                    {"event": "production_done", "shape": shape, "quantity": qty, "in_inventory": me.inventory[shape]},
                    [agent],
                )

    def done(self) -> bool:
        return all(tr.complete() for tr in self.traders.values())

    # --- views ------------------------------------------------------------------------------
    def observation(self, agent, observed):
        p, me = self.params, self.traders[agent]
        pending = [o for o in self.offers if o.status == "pending"]
        view = {
            "money": me.money,
            "specialty": me.specialty,
            "shapes": list(self.shapes),
            "inventory": {s: n for s, n in sorted(me.inventory.items()) if n},
            "order": {"size": sum(me.order.values()), "filled": sum(me.filled.values()), "remaining": me.remaining()},
            "in_production": [{"shape": s, "quantity": q, "ready_at": r} for r, s, q in me.queue],
            "can_start_this_step": p["max_production_per_step"] - me.started_this_step,
            "costs": {"specialty": p["specialty_cost"], "other": p["regular_cost"]},
            "incentive": p["incentive"],
            "price_range": [p["min_price"], p["max_price"]],
            "offers_to_you": [o.view() for o in pending if o.to == agent],
            "your_offers": [o.view() for o in pending if o.proposer == agent],
        }
        if observed:
            view["peers"] = {q: self._dashboard(q) for q in observed}
        return view

    def _dashboard(self, agent: str) -> dict:
        """The awareness dashboard's row for one peer (Appendix 9.1: money, production number,
        order progress and specialty)."""
        tr = self.traders[agent]
        return {
            "money": tr.money,
            "specialty": tr.specialty,
            "production_number": tr.produced,
            "order_progress": {
                "size": sum(tr.order.values()),
                "filled": sum(tr.filled.values()),
                "remaining": tr.remaining(),
            },
        }

    def final_state(self):
        trs = self.traders
        return {
            "money": {a: t.money for a, t in trs.items()},
            "specialty": {a: t.specialty for a, t in trs.items()},
            "orders": {a: {"size": sum(t.order.values()), "filled": sum(t.filled.values())} for a, t in trs.items()},
            "inventory": {a: {s: n for s, n in sorted(t.inventory.items()) if n} for a, t in trs.items()},
            "offers": {
                s: sum(o.status == s for o in self.offers) for s in ("pending", "accepted", "declined", "cancelled")
            },
        }

    @staticmethod
    def metrics(events):
        return shape_factory_metrics(events)


def gini(values: list[float]) -> float:
    """Mean absolute difference over all ordered pairs / (2 * mean); NaN when the mean is 0."""
    mean = sum(values) / len(values)
    if mean == 0:
        return float("nan")
    diffs = sum(abs(x - y) for x in values for y in values)
    return diffs / (2 * len(values) ** 2 * mean)


def shape_factory_metrics(events: list[dict]) -> dict[str, float]:
    agents = [a["id"] for a in events[0]["payload"]["agents"]]
    final = events[-1]["payload"]["final_state"]
    states = [e["payload"] for e in events if e["kind"] == "state"]
    offers = [s for s in states if s.get("event") == "offer_made"]
    trades = [s for s in states if s.get("event") == "trade_done"]
    messages = sum(e["kind"] == "message" for e in events)
    wealth = [float(final["money"][a]) for a in agents]
    filled = [final["orders"][a]["filled"] for a in agents]
    nan = float("nan")
    return {
        "average_wealth": sum(wealth) / len(wealth),
        "wealth_gini": gini(wealth),
        "trade_accept_rate": len(trades) / len(offers) if offers else nan,
        "average_price": sum(t["price"] for t in trades) / len(trades) if trades else nan,
        "fulfilled_slots": sum(filled) / len(agents),
        "order_fulfillment_rate": sum(final["orders"][a]["filled"] == final["orders"][a]["size"] for a in agents)
        / len(agents),
        "message_trade_ratio": messages / len(trades) if trades else nan,
    }


TASK = ShapeFactory
