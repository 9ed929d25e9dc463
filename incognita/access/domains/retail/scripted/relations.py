"""Records a customer describes by their relation to other records, or by an alias.

Used by incognita.access.domains.retail.scripted.picking (`EntryPicker._best_entry`, through `RelationPicker`)
when a scripted agent chooses one of the customer's orders: the order a change acts on
(its *target*) or the order whose address a change of address copies (its *destination*).
Customers rarely name an order by its id or its address; they say "my LA order", "the order
sent to Texas", "the order with two watches", "the laptop order", "change it to my NYC
address (it is in my other order)", "the order sent to the old address ... change it to the
new home". None of those words is a value of the record, so the general fact matching of
incognita.access.domains.retail.scripted.choosing cannot see them; this module reads them as relations:

- *Places.* A place word matches an address when it is the address's city, one of a short
  table of everyday city abbreviations (`CITY_ALIASES`: NYC, LA, SF ...) for it, its state's
  name (incognita.access.cards.source_words.US_STATES, "Texas" for TX) or, written in capitals, its
  state's postal code.
- *Target phrases* (in a demand whose action words are the change's): "your <words> order",
  "the order sent to <words>", "the order with <number> <item kind>". The words select an
  order whose address is that place or which holds a line of that item kind; a number
  selects an order with exactly that many lines of the kind ("items" counts every line);
  "old", "previous", "former", "wrong" select an order whose address is not the one the
  change writes.
- *Destination phrases* (in a demand asking for an address change): "to your <words>
  address / home / house". Place words select the order at that place; "new" (or
  "current") selects the order holding an item that a demand speaking of the new home
  names ("bought a lamp sent to this new address"), or, when no demand names one, an order
  on the same street as the profile's address at another number ("a new house on the same
  street").
- *The order a change's lines come from.* When a change's other arguments are lines read
  from one order record, the change acts on that order (its lines are that order's).
- *All orders* ("correct all order addresses", "both orders"): the next order not yet
  changed, in list order.
- *The item replaced.* The details that selected the line a replacement replaces ("the
  1000-piece intermediate one") describe the old item: they are not matched against the
  replacement's candidates (`_replaced_descriptions`, read by `EntryPicker._said`).

Placeholders of a masked demand (`<item:...>`) inside such a phrase are asked for, as one
asks "which item?", and read as the customer's released value; never as words themselves.
The score is an extra tier right after the consuming call's own words (docs/episodes.md).
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.retail.scripted.choosing import leaf_texts, match_score, superlative
from incognita.access.domains.retail.scripted.wording import action_words
from incognita.access.domains.retail.source_words import US_STATES
from incognita.access.episodes.scripted.language import strip_placeholders

# Widely used abbreviations and nicknames of large US cities (everyday language, like the
# state names): a customer says "my NYC address", the record says "New York".
CITY_ALIASES = {
    "nyc": "new york",
    "ny": "new york",
    "la": "los angeles",
    "sf": "san francisco",
    "dc": "washington",
    "philly": "philadelphia",
    "vegas": "las vegas",
    "nola": "new orleans",
}
NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "single": 1,
    "both": 2,
}
ADDRESS_FIELDS = ("address1", "address2", "city", "state", "country", "zip")
_AWAY = {"old", "previous", "former", "wrong", "incorrect", "mistaken"}
_NEW = {"new", "current", "present"}
_GENERIC = {"item", "items", "thing", "things", "product", "products"}

_W = r"(?:<[^<>\s]+>|[A-Za-z0-9][\w'-]*)"  # a word or a placeholder
_PHRASE = rf"({_W}(?:\s+{_W}){{0,2}})"
_TARGET_ADJ = re.compile(rf"\b(?:your|the|my|this|that)\s+{_PHRASE}\s+orders?\b", re.IGNORECASE)
_TARGET_SENT = re.compile(
    rf"\borders?\s+(?:that\s+|which\s+)?(?:was\s+|were\s+|is\s+|got\s+)?(?:sent|shipped|delivered|going|mailed|addressed)"
    rf"\s+to\s+(?:the\s+|your\s+|my\s+|an?\s+)?{_PHRASE}",
    re.IGNORECASE,
)
_TARGET_COUNT = re.compile(
    rf"\borders?\s+(?:with|containing|that\s+has|that\s+had|holding|of)\s+({_W})\s+{_PHRASE}", re.IGNORECASE
)
# "Sent (to) your son's address in Washington DC": the place is named after the address it
# qualifies, within the clause of the sending verb (a destination later in the sentence is not).
_TARGET_ADDRESS_IN = re.compile(
    rf"\b(?:sent|shipped|delivered|mailed|addressed)\b(?:\s+[\w'-]+){{0,6}}?\s+(?:address|home|house|place)"
    rf"\s+(?:in|at)\s+{_PHRASE}",
    re.IGNORECASE,
)
_EVERY_ORDER = re.compile(r"\b(?:all|every|each|both)\s+(?:of\s+)?(?:my\s+|your\s+|the\s+)?orders?\b", re.IGNORECASE)
_DESTINATION = re.compile(
    rf"\bto\s+(?:your|the|my|this|that|our)\s+{_PHRASE}\s+(?:address|home|house|place)\b", re.IGNORECASE
)
_NEW_HOME = re.compile(r"\b(?:new|current)\s+(?:house|home|address|place|apartment)\b", re.IGNORECASE)
_SAME_STREET = re.compile(r"\bsame\s+street\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"<([^<>\s]+)>")


# --------------------------------------------------------------------------- places


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def place_matches(words: str, address: Any) -> bool:
    """Does some run of these words name the address's city or state (module docstring)?"""
    if not isinstance(address, dict):
        return False
    city = _norm(str(address.get("city") or ""))
    state = str(address.get("state") or "").strip().upper()
    tokens = words.split()
    for i in range(len(tokens)):
        for j in range(i + 1, len(tokens) + 1):
            raw = " ".join(tokens[i:j])
            run = _norm(raw)
            if not run:
                continue
            if city and (run == city or CITY_ALIASES.get(run) == city):
                return True
            if state and (US_STATES.get(run) == state or (raw.strip(".,") == state and len(state) == 2)):
                return True
    return False


def _street(address1: str) -> str:
    """The street of an address line without its house number: '12 Oak Road' -> 'oak road'."""
    return _norm(re.sub(r"^\s*\d+\w*\s+", "", address1 or ""))


# --------------------------------------------------------------------------- phrases


def phrase_tokens(text: str) -> list[str]:
    """The placeholder tokens inside the relation phrases of a demand (to ask for first)."""
    found = []
    for pattern in (_TARGET_ADJ, _TARGET_SENT, _TARGET_ADDRESS_IN, _TARGET_COUNT, _DESTINATION):
        for m in pattern.finditer(text):
            found += _PLACEHOLDER.findall(m.group(0))
    return list(dict.fromkeys(found))


def _fill(phrase: str, released: dict[str, str]) -> str:
    """The phrase with each placeholder replaced by the customer's released value (dropped
    when it was not released)."""
    return " ".join(_PLACEHOLDER.sub(lambda m: f" {released.get(m.group(1), '')} ", phrase).split())


def target_descriptors(text: str, released: dict[str, str]) -> list[tuple]:
    """What a demand says about the order a change acts on: ("words", w), ("away",),
    ("count", n, kind)."""
    out: list[tuple] = [("every",)] if _EVERY_ORDER.search(text) else []
    for m in _TARGET_COUNT.finditer(text):
        number = m.group(1).lower()
        n = int(number) if number.isdigit() else NUMBER_WORDS.get(number)
        if n:
            out.append(("count", n, _fill(m.group(2), released)))
    for pattern in (_TARGET_ADJ, _TARGET_SENT, _TARGET_ADDRESS_IN):
        for m in pattern.finditer(text):
            words = _fill(m.group(1), released)
            lowered = set(_norm(words).split())
            if lowered & _AWAY:
                out.append(("away",))
            elif words and not lowered <= _NEW | {"other", "another", "same"}:
                out.append(("words", words))
    return out


def destination_descriptors(text: str, released: dict[str, str]) -> list[tuple]:
    """What an address-change demand says about the address it wants: ("place", w) or ("new",)."""
    out: list[tuple] = []
    for m in _DESTINATION.finditer(text):
        words = _fill(m.group(1), released)
        lowered = set(_norm(words).split())
        if lowered & _NEW:
            out.append(("new",))
        elif words and not lowered & _AWAY:
            out.append(("place", words))
    return out


# --------------------------------------------------------------------------- records


def _lines(record: Any) -> list[dict]:
    items = record.get("items") if isinstance(record, dict) else None
    return [line for line in items or [] if isinstance(line, dict)]


def _line_texts(line: dict) -> list[str]:
    options = line.get("options") if isinstance(line.get("options"), dict) else {}
    return [str(line.get("name") or ""), *(str(v) for v in options.values())]


def holds_kind(line: dict, kind: str) -> bool:
    """Is the order line of this kind (its name or options state the words)?"""
    if _norm(kind) in _GENERIC:
        return True
    return match_score([kind], _line_texts(line)) >= 1


def target_score(descriptors: list[tuple], record: Any, destination: str | None, first: bool = False) -> int:
    """How many of the target descriptors the order record meets (`first`: it is the first
    order not yet changed, which "all orders" takes next)."""
    score = 0
    address = record.get("address") if isinstance(record, dict) else None
    for d in descriptors:
        if d[0] == "count":
            score += sum(holds_kind(line, d[2]) for line in _lines(record)) == d[1]
        elif d[0] == "every":
            score += first
        elif d[0] == "away":
            score += bool(destination and isinstance(address, dict) and address.get("address1") != destination)
        elif d[0] == "words":
            score += place_matches(d[1], address) or any(holds_kind(line, d[1]) for line in _lines(record))
    return score


def price_extreme_scores(demands: list[str], kinds: list[str], records: dict) -> dict[Any, int]:
    """Key -> 1 for the order holding the dearest (or cheapest) line of the item kind the
    customer named, when a price comparison it states ("return the more expensive one") is
    to be read across orders that each hold such a line."""
    # The latest demand stating one wins: a change of mind replaces the earlier comparison.
    stated = next(
        (
            found
            for t in reversed(demands)
            if len(found := {k for k, _ in superlative([t]) if k.startswith("price")}) == 1
        ),
        set(),
    )
    if not stated or not kinds:
        return {}
    lines = [
        (key, float(line["price"]))
        for key, record in records.items()
        for line in _lines(record)
        if isinstance(line.get("price"), (int, float)) and any(holds_kind(line, k) for k in kinds)
    ]
    if len({key for key, _ in lines}) < 2:
        return {}
    best = (min if stated == {"price_min"} else max)(price for _, price in lines)
    return {key: 1 for key, price in lines if price == best}


def destination_scores(
    descriptors: list[tuple], records: dict, demands: list[str], profile_address: Any
) -> dict[Any, int]:
    """Key -> how many destination descriptors the order record (its address) meets."""
    scores = {key: 0 for key in records}
    for d in descriptors:
        if d[0] == "place":
            for key, record in records.items():
                scores[key] += place_matches(d[1], (record or {}).get("address"))
            continue
        # "The new home": the order holding an item that a demand about the new home names.
        about_new = [t for t in demands if _NEW_HOME.search(t)]
        anchored = {
            key
            for key, record in records.items()
            for line in _lines(record)
            if any(match_score([t], [str(line.get("name") or "")]) >= 1 for t in about_new)
        }
        if not anchored and any(_SAME_STREET.search(t) for t in demands) and isinstance(profile_address, dict):
            # No item tells: a new house on the same street is that street at another number.
            street, line1 = _street(profile_address.get("address1", "")), profile_address.get("address1")
            anchored = {
                key
                for key, record in records.items()
                if isinstance((record or {}).get("address"), dict)
                and _street(record["address"].get("address1", "")) == street
                and record["address"].get("address1") != line1
            }
        for key in anchored:
            scores[key] += 1
    return scores


# --------------------------------------------------------------------------- the picker's hook


def pick_roles(calls: list, index: int | None, arg: str | None) -> list[tuple[Any, str]]:
    """(write call, "target" | "destination") for a pick of an order made while building call
    `index`: a change's own order is its target; a read whose result gives a change of
    address its address is that change's destination; any other read feeding a change is
    read on the change's target."""
    if arg != "order_id" or index is None:
        return []
    call = next((c for c in calls if c.index == index), None)
    if call is None:
        return []
    if call.write:
        return [(call, "target")]
    roles = []
    for write in (c for c in calls if c.write):
        fed = [
            ptr for ptr, src in write.args.items() for s in (src, *src.operands) if s.kind == "read" and s.call == index
        ]
        if fed:
            to_address = any(ptr.strip("/").split("/")[0] in ADDRESS_FIELDS for ptr in fed)
            roles.append((write, "destination" if to_address and "address" in write.name else "target"))
    return roles


class RelationPicker:
    """Mixed into EntryPicker: scores of the entries by the relations the customer states.
    Reads the agent's `plan`, `demands` (raw, placeholders kept), `released`, `unsure`,
    `results`, and uses `_ask_customer` and `_explore`."""

    def _relation_scores(self, free: list, choosing, explore: str | None):
        roles = pick_roles(self.plan.calls, getattr(choosing, "index", None), choosing.arg)
        if not roles:
            return {}

        demands = list(getattr(self, "demands", []))
        chosen = []  # (role, write, demands about it)
        for write, role in roles:
            kinds = {"address"} if role == "destination" else action_words(write.name)
            chosen.append((role, write, [t for t in demands if action_words(strip_placeholders(t)) & kinds]))
        asked = [tok for _, _, about in chosen for t in about for tok in phrase_tokens(t)]
        if any(role == "destination" for role, _, _ in chosen):
            asked += [tok for t in demands if _NEW_HOME.search(t) for tok in _PLACEHOLDER.findall(t)]
        for token in dict.fromkeys(asked):
            if token not in self.released and token not in self.unsure:
                yield from self._ask_customer(token, required=False)
        records = {}
        for key, entry in free:
            if isinstance(entry, dict):
                records[key] = entry
            elif explore and isinstance(entry, str):
                records[key] = yield from self._explore(explore, {choosing.arg: entry})
        if not records:
            return {}
        filled = [_fill(t, self.released) for t in demands]
        scores = {key: 0 for key in records}
        for role, write, about in chosen:
            if role == "destination":
                descriptors = [d for t in about for d in destination_descriptors(t, self.released)]
                got = destination_scores(descriptors, records, filled, self._profile_address())
            else:
                descriptors = [d for t in about for d in target_descriptors(t, self.released)]
                away_from = self._written_address(write)
                own = choosing.index == write.index  # the change's own order, not a read for it
                holding = self._lines_record(write) if own else None
                # The item kinds the demands name (their released placeholders), for a price
                # comparison read across the orders.
                kinds = [self.released[tok] for t in demands for tok in _PLACEHOLDER.findall(t) if tok in self.released]
                extreme = price_extreme_scores([_fill(t, self.released) for t in about], kinds, records)
                got = {
                    key: target_score(descriptors, rec, away_from, own and key == next(iter(records)))
                    + bool(holding and isinstance(rec, dict) and rec.get("order_id") == holding)
                    + extreme.get(key, 0)
                    for key, rec in records.items()
                }
            for key, value in got.items():
                scores[key] += value
        return scores

    def _replaced_descriptions(self, choosing) -> set[str]:
        """The customer's details that selected the line a replacement replaces ("the
        1000-piece intermediate one"): they describe the old item, not the one wanted."""
        if getattr(choosing, "slot", "") != "/new_item_ids":
            return set()
        call = next((c for c in self.plan.calls if c.index == getattr(choosing, "index", None)), None)
        old = call.args.get(f"/item_ids/{choosing.position}") if call else None
        return {self.released[t] for t in (old.selected_by if old else ()) if t in self.released}

    def _profile_address(self):
        for doc in self.results.values():
            if isinstance(doc, dict) and isinstance(doc.get("orders"), list) and isinstance(doc.get("address"), dict):
                return doc["address"]
        return None

    def _lines_record(self, write) -> str | None:
        """The order whose lines a change's other arguments are read from (a result that is one
        order record): the change acts on that order, since its lines are that order's."""
        for ptr, src in write.args.items():
            if ptr == "/order_id" or src.kind != "read" or src.call not in self.results:
                continue
            doc = self.results[src.call]
            if isinstance(doc, dict) and isinstance(doc.get("items"), list) and src.steps[:1] == ("items",):
                # Only when the order holds a line the customer described for that argument: a
                # read that landed on another order (an earlier run of the same read took the
                # described one) says nothing about which order the change acts on.
                described = [self.released[t] for t in src.selected_by if t in self.released]
                if described and not any(match_score(described, leaf_texts(line)) > 0 for line in doc["items"]):
                    continue
                return doc.get("order_id")
        return None

    def _written_address(self, write) -> str | None:
        """The first address line a change of address writes, when it is known already: a
        detail the customer released, or a field of a result read so far."""
        src = write.args.get("/address1")
        if src is None:
            return None
        if src.kind == "field":
            return self.released.get(src.token or "")
        if src.kind == "read" and src.call in self.results and "*" not in src.steps:
            node = self.results[src.call]
            for step in src.steps:
                node = node.get(step) if isinstance(node, dict) else None
            return node if isinstance(node, str) else None
        return None
