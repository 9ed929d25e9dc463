"""The entity scope of a task: the records a golden trajectory may draw values from.

A read sources an argument or an information item only when the value comes from a record
the task is about, as a person tracing the case would read it, never from a value that
merely matches text elsewhere in the database. The scope is fixed per task on the clean
database (`Scope`, recorded in the golden file under `scope`):

* users: a user id the card states, the result of an identity lookup with the customer's
  own fields, and the owner of an order the card names;
* orders: the orders the card names and those the customer's profile lists;
* products: the products of the items on those orders, and a product type the customer
  names (every word of its name in one request or item field of the card).

`get_user_details`, `get_order_details` and `get_product_details` are in scope when their
subject is; an entry of `list_all_product_types` when its product is (the whole listing,
as a collection to count, never is). Identity lookups, `calculate` and writes are (their
own arguments are traced). Reads outside the scope stay in the trajectory (an upstream
reference read that explores) but nothing traced draws on them. (Generator 3 took the
first matching leaf anywhere: task 24's "polyester" came from a backpack's catalog entry.)

`EntityScoping` is the part of the golden builder (`incognita.access.golden.trajectory`)
that reads the scope off the clean database before any call runs; it is one of retail's golden
rules (incognita.access.domains.retail.golden).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from incognita.access.domains.retail.read_insertion import ORDER_ID
from incognita.access.golden.provenance import ERROR_DOC
from incognita.access.golden.value_matching import word_stems


@dataclass(frozen=True)
class Scope:
    """The records a task is about (see "Entity scope" in the module docstring)."""

    users: frozenset[str]
    orders: frozenset[str]
    products: frozenset[str]

    def admits(self, name: str, args: dict, ptr: str, leaf: Any) -> bool:
        """May the value at `ptr` of this call's result (`leaf`, a scalar or a collection) source anything?"""
        if name == "get_user_details":
            return args.get("user_id") in self.users
        if name == "get_order_details":
            return _order_key(args.get("order_id")) in self.orders
        if name == "get_product_details":
            return args.get("product_id") in self.products
        if name == "list_all_product_types":
            return isinstance(leaf, str) and leaf in self.products  # one entry, never the whole listing
        # Identity lookups take only the customer's words; calculate and writes act on values
        # and records that are themselves traced.
        return True

    def to_json(self) -> dict:
        return {"users": sorted(self.users), "orders": sorted(self.orders), "products": sorted(self.products)}


def _order_key(order_id: Any) -> str | None:
    """An order id in the database's form (#W1234567), whatever form it was written in."""
    m = ORDER_ID.fullmatch(order_id.strip()) if isinstance(order_id, str) else None
    return f"#W{m.group(1)}" if m else None


class EntityScoping:
    """Reading a task's entity scope (a part of the golden builder; it relies on the
    builder's `card`, `fields`, `identity_tools`, `_peek` and `_field_candidates`)."""

    def _entity_scope(self) -> Scope:
        """The customer, their orders and the products in question, read off the clean
        database (the rule is in the module docstring, "Entity scope"). The customer's own
        fields already say which reads open their records (`_field_candidates`)."""
        fields = self._field_candidates()
        users: set[str] = set()
        orders: set[str] = set()
        for name, args in fields:
            doc = self._peek(name, args)
            if doc is ERROR_DOC:
                continue
            if name in self.identity_tools:
                users.add(doc)
            elif name == "get_user_details":
                users.add(args["user_id"])
            elif name == "get_order_details":
                orders.add(args["order_id"])
                users.add(doc["user_id"])
        for uid in sorted(users):
            doc = self._peek("get_user_details", {"user_id": uid})
            if doc is not ERROR_DOC:
                orders.update(o for o in (doc.get("orders") or []) if isinstance(o, str))
        products: set[str] = set()
        for oid in sorted(orders):
            doc = self._peek("get_order_details", {"order_id": oid})
            if doc is not ERROR_DOC:
                products.update(line["product_id"] for line in doc.get("items") or [] if "product_id" in line)
        products.update(self._named_products())
        return Scope(frozenset(users), frozenset(o for o in map(_order_key, orders) if o), frozenset(products))

    def _named_products(self) -> set[str]:
        """Products whose type the customer names: every word of the type's name (stems, as in
        `word_stems`) is in one request (demand or fallback) or one item field of the card."""
        texts = [" ".join([r["demand"], *r.get("fallbacks", [])]) for r in self.card.get("requests") or []]
        texts += [f["value"] for f in self.fields if f["kind"] == "item"]
        said = [word_stems(t) for t in texts]
        listing = self._peek("list_all_product_types", {})
        return {
            pid
            for kind, pid in listing.items()
            if isinstance(pid, str) and word_stems(kind) and any(word_stems(kind) <= w for w in said)
        }
