"""The card audit's `selectors_reachable` check: can the customer tell the gold entry apart?

Many write arguments pick one database entry among alternatives: an order among the user's
orders, a line among the order's lines, a variant among the product's available variants, a
payment method among the user's. The agent can only pick right if the customer can release
something that tells the gold entry apart from each alternative. The matcher here is the
audit's own, written independently of the scripted agent's choosing code
(incognita.access.domains.retail.choosing), so that it checks it.

Who calls it: incognita.access.domains.retail.card_checks, once per card. Known upstream ambiguities (a choice
the source instructions really do not settle) are data: config/domains/retail/upstream_ambiguities.yaml,
read by incognita.access.cards.audit.load_ambiguities; a choice listed there is a `warn`, not a `fail`. How the customer's
words are read (word matching, the general selectors) is incognita.access.domains.retail.reachability_words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from incognita.access.cards.text import norm
from incognita.access.domains.retail.card_rules import ADDRESS_ARGS, WRITE_TOOLS, order_key
from incognita.access.domains.retail.reachability_words import (
    _GENERIC,
    _forms,
    _ranks,
    _Said,
    _same_word,
    _tokens,
    _value_forms,
    _Words,
)
from incognita.access.domains.retail.source_words import US_STATES, source_text


def json_scalars(obj: Any) -> Iterator[Any]:
    """Every key and scalar of a JSON document, depth first."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from json_scalars(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from json_scalars(v)
    else:
        yield obj


_STATUS_OF_WRITE = {
    "cancel_pending_order": "pending",
    "modify_pending_order_address": "pending",
    "modify_pending_order_items": "pending",
    "modify_pending_order_payment": "pending",
    "exchange_delivered_order_items": "delivered",
    "return_delivered_order_items": "delivered",
}
_STATE_NAMES = {code: name for name, code in US_STATES.items()}


@dataclass
class _Entry:
    """One database entry a choice picks from, and the values that describe it."""

    id: str
    values: list[tuple[str, str]]  # (label, value): product name, option values, contents
    price: float | None = None
    status: str | None = None  # orders only
    index: int = 0  # an order's place in the user's order list, which runs in placing order
    options: dict = field(default_factory=dict)  # a line's or variant's options
    names: tuple[str, ...] = ()  # an order's line names (for "two watches")
    prices: tuple[float, ...] = ()  # an order's line prices

    def words(self) -> set[str]:
        return {f for _, v in self.values for forms in _value_forms(v) for f in forms}


def _line(item: dict, name: str | None = None) -> _Entry:
    values = [("name", name or item["name"])] + [(k, str(v)) for k, v in item["options"].items()]
    if item.get("product_id"):
        values.append(("product id", item["product_id"]))
    return _Entry(item["item_id"], values, price=item.get("price"), options=item["options"])


def _order(db: dict, oid: str, index: int) -> _Entry:
    order = db["orders"][oid]
    items, address = order["items"], order.get("address") or {}
    values = [("items", it["name"]) for it in items]
    values += [(k, str(v)) for it in items for k, v in it["options"].items()]
    values += [(k, str(address[k])) for k in ("address1", "city", "zip") if address.get(k)]
    if address.get("state"):
        values.append(("state", _STATE_NAMES.get(address["state"], address["state"])))
    total = sum(it["price"] for it in items)
    names, prices = tuple(it["name"] for it in items), tuple(it["price"] for it in items)
    return _Entry(oid, values, total, order["status"], index, names=names, prices=prices)


def _method(method: dict) -> _Entry:
    values = [("kind", method["source"].replace("_", " "))]
    return _Entry(method["id"], values + [(k, str(method[k])) for k in ("brand", "last_four") if method.get(k)])


@dataclass
class _Choice:
    label: str  # 'return_delivered_order_items.item_ids[0]=6259501109'
    argument: str  # 'return_delivered_order_items.item_ids', as config/upstream_ambiguities.yaml names it
    gold: _Entry
    alternatives: list[_Entry]
    said: _Said
    status: str | None = None  # the status the write requires (a return: delivered)
    old: dict | None = None  # for a new variant: the old item's options
    unmentioned: frozenset[str] = frozenset()  # for a new variant: options the source never speaks of
    owned: tuple[dict, ...] = ()  # for a new variant: options of the user's other items of the product
    lines: bool = False  # the order lines one write takes
    info: bool = False  # the entry an answer is read off
    old_price: float | None = None  # for a new variant: what the old item cost

    def missed(self, words: _Words) -> list[tuple[_Entry, list[tuple[str, str]]]]:
        """Alternatives nothing releasable tells apart from the gold, each with the gold's values
        that would have (those the alternative does not share)."""
        g, left = self.gold, []
        if self.lines and words.everything and not words.excepted:
            return []  # "all the items": no line of the order is a wrong one
        for alt in self.alternatives:
            alt_values, alt_words = {norm(v) for _, v in alt.values}, alt.words()
            own = [(k, v) for k, v in g.values if norm(v) not in alt_values]
            if self._by_status(alt, words) or any(self.said.states(k, v, alt_words) for k, v in own):
                continue
            if self._by_rank(alt, words):
                continue
            if words.excepted and self._by_exclusion(alt, words):
                continue
            if self._by_relation(alt, own, words):
                continue
            if g.names and self._by_count(alt, words):
                continue
            left.append((alt, ([("status", g.status)] if g.status and g.status != alt.status else []) + own))
        return left

    def _by_status(self, alt: _Entry, words: _Words) -> bool:
        g = self.gold
        if not g.status or alt.status == g.status:
            return False
        if self.status and alt.status not in ("pending", "delivered"):
            return True  # policy: no write applies to a cancelled or processed order
        return g.status == self.status or g.status in words.statuses

    def _by_exclusion(self, alt: _Entry, words: _Words) -> bool:
        """ "Everything except the X": the exclusion (or a field) names the alternative line, or
        every line of the alternative order, so nothing in it is to be acted on."""
        g = self.gold
        gold_values, gold_words = {norm(v) for _, v in g.values}, g.words()
        if g.names:
            return all(words.excepts.states("name", x, gold_words) for x in alt.names)
        named = [(k, v) for k, v in alt.values if norm(v) not in gold_values]
        return any(said.states(k, v, gold_words) for said in (self.said, words.excepts) for k, v in named)

    def _by_relation(self, alt: _Entry, own: list[tuple[str, str]], words: _Words) -> bool:
        """Records named by their relations in any of the customer's words: an order by an item it
        holds or the city or state it went to ("the order sent to Texas", "the book shelf's
        order"); "your other order" is the one that does not hold the item named; an answer's
        line by the item asked about ("the battery life of the speaker"). A write's line still
        needs its value released as a field."""
        g, alt_words = self.gold, alt.words()
        if g.names:
            if any(words.named.states(k, v, alt_words) for k, v in own if k in ("items", "city", "state")):
                return True
            if words.other_order:
                gold_names, gold_words = {norm(x) for x in g.names}, g.words()
                named = [x for x in alt.names if norm(x) not in gold_names]
                return any(said.states("items", x, gold_words) for said in (self.said, words.named) for x in named)
            return False
        return self.info and any(words.named.states(k, v, alt_words) for k, v in own if k == "name")

    def _by_count(self, alt: _Entry, words: _Words) -> bool:
        """'the order with two watches': the gold holds that many lines so named, the alternative not."""
        for n, forms in words.counts:
            generic = bool(forms & _GENERIC)  # "an order with five items"
            if not generic and not forms & self.said.words:
                continue
            counts = [
                len(e.names) if generic else sum(any(_same_word(forms, f) for f in _value_forms(x)) for x in e.names)
                for e in (self.gold, alt)
            ]
            if counts[0] == n != counts[1]:
                return True
        return False

    def _by_rank(self, alt: _Entry, words: _Words) -> bool:
        rules = (self._by_price, self._by_recency, self._by_keeping, self._by_option, self._by_budget)
        return any(rule(alt, words) for rule in rules)

    def _by_budget(self, alt: _Entry, words: _Words) -> bool:
        """ "Within the previous price": a variant dearer than the old item is no alternative."""
        g, old = self.gold.price, self.old_price
        return words.budget and None not in (g, old, alt.price) and alt.price > old >= g

    def _by_price(self, alt: _Entry, words: _Words) -> bool:
        """ "The cheapest", "the more expensive one" of the item named with it (or of "all items");
        for an order, the price of its lines so named ("return the more expensive tablet")."""
        g = self.gold
        for rank, near in words.price:
            sign = 1 if rank == "priciest" else -1
            if g.names:  # an order: compare the named lines
                named = [[p for x, p in zip(e.names, e.prices) if near.states("name", x, set())] for e in (g, alt)]
                pick = max if sign > 0 else min
                if all(named) and sign * pick(named[0]) > sign * pick(named[1]):
                    return True
            elif g.options and g.price is not None and alt.price is not None:
                about = near.words & _GENERIC or near.states("name", g.values[0][1], set())
                if about and sign * g.price > sign * alt.price:
                    return True
        return False

    def _by_recency(self, alt: _Entry, words: _Words) -> bool:
        g = self.gold  # the user's order list runs in the order the orders were placed
        if not (g.status and alt.status):
            return False
        return ("latest" in words.recency and g.index > alt.index) or (
            "earliest" in words.recency and g.index < alt.index
        )

    def _by_keeping(self, alt: _Entry, words: _Words) -> bool:
        """A new variant keeps the old item's values where the customer says "same" or "keep", and
        where the source says nothing of that option at all; or it copies another item the
        customer has ("the same type as the one you already received")."""
        if self.old is None:
            return False
        if words.owned and self.gold.options in self.owned:
            return True
        g = self.gold.options
        for k, v in g.items():  # "the same colour as your other bottle"
            copied = v in {o.get(k) for o in self.owned} and alt.options.get(k) != v
            if copied and any(f in words.same_as for t in _tokens(k) for f in _forms(t) if len(t) >= 3):
                return True
        kept = [k for k, v in g.items() if self.old.get(k) == v and (words.same or k in self.unmentioned)]
        return any(alt.options.get(k) != g[k] for k in kept)

    def _by_option(self, alt: _Entry, words: _Words) -> bool:
        """A rank word about an option: "maximum zoom", "fewest pieces" rank the gold above the
        alternative; "brighter", "one size smaller", "500 pieces less" compare with the old item."""
        if self.old is None:
            return False
        for direction, topic, delta in words.ranks:
            for k, v in self.gold.options.items():
                if not any(w.startswith(t) for w in _tokens(k) for t in topic if len(t) >= 4 or t == w):
                    continue
                ranked = _ranks(v, str(alt.options.get(k, "")), str(self.old.get(k, "")))
                if ranked is None:
                    continue
                gv, av, ov = ranked
                if (direction == "max" and gv > av) or (direction == "min" and gv < av):
                    return True
                if delta is not None and direction in ("up", "down"):
                    if gv == ov + (delta if direction == "up" else -delta) != av:
                        return True
                elif (direction == "up" and gv > ov >= av) or (direction == "down" and gv < ov <= av):
                    return True
        return False


def _holds(record: Any, value: str) -> bool:
    """The record has a leaf equal to `value`; numbers compare as numbers (481.5 == 481.50)."""
    try:
        number: float | None = float(value)
    except ValueError:
        number = None
    return any(
        norm(str(leaf)) == norm(value)
        or (number is not None and isinstance(leaf, int | float) and abs(leaf - number) < 0.005)
        for leaf in json_scalars(record)
    )


def _choices(card: dict, db: dict) -> list[_Choice]:
    """Every choice among database alternatives that the gold solution makes."""
    writes = [a for a in card["reference_actions"] if a["name"] in WRITE_TOOLS - {"transfer_to_human_agents"}]
    # Identity fields say who the customer is, not which entry, and the new address an address
    # write sets says where things go, not which order it is. A preference describes the item
    # wanted, so it picks among new variants only, never the order, line or card already there;
    # a payment kind picks a payment method, never an item ('gift card' is no 'CF card').
    new_address = {norm(str(a["arguments"].get(k))) for a in writes for k in ADDRESS_ARGS if "address" in a["name"]}
    described = [f for f in card["fields"] if f["kind"] != "identity" and norm(f["value"]) not in new_address]
    said_new = _Said([f["value"] for f in described if f["kind"] != "payment"])
    said_old = _Said([f["value"] for f in described if f["kind"] not in ("preference", "payment")])
    said_pay = _Said([f["value"] for f in described if f["kind"] != "preference"])
    source = _Said([source_text(card["source"]["instructions"])])

    @functools.cache
    def mentioned(value: str) -> bool:
        return bool(value) and source._run(_value_forms(value))

    stated_ids = {k for f in card["fields"] for k in (norm(f["value"]), order_key(f["value"]))}
    # What the gold picks for one argument of one tool is all chosen ("all the bookshelves", two
    # returns from two orders): those entries are no alternatives to each other.
    chosen: dict[str, set] = {}
    for a in writes:
        for arg in ("order_id", "item_ids"):
            v = a["arguments"].get(arg)
            chosen.setdefault(f"{a['name']}.{arg}", set()).update(v if isinstance(v, list) else [v])
    out: dict[str, _Choice] = {}  # by label: a write the gold repeats is one choice

    def add(label: str, argument: str, gold: _Entry, alts: list[_Entry], said: _Said, **kw: Any) -> None:
        if alts and not {norm(gold.id), order_key(gold.id)} & stated_ids:  # an id stated settles it
            out.setdefault(label, _Choice(label, argument, gold, alts, said, **kw))

    for a in writes:
        name, args = a["name"], a["arguments"]
        order = db["orders"].get(args.get("order_id")) if isinstance(args.get("order_id"), str) else None
        if order is None:
            continue
        oid, user = order["order_id"], db["users"].get(order["user_id"], {})
        orders = {o: _order(db, o, i) for i, o in enumerate(user.get("orders", [])) if o in db["orders"]}
        if oid in orders:
            alts = [e for o, e in orders.items() if o not in chosen[f"{name}.order_id"]]
            add(
                f"{name}.order_id={oid}",
                f"{name}.order_id",
                orders[oid],
                alts,
                said_old,
                status=_STATUS_OF_WRITE.get(name),
            )
        lines = {it["item_id"]: it for it in order["items"]}
        olds = [i for i in args.get("item_ids") or [] if i in lines]
        news = args.get("new_item_ids") or []
        for i, item_id in enumerate(olds):
            # A new item the customer gives by id names the product, so only its lines remain.
            product_named = i < len(news) and norm(news[i]) in stated_ids
            alts = [
                _line(it)
                for it in order["items"]
                if it["item_id"] not in olds and (not product_named or it["product_id"] == lines[item_id]["product_id"])
            ]
            add(
                f"{name}.item_ids[{i}]={item_id}", f"{name}.item_ids", _line(lines[item_id]), alts, said_old, lines=True
            )
        for i, (old_id, new_id) in enumerate(zip(olds, news)):
            product = db["products"].get(lines[old_id]["product_id"], {})
            variants = product.get("variants", {})
            if new_id not in variants:
                continue
            alts = [_line(v, product["name"]) for k, v in variants.items() if k != new_id and v.get("available")]
            old = lines[old_id]["options"]
            unmentioned = frozenset(
                k for k in old if not any(mentioned(str(v["options"].get(k, ""))) for v in variants.values())
            )
            owned = tuple(
                it["options"]
                for o in orders
                for it in db["orders"][o]["items"]
                if it["product_id"] == product["product_id"] and it is not lines[old_id]
            )
            gold = _line(variants[new_id], product["name"])
            argument = f"{name}.new_item_ids"
            kw = {"old": old, "unmentioned": unmentioned, "owned": owned, "old_price": lines[old_id].get("price")}
            add(f"{argument}[{i}]={new_id}", argument, gold, alts, said_new, **kw)
        pm, methods = args.get("payment_method_id"), user.get("payment_methods", {})
        if isinstance(pm, str) and pm in methods:
            paid = [
                p["payment_method_id"]
                for p in order.get("payment_history", [])
                if p.get("transaction_type") == "payment"
            ]
            if name == "modify_pending_order_payment":  # the new method cannot be the current one
                alts = [_method(m) for k, m in methods.items() if k != pm and k not in paid[-1:]]
            elif paid[:1] == [pm]:
                continue  # policy: the refund or the difference goes to the original payment method
            else:
                alts = [_method(m) for k, m in methods.items() if k != pm]
            add(f"{name}.payment_method_id={pm}", f"{name}.payment_method_id", _method(methods[pm]), alts, said_pay)

    # Information the agent reads off one of the user's orders (a tracking number, a price): only
    # values with a digit, since a word ('camera') also occurs in records it was not read from.
    users = dict.fromkeys(
        db["orders"][o]["user_id"] if isinstance(o, str) and o in db["orders"] else u
        for a in card["reference_actions"]
        for o, u in [(a["arguments"].get("order_id"), a["arguments"].get("user_id"))]
        if (isinstance(o, str) and o in db["orders"]) or (isinstance(u, str) and u in db["users"])
    )
    user_orders = [o for u in users for o in db["users"][u]["orders"] if o in db["orders"]]
    entries = [_order(db, o, user_orders.index(o)) for o in user_orders]
    for i, value in enumerate(card["information_channel"]["communicate_info"]):
        if not re.search(r"\d", str(value)):
            continue
        holding = [e for e in entries if _holds(db["orders"][e.id], str(value))]
        if len(holding) != 1:
            continue  # computed (a sum), or on several orders (each gives the right answer)
        gold, where = holding[0], f"communicate_info[{i}]"
        add(
            f"{where} ({value}) read off {gold.id}",
            where,
            gold,
            [e for e in entries if e is not gold],
            said_old,
            info=True,
        )
        items = db["orders"][gold.id]["items"]
        held = [it for it in items if _holds(it, str(value))]
        if len(held) == 1:
            alts = [_line(it) for it in items if it is not held[0]]
            add(
                f"{where} ({value}) read off line {held[0]['item_id']}",
                where,
                _line(held[0]),
                alts,
                said_old,
                info=True,
            )
    return list(out.values())


_UNSHOWN = {"product id", "address1", "zip"}  # values that tell entries apart but say little in a detail


def _show(values: list[tuple[str, str]], limit: int = 6) -> str:
    shown = [v if k in ("name", "items", "kind") else f"{k} {v}" for k, v in values[:limit]]
    return ", ".join(shown + (["..."] if len(values) > limit else []))


def check_selectors_reachable(card: dict, db: dict, ambiguities: dict[str, dict[str, str]]) -> tuple[str, str]:
    """Each choice the gold makes among database alternatives (the order, the line, the new
    variant, the payment method, the order an answer is read off) is reachable from what the
    customer can release. Otherwise only a guess solves the task, and an agent that fails it
    would be blamed for the card."""
    texts = [f["value"] for f in card["fields"]] + [card.get("opening_line") or ""]
    texts += [t for r in card["requests"] for t in [r["demand"], *r["fallbacks"]]]
    words = _Words.of(texts)
    listed = ambiguities.get(str(card["task_id"]), {})
    choices = _choices(card, db)
    failed, warned = [], []
    for choice in choices:
        missed = choice.missed(words)
        if not missed:
            continue
        if choice.argument in listed:
            warned.append(f"ambiguous upstream: {listed[choice.argument]} ({choice.label})")
            continue
        need = [kv for kv in dict.fromkeys(v for _, own in missed for v in own) if kv[0] not in _UNSHOWN]
        labels = {k for k, _ in need} | {"name"}
        others = ", ".join(f"{alt.id} ({_show([kv for kv in alt.values if kv[0] in labels])})" for alt, _ in missed[:4])
        others += f" and {len(missed) - 4} more" if len(missed) > 4 else ""
        gold = _show([kv for kv in choice.gold.values if kv in need or kv[0] in ("name", "items")])
        missing = ", ".join(f"{k}: {v}" for k, v in need[:6]) + (", ..." if len(need) > 6 else "")
        failed.append(
            f"{choice.label} ({gold}) not told apart from {others}: the customer can release no value of {{{missing}}}"
        )
    if failed:
        return "fail", "; ".join(failed + warned)
    if warned:
        return "warn", "; ".join(warned)
    return "pass", f"{len(choices)} choice(s) among alternatives, each reachable"
