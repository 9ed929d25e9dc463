"""The airline domain's scripted part: its scripted agent, which knows the policy's derivation
rules (deriving), how to choose among the airline's records (picking: reservations, their flights
and passengers, searched flights, payment methods) and the plain words its desks restate a change
in.

The agent is the domain-free core (incognita.access.episodes.scripted.scripted_agent.ScriptedAgent)
with these mixed in; what it tells the customer is the core's plain telling.
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.airline.scripted import deriving as dv
from incognita.access.domains.airline.scripted.picking import FlightPicker, searched_flights
from incognita.access.domains.airline.scripted.telling import ChangeTelling
from incognita.access.episodes.loop.agent_plan import Source
from incognita.access.episodes.scripted.picks import Choosing, GiveUp
from incognita.access.episodes.scripted.reconsidering import Reconsidering
from incognita.access.episodes.scripted.scripted_agent import ScriptedAgent

_NEGATED = re.compile(r"\b(?:no|not|don't|doesn't|do not|without|never)\b", re.I)


class AirlineAgent(ScriptedAgent, FlightPicker, Reconsidering, ChangeTelling):
    def derive(self, rule: str, inputs: list, choosing: Choosing):
        """The value of a derivation rule (deriving) from the operands' values and what the call
        and the records read so far hold; gives up, saying why, where the rule cannot apply."""
        try:
            return self._derive(rule, inputs, choosing)
        except dv.RuleError as why:
            raise GiveUp(f"rule {rule!r}: {why}") from None

    def _derive(self, rule: str, inputs: list, choosing: Choosing):
        if rule in ("date_later", "date_earlier"):
            return dv.shifted_date(inputs[0], inputs[1], 1 if rule == "date_later" else -1)
        if rule == "bags_added":
            return dv.bags_added(inputs[0], inputs[1])
        reservation = self._reservation(choosing)
        if rule == "bag_allowance":
            membership = dv.membership_of(inputs)
            if membership is None:
                raise dv.RuleError("the booking user's membership was not read")
            cabin = choosing.args.get("cabin") or (reservation or {}).get("cabin")
            said = dv.said_phrase(inputs)
            total = choosing.args.get("total_baggages")
            if total is None and choosing.slot == "/nonfree_baggages" and self._total_is_allowance(choosing):
                total = dv.free_bags(membership, cabin, self._passengers(inputs, choosing, reservation))
            return dv.bag_allowance(membership, cabin, self._passengers(inputs, choosing, reservation), total, said)
        if rule == "fare":
            k = int(choosing.pointer.split("/")[2])
            payments = choosing.args.get("payment_methods") or []
            earlier = [p.get("amount") for p in payments[:k] if isinstance(p, dict)]
            price = dv.fare(
                inputs,
                self._passengers([], choosing, None),
                choosing.args.get("insurance"),
                choosing.args.get("nonfree_baggages"),
                earlier,
            )
            pid = payments[k].get("payment_id") if k < len(payments) and isinstance(payments[k], dict) else None
            return dv.payment_share(price, self._balance(pid), last=k == len(payments) - 1)
        if rule == "compensation":
            return dv.compensation(dv.count_of(inputs[0]), self.requests, self._flight_statuses())
        raise dv.RuleError("no such rule is known")

    def _value(self, src: Source, choosing: Choosing):
        if src.kind == "derived" and src.rule == "fare":
            # The prices are those of the flights this booking takes, as the searches read gave
            # them (the operands name one search entry each; the call's own flights say which).
            return self.derive(src.rule, self._prices(choosing), choosing)
        value = yield from super()._value(src, choosing)
        if src.kind == "field" and src.transform == "bag_count" and str(value).isdigit():
            return int(value)  # a count the customer states is written as a number
        terms = self.vocabulary.get(choosing.arg or "")
        if src.kind == "field" and terms and value not in terms:
            # A policy term the customer says in its own words ("Basic Economy"): the term itself.
            said = "_".join(str(value).lower().replace("-", " ").split())
            return next((t for t in terms if t == said), value)
        return value

    def _policy_term(self, src: Source) -> str:
        """A yes-or-no policy term (insurance): a negated answer ("don't need any") means no."""
        terms = self.vocabulary.get(src.vocabulary or "")
        if terms and set(terms) == {"yes", "no"}:
            said = [self.released[t] for t in src.selected_by if t in self.released]
            if said:
                return "no" if any(_NEGATED.search(s) for s in said) else "yes"
        if terms and not any(t in self.released for t in src.selected_by):
            # Nothing the customer said selects it: the term the case's records hold for it (the
            # cabin of the reservation the booking copies), the latest read.
            for i in sorted(self.results, reverse=True):
                doc = self.results[i]
                if isinstance(doc, dict) and doc.get(src.vocabulary) in terms:
                    return doc[src.vocabulary]
        return super()._policy_term(src)

    def _prices(self, choosing: Choosing) -> list:
        """The price in the booking's cabin of each flight the call books, from the searches read."""
        cabin = choosing.args.get("cabin")
        prices = []
        for leg in choosing.args.get("flights") or []:
            number = leg.get("flight_number") if isinstance(leg, dict) else None
            price = next(
                (
                    f["prices"].get(cabin)
                    for f in searched_flights(self.results.values())
                    if f.get("flight_number") == number
                ),
                None,
            )
            if price is None:
                raise GiveUp(f"rule 'fare': no search read gave the {cabin} price of flight {number}")
            prices.append(price)
        return prices

    def _balance(self, payment_id: Any) -> Any:
        """The balance a payment method holds (a gift card's, a certificate's), as read."""
        for doc in [*self.results.values(), *self.explored.values()]:
            methods = doc.get("payment_methods") if isinstance(doc, dict) else None
            if isinstance(methods, dict) and isinstance(methods.get(payment_id), dict):
                return methods[payment_id].get("amount")
        return None

    def _passengers(self, inputs: list, choosing: Choosing, reservation: dict | None) -> int:
        """The passengers of the booking: a list among the inputs, the call's own passengers, or
        the reservation's."""
        listed = next((v for v in inputs if isinstance(v, list)), None)
        if listed is not None:
            return len(listed)
        if choosing.args.get("passengers"):
            return len(choosing.args["passengers"])
        if reservation and isinstance(reservation.get("passengers"), list):
            return len(reservation["passengers"])
        raise dv.RuleError("the number of passengers is not known")

    def _total_is_allowance(self, choosing: Choosing) -> bool:
        """Is the call's bag total itself the whole free allowance (derived from a bag phrase)?"""
        call = next((c for c in self.plan.calls if c.index == choosing.index), None)
        src = call.args.get("/total_baggages") if call else None
        return bool(src and src.kind == "derived" and any(o.kind == "field" for o in src.operands))

    def _flight_statuses(self) -> list[str]:
        """Flight statuses the agent has read (a flight status check returns one)."""
        found = []
        for doc in [*self.results.values(), *self.explored.values()]:
            if isinstance(doc, str) and doc.lower() in ("delayed", "cancelled", "on time", "flying", "landed"):
                found.append(doc.lower())
        return found


AGENT = AirlineAgent

# Plain descriptions of the airline's write tools, for restating a change without naming a tool.
CHANGE_WORDS = {
    "book_reservation": "book a new reservation",
    "cancel_reservation": "cancel a reservation",
    "send_certificate": "send a travel certificate",
    "update_reservation_baggages": "change the checked bags of a reservation",
    "update_reservation_flights": "change the flights or cabin of a reservation",
    "update_reservation_passengers": "change the passengers of a reservation",
    "transfer_to_human_agents": "hand this case over to a human colleague",
}
