"""How the airline's scripted agent picks one entry of a collection it has read: a reservation of
the profile's list, a flight of a reservation or of a search, a passenger, a payment method.

The plan (incognita.access.episodes.loop.agent_plan) gives a value-free path; at each `*` the
agent chooses. The rule, for every collection alike (docs/airline.md states it with its sources):

1. Only admissible entries, while any is: what the consuming call's policy allows (a flight that
   is available with seats for the passengers in the cabin; a reservation the policy lets it
   cancel; no travel certificate for a change of flights or bags; a booking's payment limits; a
   card with a balance only if it covers the change's cost). A change's new flights replace the
   reservation's legs between their ends, which are then no flight it keeps.
2. Each element of a list is chosen for itself: an entry the call's other elements took from the
   same list is not taken again; nor one an earlier run of the same tool took for the same
   argument, where that argument is no payment and no record a change acts on.
3. The entry that states the most of the customer's selecting facts (their released values, in
   the forms the records hold: ISO dates, airport codes, names, kinds of payment, times of day),
   then the superlative they state (the most recent, the cheapest, the fastest, non-stop). A list
   of bare ids (a profile's reservations) is judged by reading each entry's record.
4. Undescribed: the entry at the argument's own place in a record's list, then one holding what
   the case's records hold under the argument's name, the payment the changed reservation was
   paid with, one the other records name, the one that can pay the most, the cheaper journey of a
   search, an earlier call's choice from the same list, the first.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from incognita.access.domains.airline import source_words as sw
from incognita.access.domains.airline.scripted import facts as fx
from incognita.access.domains.airline.scripted.paying import AS_MUCH, PAYMENTS_PER_BOOKING, Paying, capacity
from incognita.access.episodes.loop.agent_plan import PICK, Source
from incognita.access.episodes.scripted.picks import Choosing, GiveUp, has_path

_SAME_DAY = re.compile(r"\bsame\s+day\b", re.I)
_NEGATION = re.compile(r"\b(?:not|don't|never|no)\b[^.;,]*$", re.I)
# The policy's current time ("The current time is 2024-05-15 15:00:00 EST"): its day is
# source_words' POLICY_TODAY.
POLICY_NOW = dt.datetime.combine(sw.POLICY_TODAY, dt.time(15))
MAX_EXPLORED = 12  # bare ids read one by one to choose among them, at most
_CHANGES_PAID_WITHOUT_CERTIFICATE = ("update_reservation_flights", "update_reservation_baggages")


class FlightPicker(Paying):
    """The choosing half of the airline's scripted agent (module docstring); it relies on the
    agent's `results`, `explored`, `released`, `requests`, `chosen`, `used`, `tools`, `plan` and
    `_execute`."""

    def _read_value(self, src: Source, choosing: Choosing):
        if src.call not in self.results:
            raise GiveUp(f"the result of call {src.call} is missing: an earlier step was not carried out")
        node = self.results[src.call]
        for depth, step in enumerate(src.steps):
            if step == PICK:
                node = yield from self._pick(node, src, depth, choosing)
            elif isinstance(node, dict) and step in node:
                node = node[step]
            else:
                raise GiveUp(f"the result of call {src.call} has no {step!r} where the plan expects it")
        return node

    def _known_value(self, src: Source, choosing: Choosing) -> Any | None:
        return None

    def _pick(self, collection: Any, src: Source, depth: int, choosing: Choosing):
        if isinstance(collection, dict):
            entries = list(collection.items())
        elif isinstance(collection, list):
            entries = list(enumerate(collection))
        else:
            raise GiveUp(f"the result of call {src.call} has no collection where the plan expects one")
        rest = src.steps[depth + 1 :]
        entries = [(k, e) for k, e in entries if has_path(e, rest)] or entries
        if not entries:
            raise GiveUp(f"nothing to choose from in the result of call {src.call}")
        where = (src.call, src.steps[: depth + 1])
        taken = choosing.taken.setdefault(where, set())
        used = self.used.setdefault((where, choosing.call, choosing.slot), set())
        paying = choosing.slot.endswith("payment_id") or "payment_methods" in choosing.slot
        records = {}
        if all(isinstance(e, str) for _, e in entries) and len(entries) <= MAX_EXPLORED and choosing.arg:
            tool = self._reading_tool(choosing.arg)
            for key, entry in entries if tool else ():
                records[key] = yield from self._explore(tool, {choosing.arg: entry})
        # A record as last seen: a cancellation's result is the reservation now.
        views = {k: self._latest(records[k]) if k in records else e for k, e in entries}
        # The element itself is chosen for itself; a container of it (the connecting flights of a
        # one-stop journey) is shared by the elements it holds.
        innermost = PICK not in rest
        # The argument's element: flights/1/date and flights/1/flight_number are one.
        element = _element(choosing.pointer)
        mine = {k for k, e in taken if e != element}
        # An entry the call's arguments already hold by the customer's own words (a payment id).
        mine |= {k for k, _ in entries if isinstance(k, str) and k in choosing.values | self._said_arguments(choosing)}
        kinds = [views[k].get("source") for k in mine if isinstance(views.get(k), dict)]
        admissible = [(k, e) for k, e in entries if self._admissible(views[k], choosing, kinds)] or entries
        extras = self._same_day_extras(entries, views, src, choosing)
        admissible = [(k, e) for k, e in admissible if k in extras] or admissible
        replaced = self._replaced_legs(choosing, entries)
        admissible = [(k, e) for k, e in admissible if k not in replaced] or admissible
        # The record a change acts on may be changed again (its flights, then its cabin); one that
        # may not (cancelled) is ruled out by its state, above, and one a change already made no
        # longer what the customer described ("all my business flights", once downgraded) by
        # being seen as last changed.
        if paying or choosing.slot.lstrip("/") in self.subject_arguments:
            used = set()
        blocked = mine | used if innermost else set()
        if innermost:
            # Nor the flight another element took from another list (a leg the booking keeps from
            # the reservation is not booked again from the search's journey).
            blocked |= {k for k, _ in admissible if _same_flight(views[k], choosing.lines, element)}
        free = [(k, e) for k, e in admissible if k not in blocked] or admissible
        key = self._best(free, views, src, choosing, where, innermost, PICK in src.steps[:depth], depth == 0)
        self.chosen.setdefault((where, src.selected_by), key)
        taken.add((key, element))
        used.add(key)
        if innermost and element:
            choosing.lines[element] = views[key]
        return dict(entries)[key]

    # ----------------------------------------------------------------- the rule's steps

    def _admissible(self, entry: Any, choosing: Choosing, kinds: list) -> bool:
        """What the consuming call's policy allows (module docstring, 1); `kinds`: the kinds of
        payment the call's other payments took."""
        if isinstance(entry, dict) and entry.get("source") in PAYMENTS_PER_BOOKING:
            if kinds.count(entry["source"]) >= PAYMENTS_PER_BOOKING[entry["source"]]:
                return False
            if entry["source"] == "certificate" and choosing.call in _CHANGES_PAID_WITHOUT_CERTIFICATE:
                return False
            # What the episode's earlier changes paid with it is spent: a certificate once used,
            # a gift card down to its balance (the profile read before them still shows it whole).
            paid = self._paid_with(entry.get("id"))
            balance = entry.get("amount")
            if paid and isinstance(balance, (int, float)) and (entry["source"] == "certificate" or balance <= paid):
                return False
            # A card with a balance pays a change only if it covers what the change costs.
            charge = self._charge(choosing) if isinstance(entry.get("amount"), (int, float)) else None
            return charge is None or entry["amount"] >= charge
        if isinstance(entry, dict) and "reservation_id" in entry and self._is_change(choosing.index):
            if choosing.call == "cancel_reservation":
                return cancellable(entry)
            return entry.get("status") != "cancelled"
        legs = entry if isinstance(entry, list) else [entry]
        if legs and all(isinstance(f, dict) and "available_seats" in f for f in legs):
            cabin = self._cabin(choosing)
            people = len(choosing.args.get("passengers") or []) or 1
            return all(
                f.get("status") == "available" and (cabin is None or (f["available_seats"].get(cabin) or 0) >= people)
                for f in legs
            )
        return True

    def _best(
        self, free: list, views: dict, src: Source, choosing: Choosing, where, innermost: bool, nested: bool, top: bool
    ) -> Any:
        if len(free) == 1:
            return free[0][0]
        facts = [self.released[t] for t in src.selected_by if t in self.released]
        paying = choosing.slot.endswith("payment_id") or "payment_methods" in choosing.slot
        first = self._named_order(src.selected_by) if paying else {}
        # "Use the gift cards as much as possible": of one kind, the one that can pay the most.
        most = paying and any(AS_MUCH.search(d) and any(f"<{t}>" in d for t in first) for d in self.demands)
        times = [
            (self.released[t], self._negated(t)) for t in src.selected_by if t in self.released and _kind(t) == "time"
        ]
        # A superlative orders what the customer chooses among (a journey, a reservation), not the
        # legs inside one.
        cabin = self._cabin(choosing)
        order = {} if nested else _superlative_order(fx.superlatives(facts), free, views, cabin)
        near = self._other_texts(src.call)
        # What the record the call acts on names (the payment method the reservation was paid with).
        own = set(fx.leaves(self._reservation(choosing))) if choosing.args.get("reservation_id") else set()
        # What the case's other records hold under the argument's own name (a reservation's
        # origin, for the origin of a search).
        same_name = self._values_named(choosing.arg, src.call)
        earlier = self.chosen.get((where, src.selected_by))
        place = self._place_in_list(choosing, where)
        peers = self._peer_values(choosing) if choosing.arg else {}

        def score(item):
            key, _ = item
            view = views[key]
            texts = fx.leaves(view) + ([str(key).lower()] if isinstance(key, str) else [])
            texts += fx.keys(view)  # "all business flights": a record with flights, in business
            stated = sum(fx.states(f, texts) for f in facts)
            # The kinds of payment in the order the customer's words on paying name them.
            ranked = [first[t] for t in first if fx.states(self.released[t], texts)]
            named_first = -min(ranked, default=len(first))
            for phrase, negated in times:
                holds = fx.time_holds(phrase, view)
                stated += holds is not None and holds != negated
            # The element at the argument's place in a list a record holds (a search's results
            # are no list of the argument's); a leg inside a journey is the first one the call's
            # other arguments left.
            at_place = innermost and not nested and not top and bool(place) and key == place[0]
            # Undescribed journeys of a search: the cheaper in the cabin.
            price = _measure("least", view, cabin) if top else None
            named = isinstance(key, str) and key.lower() in near
            in_record = isinstance(key, str) and key.lower() in own
            named_here = bool(same_name & set(texts))
            # A record's entry agreeing with the call's other arguments by name (a search's date:
            # that of the reservation's flight leaving from the search's origin).
            agrees = sum(isinstance(view, dict) and view.get(n) == v for n, v in peers.items())
            return (
                stated,
                named_first,
                capacity(view) if most else 0,
                order.get(key, 0),
                not innermost and key == earlier,
                at_place,
                agrees,
                named_here,
                in_record,
                named,
                capacity(view),
                -(price or 0),
                key == earlier,
            )

        return max(free, key=score)[0]  # max keeps the first of equals

    # ----------------------------------------------------------------- what the agent knows

    def _charge(self, choosing: Choosing) -> float | None:
        """What a change of flights costs, as the policy prices it: every flight the reservation
        keeps (same flight, date and cabin) at the price paid, every new one at its searched price,
        times the passengers, less what the reservation's flights cost. None when not a change of
        flights or a price is unknown."""
        if choosing.call != "update_reservation_flights" or not choosing.args.get("flights"):
            return None
        reservation = self._reservation(choosing)
        if reservation is None:
            return None
        cabin = choosing.args.get("cabin") or reservation.get("cabin")
        searched = searched_flights(self.results.values())
        total = 0
        for leg in choosing.args["flights"]:
            kept = next(
                (
                    f
                    for f in reservation.get("flights") or []
                    if cabin == reservation.get("cabin")
                    and (f.get("flight_number"), f.get("date")) == (leg.get("flight_number"), leg.get("date"))
                ),
                None,
            )
            price = (
                kept.get("price")
                if kept
                else next(
                    (f["prices"].get(cabin) for f in searched if f.get("flight_number") == leg.get("flight_number")),
                    None,
                )
            )
            if not isinstance(price, (int, float)):
                return None
            total += price
        paid = sum(f.get("price") or 0 for f in reservation.get("flights") or [])
        return (total - paid) * len(reservation.get("passengers") or [])

    def _replaced_legs(self, choosing: Choosing, entries: list) -> set:
        """The reservation's flights that the call's new flights replace: a new flight from A to B
        replaces the reservation's consecutive flights from A to B (its journey), so they are no
        flight the change keeps."""
        legs = dict(entries)
        if choosing.call != "update_reservation_flights" or not all(
            isinstance(f, dict) and "price" in f and "origin" in f for f in legs.values()
        ):
            return set()
        held = {(f.get("flight_number"), f.get("date")) for f in legs.values()}
        flights = choosing.args.get("flights") or []
        place = _element(choosing.pointer)
        own = flights[place[0]] if place and place[0] < len(flights) and isinstance(flights[place[0]], dict) else {}
        # (Its date may be derived after its number: then the number alone says whether it is kept.)
        kept = (
            (own.get("flight_number"), own.get("date")) in held
            if own.get("date")
            else own.get("flight_number") in {number for number, _ in held}
        )
        if own.get("flight_number") and not kept:
            return set()  # this element is a new flight: what it reads of the reservation is the flight it replaces
        searched = {f.get("flight_number"): f for f in searched_flights(self.results.values())}
        order = sorted(legs)
        out = set()
        for new in flights:
            if not isinstance(new, dict) or (new.get("flight_number"), new.get("date")) in held:
                continue
            found = searched.get(new.get("flight_number"))
            if not found:
                continue
            for i, start in enumerate(order):
                if legs[start].get("origin") != found.get("origin"):
                    continue
                for end in order[i:]:
                    if legs[end].get("destination") == found.get("destination"):
                        out |= set(order[i : order.index(end) + 1])
                        break
        return out

    def _said_arguments(self, choosing: Choosing) -> set[str]:
        """The values of the call's arguments that are the customer's own words, as said."""
        call = next((c for c in self.plan.calls if c.index == choosing.index), None)
        return {
            str(self.released[src.token])
            for src in (call.args.values() if call else ())
            if src.kind == "field" and src.token in self.released
        }

    def _same_day_extras(self, entries: list, views: dict, src: Source, choosing: Choosing) -> set:
        """ "Multiple flights on the same day", to cancel: of the customer's own reservations that
        fly on one day (all it holds, flown or not), those that state fewer of the customer's facts
        than another of that day (what it knows of its trip tells the one to keep); of equals, the
        one the policy lets the agent cancel, if another stays. Empty where no such fact is said."""
        facts = [self.released[t] for t in src.selected_by if t in self.released]
        if choosing.call != "cancel_reservation" or not any(_SAME_DAY.search(f) for f in facts):
            return set()
        owner = next(
            (
                (d["name"].get("first_name"), d["name"].get("last_name"))
                for d in self.results.values()
                if isinstance(d, dict) and isinstance(d.get("name"), dict) and "reservations" in d
            ),
            None,
        )
        stated, days = {}, {}
        for key, _ in entries:
            view = views.get(key)
            if not isinstance(view, dict) or view.get("status") == "cancelled":
                continue
            people = {(p.get("first_name"), p.get("last_name")) for p in view.get("passengers") or []}
            if owner and owner not in people:
                continue  # another passenger's trip: not the customer's duplicate
            texts = fx.leaves(view)
            stated[key] = sum(fx.states(f, texts) for f in facts)
            for day in {f.get("date") for f in view.get("flights") or []}:
                days.setdefault(day, []).append(key)
        extras = set()
        for group in (g for g in days.values() if len(g) > 1):
            kept = [k for k in group if stated[k] == max(stated[g] for g in group)]
            if len(kept) > 1:
                # Equal: the one the policy does not let the agent cancel is the one that stays.
                kept = [k for k in kept if not cancellable(views[k])]
            if kept:
                extras |= set(group) - set(kept)
        return extras

    def _place_in_list(self, choosing: Choosing, where) -> tuple[int, ...]:
        """The argument's place among the call's elements that draw from this list: the
        passengers after the customer, read from its saved passengers, start at its first."""
        place = _element(choosing.pointer)
        call = next((c for c in self.plan.calls if c.index == choosing.index), None)
        if not place or call is None:
            return place
        call_index, steps = where
        before = {
            _element(pointer)[0]
            for pointer, src in call.args.items()
            if _element(pointer)
            and _element(pointer)[0] < place[0]
            and src.kind == "read"
            and src.call == call_index
            and src.steps[: len(steps)] == steps
        }
        return (len(before), *place[1:])

    def _peer_values(self, choosing: Choosing) -> dict:
        """The call's other top-level arguments whose values are known now: those built, and
        those read from a record by field names alone (no entry to choose)."""
        call = next((c for c in self.plan.calls if c.index == choosing.index), None)
        out = {}
        for pointer, src in (call.args if call else {}).items():
            name = pointer.lstrip("/")
            if "/" in name or name == choosing.arg:
                continue
            if name in choosing.args:
                out[name] = choosing.args[name]
            elif src.kind == "read" and PICK not in src.steps and isinstance(self.results.get(src.call), dict):
                node = self.results[src.call]
                for step in src.steps:
                    node = node.get(step) if isinstance(node, dict) else None
                if isinstance(node, (str, int, float)):
                    out[name] = node
        return out

    def _latest(self, record: Any) -> Any:
        """The latest result holding the same reservation as an explored record."""
        rid = record.get("reservation_id") if isinstance(record, dict) else None
        for i in sorted(self.results, reverse=True):
            doc = self.results[i]
            if rid and isinstance(doc, dict) and doc.get("reservation_id") == rid:
                return doc
        return record

    def _reservation(self, choosing: Choosing) -> dict | None:
        """The reservation the call acts on, as last read (a change's result is the record now)."""
        rid = choosing.args.get("reservation_id") or choosing.record
        found = None
        for doc in [*self.explored.values(), *(self.results[i] for i in sorted(self.results))]:
            if isinstance(doc, dict) and rid and doc.get("reservation_id") == rid:
                found = doc
        return found

    def _negated(self, token: str) -> bool:
        """Does the customer's demand that names this detail say it does not want it ("you do
        not want to fly <time>")?"""
        return any(f"<{token}>" in d and _NEGATION.search(d.split(f"<{token}>")[0]) for d in self.demands)

    def _cabin(self, choosing: Choosing) -> str | None:
        """The cabin the call books or changes to, once chosen, else the reservation's."""
        cabin = choosing.args.get("cabin")
        if cabin:
            return str(cabin)
        return (self._reservation(choosing) or {}).get("cabin")

    def _is_change(self, index: int | None) -> bool:
        return any(c.index == index and c.write for c in self.plan.calls)

    def _values_named(self, arg: str | None, exclude: int) -> set[str]:
        return {
            str(doc[arg]).lower()
            for i, doc in self.results.items()
            if i != exclude and arg and isinstance(doc, dict) and not isinstance(doc.get(arg, []), (dict, list))
        }

    def _other_texts(self, exclude: int) -> set[str]:
        return {t for i, doc in self.results.items() if i != exclude for t in fx.leaves(doc)}

    def _reading_tool(self, arg: str) -> str | None:
        """The read whose one parameter is the argument (a reservation id: its details)."""
        for name, tool in self.tools.items():
            if not tool.get("write") and tool.get("params") == [arg]:
                return name
        return None


def cancellable(reservation: dict) -> bool:
    """May the policy cancel it: not cancelled, no flight flown, and booked within the last 24
    hours, in business, or with travel insurance (the policy's "Cancel flight" conditions; the
    airline-cancelled one the agent cannot see in a reservation)."""
    dates = [str(f.get("date")) for f in reservation.get("flights") or []]
    if reservation.get("status") == "cancelled" or not dates or min(dates) <= sw.POLICY_TODAY.isoformat():
        return False
    recent = str(reservation.get("created_at") or "") >= (POLICY_NOW - dt.timedelta(hours=24)).isoformat()
    return recent or reservation.get("cabin") == "business" or reservation.get("insurance") == "yes"


def searched_flights(docs) -> list[dict]:
    """Every flight the search results list (one-stop journeys' flights too), with its prices."""
    out = []
    for doc in docs:
        for entry in doc if isinstance(doc, list) else []:
            for flight in entry if isinstance(entry, list) else [entry]:
                if isinstance(flight, dict) and isinstance(flight.get("prices"), dict):
                    out.append(flight)
    return out


def _kind(token: str) -> str:
    """A card field's kind from its token (time_2: time)."""
    return re.sub(r"_\d+$", "", token)


def _element(pointer: str) -> tuple[int, ...]:
    """The list positions in an argument's pointer (/flights/1/date: (1,))."""
    return tuple(int(p) for p in pointer.split("/") if p.isdigit())


def _superlative_order(names: list[str], free: list, views: dict, cabin: str | None) -> dict:
    """key -> rank (higher is preferred) by the first superlative that orders these entries."""
    for name in names:
        if name == "latest":
            # "The last reservation": the last the profile lists (keys of a list are positions);
            # it orders reservations, not the flights inside one.
            values = {k: k for k, _ in free if isinstance(k, int) and _is_reservation(views[k])}
        else:
            values = {k: _measure(name, views[k], cabin) for k, _ in free}
        values = {k: v for k, v in values.items() if v is not None}
        if not values:
            continue
        # Equal values rank equal (every flight of a record is non-stop: none is preferred).
        levels = sorted(set(values.values()), reverse=name in ("least", "earliest", "second_cheapest", "fastest"))
        if len(levels) < 2:
            continue
        rank = {k: levels.index(v) + 1 for k, v in values.items()}  # the smallest ranks highest, where asked
        if name == "second_cheapest":
            second = levels[-2]
            rank = {k: len(levels) + 1 if values[k] == second else r for k, r in rank.items()}
        return rank
    return {}


def _same_flight(entry: Any, lines: dict, element: tuple) -> bool:
    """Is the entry a flight (its number on its date) that the call's other elements took?"""
    if not isinstance(entry, dict) or not entry.get("flight_number") or not entry.get("date"):
        return False
    return any(
        isinstance(other, dict)
        and (other.get("flight_number"), other.get("date")) == (entry["flight_number"], entry["date"])
        for at, other in lines.items()
        if at != element
    )


def _is_reservation(entry: Any) -> bool:
    """A reservation: its record, or its bare id in a profile's list."""
    return isinstance(entry, str) or (isinstance(entry, dict) and "reservation_id" in entry)


def _measure(name: str, entry: Any, cabin: str | None):
    legs = entry if isinstance(entry, list) else [entry]
    if not all(isinstance(f, dict) for f in legs):
        return None
    if name in ("least", "second_cheapest", "most"):
        if all("prices" in f for f in legs) and cabin:
            prices = [f["prices"].get(cabin) for f in legs]
            return None if None in prices else sum(prices)
        amount = legs[0].get("amount") if len(legs) == 1 else None
        return amount if isinstance(amount, (int, float)) else None
    if name in ("earliest", "later"):
        return legs[0].get("scheduled_departure_time_est")
    if name == "fastest":
        # From the first departure to the last arrival, a day added where a time goes back.
        times = [f.get(k) for f in legs for k in ("scheduled_departure_time_est", "scheduled_arrival_time_est")]
        if None in times:
            return None
        minutes = [int(t[:2]) * 60 + int(t[3:5]) for t in map(str, times)]
        total = 0
        for before, after in zip(minutes, minutes[1:]):
            total += (after - before) % (24 * 60)
        return total
    if name == "nonstop":
        return 1 if isinstance(entry, dict) else 0
    return None
