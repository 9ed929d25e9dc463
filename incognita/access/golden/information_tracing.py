"""The information channel: tracing what the customer must be told to the results that hold it.

Each `communicate_info` item is traced once the last reference action is in. First against
the results already in the trajectory, trying in turn: a product `name` containing the
item, an exact string leaf, a number leaf (to the cent, sign included), a case-insensitive
leaf, a leaf containing the item (`match` records which). A whole number that none of these
finds may be the size of a collection in a result (`match: count_available` when it equals
the number of entries marked `"available": true`, preferred; `match: count` when it equals
the number of entries); `path` then points at the collection, not at a leaf. A collection
is a list, a mapping of records (`variants`, `payment_methods`) or a whole result that is a
flat mapping (the product-type listing); the fields of one record are never counted.

An item that no result holds is searched for with the read-insertion rule (generator 3
on), in item order: first for a read holding it as a value by any of the leaf matches,
then, for a whole number, for a read holding a collection of that size. Each of the two
searches first tries the customer's own records only (identity lookups, profile, orders)
and then the catalog as well (generator 4 on): asked about what they bought, a person
opens the order, not the catalog entry of a product that happens to hold the same word.
The reads found are appended after the last reference call (information is reported at the end of a
solution, and a read there sees the database as the writes left it) with `inserted_for:
{reason: information, item: k}`, and the item is traced to them. Items that nothing
within reach holds keep `provenance: null`; sums and differences the agent would have to
work out without a `calculate` call are not traced.

`InformationTracing` is the part of the golden builder (`incognita.access.golden.trajectory`)
that fills the golden file's `information_channel`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from incognita.access.golden.provenance import ERROR_DOC, escape_token
from incognita.access.golden.value_matching import INTEGER, is_number_text, number_equals, single_spaced, string_equals


def _collections(doc: Any, prefix: str = "") -> Iterator[tuple[str, list | dict]]:
    """(JSON pointer, container) for every collection in a result, outermost first.

    A collection is a list, a mapping whose values are all objects (records keyed by id,
    such as a product's `variants` or a user's `payment_methods`), or a whole result that
    is a flat mapping of scalars (the product-type listing). The fields of one record (an
    address, a variant's `options`, a user) are not a collection: how many fields a record
    has is never something a customer is told."""
    if isinstance(doc, list):
        yield prefix, doc
        for i, value in enumerate(doc):
            yield from _collections(value, f"{prefix}/{i}")
    elif isinstance(doc, dict):
        values = list(doc.values())
        if values and (
            all(isinstance(v, dict) for v in values)
            or (prefix == "" and not any(isinstance(v, (dict, list)) for v in values))
        ):
            yield prefix, doc
        for key, value in doc.items():
            yield from _collections(value, f"{prefix}/{escape_token(key)}")


def _available_count(coll: list | dict) -> int | None:
    """How many entries of a collection of records say `"available": true` (None if none has the key)."""
    entries = list(coll.values()) if isinstance(coll, dict) else coll
    if not any(isinstance(e, dict) and "available" in e for e in entries):
        return None
    return sum(1 for e in entries if isinstance(e, dict) and e.get("available") is True)


class InformationTracing:
    """Tracing the information-channel items (a part of the golden builder; it relies on the
    builder's `card`, `calls`, `docs`, `scope`, `_find_scoped`, `_from_reads`, and `_search`
    (over the domain's candidate reads), whose chains its `_insert_chain` appends, and on the
    domain's rules' `CATALOG_TOOLS`)."""

    def trace_information(self) -> list[dict]:
        """Trace every information-channel item; call once, after the last reference action.

        First every item against the trajectory as it stands; then, in item order, each item
        still untraced against the trajectory including reads inserted for earlier items, and
        failing that by inserting reads for it (`_insert_for_information`)."""
        out = []
        for info in self.card["information_channel"]["communicate_info"]:
            out.append({"info": info, "provenance": self._trace_info(str(info))})
        for k, entry in enumerate(out):
            if entry["provenance"] is None:
                entry["provenance"] = self._trace_info(str(entry["info"])) or self._insert_for_information(
                    k, str(entry["info"])
                )
        return out

    def _insert_for_information(self, item: int, info: str) -> dict | None:
        """Insert, at the end of the trajectory, the first reads whose result yields an item.

        The same breadth-first search as for argument values, with the same candidates: first
        for a read holding the item as a value (any of the leaf matches of `_trace_info`), then,
        for a whole number, for a read holding a collection of that size. The item is then
        traced by the ordinary rule."""
        text = info.strip()
        if not text:
            return None
        attempts = self._info_attempts(text)
        hits: list[Callable[[str, dict, Any], bool]] = [
            lambda name, args, doc: any(self._find_scoped(name, args, doc, pred) is not None for _how, pred in attempts)
        ]
        if INTEGER.fullmatch(text):
            n = int(text)
            hits.append(
                lambda name, args, doc: (
                    doc is not ERROR_DOC
                    and any(
                        size(coll) == n and self.scope.admits(name, args, ptr, coll)
                        for ptr, coll in _collections(doc)
                        for size in (_available_count, len)
                    )
                )
            )
        # The customer's own records first, the catalog only for what they do not hold.
        for hit, skip in [(h, s) for h in hits for s in (self.CATALOG_TOOLS, frozenset())]:
            chain = self._search(hit, skip)
            if chain is not None:
                self._insert_chain(chain, {"call": None, "argument": None, "reason": "information", "item": item})
                return self._trace_info(info)
        return None

    def _trace_info(self, info: str) -> dict | None:
        text = info.strip()
        if not text:
            return None
        for how, pred in self._info_attempts(text):
            p = self._from_reads(pred)
            if p is not None:
                return dict(p, match=how)
        if INTEGER.fullmatch(text):
            return self._trace_count(int(text))
        return None

    @staticmethod
    def _info_attempts(text: str) -> list[tuple[str, Callable[[str, Any], bool]]]:
        """The leaf matches an information item is tried with, in order (`match` names them)."""
        lowered = single_spaced(text).casefold()
        contains = re.compile(r"(?<![a-z0-9])" + re.escape(lowered) + r"(?![a-z0-9])")
        attempts: list[tuple[str, Callable[[str, Any], bool]]] = []
        if re.search(r"[A-Za-z]", text) and len(text) >= 3:
            # a word such as 'camera' names a product before it equals some option value
            attempts.append(
                (
                    "name",
                    lambda p, leaf: (
                        p.rsplit("/", 1)[-1] == "name"
                        and isinstance(leaf, str)
                        and contains.search(single_spaced(leaf).casefold()) is not None
                    ),
                )
            )
        attempts.append(("exact", string_equals(text)))
        if is_number_text(text):
            attempts.append(("number", number_equals(text)))
        attempts.append(
            ("casefold", lambda p, leaf: isinstance(leaf, str) and single_spaced(leaf).casefold() == lowered)
        )
        if re.search(r"[A-Za-z]", text) and len(text) >= 3:
            attempts.append(
                (
                    "contains",
                    lambda p, leaf: (
                        isinstance(leaf, str) and contains.search(single_spaced(leaf).casefold()) is not None
                    ),
                )
            )
        return attempts

    def _trace_count(self, n: int) -> dict | None:
        """A whole number the customer is told may be the size of a collection in a result.

        Only collections are sized (see `_collections`); the number of entries marked
        `"available": true` is preferred over the plain number of entries, and both search the
        results in call order, each in document order. No selector applies: the whole
        collection is the answer."""
        for how, size in (("count_available", _available_count), ("count", len)):
            for j, doc in enumerate(self.docs):
                if doc is ERROR_DOC:
                    continue
                for ptr, coll in _collections(doc):
                    if size(coll) == n and self.scope.admits(
                        self.calls[j]["name"], self.calls[j]["arguments"], ptr, coll
                    ):
                        return {"kind": "read", "call": j, "path": ptr, "selected_by": [], "match": how}
        return None
