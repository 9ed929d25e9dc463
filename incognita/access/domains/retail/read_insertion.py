"""The read-insertion rule: reads added to a golden trajectory where a value has no source.

Where the trajectory so far provides no source for an argument value, reads are inserted
right before the call (`inserted_for.reason: value`); where no result in the finished
trajectory holds an information-channel item, reads are inserted at its end (`reason:
information`, `incognita.access.golden.information_tracing`). Both use one search:

* Candidate reads are those whose own arguments already have a source, in the
  fixed tool order `find_user_id_by_email` / `find_user_id_by_name_zip` (from the
  customer's email, name and zip fields), `get_user_details` (a user id the card states,
  user ids from lookups and orders), `get_order_details` (order ids from card order fields
  written as '#W...', and a user's `orders`), `get_product_details` (product ids of order
  lines and of the product list), then `list_all_product_types()`; within one tool, in
  order of discovery. The search is breadth first: every candidate that needs no other new
  read, then the candidates those open up, up to `MAX_INSERT_DEPTH` reads deep. The first
  whose result yields what is sought is inserted with the reads it needed itself, and the
  argument (or item) then resolves by the ordinary rule. A read made since the last
  successful write is never tried again with the same arguments (its result could not
  differ).

The rule sources *values*: a read that a solution needs only to decide something (which of
a customer's orders is pending, say) is in the trajectory only if upstream's reference has it.
No identity lookup is inserted for its own sake (generator 2 on): "authenticate before any
write" is a habit of the upstream policy, not a read any write's arguments depend on, and
the service-side rules of this environment do not ask for it. Generator 1 inserted such a
lookup before the first write of 45 tasks.

`ReadInsertion` is the part of the golden builder (`incognita.access.golden.trajectory`)
that runs this search on the clean database as the trajectory grows; it is one of retail's
golden rules (incognita.access.domains.retail.golden).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from incognita.access.golden.provenance import ERROR_DOC, result_doc, top_argument

MAX_INSERT_DEPTH = 3
ORDER_ID = re.compile(r"#?[Ww]?(\d{7})")
USER_ID = re.compile(r"([a-z]+)_([a-z]+(?:_[a-z]+)*)_(\d+)")
# The fixed order in which candidate reads are tried (see the read-insertion rule).
_CANDIDATE_ORDER = {
    "find_user_id_by_email": 0,
    "find_user_id_by_name_zip": 1,
    "get_user_details": 2,
    "get_order_details": 3,
    "get_product_details": 4,
    "list_all_product_types": 5,
}


class ReadInsertion:
    """Searching for and appending the reads a value or an item needs (a part of the golden
    builder; it relies on the builder's `calls`, `docs`, `fields`, `identity_tools`, `_execute`,
    `_append`, `_resolve`, `_find_scoped` and `_from_reads`)."""

    # Reads of the public catalogue: an information item is looked for in the customer's own
    # records first, and in these only for what those do not hold (information_tracing).
    CATALOG_TOOLS = frozenset({"get_product_details", "list_all_product_types"})

    def _peek(self, name: str, args: dict) -> Any:
        result, error = self._execute(name, args)  # reads only: the database is not changed
        return ERROR_DOC if error is not None else result_doc(result)

    def _field_candidates(self) -> list[tuple[str, dict]]:
        """Reads the customer's own fields make possible: identity lookups, the user record
        of a user id the customer states, and the orders the customer names."""
        out: list[tuple[str, dict]] = []
        by_base: dict[str, list[dict]] = {}
        for field in self.fields:
            by_base.setdefault(re.sub(r"_\d+$", "", field["token"].split(":")[0]), []).append(field)
        for field in by_base.get("email", []):
            out.append(("find_user_id_by_email", {"email": field["value"].strip()}))
        names = [
            (w[0], w[-1])
            for w in (f["value"].split() for f in by_base.get("name", []) if f["kind"] == "identity")
            if len(w) >= 2
        ]
        if not names:  # a customer who only gave a user id still knows the name in it
            names = [
                (m.group(1), m.group(2).replace("_", " "))
                for m in (USER_ID.fullmatch(f["value"].strip().lower()) for f in by_base.get("user_id", []))
                if m
            ]
        for first, last in names:
            for z in by_base.get("zip", []):
                out.append(
                    ("find_user_id_by_name_zip", {"first_name": first, "last_name": last, "zip": z["value"].strip()})
                )
        for field in by_base.get("user_id", []):  # a user id the customer states opens the profile
            if USER_ID.fullmatch(field["value"].strip()):
                out.append(("get_user_details", {"user_id": field["value"].strip()}))
        for field in self.fields:
            m = ORDER_ID.fullmatch(field["value"].strip())
            if field["kind"] == "order" and m:
                out.append(("get_order_details", {"order_id": f"#W{m.group(1)}"}))
        return out

    def _candidates_from(self, name: str, doc: Any) -> list[tuple[str, dict]]:
        """Reads whose arguments this result supplies (by the result's shape)."""
        out: list[tuple[str, dict]] = []
        if doc is ERROR_DOC:
            return out
        if name in self.identity_tools and isinstance(doc, str):
            out.append(("get_user_details", {"user_id": doc}))
        elif name == "list_all_product_types" and isinstance(doc, dict):
            out += [("get_product_details", {"product_id": pid}) for pid in doc.values() if isinstance(pid, str)]
        elif isinstance(doc, dict):
            if isinstance(doc.get("orders"), list):  # a user
                out += [("get_order_details", {"order_id": o}) for o in doc["orders"] if isinstance(o, str)]
            if "order_id" in doc and isinstance(doc.get("user_id"), str):  # an order
                out.append(("get_user_details", {"user_id": doc["user_id"]}))
            for line in doc.get("items") or []:
                if isinstance(line, dict) and isinstance(line.get("product_id"), str):
                    out.append(("get_product_details", {"product_id": line["product_id"]}))
        return out

    def _search(
        self, hit: Callable[[str, dict, Any], bool], skip: frozenset[str] = frozenset()
    ) -> list[tuple[str, dict]] | None:
        """Breadth-first search for the shortest chain of new reads whose last result is a `hit`
        (called with the read's tool, arguments and result); tools in `skip` are not tried."""

        def key(n, a):
            return (n, json.dumps(a, sort_keys=True))

        # A read already made since the last successful write would return the same again.
        last_write = max(
            (c["index"] for c in self.calls if c["tool_type"] == "write" and c["error"] is None), default=-1
        )
        tried = {key(c["name"], c["arguments"]) for c in self.calls[last_write + 1 :] if c["error"] is None}
        frontier: list[tuple[str, Any, list]] = [(c["name"], d, []) for c, d in zip(self.calls, self.docs)]
        for depth in range(1, MAX_INSERT_DEPTH + 1):
            candidates: list[tuple[str, dict, list]] = []
            if depth == 1:
                candidates += [(n, a, []) for n, a in self._field_candidates()]
            for name, doc, chain in frontier:
                candidates += [(n, a, chain) for n, a in self._candidates_from(name, doc)]
            if depth == 1:
                candidates.append(("list_all_product_types", {}, []))
            candidates = [c for c in candidates if c[0] not in skip]
            candidates.sort(key=lambda c: _CANDIDATE_ORDER[c[0]])  # stable: discovery order within a tool
            next_frontier = []
            for name, args, chain in candidates:
                k = key(name, args)
                if k in tried:
                    continue
                tried.add(k)
                doc = self._peek(name, args)
                if doc is ERROR_DOC:
                    continue
                path = chain + [(name, args)]
                if hit(name, args, doc):
                    return path
                next_frontier.append((name, doc, path))
            if not next_frontier:
                break
            frontier = next_frontier
        return None

    def _insert_for(self, pred: Callable[[str, Any], bool], consumer_ptr: str) -> dict | None:
        """Insert the reads that source an argument value; the value's provenance, or None."""
        chain = self._search(lambda name, args, doc: self._find_scoped(name, args, doc, pred) is not None)
        if chain is None:
            return None
        # `call` is filled in by add_reference once the consumer's index is known.
        self._insert_chain(chain, {"call": None, "argument": consumer_ptr, "reason": "value"})
        return self._from_reads(pred, top_argument(consumer_ptr))
