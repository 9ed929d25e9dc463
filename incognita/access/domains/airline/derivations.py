"""The airline's derived values: arguments no field states and no read holds as such, which the
policy's rules compute from what fields and reads give (a golden provenance of kind `derived`,
incognita.access.golden.trajectory). Each rule below is checked: a value is derived only when the
rule, applied to the values its sources hold, gives exactly that value.

* `date_later`, `date_earlier`: a date the customer gives as a shift of a date a read holds ("the
  day after the original reservation", "delay by one day"): the read date plus (or minus: "move
  back by one day" is said of both) the days of a `date_shift` field.
* `bags_added`: a bag total after "one more checked bag": the reservation's total plus the count
  of a `baggage` field.
* `bag_allowance`: the bags that are not free (or, after "use all your free baggage allowance",
  the total): the policy's free bags per passenger for the booking user's membership and the
  cabin (FREE_BAGS), times the passengers, against the total.
* `fare`: a payment's share of a booking's price: the flights' prices in the cabin (read from the
  searches) times the passengers, plus the policy's insurance and bag fees, less the other
  payments of the booking.
* `compensation`: a certificate the policy grants for a complaint about a reservation's flights:
  $100 (cancelled) or $50 (delayed) times its passengers.

A count the customer states ("3 checked bags", "no baggage") is a `field` provenance with the
transform `bag_count` (incognita.access.domains.airline.golden), not a derivation.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from incognita.access.domains.airline import source_words as sw
from incognita.access.golden.provenance import ERROR_DOC, leaves, top_argument

# The policy's checked-bag allowance: free bags per passenger by membership and cabin.
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
INSURANCE_FEE = 30  # per passenger
BAG_FEE = 50  # per bag that is not free
COMPENSATION = (100, 50)  # per passenger: a cancelled flight, a delayed one
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_AMOUNT = re.compile(r"/payment_methods/(\d+)/amount")


def _field(f: dict, transform: str | None = None) -> dict:
    return {"kind": "field", "token": f["token"], "part": None, "transform": transform}


class Derivations:
    """The derivations of the airline's golden rules (a part of the golden builder; it relies on
    the builder's `action`, `calls`, `docs`, `fields`, `tools`, `_from_reads`, `_search` and
    `_insert_chain`)."""

    def _derive(self, tool: str, ptr: str, value: Any, allow_insert: bool) -> dict | None:
        if isinstance(value, str):
            return self._date_shift(value, ptr, allow_insert) if _ISO.fullmatch(value) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        arg = top_argument(ptr)
        if arg == "total_baggages":
            return (
                self._bags_added(value, ptr, allow_insert)
                or self._stated_count(value)
                or self._allowance(value, ptr, allow_insert, total=True)
            )
        if arg == "nonfree_baggages":
            return self._allowance(value, ptr, allow_insert, total=False) or self._stated_count(value)
        if arg == "payment_methods" and _AMOUNT.fullmatch(ptr):
            return self._fare(value, ptr, allow_insert)
        if arg == "amount" and (self.action or {}).get("name") == "send_certificate":
            return self._compensation(value, ptr, allow_insert)
        return None

    # ----------------------------------------------------------------- reads of a record

    def _latest(self, pred) -> tuple[int, Any] | None:
        """The latest result (a read or a write's) that satisfies `pred`."""
        for j in range(len(self.docs) - 1, -1, -1):
            doc = self.docs[j]
            if doc is not ERROR_DOC and pred(doc):
                return j, doc
        return None

    def _read_of(self, pred, ptr: str, allow_insert: bool, chain_hit) -> tuple[int, Any] | None:
        """The latest result that satisfies `pred`, reads inserted for it when none does."""
        found = self._latest(pred)
        if found is None and allow_insert:
            chain = self._search(chain_hit)
            if chain is not None:
                self._insert_chain(chain, {"call": None, "argument": ptr, "reason": "value"})
                found = self._latest(pred)
        return found

    def _reservation(self, ptr: str, allow_insert: bool) -> tuple[int, dict] | None:
        rid = ((self.action or {}).get("arguments") or {}).get("reservation_id")
        if not isinstance(rid, str):
            return None

        def is_it(doc):
            return isinstance(doc, dict) and doc.get("reservation_id") == rid

        return self._read_of(is_it, ptr, allow_insert, lambda n, a, d: is_it(d))

    def _user(self, uid: str, ptr: str, allow_insert: bool) -> tuple[int, dict] | None:
        def is_it(doc):
            return isinstance(doc, dict) and doc.get("user_id") == uid and "membership" in doc

        return self._read_of(is_it, ptr, allow_insert, lambda n, a, d: is_it(d))

    def _read(self, j: int, path: str) -> dict:
        return {"kind": "read", "call": j, "path": path, "selected_by": []}

    # ----------------------------------------------------------------- dates

    def _date_shift(self, value: str, ptr: str, allow_insert: bool) -> dict | None:
        for f in self.fields:
            n = sw.shift_days(f["value"]) if f["kind"] == "date_shift" else None
            if not n:
                continue
            subject = self._reservation(ptr, allow_insert)
            # Later first; "move back by one day" is said of both ways, so earlier too.
            for rule, days in (("date_later", -n), ("date_earlier", n)):
                base = (dt.date.fromisoformat(value) + dt.timedelta(days=days)).isoformat()

                def holds(p, leaf, base=base):
                    return leaf == base and p.endswith("/date")

                p = None
                if subject is not None:
                    path = next((q for q, leaf in leaves(subject[1]) if holds(q, leaf)), None)
                    p = self._read(subject[0], path) if path is not None else None
                p = p or self._from_reads(holds)
                if p is not None:
                    return {"kind": "derived", "rule": rule, "from": [p, _field(f)]}
        return None

    # ----------------------------------------------------------------- bags

    def _stated_count(self, value: float) -> dict | None:
        for f in self.fields:
            if f["kind"] == "baggage" and sw.bag_count(f["value"]) == value:
                return _field(f, "bag_count")
        return None

    def _bags_added(self, value: float, ptr: str, allow_insert: bool) -> dict | None:
        if (self.action or {}).get("name") != "update_reservation_baggages":
            return None
        subject = self._reservation(ptr, allow_insert)
        if subject is None:
            return None
        current = subject[1].get("total_baggages")
        for f in self.fields:
            n = sw.bag_count(f["value"]) if f["kind"] == "baggage" else None
            if n and isinstance(current, int) and current > 0 and current + n == value:
                return {
                    "kind": "derived",
                    "rule": "bags_added",
                    "from": [self._read(subject[0], "/total_baggages"), _field(f)],
                }
        return None

    def _allowance(self, value: float, ptr: str, allow_insert: bool, total: bool) -> dict | None:
        args = (self.action or {}).get("arguments") or {}
        sources = []
        subject = self._reservation(ptr, allow_insert) if "reservation_id" in args else None
        if subject is not None:
            sources.append(self._read(subject[0], "/passengers"))
        reservation = subject[1] if subject else {}
        uid = args.get("user_id") or reservation.get("user_id")
        cabin = args.get("cabin") or reservation.get("cabin")
        passengers = args.get("passengers") or reservation.get("passengers") or []
        user = self._user(uid, ptr, allow_insert) if isinstance(uid, str) else None
        if user is None or cabin not in FREE_BAGS.get(user[1]["membership"], {}):
            return None
        free = FREE_BAGS[user[1]["membership"]][cabin] * len(passengers)
        sources.insert(0, self._read(user[0], "/membership"))
        if total:
            said = [f for f in self.fields if f["kind"] == "baggage" and sw.bag_count(f["value"]) is None]
            if said and value == free:
                return {"kind": "derived", "rule": "bag_allowance", "from": [*sources, _field(said[0])]}
            return None
        bags = args.get("total_baggages")
        if isinstance(bags, int) and value == max(0, bags - free):
            return {"kind": "derived", "rule": "bag_allowance", "from": sources}
        return None

    # ----------------------------------------------------------------- money

    def _price_read(self, number: str, date: str, cabin: str) -> dict | None:
        """The read of a flight's price in a cabin: a search result entry of that flight."""
        for j, doc in enumerate(self.docs):
            if doc is ERROR_DOC:
                continue
            for q, leaf in leaves(doc):
                if q.endswith(f"/prices/{cabin}"):
                    entry = q[: -len(f"/prices/{cabin}")]
                    if any(p == f"{entry}/flight_number" and v == number for p, v in leaves(doc)):
                        return {**self._read(j, q), "operand": str(leaf)}
        return None

    def _fare(self, value: float, ptr: str, allow_insert: bool) -> dict | None:
        if (self.action or {}).get("name") != "book_reservation":
            return None
        args = self.action["arguments"]
        cabin, people = args.get("cabin"), len(args.get("passengers") or [])
        reads, total = [], 0
        for i, leg in enumerate(args.get("flights") or []):
            flight = self.tools.db.flights.get(leg.get("flight_number"))
            status = flight.dates.get(leg.get("date")) if flight else None
            prices = getattr(status, "prices", None)
            if not prices or cabin not in prices:
                return None
            read = self._price_read(leg["flight_number"], leg["date"], cabin)
            if read is None and allow_insert:
                # The flight was read off a record without its price: the search that finds it.
                number = leg["flight_number"]
                self._insert_flight_search(lambda p, v, n=number: v == n, f"/flights/{i}/flight_number", ptr)
                read = self._price_read(leg["flight_number"], leg["date"], cabin)
            if read is None:
                return None
            reads.append({k: v for k, v in read.items() if k != "operand"})
            total += prices[cabin] * people
        total += INSURANCE_FEE * people * (args.get("insurance") == "yes") + BAG_FEE * (
            args.get("nonfree_baggages") or 0
        )
        k = int(_AMOUNT.fullmatch(ptr).group(1))
        others = sum(p["amount"] for i, p in enumerate(args["payment_methods"]) if i != k)
        if value != total - others:
            return None
        return {"kind": "derived", "rule": "fare", "from": reads}

    def _compensation(self, value: float, ptr: str, allow_insert: bool) -> dict | None:
        flights = {f["value"] for f in self.fields if f["kind"] == "flight"}

        def fits(doc) -> bool:
            if not (isinstance(doc, dict) and "reservation_id" in doc and isinstance(doc.get("passengers"), list)):
                return False
            if flights and not flights & {f.get("flight_number") for f in doc.get("flights") or []}:
                return False
            return any(per * len(doc["passengers"]) == value for per in COMPENSATION)

        found = self._read_of(fits, ptr, allow_insert, lambda n, a, d: fits(d))
        if found is None:
            return None
        return {"kind": "derived", "rule": "compensation", "from": [self._read(found[0], "/passengers")]}
