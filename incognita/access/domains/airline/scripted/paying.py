"""How the airline's scripted agent weighs payment methods: the policy's limits of one booking,
what the episode's changes already paid with a method (a certificate once used is spent, a gift
card down to its balance), the order in which the customer's words name the kinds of payment, and
what a method can cover.
"""

from __future__ import annotations

import re
from typing import Any

# The policy's payment limits of one reservation ("Payment: at most one travel certificate, at
# most one credit card, and at most three gift cards").
PAYMENTS_PER_BOOKING = {"certificate": 1, "credit_card": 1, "gift_card": 3}
# "Use the gift cards as much as possible": of one kind, the one that can pay the most.
AS_MUCH = re.compile(r"\bas\s+much\s+as\s+possible\b", re.I)


class Paying:
    """The payment half of the airline's choosing (module docstring); it relies on the agent's
    `results`, `explored`, `demands`, `released` and `plan`."""

    def _paid_with(self, payment_id: Any) -> float:
        """What the episode's changes so far paid with a payment method: the payments their
        results (a reservation each) hold that the reservation as first read did not."""
        total = 0.0
        writes = {c.index for c in self.plan.calls if c.write}
        seen: dict = {}
        for doc in self.explored.values():
            if isinstance(doc, dict) and "payment_history" in doc:
                seen.setdefault(doc.get("reservation_id"), len(doc["payment_history"]))
        for i in sorted(self.results):
            doc = self.results[i]
            if not isinstance(doc, dict) or not isinstance(doc.get("payment_history"), list):
                continue
            rid = doc.get("reservation_id")
            start = seen.get(rid, 0) if i in writes else len(doc["payment_history"])
            for p in doc["payment_history"][start:]:
                if (
                    isinstance(p, dict)
                    and p.get("payment_id") == payment_id
                    and isinstance(p.get("amount"), (int, float))
                ):
                    total += max(p["amount"], 0)
            seen[rid] = len(doc["payment_history"])
        return total

    def _named_order(self, tokens: tuple[str, ...]) -> dict[str, int]:
        """token -> its place in the customer's demand that names the most of these tokens (the
        later such demand, its latest word): "the certificates ..., then gift cards ..., and the
        rest with your master card"."""
        best, count = "", 0
        for demand in self.demands:
            n = sum(f"<{t}>" in demand for t in tokens if t in self.released)
            if n >= 2 and n >= count:  # an order needs two kinds named
                best, count = demand, n
        at = {t: best.find(f"<{t}>") for t in tokens if t in self.released and f"<{t}>" in best}
        return {t: rank for rank, t in enumerate(sorted(at, key=at.get))}


def capacity(entry: Any) -> float:
    """What a payment method can cover: its balance, a card without one without limit (0 for
    what is no payment method)."""
    if not isinstance(entry, dict) or "source" not in entry:
        return 0
    amount = entry.get("amount")
    return float("inf") if amount is None else float(amount)
