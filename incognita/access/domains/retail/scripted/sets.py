"""Sets and counts: how a scripted agent reads "all", "every", "both", "everything except
the X", "an order with five items" and the status a change needs.

The plan (incognita.access.episodes.loop.agent_plan) has one pick per argument slot; a customer who says "return
everything except the coffee machine" or "switch all items to their cheapest options"
names a set of entries, and the slots are filled from that set. `SetChooser` is mixed into
incognita.access.domains.retail.scripted.picking.EntryPicker, whose `_best_entry` calls `_narrow_to_set` on the
entries still free before it scores them (and `_pick` asks `quantified`); the scripted
agent's `_report` calls `refund_total`. All rules are general; none names a task, an id or a product.

- Status from the tool: a change whose tool name holds an order status ("cancel *pending*
  order", "return *delivered* order items") acts only on records in that status; so does
  a read whose entries such a change takes (the lines of the order read; an address merely
  copied from a record leaves its status free). Records in another status are set aside
  when any fits (the status is read from the agent's own reads).
- Enough lines: a read whose result a change takes N entries from (three item slots from
  the order's items) must be of a record holding at least N of them.
- A stated count: "an order with five items" keeps the orders with exactly five lines, for
  a change of the kind the same demand asks for (a cancellation).
- Exclusion over a quantifier: "everything except a keyboard and a mouse", "all items but
  the tablet": each excluded phrase sets aside the lines that share the most words with it
  ("coffee machine" sets aside the one line named "... Machine").
- A per-line superlative: "switch all items to their cheapest options" selects the lines
  whose product has an available variant cheaper (or, for "most expensive", dearer) than
  the line; the agent reads each line's product to know.
- Record order: slots filled from a set the customer named take its members in the order
  the record lists them (a change of several lines applies its pairs in that order), a
  slot's own details ("the shoe") still picking their member first, by words only.
- A pair stays one product: an old item and its replacement at the same list position
  are variants of one product, so the old line is of the product whose variants the
  replacement is read from.
- The same details kept: "the new shoe is still the same size" keeps, for the item the
  phrase names, the variants whose size is the old line's.
- The same description again: under a quantifier ("modify all my t-shirts to purple"), a
  later run of the same tool may take the entry an earlier run took by the same details.
- Left for later: when a later read from the same list describes its record with more
  details than this one ("the bookshelf and the jigsaw" after "the bookshelf"), a record
  holding only this pick's details is taken first and the fuller one left for the later.
- Money back: asked "how much money will I get back", the agent tells the sum of what its
  cancellations and returns refund (the item prices of the cancelled orders and of the
  returned lines).
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.retail.scripted.choosing import (
    PRICE_MAX,
    PRICE_MIN,
    leaf_texts,
    match_score,
    reading_tool,
    strip_placeholders,
    terms,
    value_at,
)
from incognita.access.domains.retail.scripted.wording import action_words
from incognita.access.episodes.loop.agent_plan import PICK

# Order statuses a tool's name can state (a general table of the domain's record states).
STATUSES = ("pending", "processed", "delivered", "cancelled")
NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}
_WITH_COUNT = re.compile(r"\bwith (\d+|" + "|".join(NUMBERS) + r") (?:\w+ )?(?:items?|products?|things)\b")
_QUANTIFIER = r"(?:everything|all|every|each|both)"
_EXCLUSION = re.compile(
    rf"\b{_QUANTIFIER}\b(?:\s+[\w'-]+){{0,5}}?\s+(?:except(?:\s+for)?|other than|apart from|besides)\s+(.+)"
    rf"|\b(?:everything|all)\s+but\s+(.+)",
    re.IGNORECASE,
)
# Where an excluded phrase ends: punctuation, or a word that starts a new clause.
_PHRASE_END = re.compile(r"[.;:()!?]|,\s*but\b|\b(?:that|which|who|in|from|on|because|since|but|so)\b")
_ARTICLE = re.compile(r"^(?:the|a|an|my|your|one|this|that)\s+")
_ALL_ITEMS = re.compile(
    r"\b(?:all|every|each)\s+(?:of\s+)?(?:your\s+|my\s+|the\s+)?(?:items?|products?)\b|\beverything\b"
)
_SAME = re.compile(r"\b(?:exact\s+|very\s+)?same\s+((?:[a-z]+(?:\s+and\s+|\s*,\s*)?){1,3})")
_MONEY_BACK = re.compile(r"\bhow much\b.*\b(?:back|refund(?:ed)?)\b", re.IGNORECASE)
_QUANTIFIED = re.compile(rf"\b{_QUANTIFIER}\b", re.IGNORECASE)


def tool_statuses(tool: str) -> set[str]:
    """The record statuses a tool's name states (cancel_pending_order -> {pending})."""
    return {w for w in tool.lower().split("_") if w in STATUSES}


def consuming_writes(plan, index: int | None) -> list:
    """The planned changes that act on call `index`: itself, when it is a change, and the
    changes taking entries of its result (a line of the order it read)."""
    out = []
    for call in plan.calls:
        if not call.write:
            continue
        # A change acts on a read's record when it takes entries of it (the lines of the
        # order read); values merely copied from it (an address) leave its status free.
        if call.index == index or any(
            s.kind == "read" and s.call == index and PICK in s.steps
            for src in call.args.values()
            for s in (src, *src.operands)
        ):
            out.append(call)
    return out


def slots_from(plan, index: int | None) -> dict[tuple[str, ...], int]:
    """Collection path in call `index`'s result -> how many entries one change takes from it
    (three item slots read /items/*/item_id: {("items",): 3})."""
    out: dict[tuple[str, ...], int] = {}
    for call in consuming_writes(plan, index):
        # Slots at one list position (item_ids/0 and new_item_ids/0 of an exchange for the same
        # item) may take one line: count positions, not slots.
        counts: dict[tuple[str, ...], set[str]] = {}
        for pointer, src in call.args.items():
            if src.kind == "read" and src.call == index and src.call != call.index and PICK in src.steps:
                prefix = src.steps[: src.steps.index(PICK)]
                last = pointer.rsplit("/", 1)[-1]
                counts.setdefault(prefix, set()).add(last if last.isdigit() else pointer)
        for prefix, positions in counts.items():
            out[prefix] = max(out.get(prefix, 0), len(positions))
    return out


def stated_count(demands: list[str], tools: list[str], action_words) -> int | None:
    """The number of lines a demand says its order holds ("a pending order with five
    items"), from a demand asking for the same kind of change as one of `tools`."""
    wanted = set().union(*(action_words(t) for t in tools)) if tools else set()
    for demand in demands:
        m = _WITH_COUNT.search(demand.lower())
        if m and action_words(demand) & wanted:
            word = m.group(1)
            return int(word) if word.isdigit() else NUMBERS[word]
    return None


def keep_records(
    free: list, records: dict, statuses: set[str], counts: dict[tuple[str, ...], int], exact: int | None
) -> list:
    """The entries whose records fit the change: its status, enough lines for its slots, the
    stated number of lines. Each test keeps the entries that pass it, when any do."""
    tests = []
    if statuses:
        tests.append(lambda doc: isinstance(doc, dict) and doc.get("status") in statuses)
    for prefix, n in counts.items():
        tests.append(
            lambda doc, p=prefix, n=n: isinstance(value_at(doc, p), (list, dict)) and len(value_at(doc, p)) >= n
        )
    if exact is not None:
        tests.append(
            lambda doc: isinstance(doc, dict) and isinstance(doc.get("items"), list) and len(doc["items"]) == exact
        )
    for test in tests:
        if not any(isinstance(records.get(k), dict) for k, _ in free):
            break
        passing = [(k, e) for k, e in free if test(records.get(k))]
        free = passing or free
    return free


# --------------------------------------------------------------------------- lines


def is_line(entry: Any) -> bool:
    return isinstance(entry, dict) and "item_id" in entry and "product_id" in entry and "name" in entry


def excluded_phrases(said: list[str]) -> list[str]:
    """What a quantified exclusion sets aside: "everything except a keyboard and a mouse"
    -> ["keyboard", "mouse"]."""
    out = []
    for text in said:
        for m in _EXCLUSION.finditer(strip_placeholders(text)):
            rest = (m.group(1) or m.group(2) or "").lower()
            rest = _PHRASE_END.split(rest, maxsplit=1)[0]
            for part in re.split(r",|\band\b|\bor\b", rest):
                part = _ARTICLE.sub("", part.strip())
                if terms(part):
                    out.append(part)
    return list(dict.fromkeys(out))


def _line_terms(line: dict) -> set[str]:
    values = [str(line.get("name", ""))] + [str(v) for v in (line.get("options") or {}).values()]
    return set().union(*(terms(v) for v in values))


def excluded_lines(phrases: list[str], entries: list) -> set:
    """Keys of the lines each phrase names best (most shared words, at least one)."""
    out: set = set()
    for phrase in phrases:
        wanted = terms(phrase)
        overlap = {k: len(wanted & _line_terms(e)) for k, e in entries if is_line(e)}
        best = max(overlap.values(), default=0)
        if best > 0:
            out |= {k for k, n in overlap.items() if n == best}
    return out


def per_line_superlative(said: list[str]) -> str | None:
    """price_min / price_max when the customer puts every line to its cheapest or dearest
    option ("switch all items to their cheapest options")."""
    for text in said:
        text = strip_placeholders(text).lower()
        if not _ALL_ITEMS.search(text):
            continue
        if PRICE_MIN.search(text):
            return "price_min"
        if PRICE_MAX.search(text):
            return "price_max"
    return None


def has_better_variant(line: dict, product: Any, kind: str) -> bool:
    """Does the product offer an available variant cheaper (price_min) or dearer than the line?"""
    variants = product.get("variants") if isinstance(product, dict) else None
    if not isinstance(variants, dict) or not isinstance(line.get("price"), (int, float)):
        return False
    prices = [v.get("price") for v in variants.values() if isinstance(v, dict) and v.get("available") is True]
    prices = [p for p in prices if isinstance(p, (int, float))]
    return any(p < line["price"] for p in prices) if kind == "price_min" else any(p > line["price"] for p in prices)


def paired_product(call, pointer: str, results: dict) -> str | None:
    """The product an old item's replacement is read from: the variants read at the same
    position of another list argument of the call (item_ids/1 pairs with new_item_ids/1)."""
    if call is None or not re.search(r"/\d+$", pointer):
        return None
    slot, position = pointer.rsplit("/", 1)
    for other, src in call.args.items():
        if other == pointer or not other.endswith("/" + position) or other.rsplit("/", 1)[0] == slot:
            continue
        doc = results.get(src.call) if src.kind == "read" else None
        if isinstance(doc, dict) and isinstance(doc.get("variants"), dict) and doc.get("product_id"):
            return str(doc["product_id"])
    return None


def kept_options(said: list[str], old: Any) -> dict[str, str]:
    """Options of the old line the customer keeps ("the new shoe is still the same size"),
    from sentences that name that item (or name no product at all)."""
    if not isinstance(old, dict) or not isinstance(old.get("options"), dict):
        return {}
    name = terms(str(old.get("name", "")))
    out = {}
    for text in said:
        for sentence in re.split(r"(?<=[.!?])\s+|\(", strip_placeholders(text).lower()):
            for m in _SAME.finditer(sentence):
                if not terms(sentence) & name:
                    continue
                for word in re.split(r"\s+and\s+|\s*,\s*|\s+", m.group(1)):
                    for option, value in old["options"].items():
                        if word and word in terms(option) | {option.lower()}:
                            out[option] = str(value)
    return out


def keep_variants(free: list, kept: dict[str, str]) -> list:
    fits = [
        (k, e)
        for k, e in free
        if isinstance(e, dict)
        and isinstance(e.get("options"), dict)
        and all(str(e["options"].get(o)) == v for o, v in kept.items())
    ]
    return fits or free


def filled(demands: list[str], released: dict[str, str]) -> list[str]:
    """The demands with each placeholder read as the value the customer has since released
    ("their <preference:x> options" -> "their cheapest options"); unreleased ones dropped."""
    return [
        strip_placeholders(re.sub(r"<([^<>]*)>", lambda m: released.get(m.group(1), m.group(0)), d)) for d in demands
    ]


def quantified(said: list[str]) -> bool:
    """Does the customer speak of a set ("all", "every", "each", "both", "everything")?"""
    return any(_QUANTIFIED.search(strip_placeholders(t)) for t in said)


# --------------------------------------------------------------------------- money back


def refund_total(requests: list[str], made: list[tuple[str, Any]]) -> str | None:
    """The money the changes made (tool, result) give back, when the customer asked how
    much it gets back: each cancelled order's item prices and each return's returned lines'
    prices."""
    if not any(_MONEY_BACK.search(r) for r in requests):
        return None
    total, any_refund = 0.0, False
    for tool, result in made:
        if not isinstance(result, dict) or not isinstance(result.get("items"), list):
            continue
        prices = {str(line.get("item_id")): line.get("price") for line in result["items"] if isinstance(line, dict)}
        if "cancel" in tool and result.get("status") == "cancelled":
            total += sum(p for p in prices.values() if isinstance(p, (int, float)))
            any_refund = True
        elif "return" in tool and isinstance(result.get("return_items"), list):
            total += sum(prices.get(str(i)) or 0 for i in result["return_items"])
            any_refund = True
    return f"{total:.2f}" if any_refund else None


class SetChooser:
    """The set half of the choosing (module docstring); state is the scripted agent's."""

    def _narrow_to_set(self, free: list, records: dict, src, choosing):
        """The entries of `free` that fit the set the customer names and the change's needs."""

        if choosing.index is None:  # a report reads what it is asked about, not a change's set
            return free
        writes = consuming_writes(self.plan, choosing.index)
        said = filled(self.demands, self.released)
        if records:
            statuses = set().union(*(tool_statuses(w.name) for w in writes)) if writes else set()
            counts = slots_from(self.plan, choosing.index)
            exact = stated_count(self.requests, [w.name for w in writes], action_words)
            free = keep_records(free, records, statuses, counts, exact)
            free = yield from self._leave_for_later(free, records, src, choosing)
        if any(is_line(e) for _, e in free):
            phrases = excluded_phrases(said)
            out = excluded_lines(phrases, free)
            free = [(k, e) for k, e in free if k not in out] or free
            kind = per_line_superlative(said)
            if kind and len(free) > 1:
                better = []
                for k, e in free:
                    product = yield from self._product_of(e)
                    if has_better_variant(e, product, kind):
                        better.append((k, e))
                free = better or free
            call = next((c for c in self.plan.calls if c.index == choosing.index), None)
            product = paired_product(call, choosing.pointer, self.results)
            if product:
                free = [(k, e) for k, e in free if str(e.get("product_id")) == product] or free
            if phrases or kind or any(_ALL_ITEMS.search(t.lower()) for t in said):
                # Slots filled from a set the customer named take its members in the order
                # the record lists them (a change applies its pairs in that order); a slot's
                # own details ("the shoe") still pick their member first, by words only: a
                # superlative is about each line's options, not about which line.
                facts = [self.released[t] for t in src.selected_by if t in self.released]
                scores = [match_score(facts, leaf_texts(e)) if facts else 0 for _, e in free]
                free = [free[scores.index(max(scores))]]
        elif choosing.lines.get(choosing.position) is not None and any(
            isinstance(e, dict) and "options" in e for _, e in free
        ):
            kept = kept_options(said, choosing.lines[choosing.position])
            if kept:
                free = keep_variants(free, kept)
        return free

    def _leave_for_later(self, free: list, records: dict, src, choosing):
        """Leave a record that a later pick from the same list needs for that pick: when a
        later call describes its record with more details than this one ("the bookshelf and
        the jigsaw" after "the bookshelf"), a record this pick's details fit that does not
        hold all of the later ones is taken first (the customer's items are in different
        orders). The later details are asked for now, when not yet given."""

        mine = set(src.selected_by)
        if not mine:
            return free
        later = [
            s.selected_by
            for c in self.plan.calls
            if c.index != choosing.index and c.index not in self.results
            for arg in c.args.values()
            for s in (arg, *arg.operands)
            if s.kind == "read" and s.call == src.call and s.steps == src.steps and set(s.selected_by) > mine
        ]
        for tokens in dict.fromkeys(later):
            for token in tokens:
                if token not in self.released and token not in self.unsure:
                    yield from self._ask_customer(token, required=False)

            def holds(key, tokens):
                texts = leaf_texts(records.get(key))
                return all(t in self.released and match_score([self.released[t]], texts) > 0 for t in tokens)

            fits = [(k, e) for k, e in free if holds(k, mine)]
            spare = [(k, e) for k, e in fits if not holds(k, tokens)]
            if spare and len(spare) < len(fits):
                free = spare
        return free

    def _product_of(self, line: dict):
        """The product record of an order line, read once (the agent's own looking)."""

        tool = reading_tool(self.tools, "product_id")
        if tool is None or not line.get("product_id"):
            return None
        for doc in self.results.values():
            if isinstance(doc, dict) and doc.get("product_id") == line["product_id"] and "variants" in doc:
                return doc
        return (yield from self._explore(tool, {"product_id": line["product_id"]}))
