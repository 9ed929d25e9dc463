"""What a scripted agent tells the customer as information, and how it works the answers out.

`Telling` is mixed into incognita.access.episodes.scripted.scripted_agent.ScriptedAgent, whose state it
reads (the plan's information items, the results and explored reads, what the customer
released and asked) and whose steps it uses (`_ask_customer`, `_read_value`,
`_product_of`). The plan gives each information item only where it comes from (a value-free
read path) or nothing at all (a sum or difference no single read holds); the agent answers
from its own reads, by these general rules:

* a traced item is read along its path, choosing at each `*` like any argument; but
  - the payment method the customer asks it "used" for an order is the one that order's
    payment history was first paid with (`paid_with`), not the one the change chose;
  - lines the question counts by name ("which two t-shirts") are those of the one order
    read that holds exactly that many lines of that name (`counted_lines`);
* an untraced item is a sum: the money the changes made give back (sets.refund_total), or
  the saving of changing the named lines to their cheapest version (`saving`).

All rules are general; none names a task, an id or a product.
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.retail.scripted.choosing import value_at
from incognita.access.domains.retail.scripted.sets import NUMBERS, refund_total
from incognita.access.episodes.loop.agent_plan import PICK
from incognita.access.episodes.scripted.picks import Choosing, PlainTelling

_USED = re.compile(r"\b(?:used|paid|pay(?:ing)? (?:with|for|by))\b", re.IGNORECASE)
_ORDER = re.compile(r"\border\b", re.IGNORECASE)
_SAVE = re.compile(r"\bhow much\b.*\bsav(?:e|ed|ing|ings)\b", re.IGNORECASE)
_CHEAPEST = re.compile(r"\bcheapest\b", re.IGNORECASE)
# The kinds of change that move a line to another version of its product.
_CHANGE = re.compile(r"\b(?:exchang|chang|switch|swap|upgrad|downgrad|replac)\w*", re.IGNORECASE)
_COUNT = "|".join([r"\d+", *NUMBERS])


def orders_read(docs: list[Any]) -> dict[str, dict]:
    """Order id -> the latest record read of it (a change's result is the order after it)."""
    out: dict[str, dict] = {}
    for doc in docs:
        if isinstance(doc, dict) and doc.get("order_id") and isinstance(doc.get("items"), list):
            out[str(doc["order_id"])] = doc
    return out


def asks_which_paid(requests: list[str]) -> bool:
    """Does the customer ask which payment method it used for an order?"""
    return any(_USED.search(r) and _ORDER.search(r) for r in requests)


def paid_with(docs: list[Any]) -> str | None:
    """The payment method the one order read was first paid with (its history keeps the
    original payment first, whatever a later change of payment added)."""
    orders = orders_read(docs)
    if len(orders) != 1:
        return None
    history = next(iter(orders.values())).get("payment_history") or []
    first = next((p for p in history if isinstance(p, dict) and p.get("transaction_type") == "payment"), None)
    return str(first["payment_method_id"]) if first and first.get("payment_method_id") else None


def _named(name: str, text: str, count: str = "") -> bool:
    prefix = rf"\b(?:{count})\s+" if count else r"\b"
    return re.search(prefix + re.escape(name.lower()) + r"(?:s|es)?\b", text.lower()) is not None


def counted_lines(requests: list[str], docs: list[Any]) -> list[dict]:
    """The lines a question counts by name ("which two t-shirts ..."): those of the one order
    read holding exactly that many lines of that name; none when no single order does."""
    for request in requests:
        for m in re.finditer(rf"\b({_COUNT})\s+", request.lower()):
            word = m.group(1)
            count = int(word) if word.isdigit() else NUMBERS[word]
            found = []
            for order in orders_read(docs).values():
                lines = [
                    line
                    for line in order["items"]
                    if isinstance(line, dict) and line.get("name") and _named(str(line["name"]), request, word)
                ]
                if lines and len(lines) == count:
                    found.append(lines)
            if len(found) == 1:
                return found[0]
    return []


def cheapest_lines(requests: list[str], docs: list[Any]) -> list[dict]:
    """The lines the customer wants changed to their cheapest version: those named between
    the word of the change and "cheapest" ("exchange the pet bed and office chair to the
    cheapest version")."""
    out: dict[str, dict] = {}
    for request in requests:
        for m in _CHEAPEST.finditer(request):
            changes = list(_CHANGE.finditer(request, 0, m.start()))
            if not changes:
                continue
            clause = request[changes[-1].start() : m.start()]
            for order in orders_read(docs).values():
                for line in order["items"]:
                    if isinstance(line, dict) and line.get("name") and _named(str(line["name"]), clause):
                        out.setdefault(str(line.get("item_id")), line)
    return list(out.values())


def saving(line: dict, product: Any) -> float | None:
    """What changing a line to the cheapest available version of its product saves."""
    if not isinstance(product, dict) or not isinstance(product.get("variants"), dict):
        return None
    prices = [
        v["price"]
        for v in product["variants"].values()
        if isinstance(v, dict) and v.get("available") is not False and isinstance(v.get("price"), (int, float))
    ]
    if not prices or not isinstance(line.get("price"), (int, float)):
        return None
    return round(line["price"] - min(prices), 2)


class Telling(PlainTelling):
    """The reporting half of a scripted agent (module docstring)."""

    def _telling_gathered(self) -> tuple[list, list[dict], set[tuple[str, str]]]:
        """Every record read, the lines the question counts by name, the lines told so far."""
        docs = [*self.results.values(), *self.explored.values()]
        return docs, counted_lines(self.requests, docs), set()

    def _told_from_records(self, src, gathered) -> Any:
        docs, counted, told_lines = gathered
        return self._answered_from_records(src, counted, told_lines, docs)

    def _telling_choice(self, src) -> Choosing:
        # Two items may read two fields of one entry (a speaker's price and battery life), or one
        # field of two entries: an entry is kept from being reported twice only for the same field.
        return Choosing(call="", arg=None, slot="/".join(src.steps))

    def _untraced_values(self, gathered):
        """A sum no single read holds: the money the changes give back, the saving asked for."""
        if not any(item.source is None for item in self.plan.info):
            return []
        docs = gathered[0]
        made = [(c.name, self.results.get(c.index)) for c in self.plan.calls if c.write]
        values = [v for v in [refund_total(self.requests, made)] if v]
        if any(_SAVE.search(r) for r in self.requests):
            total = yield from self._saving_total(docs)
            values += [total] if total else []
        return values

    def _answered_from_records(self, src, counted: list[dict], told: set, docs: list) -> Any:
        """The value the records themselves settle for a question (module docstring), or None."""
        steps = src.steps
        if steps[:2] == ("payment_methods", PICK) and asks_which_paid(self.requests):
            methods = value_at(self.results[src.call], ("payment_methods",))
            paid = paid_with(docs)
            if isinstance(methods, dict) and paid in methods:
                value = value_at(methods[paid], steps[2:])
                if value is not None:
                    return value
        if steps[:2] == ("items", PICK) and not src.selected_by and counted:
            rest = "/".join(steps[2:])
            for line in counted:
                key = (str(line.get("item_id")), rest)
                value = value_at(line, steps[2:])
                if value is not None and key not in told:
                    told.add(key)
                    return value
        return None

    def _saving_total(self, docs: list):
        """What changing the lines the customer named to their cheapest version saves, summed."""
        total, any_line = 0.0, False
        for line in cheapest_lines(self.requests, docs):
            product = yield from self._product_of(line)
            saved = saving(line, product)
            if saved is not None:
                total += saved
                any_line = True
        return f"{total:.2f}" if any_line else None
