"""A scripted Shape Factory trader: sells its specialty to whoever it believes needs it, buys
what its order needs when the price is right, and falls back on making shapes itself late.

What it believes about others comes only from its observation: teammates' "I need ..."
messages, the trade events it can see, and, when its observation carries an awareness
dashboard (`state.peers`), the peers' order progress. Knobs (profile keys) and their direction:

- `activity`: task actions per turn, evenly paced (on the other turns it only talks). Higher ->
  more fulfilled slots and wealth, fewer messages per trade. An order of k slots costs a trader
  about 3k actions (buying, filling, selling to others), so at a fixed pace the larger orders of
  larger groups are the first to be left unfinished.
- `ask_rate`: chance per turn of announcing open needs. Higher -> more messages and a higher
  message_trade_ratio; sellers hear needs sooner.
- `advertise_rate`: chance per turn of advertising spare stock. Higher -> more messages.
- `sell_price`, `price_spread`: the asking price, drawn uniformly within +-spread. Higher ->
  higher average_price and, above `buy_limit`, a lower trade_accept_rate.
- `buy_limit`: the highest price it pays. Higher -> higher trade_accept_rate.
- `produce_for_sale`: specialty units kept in stock beyond known demand. Higher -> faster
  sales, more production cost (lower wealth when unsold).
- `cold_offer_rate`: chance of offering spare stock to a random teammate when, without a
  dashboard, it has heard of nobody who wants its specialty. Higher -> more proposals, lower
  trade_accept_rate.
- `patience`: the share of the run after which it makes missing shapes itself at the regular
  cost. Lower -> fewer trades, higher order fulfilment, lower average wealth.
- `offer_timeout`: simulated seconds after which it cancels its own unanswered offer. Shorter
  -> more cancelled offers, a lower trade_accept_rate.

When a message is refused with "allowed in N simulated seconds", it learns that spacing and
stops trying earlier (a rate limit costs it one rejection, not one per turn).

Without a dashboard a seller's picture of demand goes stale (the other specialist may already
have served a buyer it heard from), so some offers are declined; with one it sees each peer's
remaining order and every pending offer, so it offers only what is still wanted.
"""

from __future__ import annotations

import re

from incognita.collabsim.policies import Policy

DECIDED = ("trade_done", "offer_declined", "offer_cancelled")
WAIT = re.compile(r"allowed in (\d+) simulated seconds")


def parse_needs(text: str, shapes: list[str]) -> dict[str, int] | None:
    """{shape: count} from a message that talks about needing shapes ("I need 2 square and a
    circle"); None when the message is not about needs. "need nothing" gives {}."""
    low = text.lower()
    if "need" not in low:
        return None
    out = {}
    for shape in shapes:
        m = re.search(rf"(?:(\d+)\s+)?{re.escape(shape.lower())}s?\b", low)
        if m:
            out[shape] = int(m.group(1)) if m.group(1) else 1
    return out


def needs_text(needs: dict[str, int]) -> str:
    parts = [f"{n} {s}" for s, n in sorted(needs.items())]
    return "I need " + " and ".join(parts) + ". Offer them to me."


class ShapeTraderPolicy(Policy):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.heard: dict[str, dict[str, int]] = {}  # peer -> the needs it last announced (less what I saw it get)
        self.others: dict[int, dict] = {}  # pending offers between others that I can see
        self.in_transit: dict[str, dict[str, int]] = {}  # peer -> shapes seen bought, not yet seen used
        self.last_sent: int | None = None  # simulated second of my last accepted message
        self.gap = 0  # the least spacing between my messages that the rejections taught me
        self.said_done = False
        self.credit: float | None = None  # pacing of task actions, see paced()

    # --- reading the observation ------------------------------------------------------------
    def read(self, obs: dict) -> None:
        me, shapes = obs["you"], obs["state"]["shapes"]
        for e in obs["events"]:
            kind, actor = e.get("kind"), e.get("actor")
            if kind == "message" and actor != me:
                needs = parse_needs(str(e.get("text", "")), shapes)
                if needs is not None:
                    self.heard[actor] = needs
            elif kind == "message" and actor == me:
                self.last_sent = e["t"]
            elif kind == "message_rejected" and actor == me:
                wait = WAIT.search(str(e.get("reason", "")))
                if wait and self.last_sent is not None:  # told to wait: learn the spacing once
                    self.gap = max(self.gap, e["t"] + int(wait.group(1)) - self.last_sent)
            elif kind == "state":
                self.read_state(e, me)

    def read_state(self, e: dict, me: str) -> None:
        event = e.get("event")
        if event == "offer_made" and e["from"] != me:
            self.others[e["offer_id"]] = e
        elif event in DECIDED:
            self.others.pop(e["offer_id"], None)
        if event == "trade_done":
            self._count(self.in_transit, e["buyer"], e["shape"], +1)
            self._count(self.heard, e["buyer"], e["shape"], -1)
        elif event == "offer_declined" and e["from"] == me and e["side"] == "sell":
            self._count(self.heard, e["to"], e["shape"], -1)  # it did not want it after all
        elif event == "order_fulfilled" and e["actor"] != me:
            self._count(self.in_transit, e["actor"], e["shape"], -1)

    @staticmethod
    def _count(table: dict[str, dict[str, int]], who: str, shape: str, delta: int) -> None:
        row = table.get(who)
        if row is None and delta < 0:
            return
        row = table.setdefault(who, {})
        row[shape] = max(row.get(shape, 0) + delta, 0)

    # --- what I need, what others need ------------------------------------------------------
    @staticmethod
    def unmet(state: dict) -> dict[str, int]:
        """Open order slots not covered by stock or by units in production."""
        coming = {}
        for job in state["in_production"]:
            coming[job["shape"]] = coming.get(job["shape"], 0) + job["quantity"]
        out = {}
        for shape, n in state["order"]["remaining"].items():
            left = n - state["inventory"].get(shape, 0) - coming.get(shape, 0)
            if left > 0:
                out[shape] = left
        return out

    def demand(self, obs: dict) -> dict[str, int]:
        """Peer -> units of my specialty it still wants and nobody has offered yet."""
        state, me = obs["state"], obs["you"]
        spec = state["specialty"]
        peers = state.get("peers")
        if peers:  # the dashboard shows open slots; units bought but not yet used still count there
            want = {
                q: v["order_progress"]["remaining"].get(spec, 0) - self.in_transit.get(q, {}).get(spec, 0)
                for q, v in peers.items()
            }
        else:
            want = {q: n.get(spec, 0) for q, n in self.heard.items() if q != me}
        for o in [*state["your_offers"], *self.others.values()]:
            if o["shape"] == spec:
                buyer = o["to"] if o["side"] == "sell" else o["from"]
                if buyer in want:
                    want[buyer] -= 1
        return {q: n for q, n in sorted(want.items()) if n > 0}

    def spare(self, state: dict, shape: str) -> int:
        """Units of `shape` I hold that neither my order nor my pending sell offers claim."""
        held = state["inventory"].get(shape, 0) - state["order"]["remaining"].get(shape, 0)
        offered = sum(1 for o in state["your_offers"] if o["side"] == "sell" and o["shape"] == shape)
        return max(held - offered, 0)

    def beliefs(self) -> dict:
        """Its open slots, who it believes wants its specialty, and the move its state calls for."""
        obs = self.last_obs
        state = obs["state"]
        remaining = state["order"]["remaining"]
        slots, unmet, demand = sum(remaining.values()), self.unmet(state), self.demand(obs)
        if any(state["inventory"].get(sh, 0) for sh in remaining):
            move = "fulfil"
        elif demand and self.spare(state, state["specialty"]):
            move = "sell"
        elif unmet:
            move = "buy"
        elif demand:
            move = "produce"
        else:
            move = "wait"
        market = "others are asking for my shape" if demand else "nobody seems to need my shape just now"
        return {
            "situation": f"My order has {'no' if not slots else 'a few' if slots <= 2 else 'several'} open "
            f"slots and {market}.",
            "partners": (
                "The others are trying to buy the shapes their orders need."
                if self.heard or demand
                else "I cannot tell yet what the others need."
            ),
            "plan": {
                "fulfil": "I will fill my order with the shapes I hold.",
                "sell": "I will sell my specialty to a trader who needs it.",
                "buy": "I will buy the shapes my order still needs.",
                "produce": "I will make more of my specialty to sell.",
                "wait": "I will wait for offers.",
            }[move],
            "fields": {"open_slots": slots, "next_move": move},
            "certainty": 0.8 if not unmet else 0.6,
        }

    # --- the turn ---------------------------------------------------------------------------
    def decide(self, obs: dict) -> list[dict]:
        self.read(obs)
        actions = []
        talk = self.message(obs)
        if talk:
            actions.append(talk)
        move = self.move(obs) if self.paced() else None
        return [*actions, move or {"action": "do_nothing"}]

    def paced(self) -> bool:
        """A steady pace of `activity` task actions per turn (one every 1/activity turns, from a
        random phase), so a slow trader is slow evenly rather than in lucky or unlucky streaks."""
        if self.credit is None:
            self.credit = self.rng.random()
        self.credit += self.knob("activity", 0.15)
        if self.credit >= 1:
            self.credit -= 1
            return True
        return False

    def message(self, obs: dict) -> dict | None:
        if "message" not in obs["allowed_actions"]:
            return None
        if self.last_sent is not None and obs["t"] < self.last_sent + self.gap:
            return None
        state = obs["state"]
        asked = {}
        for o in state["offers_to_you"]:
            if o["side"] == "sell":
                asked[o["shape"]] = asked.get(o["shape"], 0) + 1
        open_needs = {s: n - asked.get(s, 0) for s, n in self.unmet(state).items() if n > asked.get(s, 0)}
        if open_needs and self.rng.random() < self.knob("ask_rate", 0.4):
            return {"action": "message", "to": "all", "text": needs_text(open_needs)}
        if not state["order"]["remaining"] and not self.said_done and self.rng.random() < self.knob("ask_rate", 0.4):
            self.said_done = True  # tells sellers who heard my needs that they are gone
            return {"action": "message", "to": "all", "text": "My order is complete; I need nothing more."}
        spec = state["specialty"]
        if self.spare(state, spec) and self.rng.random() < self.knob("advertise_rate", 0.1):
            return {
                "action": "message",
                "to": "all",
                "text": f"I make {spec} shapes and have some in stock, about {self.price(obs)} each.",
            }
        return None

    def move(self, obs: dict) -> dict | None:
        # A good offer is taken before anything else; declining waits until, past its patience,
        # the trader has started making what it still misses (so unwanted offers cannot keep it
        # from its own order).
        for step in (
            self.fulfil,
            self.accept_offer,
            self.self_produce,
            self.decline_offer,
            self.cancel_stale,
            self.sell,
            self.produce_stock,
            self.cold_offer,
        ):
            action = step(obs)
            if action:
                return action
        return None

    def fulfil(self, obs: dict) -> dict | None:
        state = obs["state"]
        for shape in state["order"]["remaining"]:
            if state["inventory"].get(shape, 0) > 0:
                return {"action": "fulfill_order", "shape": shape}
        return None

    def welcome(self, state: dict, o: dict) -> bool:
        """Whether I would take an offer made to me."""
        if o["side"] == "sell":  # they sell to me: I still miss the shape and the price suits me
            return (
                self.unmet(state).get(o["shape"], 0) > 0
                and o["price"] <= self.knob("buy_limit", 45)
                and o["price"] <= state["money"]
            )
        cost = state["costs"]["specialty" if o["shape"] == state["specialty"] else "other"]
        return self.spare(state, o["shape"]) > 0 and o["price"] > cost  # they buy: above what it cost me

    def accept_offer(self, obs: dict) -> dict | None:
        for o in sorted(obs["state"]["offers_to_you"], key=lambda o: o["offer_id"]):
            if self.welcome(obs["state"], o):
                return {"action": "trade_response", "offer_id": o["offer_id"], "accept": True}
        return None

    def decline_offer(self, obs: dict) -> dict | None:
        offers = sorted(obs["state"]["offers_to_you"], key=lambda o: o["offer_id"])
        return {"action": "trade_response", "offer_id": offers[0]["offer_id"], "accept": False} if offers else None

    def cancel_stale(self, obs: dict) -> dict | None:
        timeout = self.knob("offer_timeout", 120)
        for o in obs["state"]["your_offers"]:
            if obs["t"] - o["made_at"] >= timeout:
                return {"action": "cancel_trade_offer", "offer_id": o["offer_id"]}
        return None

    def price(self, obs: dict) -> int:
        lo, hi = obs["state"]["price_range"]
        spread = self.knob("price_spread", 6)
        ask = self.knob("sell_price", 40) + self.rng.uniform(-spread, spread)
        return int(min(max(round(ask), lo), hi))

    def offer(self, obs: dict, to: str) -> dict:
        return {
            "action": "propose_trade_offer",
            "to": to,
            "side": "sell",
            "shape": obs["state"]["specialty"],
            "price": self.price(obs),
        }

    def sell(self, obs: dict) -> dict | None:
        demand = self.demand(obs)
        if not demand or not self.spare(obs["state"], obs["state"]["specialty"]):
            return None
        return self.offer(obs, self.rng.choice(sorted(demand)))

    def produce_stock(self, obs: dict) -> dict | None:
        state = obs["state"]
        spec = state["specialty"]
        coming = sum(j["quantity"] for j in state["in_production"] if j["shape"] == spec)
        want = sum(self.demand(obs).values()) + int(self.knob("produce_for_sale", 1))
        return self._make(state, spec, want - self.spare(state, spec) - coming)

    def self_produce(self, obs: dict) -> dict | None:
        elapsed = obs["step"] / max(obs["step"] + obs["steps_left"], 1)
        if elapsed < self.knob("patience", 0.5):
            return None
        for shape, n in self.unmet(obs["state"]).items():
            action = self._make(obs["state"], shape, n)
            if action:
                return action
        return None

    def _make(self, state: dict, shape: str, wanted: int) -> dict | None:
        unit = state["costs"]["specialty" if shape == state["specialty"] else "other"]
        qty = min(wanted, state["can_start_this_step"], state["money"] // unit)
        return {"action": "produce_shape", "shape": shape, "quantity": qty} if qty > 0 else None

    def cold_offer(self, obs: dict) -> dict | None:
        """Offer spare stock to a random teammate when, without a dashboard, I know of nobody who
        wants my specialty (a guess that is often declined)."""
        state = obs["state"]
        if state.get("peers") or self.demand(obs) or not self.spare(state, state["specialty"]):
            return None
        if self.rng.random() >= self.knob("cold_offer_rate", 0.2):
            return None
        return self.offer(obs, self.rng.choice(sorted(m["id"] for m in obs["team"])))


POLICY = ShapeTraderPolicy
