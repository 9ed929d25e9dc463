"""What the airline's scripted agent tells beyond the items a read traces: the amount a change
charged or refunded, when the customer asks how much (a refund, a charge), and, after several
changes, their sum; what the changes charged to the payment method a "how much" names ("how much
your master card will be charged"), summed over the changes; and the sum of the balances of a
kind of payment method the customer asks the sum of ("the sum of gift card balances"); and the
total cost of the customer's upcoming flights, when asked: what was paid for each reservation of
its profile with a flight still to fly, as the reservation stood before the episode's changes.

A change of a reservation (its flights, cabin or bags) adds a payment to the reservation's
payment history: a charge, or a refund as a negative amount. The change's result is the record
after it, so the payments it added are those the record read before it did not hold.
"""

from __future__ import annotations

import re

from incognita.access.domains.airline import source_words as sw
from incognita.access.domains.airline.scripted import facts as fx
from incognita.access.episodes.scripted.picks import PlainTelling

_HOW_MUCH = re.compile(r"\bhow\s+much\b", re.I)
_SUM_OF_BALANCES = re.compile(r"\b(?:sum|total)\b.*\bbalances?\b", re.I)
_TOKEN = re.compile(r"<([a-z_0-9]+)>")
_TOTAL_COST = re.compile(r"\btotal\s+cost\b", re.I)
_UPCOMING = re.compile(r"\b(?:upcoming|future)\b", re.I)


class ChangeTelling(PlainTelling):
    """PlainTelling, and the amounts of the payments the changes made (module docstring)."""

    def _untraced_values(self, gathered):
        values = self._balance_sums()
        values += yield from self._upcoming_cost()
        if not any(_HOW_MUCH.search(r) for r in self.requests):
            return values
        amounts = []
        writes = {c.index for c in self.plan.calls if c.write}
        for i in sorted(self.results):
            after = self.results[i]
            if i not in writes or not isinstance(after, dict) or "payment_history" not in after:
                continue
            before = _earlier_payments(self.results, self.explored, i, after.get("reservation_id"))
            for payment in after["payment_history"][len(before) :]:
                amount = payment.get("amount") if isinstance(payment, dict) else None
                if isinstance(amount, (int, float)):
                    amounts.append(abs(amount))
                    values.append(f"{abs(amount):g}")
        if len(amounts) > 1:
            values.append(f"{sum(amounts):g} in total")  # several changes: what they come to together
        values += self._charged_to_named_method()
        return values
        yield  # a step of the agent's generator, like the others

    def _upcoming_cost(self):
        """The total paid for the profile's reservations with a flight still to fly, when the
        customer asks the total cost of its upcoming flights; each reservation as first seen,
        what this episode's changes paid for it left out (they came after the question)."""
        asking = [d for d in getattr(self, "demands", []) if _TOTAL_COST.search(d)]
        for token in dict.fromkeys(t for d in asking for t in _TOKEN.findall(d)):
            if token not in self.released:
                yield from self._ask_customer(token, required=False)  # which flights: in its own words
        said = [_TOKEN.sub(lambda m: str(self.released.get(m.group(1), "")), d) for d in asking]
        if not any(_TOTAL_COST.search(d) and _UPCOMING.search(d) for d in said):
            return []
        user = next((d["user_id"] for d in self._docs() if isinstance(d, dict) and d.get("user_id")), None)
        read_user, read_reservation = self._reading_tool("user_id"), self._reading_tool("reservation_id")
        if not (user and read_user and read_reservation):
            return []
        profile = yield from self._explore(read_user, {"user_id": user})
        total = 0
        for rid in (profile or {}).get("reservations") or []:
            first, by_change = self._first_seen(rid)
            if first is None:
                first = yield from self._explore(read_reservation, {"reservation_id": rid})
            if not isinstance(first, dict) or (first.get("status") == "cancelled" and not by_change):
                continue
            dates = [str(f.get("date")) for f in first.get("flights") or []]
            if dates and max(dates) > sw.POLICY_TODAY.isoformat():
                paid = [p.get("amount") for p in first.get("payment_history") or [] if isinstance(p, dict)]
                paid = [a for a in paid if isinstance(a, (int, float))]
                # First seen as this episode's cancellation: its refunds came after the question.
                total += sum(a for a in paid if a > 0) if by_change else sum(paid)
        return [f"{total:g}"] if total else []

    def _docs(self) -> list:
        return [*(self.results[i] for i in sorted(self.results)), *self.explored.values()]

    def _first_seen(self, rid) -> tuple[dict | None, bool]:
        """The reservation as first read, and whether that read is a change's result."""
        writes = {c.index for c in self.plan.calls if c.write}
        for i in sorted(self.results):
            doc = self.results[i]
            if isinstance(doc, dict) and doc.get("reservation_id") == rid:
                return doc, i in writes
        return None, False

    def _payment_methods(self) -> dict:
        """The customer's payment methods as first read (the balances before any change)."""
        for doc in [*(self.results[i] for i in sorted(self.results)), *self.explored.values()]:
            methods = doc.get("payment_methods") if isinstance(doc, dict) else None
            if isinstance(methods, dict):
                return methods
        return {}

    def _named_kinds(self, pattern: re.Pattern) -> list[str]:
        """The customer's words for the payment methods the demands matching `pattern` name."""
        demands = getattr(self, "demands", [])
        return [self.released[t] for d in demands if pattern.search(d) for t in _TOKEN.findall(d) if t in self.released]

    def _balance_sums(self) -> list[str]:
        """The sum of the balances of each kind of payment method the customer asks the sum of."""
        methods = self._payment_methods()
        out = []
        for said in self._named_kinds(_SUM_OF_BALANCES):
            held = [m.get("amount") for m in methods.values() if isinstance(m, dict) and fx.states(said, fx.leaves(m))]
            held = [a for a in held if isinstance(a, (int, float))]
            if held and f"{sum(held):g}" not in out:
                out.append(f"{sum(held):g}")
        return out

    def _charged_to_named_method(self) -> list[str]:
        """What the changes charged to the payment method a "how much" demand names, together."""
        methods = self._payment_methods()
        writes = {c.index for c in self.plan.calls if c.write}
        out = []
        for said in self._named_kinds(_HOW_MUCH):
            ids = {k for k, m in methods.items() if isinstance(m, dict) and fx.states(said, fx.leaves(m))}
            if not ids or len(ids) == len(methods):
                continue  # no method, or every method: the words name no one of them
            charged = []
            for i in sorted(self.results):
                after = self.results[i]
                if i not in writes or not isinstance(after, dict) or "payment_history" not in after:
                    continue
                before = _earlier_payments(self.results, self.explored, i, after.get("reservation_id"))
                charged += [
                    p["amount"]
                    for p in after["payment_history"][len(before) :]
                    if isinstance(p, dict) and p.get("payment_id") in ids and isinstance(p.get("amount"), (int, float))
                ]
            if charged and f"{sum(charged):g}" not in out:
                out.append(f"{sum(charged):g}")
        return out


def _earlier_payments(results: dict, explored: dict, index: int, rid) -> list:
    """The reservation's payment history as last read before the change `index`."""
    found = []
    for doc in [*explored.values(), *(results[i] for i in sorted(results) if i < index)]:
        if isinstance(doc, dict) and doc.get("reservation_id") == rid and isinstance(doc.get("payment_history"), list):
            found = doc["payment_history"]
    return found
