"""The read-insertion rule: reads added to a golden trajectory where a value has no source.

Where the trajectory so far provides no source for an argument value, reads are inserted
right before the call (`inserted_for.reason: value`); where no result in the finished
trajectory holds an information-channel item, reads are inserted at its end (`reason:
information`, `incognita.access.golden.information_tracing`). Both use one search, the
golden builder's (`_search` in incognita.access.golden.trajectory); this module gives it
retail's candidates, their order and the depth:

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

`ReadInsertion` is the part of the golden builder that says which reads are candidates; the
builder runs the search on the clean database as the trajectory grows. It is one of retail's
golden rules (incognita.access.domains.retail.golden).
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.golden.provenance import ERROR_DOC

ORDER_ID = re.compile(r"#?[Ww]?(\d{7})")
USER_ID = re.compile(r"([a-z]+)_([a-z]+(?:_[a-z]+)*)_(\d+)")


class ReadInsertion:
    """Retail's candidate reads for the golden builder's search (`_search` of
    incognita.access.golden.trajectory; it relies on the builder's `fields` and `identity_tools`)."""

    # Reads of the public catalogue: an information item is looked for in the customer's own
    # records first, and in these only for what those do not hold (information_tracing).
    CATALOG_TOOLS = frozenset({"get_product_details", "list_all_product_types"})
    MAX_INSERT_DEPTH = 3
    # The fixed order in which candidate reads are tried (see the read-insertion rule).
    CANDIDATE_ORDER = (
        "find_user_id_by_email",
        "find_user_id_by_name_zip",
        "get_user_details",
        "get_order_details",
        "get_product_details",
        "list_all_product_types",
    )
    LISTING_READS = (("list_all_product_types", {}),)  # tried at depth 1, after the others

    def _insert_before_search(self, pred, consumer_ptr: str) -> dict | None:
        return None  # retail has no read of its own to try before the search

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
