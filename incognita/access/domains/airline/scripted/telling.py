"""What the airline's scripted agent tells beyond the items a read traces: the amount a change
charged or refunded, when the customer asks how much (a refund, a charge), and, after several
changes, their sum.

A change of a reservation (its flights, cabin or bags) adds a payment to the reservation's
payment history: a charge, or a refund as a negative amount. The change's result is the record
after it, so the payments it added are those the record read before it did not hold.
"""

from __future__ import annotations

import re

from incognita.access.episodes.scripted.picks import PlainTelling

_HOW_MUCH = re.compile(r"\bhow\s+much\b", re.I)


class ChangeTelling(PlainTelling):
    """PlainTelling, and the amounts of the payments the changes made (module docstring)."""

    def _untraced_values(self, gathered):
        if not any(_HOW_MUCH.search(r) for r in self.requests):
            return []
        values, amounts = [], []
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
        return values
        yield  # a step of the agent's generator, like the others


def _earlier_payments(results: dict, explored: dict, index: int, rid) -> list:
    """The reservation's payment history as last read before the change `index`."""
    found = []
    for doc in [*explored.values(), *(results[i] for i in sorted(results) if i < index)]:
        if isinstance(doc, dict) and doc.get("reservation_id") == rid and isinstance(doc.get("payment_history"), list):
            found = doc["payment_history"]
    return found
