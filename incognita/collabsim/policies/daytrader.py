"""A conditional cooperator for DayTrader.

Knobs (profile keys): `cooperation` (the base chance of investing in the group pool),
`reciprocity` (how much the share of contributors seen in the last settlement moves that
chance), `pledging` (the chance of announcing a group investment when a message is allowed),
`trust` (how much each pledge heard since the last round raises the chance), `group_size_caution`
(how much a pool return below the private return, multiplier/N < individual_return, lowers it)
and `amount` (how much to invest). Less bandwidth means fewer pledges get through, and larger
groups dilute each dollar's return, so both lower cooperation: directions known in advance.
"""

from __future__ import annotations

from incognita.collabsim.policies import Policy, said

PLEDGE = "I will put my money in the group pool this round; join me and we all earn more."


class DayTraderPolicy(Policy):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.pledges = 0
        self.chance, self.intent = 0.5, "none"

    def decide(self, obs: dict) -> list[dict]:
        state = obs["state"]
        self.pledges += len([e for e in said(obs["events"], "group pool") if e["actor"] != obs["you"]])
        actions = []
        if "message" in obs["allowed_actions"] and self.rng.random() < self.knob("pledging", 0.5):
            actions.append({"action": "message", "to": "all", "text": PLEDGE})
        if "make_group_investment" not in obs["allowed_actions"]:
            return actions or [{"action": "do_nothing"}]
        amount = int(
            min(max(self.knob("amount", 50), state["invest_range"][0]), state["invest_range"][1], state["money"])
        )
        if amount < state["invest_range"][0]:
            return actions or [{"action": "do_nothing"}]
        p = self.cooperation_chance(state, obs)
        self.pledges = 0
        kind = "make_group_investment" if self.rng.random() < p else "make_individual_investment"
        self.chance, self.intent = p, "group" if p >= 0.5 else "individual"
        return [*actions, {"action": kind, "amount": amount}]

    def beliefs(self) -> dict:
        """Its reading of the last settlement and its current leaning (the chance it would pool)."""
        state = self.last_obs["state"]
        last, n = state.get("last_round"), state["players"]
        share = last["contributors"] / n if last else 0.5
        mood = "most players" if share > 0.5 else "few players" if share < 0.34 else "some players"
        stage = (
            "early"
            if state["round"] <= state["rounds"] / 3
            else "late"
            if state["round"] > 2 * state["rounds"] / 3
            else "midway"
        )
        partners = (
            "The others seem to be cooperating through the group pool."
            if share > 0.5
            else "The others seem to be keeping their money for themselves."
        )
        plan = (
            "I plan to put my money in the group pool, because enough others do."
            if self.intent == "group"
            else "I plan to invest individually, because the pool does not pay me enough."
        )
        return {
            "situation": f"We are {stage} in the game and {mood} used the group pool last round.",
            "partners": partners,
            "plan": plan,
            "fields": {"expected_contributors": round(share * n), "next_investment": self.intent},
            "certainty": 0.5 + abs(self.chance - 0.5),
        }

    def cooperation_chance(self, state: dict, obs: dict) -> float:
        p = self.knob("cooperation", 0.5)
        last = state.get("last_round")
        others = max(state["players"] - 1, 1)
        if last is not None:
            p += self.knob("reciprocity", 0.5) * (last["contributors"] / state["players"] - 0.5)
        p += self.knob("trust", 0.3) * min(self.pledges / others, 1.0)
        per_dollar = state["multiplier"] / state["players"]
        if per_dollar < state["individual_return"]:
            p -= self.knob("group_size_caution", 0.3) * (1 - per_dollar / state["individual_return"])
        return min(max(p, 0.0), 1.0)


POLICY = DayTraderPolicy
