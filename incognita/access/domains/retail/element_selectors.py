"""Selectors: the card fields that describe the element a read picks out of a collection.

`selected_by` of a pick out of a collection of two or more names the card fields that
describe the picked element (`ElementSelection._selectors`):

* order lines: item fields; product variants: preference fields, or item fields when the
  picked id is the call's `item_ids` (the line the customer has, read off the catalog);
  payment methods: payment fields; an entry of the profile's `orders`: selector fields
  (`which_order`) whose phrase picks that end of the list ("most recently placed": the
  last, as the database lists orders in the order they were placed);
* a product-list entry, or a line's `product_id` (the same for every line of the product):
  the first item field that names the product;
* item and preference fields describe only entries of their own product (the token's
  product, or a span that names it);
* a field describes an element when one of its spans does and none contradicts it: a span
  describes by stating one of the element's option values (sizes and their words are one
  value, numbers with units and hyphenated words are matched whole), by naming the product,
  or by sharing a word with the element's name, brand or options; it contradicts by stating
  another value of one of the element's options. A price superlative alone ("cheapest")
  describes only the cheapest (most expensive) available entry; with other spans it
  narrows among what they leave and contradicts nothing.

Generators 1 to 4 named any field of the collection's kind that shared one word stem with
the element: "31 inch" was described by "34 inch", a crew neck by "v-neck", a variant of
one product by another product's preference.

`ElementSelection` is the part of the golden builder (`incognita.access.golden.trajectory`)
that fills `selected_by` of a `read` provenance; the agent plan
(`incognita.access.episodes.loop.agent_plan`) reads those tokens back.
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.retail.card_rules import slug
from incognita.access.domains.retail.source_words import find_product, price_superlative, recency_end, states_option
from incognita.access.golden.provenance import pointer_parts
from incognita.access.golden.value_matching import word_stems

# Collections in results whose elements the customer picks, and the field kind that picks them.
_COLLECTION_KINDS = {"items": "item", "variants": "preference", "payment_methods": "payment", "orders": "selector"}


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _spans(field: dict) -> list[str]:
    return [s for s in field.get("spans") or [field["value"]] if s.strip()]


def _loosely(text: str, description: str) -> bool:
    """The pre-generator-5 description match: a shared word stem, or one squashed text
    containing the other ('tshirt' ~ 'T-Shirt')."""
    fs, squashed = _squash(text), _squash(description)
    return bool(word_stems(text) & word_stems(description)) or (len(fs) >= 4 and (fs in squashed or squashed in fs))


def _names_product(field: dict, product: str) -> bool:
    """Is a field about this product: its token names it (`item:<product>`), or one of its
    spans is a name for it (a field holds one value for every product it fits: 'watch' for
    a Wristwatch and a Smart Watch)? Payment and selector fields are about no product."""
    if field["kind"] not in ("item", "preference"):
        return True
    _, _, part = field["token"].partition(":")
    return re.sub(r"_\d+$", "", part) == slug(product) or any(find_product(s, product) for s in _spans(field))


def _describes(
    field: dict, element: dict, entries: list[dict], universe: dict[str, set[str]], product: str | None = None
) -> bool:
    """Does a field describe this element (an order line, a variant, a payment method)?

    Each span is judged on its own. It describes the element when it states one of the
    element's option values (sizes, numbers with units and hyphenated words matched whole,
    `incognita.access.cards.source_words.states_option`: "small" is size S, "34 inch" is not "31 inch"), or
    when it shares a word with the element's product name, brand or options. It
    contradicts the element when it states another value of one of the element's options
    ("robotic" for a canister vacuum, "v-neck" for a crew neck). A price superlative
    contradicts nothing when the field says more (the source may narrow the choice further
    than the field: "the most expensive of the shorter ones"); alone, it describes the
    element only if it holds: the element is the cheapest (most expensive) available entry.
    A field describes the element when some span does and none contradicts it."""
    options = {k: str(v) for k, v in (element.get("options") or {}).items()}
    bits = [product or element.get("name", ""), element.get("source", ""), element.get("brand", "")]
    description = " ".join(str(b) for b in bits + list(options.values()) if b)
    spans = _spans(field)
    plain = [s for s in spans if price_superlative(s) is None]
    if not plain:
        return all(_extreme(element, entries, price_superlative(s) or "min") for s in spans)
    described = False
    for span in plain:
        if any(states_option(span, k, v) for k, v in options.items()):
            described = True
            continue
        if any(states_option(span, k, other) for k, vs in universe.items() if k in options for other in vs):
            return False  # states another value of one of the element's options
        described = described or _loosely(span, description) or bool(product and find_product(span, product))
    return described


def _extreme(element: dict, entries: list[dict], end: str) -> bool:
    """Is the element the cheapest ('min') or most expensive ('max') available entry?"""
    if not isinstance(element.get("price"), (int, float)):
        return False
    pool = [e for e in entries if isinstance(e.get("price"), (int, float)) and e.get("available", True) is not False]
    if element not in pool or len(pool) < 2:
        return False
    best = min(e["price"] for e in pool) if end == "min" else max(e["price"] for e in pool)
    return element["price"] == best


def _first_naming(fields: list[dict], product: str) -> list[str]:
    """A pick that is a product (a product-list entry, a line's product id) is selected by
    the product's name: the first item field that names it (one is enough, whichever line's)."""
    for f in fields:
        if f["kind"] == "item" and any(_loosely(s, product) or find_product(s, product) for s in _spans(f)):
            return [f["token"]]
    return []


def _most_specific(fields: list[dict]) -> list[str]:
    """Tokens of the selecting fields, less those whose spans another one's include (the
    second watch's 'watch' adds nothing to 'watch; silicone')."""

    def spans(f: dict) -> set[str]:
        return {norm_span(s) for s in _spans(f)}

    return [
        f["token"]
        for f in fields
        if not any(g is not f and g["kind"] == f["kind"] and spans(f) < spans(g) for g in fields)
    ]


def norm_span(text: str) -> str:
    return " ".join(text.lower().split())


class ElementSelection:
    """Choosing the selectors of a pick (a part of the golden builder; it relies on the
    builder's `fields`, `_catalog` and `_peek`)."""

    def _selectors(self, doc: Any, ptr: str, role: str | None = None) -> list[str]:
        """Card fields that describe the element a pointer picks out of a collection.

        Only where there is a choice (a collection of two or more, or an order's lines, which
        also tell the order apart) and only fields of the kind
        that describes such an element: item fields for order lines and product-list entries,
        preference fields for product variants (item fields when the variant's id is the
        `item_ids` argument: the line the customer has), payment fields for payment methods,
        selector fields for an entry of the customer's order list. Item and preference fields
        name their product (`item:<product>`) and describe only its entries. A field describes
        an element when one of its spans does and none contradicts it (`_describes`); a
        selector field describes the order at the end of the list its phrase picks
        (`incognita.access.cards.source_words.recency_end`: the database lists a customer's orders as placed)."""
        parts = pointer_parts(ptr)
        if not parts or not isinstance(doc, (dict, list)):
            return []
        if isinstance(doc, dict) and len(parts) == 1 and all(isinstance(v, str) for v in doc.values()):
            if len(doc) < 2:  # the product list: an entry is a product name
                return []
            key = parts[0]
            return _first_naming(self.fields, key)
        if len(parts) < 2 or not isinstance(doc, dict) or parts[0] not in _COLLECTION_KINDS:
            return []
        collection = doc[parts[0]]
        # A one-line order still has a selector: the item field that names its line is what
        # tells this order apart from the customer's others (the plan passes it to the pick
        # of the order, incognita.access.episodes.loop.agent_plan._entry_selectors).
        if not isinstance(collection, (dict, list)) or len(collection) < (1 if parts[0] == "items" else 2):
            return []
        if parts[0] == "orders":
            if not isinstance(collection, list) or not parts[1].isdigit():
                return []
            index, end = int(parts[1]), {"first": 0, "last": len(collection) - 1}
            return [
                f["token"]
                for f in self.fields
                if f["kind"] == "selector" and end.get(recency_end(f["value"]) or "") == index
            ]
        element = collection[int(parts[1])] if isinstance(collection, list) else collection.get(parts[1])
        if not isinstance(element, dict):
            return []
        kind = _COLLECTION_KINDS[parts[0]]
        if parts[0] == "variants" and role == "item_ids":
            kind = "item"
        product = element.get("name") or (doc.get("name") if parts[0] == "variants" else None)
        candidates = [f for f in self.fields if f["kind"] == kind and (product is None or _names_product(f, product))]
        if parts[0] == "items" and role == "product_id":
            # A product id names the product, whichever of its lines holds it: the product
            # name is what selects, not the options of the line the pointer happens to reach.
            return _first_naming(candidates, product or "")
        entries = [
            e for e in (collection.values() if isinstance(collection, dict) else collection) if isinstance(e, dict)
        ]
        universe = self._option_values(element, entries)
        return _most_specific([f for f in candidates if _describes(f, element, entries, universe, product)])

    def _option_values(self, element: dict, entries: list[dict]) -> dict[str, set[str]]:
        """Every value each option of the element's product takes: over the collection and,
        for an order line, over the product's catalog entry (a read of the clean database)."""
        universe: dict[str, set[str]] = {}
        variants = [e.get("options") or {} for e in entries if e.get("product_id") == element.get("product_id")]
        pid = element.get("product_id")
        if isinstance(pid, str) and "item_id" in element and "available" not in element:
            catalog = self._catalog.get(pid)
            if catalog is None:
                catalog = self._peek("get_product_details", {"product_id": pid})
                self._catalog[pid] = catalog
            if isinstance(catalog, dict):
                variants += [v.get("options") or {} for v in (catalog.get("variants") or {}).values()]
        for options in variants + [element.get("options") or {}]:
            for key, value in options.items():
                universe.setdefault(key, set()).add(str(value))
        return universe
