"""DayTrader (Bos et al. 2002): a repeated social dilemma between private and group investment.

Each round every player invests once: individually (the amount comes back `individual_return`
times) or into the group pool, which is multiplied by `multiplier` and divided equally among
all N players, whatever N is. From round `bonus_from_round` the round's top earner(s) share a
bonus, floor(bonus / winners) each. After every `discussion_every` rounds (not after the last)
a discussion phase of `discussion_steps` steps lets players only message, to everyone.
"""

from __future__ import annotations

from incognita.collabsim.world.task import NOTHING, Context, Task, whole_number
from incognita.common.io import InputError

INDIVIDUAL, GROUP = "make_individual_investment", "make_group_investment"
DEFAULTS = {
    "rounds": 30,
    "start_money": 200,
    "min_invest": 15,
    "max_invest": 100,
    "individual_return": 2,
    "multiplier": 3,
    "bonus": 90,
    "bonus_from_round": 2,
    "discussion_every": 5,
    "discussion_steps": 1,
}


def settle(
    investments: dict[str, tuple[str, int]], players: list[str], individual_return: float, multiplier: float
) -> tuple[int, float, dict[str, float]]:
    """A round's pool, the per-player share of it, and each player's gross return.

    `investments` maps a player to (kind, amount) for those who invested. The pool is multiplied
    and divided equally among all N players, invested or not.
    """
    pool = sum(a for kind, a in investments.values() if kind == GROUP)
    share = pool * multiplier / len(players)
    returns = {
        p: share + (investments[p][1] * individual_return if investments.get(p, ("", 0))[0] == INDIVIDUAL else 0)
        for p in players
    }
    return pool, share, returns


def bonus_split(earnings: dict[str, float], bonus: int) -> dict[str, int]:
    """The round's top earner(s) share the bonus by integer division."""
    top = max(earnings.values())
    winners = sorted(p for p, e in earnings.items() if e == top)
    return {p: bonus // len(winners) for p in winners}


class DayTrader(Task):
    name = "daytrader"
    title = "DayTrader"
    actions = {"player": (INDIVIDUAL, GROUP)}
    METRICS = ("average_wealth", "net_return", "cooperation_rate", "average_pool", "rounds_played")
    DEFAULTS = DEFAULTS  # the module's table, checked by Task.check_params

    def __init__(self, params, agents, rng):
        super().__init__(params, agents, rng)
        self.players = [a.id for a in agents]
        self.money = {p: float(self.params["start_money"]) for p in self.players}
        self.round = 1
        self.discussion_left = 0
        self.pending: dict[str, tuple[str, int]] = {}
        self.decided: set[str] = set()
        self.history: list[dict] = []

    @classmethod
    def check_params(cls, params, agents, where):
        super().check_params(params, agents, where)
        p = {**DEFAULTS, **params}
        if not 0 < p["min_invest"] <= p["max_invest"]:
            raise InputError(f"{where}: need 0 < min_invest <= max_invest")
        if len(agents) < 2:
            raise InputError(f"{where}: DayTrader needs at least 2 players")

    @property
    def phase(self) -> str:
        return "discussion" if self.discussion_left else "decision"

    def start(self, ctx: Context) -> None:
        p = self.params
        ctx.emit(
            "state",
            "system",
            {
                "event": "setup",
                "start_money": p["start_money"],
                "rounds": p["rounds"],
                "multiplier": p["multiplier"],
                "individual_return": p["individual_return"],
            },
        )
        ctx.emit("phase", "system", {"phase": "decision", "round": 1})

    def allowed(self, agent: str) -> set[str]:
        if self.discussion_left or agent in self.decided:
            return {"message", NOTHING}
        return set(self.role_actions(agent))

    def messaging(self) -> str | None:
        return "broadcast" if self.discussion_left else None

    @classmethod
    def argument_schemas(cls, params, agent_ids):
        amount = whole_number(params["min_invest"], params["max_invest"])
        return {INDIVIDUAL: {"amount": amount}, GROUP: {"amount": amount}}

    def validate(self, agent, action, args):
        amount = args.get("amount")
        if not isinstance(amount, int) or isinstance(amount, bool):
            return "'amount' must be a whole number of dollars"
        lo, hi = self.params["min_invest"], self.params["max_invest"]
        if not lo <= amount <= hi:
            return f"amount {amount} is outside {lo}-{hi}"
        if amount > self.money[agent]:
            return f"amount {amount} is more than your {self.money[agent]:g}"
        return None

    def apply(self, ctx, agent, action, args):
        if action in (INDIVIDUAL, GROUP):
            self.pending[agent] = (action, args["amount"])
            self.decided.add(agent)

    def end_step(self, ctx: Context) -> None:
        if self.discussion_left:
            self.discussion_left -= 1
            if not self.discussion_left:
                ctx.emit("phase", "system", {"phase": "decision", "round": self.round})
            return
        self._settle(ctx)
        every = self.params["discussion_every"]
        if (
            self.round <= self.params["rounds"]
            and every
            and (self.round - 1) % every == 0
            and self.params["discussion_steps"]
        ):
            self.discussion_left = self.params["discussion_steps"]
            ctx.emit("phase", "system", {"phase": "discussion", "after_round": self.round - 1})
        elif self.round <= self.params["rounds"]:
            ctx.emit("phase", "system", {"phase": "decision", "round": self.round})

    def _settle(self, ctx: Context) -> None:
        p = self.params
        pool, share, returns = settle(self.pending, self.players, p["individual_return"], p["multiplier"])
        earnings = {q: returns[q] - self.pending.get(q, ("", 0))[1] for q in self.players}
        bonus = bonus_split(earnings, p["bonus"]) if self.round >= p["bonus_from_round"] else {}
        for q in self.players:
            self.money[q] += earnings[q] + bonus.get(q, 0)
        contributors = sorted(q for q, (kind, _) in self.pending.items() if kind == GROUP)
        ctx.emit(
            "state",
            "system",
            {
                "event": "round_settled",
                "round": self.round,
                "pool": pool,
                "share": share,
                "group_contributors": len(contributors),
                "bonus": bonus,
                "money": dict(self.money),
            },
        )
        self.history.append({"round": self.round, "pool": pool, "contributors": len(contributors)})
        self.pending, self.decided = {}, set()
        self.round += 1

    def done(self) -> bool:
        return self.round > self.params["rounds"]

    def observation(self, agent, observed):
        p = self.params
        view = {
            "round": min(self.round, p["rounds"]),
            "rounds": p["rounds"],
            "money": self.money[agent],
            "players": len(self.players),
            "multiplier": p["multiplier"],
            "individual_return": p["individual_return"],
            "invest_range": [p["min_invest"], p["max_invest"]],
            "decided_this_round": agent in self.decided,
            "last_round": self.history[-1] if self.history else None,
        }
        if observed:
            view["peers"] = {q: {"money": self.money[q]} for q in observed}
        return view

    def final_state(self):
        return {"rounds_played": self.round - 1, "money": dict(self.money)}

    @staticmethod
    def metrics(events):
        return daytrader_metrics(events)


def daytrader_metrics(events: list[dict]) -> dict[str, float]:
    start = next(e for e in events if e["kind"] == "run_start")
    players = [a["id"] for a in start["payload"]["agents"]]
    invest = [e for e in events if e["kind"] == "action" and e["payload"]["action"] in (INDIVIDUAL, GROUP)]
    group = [e for e in invest if e["payload"]["action"] == GROUP]
    rounds = [e["payload"] for e in events if e["kind"] == "state" and e["payload"].get("event") == "round_settled"]
    setup = next(e["payload"] for e in events if e["kind"] == "state" and e["payload"].get("event") == "setup")
    start_money = float(setup["start_money"])
    final = events[-1]["payload"]["final_state"]["money"]
    wealth = [final[p] for p in players]
    return {
        "average_wealth": sum(wealth) / len(wealth),
        "net_return": sum(w - start_money for w in wealth) / len(wealth) / start_money,
        "cooperation_rate": len(group) / len(invest) if invest else float("nan"),
        "average_pool": sum(r["pool"] for r in rounds) / len(rounds) if rounds else float("nan"),
        "rounds_played": float(len(rounds)),
    }


TASK = DayTrader
