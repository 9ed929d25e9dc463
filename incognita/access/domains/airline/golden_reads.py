"""The airline's read-insertion rule and selectors: the reads added to a golden trajectory where a
value has no source, and the card fields that pick an element out of a collection.

Candidate reads are those whose own arguments already have a source: the profile of a user id the
customer states or a reservation names (`get_user_details`), the reservations the customer
numbers or the profile lists (`get_reservation_details`), and upstream's airport list. The search
is the golden builder's (`_search` in incognita.access.golden.trajectory), breadth first: every
candidate that needs no other new read, then the candidates those open up, up to
`MAX_INSERT_DEPTH` reads deep; the first whose result yields what is sought is inserted with the
reads it needed.

Flights are found by searching, not on the customer's records: a flight a write books, or changes a
reservation to, is sourced by the flight search of its journey (the direct search of a one-leg
journey, the one-stop search of a two-leg one, between the journey's ends on its first day), whose
own arguments (airports, date) are sourced by the ordinary rule first; a flight the reservation
already holds is sourced by the reservation's read. The journeys of a trip are cut where a leg
reaches the trip's origin or destination (the action's, or the reservation's).

Selectors: a payment method picked out of the profile's several is selected by the card's payment
fields; a flight out of a search's several by its flight, date, time, cabin and selector fields; a
reservation out of the profile's several by its airport, date, flight, time, passenger and
selector fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from incognita.access.golden.plain_rules import Unrestricted
from incognita.access.golden.provenance import leaves, pointer_parts, top_argument

_FLIGHT_PTR = re.compile(r"/flights/(\d+)/(?:flight_number|date)")
_FLIGHT_SELECTORS = ("flight", "date", "date_shift", "time", "cabin", "selector")
_RESERVATION_SELECTORS = ("airport", "date", "flight", "time", "passenger", "selector")


class AirlineReads:
    """The airline's candidate reads for the golden builder's search, its flight searches, and the
    selectors of a pick (a part of the golden builder; it relies on the builder's `action`,
    `fields`, `tools`, `_peek`, `_append_inserted`, `_resolve`, `_find_scoped` and `_from_reads`)."""

    # Reads of what is public (flights, airports): an information item is looked for in the
    # customer's own records first (incognita.access.golden.information_tracing).
    CATALOG_TOOLS = frozenset(
        {"list_all_airports", "search_direct_flight", "search_onestop_flight", "get_flight_status"}
    )
    MAX_INSERT_DEPTH = 3
    CANDIDATE_ORDER = ("get_user_details", "get_reservation_details", "list_all_airports")
    LISTING_READS = (("list_all_airports", {}),)  # tried at depth 1, after the others

    def _entity_scope(self) -> Unrestricted:
        return Unrestricted()

    # ----------------------------------------------------------------- selectors

    def _selectors(self, doc: Any, ptr: str, role: str | None) -> list[str]:
        parts = pointer_parts(ptr)

        def tokens(kinds) -> list[str]:
            return [f["token"] for f in self.fields if f["kind"] in kinds]

        if "payment_methods" in parts and isinstance(doc, dict) and len(doc.get("payment_methods") or {}) > 1:
            return tokens(("payment",))
        if role == "flights" and isinstance(doc, list) and len(doc) > 1:
            return tokens(_FLIGHT_SELECTORS)
        if parts[:1] == ["reservations"] and isinstance(doc, dict) and len(doc.get("reservations") or []) > 1:
            return tokens(_RESERVATION_SELECTORS)
        return []

    # ----------------------------------------------------------------- the search's candidates

    def _field_candidates(self) -> list[tuple[str, dict]]:
        out: list[tuple[str, dict]] = []
        for field in self.fields:
            if field["kind"] == "identity" and field["token"].startswith("user_id"):
                out.append(("get_user_details", {"user_id": field["value"].strip()}))
        for field in self.fields:
            if field["kind"] == "reservation":
                out.append(("get_reservation_details", {"reservation_id": field["value"].strip()}))
        return out

    @staticmethod
    def _candidates_from(name: str, doc: Any) -> list[tuple[str, dict]]:
        if not isinstance(doc, dict):
            return []
        out: list[tuple[str, dict]] = []
        if isinstance(doc.get("reservations"), list):  # a profile
            out += [
                ("get_reservation_details", {"reservation_id": r}) for r in doc["reservations"] if isinstance(r, str)
            ]
        if "reservation_id" in doc and isinstance(doc.get("user_id"), str):  # a reservation
            out.append(("get_user_details", {"user_id": doc["user_id"]}))
        return out

    def _insert_before_search(self, pred: Callable[[str, Any], bool], consumer_ptr: str) -> dict | None:
        """A flight the action books is sourced by its journey's flight search before any other read."""
        if self._is_new_flight(consumer_ptr) and not getattr(self, "_searching", False):
            return self._insert_flight_search(pred, consumer_ptr)
        return None

    # ----------------------------------------------------------------- flights

    def _is_new_flight(self, consumer_ptr: str) -> bool:
        """Is the pointer a flight of the action's `flights` that its reservation does not hold?"""
        m = _FLIGHT_PTR.fullmatch(consumer_ptr)
        args = (self.action or {}).get("arguments") or {}
        if not m or not isinstance(args.get("flights"), list) or int(m.group(1)) >= len(args["flights"]):
            return False
        leg = args["flights"][int(m.group(1))]
        reservation = self.tools.db.reservations.get(args.get("reservation_id") or "")
        held = {(f.flight_number, f.date) for f in reservation.flights} if reservation else set()
        return (leg.get("flight_number"), leg.get("date")) not in held

    def _journey_searches(self, k: int) -> list[tuple[str, dict]]:
        """The searches that may find leg k of the action's flights, in order: the search of the
        journey it belongs to (cut where a leg reaches the trip's origin or destination), then the
        direct search of the leg alone (a trip whose ends the change moves has no such journey)."""
        args = self.action["arguments"]
        db = self.tools.db
        reservation = db.reservations.get(args.get("reservation_id") or "")
        ends = {args.get("origin") or getattr(reservation, "origin", None)}
        ends.add(args.get("destination") or getattr(reservation, "destination", None))
        legs = []
        for leg in args["flights"]:
            flight = db.flights.get(leg.get("flight_number"))
            if flight is None:
                return []
            legs.append((flight.origin, flight.destination, leg.get("date")))
        journeys, current = [], []
        for i, leg in enumerate(legs):
            current.append(i)
            if leg[1] in ends:
                journeys.append(current)
                current = []
        if current:
            journeys.append(current)
        journey = next(j for j in journeys if k in j)
        first, last = legs[journey[0]], legs[journey[-1]]
        tool = "search_direct_flight" if len(journey) == 1 else "search_onestop_flight"
        out = [(tool, {"origin": first[0], "destination": last[1], "date": first[2]})]
        leg = ("search_direct_flight", {"origin": legs[k][0], "destination": legs[k][1], "date": legs[k][2]})
        return out if leg in out else [*out, leg]

    def _insert_flight_search(
        self, pred: Callable[[str, Any], bool], consumer_ptr: str, for_ptr: str | None = None
    ) -> dict | None:
        """Insert the search that finds the flight at `consumer_ptr` of the action (for the
        argument `for_ptr`, by default that flight's own); the value's provenance, or None."""
        k = int(_FLIGHT_PTR.fullmatch(consumer_ptr).group(1))
        found = [
            (name, args)
            for name, args in self._journey_searches(k)
            if self._find_scoped(name, args, self._peek(name, args), pred) is not None
        ]
        if not found:
            return None
        name, args = found[0]
        prov = {}
        searching, self._searching = getattr(self, "_searching", False), True
        try:  # the search's own arguments are sourced by the ordinary rule, never by a search
            for ptr, value in leaves(args):
                p = self._resolve(name, ptr, value, for_ptr or consumer_ptr, allow_insert=True)
                if p is None:
                    return None
                prov[ptr] = p
        finally:
            self._searching = searching
        self._append_inserted(name, args, prov, {"call": None, "argument": for_ptr or consumer_ptr, "reason": "value"})
        return self._from_reads(pred, top_argument(consumer_ptr))
