"""Golden trajectories: the upstream reference actions plus the reads they depend on.

For one task card this stage produces the ordered list of tool calls that one verified
solution performs, where every leaf argument of every call carries a *provenance*: where an
agent could have got that exact value. The upstream reference actions are the anchors: kept
verbatim, in their order, including those that raise on a clean database (marked
`intended_failure`). Reads are inserted only where an argument, or an item the customer
must be told, would otherwise have no source. Executing the calls on a clean database must
reproduce upstream's gold-state hash (`incognita.access.golden.upstream_replay`).

Provenance kinds (see `incognita/schemas/golden.schema.json`)
------------------------------------------------------------
* `opening`: the value is written in the customer's opening line.
* `field`: a card field (`token`), possibly one word of it (`part`: first/last, names only)
  and possibly after one deterministic normalisation (`transform`, see `TRANSFORMS`).
* `request`: free text the agent composes from the customer's request (`demand` index);
  only the summary of `transfer_to_human_agents`.
* `policy`: a value from the policy vocabulary (`config/vocabulary.yaml`, keyed by argument
  name); `selected_by` lists card fields whose kind equals that name (e.g. `reason`).
* `read`: a leaf of the result of an earlier call `call` at JSON pointer `path`;
  `selected_by` names item/preference/payment/selector fields that describe the chosen
  element when the element sits in a collection of several (see "Selectors").
* `computed`: the expression of `calculate`; `from` holds one `read` per number in it.
* `unsourced`: only on intended failures whose argument no rule can trace (a wrong id the
  source task invented); it never occurs on a call that succeeds.

Resolution order for one argument value (the first rule that matches wins)
-------------------------------------------------------------------------
A call's arguments are resolved one leaf at a time, `order_id` and `user_id` (the record
the call acts on) first, then the rest in document order: the other arguments of a write
describe parts of that record (the lines of an order, its payment), so once the record is
identified the reads that open it are the nearest source. (Without this, a breadth-first
search from an empty trajectory reaches a returned item's id through the catalog, two reads
deep, before it reaches it through the customer's own order, three reads deep.)

1. `calculate.expression` -> computed; `transfer_to_human_agents.summary` -> request.
2. The arguments of an identity lookup (`find_user_id_*`) come only from the customer
   (opening line or card field; a value read from the database would identify nothing).
3. The opening line, 4. a card field, 5. the policy vocabulary.
6. The earliest earlier call whose result holds the value in the task's entity scope
   (below; document order inside it).
7. Read insertion (below). If nothing matches and the call succeeds on the replay, the
   stage fails with an `InputError` naming task, call index, tool and argument.

What the customer says is preferred over what a read returns, for every argument and with
no exception for identity (generator 3 on): a `user_id` that equals a card field is that
field, a customer fact, even when an identity lookup earlier in the trajectory returned
the same id. (Generators 1 and 2 sourced such a user id from the lookup; that was the
only argument for which a read beat a card field.)

Entity scope (generator 4 on)
-----------------------------
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

Read-insertion rule
-------------------
Where the trajectory so far provides no source for an argument value, reads are inserted
right before the call (`inserted_for.reason: value`); where no result in the finished
trajectory holds an information-channel item, reads are inserted at its end (`reason:
information`, below). Both use one search:

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

Selectors (generator 5 on)
--------------------------
`selected_by` of a pick out of a collection of two or more names the card fields that
describe the picked element (`_Builder._selectors`):

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

Information channel
-------------------
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

Counting
--------
Calls that raise on the replay are `counted: false` (`intended_failure`). Every successful
reference write and `transfer_to_human_agents` counts. Every other call, reads and
`calculate` and identity lookups alike, counts only if a counted call's provenance, a
traced information-channel item (a count included: the read that holds the collection),
or the provenance chain of either uses its result; otherwise it is `exploration_only`.
An identity lookup whose user id nothing uses (the customer stated the id, or the solution
never opens the profile) therefore only explores (generator 3 on; generators 1 and 2
counted every successful lookup).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from incognita.access.cards.card import slug
from incognita.common.io import InputError, read_yaml, sha256_obj
from incognita.access.golden.upstream_replay import result_to_json
from incognita.access.cards.source_words import US_STATES, find_product, price_superlative, recency_end, states_option

if TYPE_CHECKING:
    from incognita.access.golden.upstream_replay import RetailWorld

GOLDEN_SCHEMA_VERSION = 1
# Bump when a rule here changes what a golden trajectory contains.
GENERATOR_VERSION = 5
MAX_INSERT_DEPTH = 3

IDENTITY_TOOLS = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"})
CATALOG_TOOLS = frozenset({"get_product_details", "list_all_product_types"})
# The fixed order in which candidate reads are tried (see the read-insertion rule).
_CANDIDATE_ORDER = {
    "find_user_id_by_email": 0,
    "find_user_id_by_name_zip": 1,
    "get_user_details": 2,
    "get_order_details": 3,
    "get_product_details": 4,
    "list_all_product_types": 5,
}

# Deterministic normalisations a field may need to equal an argument. Each is exact after
# the normalisation; none guesses.
TRANSFORMS = {
    "casefold": "equal ignoring letter case and runs of whitespace",
    "order_id": "the same order id with or without the leading '#' and 'W' (#W1234567 = W1234567 = 1234567)",
    "state_name": "a US state name and its two-letter postal abbreviation (address fields only)",
    "user_id_name": "first/last name read off a user id of the form first_last_1234 (case-insensitive)",
}
# (part, transform) in the order they are tried, over all fields each.
_FIELD_PLANS = [
    (None, None),
    ("first", None),
    ("last", None),
    (None, "casefold"),
    ("first", "casefold"),
    ("last", "casefold"),
    (None, "order_id"),
    (None, "state_name"),
    ("first", "user_id_name"),
    ("last", "user_id_name"),
]

_STATE_CODES = set(US_STATES.values())
_ORDER_ID = re.compile(r"#?[Ww]?(\d{7})")
_USER_ID = re.compile(r"([a-z]+)_([a-z]+(?:_[a-z]+)*)_(\d+)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_INTEGER = re.compile(r"\d+")
# Words too common to tie a request or a description to anything.
_STOPWORDS = frozenset(
    {
        "the",
        "and",
        "for",
        "but",
        "with",
        "you",
        "your",
        "that",
        "this",
        "from",
        "are",
        "was",
        "not",
        "can",
        "cannot",
        "user",
        "agent",
        "help",
        "wants",
        "want",
    }
)

# Collections in results whose elements the customer picks, and the field kind that picks them.
_COLLECTION_KINDS = {"items": "item", "variants": "preference", "payment_methods": "payment", "orders": "selector"}

_ERROR = object()  # result-doc placeholder for a call that raised
# Arguments naming the record a call acts on; they are resolved before the call's other
# arguments, which describe parts of that record (the lines of an order, its payment).
_SUBJECT_ARGUMENTS = ("order_id", "user_id")


def _top(pointer: str) -> str:
    """The top-level argument name of a JSON pointer into a call's arguments."""
    return _unescape(pointer.split("/")[1]) if pointer else ""


# --------------------------------------------------------------------------- JSON pointers


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def leaves(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(JSON pointer, scalar) for every scalar in obj, in document order."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from leaves(value, f"{prefix}/{_escape(key)}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from leaves(value, f"{prefix}/{i}")
    else:
        yield prefix, obj


def resolve_pointer(doc: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer ('' is the whole document)."""
    if pointer == "":
        return doc
    node = doc
    for raw in pointer.split("/")[1:]:
        part = _unescape(raw)
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def result_doc(result: Any) -> Any:
    """What a read pointer addresses: the result, or the JSON a string result encodes.

    `list_all_product_types` returns its mapping as JSON text; pointers address the decoded
    mapping. Other strings (a user id, a calculate result) are a single leaf at ''.
    """
    if isinstance(result, str) and result[:1] in ("{", "["):
        try:
            return json.loads(result)
        except json.JSONDecodeError:
            return result
    return result


# --------------------------------------------------------------------------- value matching


def _ws(text: str) -> str:
    return " ".join(text.split())


def _is_number_text(text: Any) -> bool:
    return isinstance(text, str) and _NUMBER.fullmatch(text) is not None


def _string_equals(value: str) -> Callable[[str, Any], bool]:
    return lambda ptr, leaf: isinstance(leaf, str) and leaf == value


def _number_equals(value: str | float) -> Callable[[str, Any], bool]:
    """Numbers compare to the cent; a bare numeric string result (calculate) counts as a number."""
    target = round(float(value), 2)

    def pred(ptr: str, leaf: Any) -> bool:
        if isinstance(leaf, bool):
            return False
        if isinstance(leaf, (int, float)):
            return round(float(leaf), 2) == target
        return ptr == "" and _is_number_text(leaf) and round(float(leaf), 2) == target

    return pred


def _find(doc: Any, pred: Callable[[str, Any], bool]) -> str | None:
    if doc is _ERROR:
        return None
    for ptr, leaf in leaves(doc):
        if pred(ptr, leaf):
            return ptr
    return None


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
    m = _ORDER_ID.fullmatch(order_id.strip()) if isinstance(order_id, str) else None
    return f"#W{m.group(1)}" if m else None


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
            yield from _collections(value, f"{prefix}/{_escape(key)}")


def _available_count(coll: list | dict) -> int | None:
    """How many entries of a collection of records say `"available": true` (None if none has the key)."""
    entries = list(coll.values()) if isinstance(coll, dict) else coll
    if not any(isinstance(e, dict) and "available" in e for e in entries):
        return None
    return sum(1 for e in entries if isinstance(e, dict) and e.get("available") is True)


def _words(text: str) -> set[str]:
    """Lower-case word stems for loose description matching ('Headphones' ~ 'headphone')."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if len(w) < 3 or w in _STOPWORDS:
            continue
        out.add(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return out


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _field_form(field: dict, part: str | None, transform: str | None, value: str) -> bool:
    """Does `value` equal this field under the given part and transform?"""
    fv: str = field["value"]
    token_base = field["token"].split(":")[0]
    base = re.sub(r"_\d+$", "", token_base)
    if transform == "user_id_name":
        m = _USER_ID.fullmatch(fv.strip().lower())
        if base != "user_id" or not m:
            return False
        name = m.group(1) if part == "first" else m.group(2).replace("_", " ")
        return name.casefold() == _ws(value).casefold()
    if part is not None:
        if field["kind"] != "identity" or base != "name":
            return False
        words = fv.split()
        if len(words) < 2:
            return False
        fv = words[0] if part == "first" else words[-1]
    if transform is None:
        return fv == value
    if transform == "casefold":
        return _ws(fv).casefold() == _ws(value).casefold() and fv != value
    if transform == "order_id":
        a, b = _ORDER_ID.fullmatch(fv.strip()), _ORDER_ID.fullmatch(value.strip())
        return bool(a and b and a.group(1) == b.group(1))
    if transform == "state_name":
        if field["kind"] != "address":
            return False

        def code(x: str) -> str | None:
            x = _ws(x)
            return US_STATES.get(x.casefold()) or (x.upper() if x.upper() in _STATE_CODES else None)

        return fv != value and code(fv) is not None and code(fv) == code(value)
    raise ValueError(f"unknown transform {transform}")


def _spans(field: dict) -> list[str]:
    return [s for s in field.get("spans") or [field["value"]] if s.strip()]


def _loosely(text: str, description: str) -> bool:
    """The pre-generator-5 description match: a shared word stem, or one squashed text
    containing the other ('tshirt' ~ 'T-Shirt')."""
    fs, squashed = _squash(text), _squash(description)
    return bool(_words(text) & _words(description)) or (len(fs) >= 4 and (fs in squashed or squashed in fs))


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


# --------------------------------------------------------------------------- inputs


def load_vocabulary(path: str) -> dict[str, list[str]]:
    """`config/vocabulary.yaml`: a flat mapping argument name -> allowed values."""
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a mapping 'argument name: [values]'")
    vocab = {}
    for key, values in raw.items():
        if (
            not isinstance(key, str)
            or not isinstance(values, list)
            or not all(isinstance(v, (str, int, float)) for v in values)
        ):
            raise InputError(f"{path}: entry {key!r} must be a list of plain values")
        vocab[key] = [str(v) for v in values]
    return vocab


def check_card(card: Any, where: str) -> None:
    """The card schema plus the invariants this stage relies on (the card stage's own check)."""
    from incognita.access.cards.card import validate_card

    validate_card(card, where)


# --------------------------------------------------------------------------- the builder


class _Builder:
    def __init__(self, card: dict, world: RetailWorld, vocabulary: dict[str, list[str]], where: str):
        self.card = card
        self.world = world
        self.vocab = vocabulary
        self.where = where
        self.task = card["task_id"]
        self.fields: list[dict] = card["fields"]
        self.opening: str = card["opening_line"]
        self.tools = world.toolkit()
        self.calls: list[dict] = []
        self.docs: list[Any] = []  # parsed result per call, _ERROR if it raised
        self._detail = ""  # why the last resolution failed (for the error message)
        self._catalog: dict[str, Any] = {}  # product id -> its catalog entry, for describing order lines
        self.scope = self._entity_scope()  # on the clean database, before any call runs

    # ----------------------------------------------------------------- execution

    def _execute(self, name: str, args: dict) -> tuple[Any, str | None]:
        try:
            return result_to_json(self.tools.use_tool(name, **args)), None
        except Exception as exc:  # noqa: BLE001 - tool errors are data
            return None, str(exc) or exc.__class__.__name__

    def _append(
        self,
        *,
        origin: str,
        action_id: str | None,
        name: str,
        requestor: str,
        args: dict,
        prov: dict,
        inserted_for: dict | None,
    ) -> int:
        result, error = self._execute(name, args)
        index = len(self.calls)
        self.calls.append(
            {
                "index": index,
                "origin": origin,
                "action_id": action_id,
                "name": name,
                "tool_type": self.world.tool_types[name],
                "requestor": requestor,
                "arguments": copy.deepcopy(args),
                "provenance": prov,
                "inserted_for": inserted_for,
                "result": result,
                "error": error,
                "intended_failure": error is not None,
                "counted": None,
                "why_not_counted": None,
            }
        )
        self.docs.append(_ERROR if error is not None else result_doc(result))
        return index

    # ----------------------------------------------------------------- anchors

    def add_reference(self, action: dict) -> None:
        name = action["name"]
        self.world.check_tool(name, f"{self.where}: reference action {action.get('action_id')}")
        args = action["arguments"]
        requestor = action.get("requestor") or "assistant"
        first_inserted = len(self.calls)
        prov: dict[str, dict | None] = {}
        missing: list[tuple[str, Any, str]] = []
        for ptr, value in sorted(leaves(args), key=lambda pv: _top(pv[0]) not in _SUBJECT_ARGUMENTS):
            self._detail = ""
            p = self._resolve(name, ptr, value, ptr, allow_insert=True)
            prov[ptr] = p
            if p is None:
                missing.append((ptr, value, self._detail))
        index = len(self.calls)
        for call in self.calls[first_inserted:]:
            call["inserted_for"]["call"] = index
        self._append(
            origin="reference",
            action_id=action.get("action_id"),
            name=name,
            requestor=requestor,
            args=args,
            prov=prov,
            inserted_for=None,
        )
        if missing:
            if self.calls[index]["error"] is None:
                ptr, value, detail = missing[0]
                looked = (
                    "an identity lookup takes only the customer's words: not in the opening line, no card field"
                    if name in IDENTITY_TOOLS
                    else "not in the opening line, no card field, not policy vocabulary, not in the "
                    "result of an earlier call or of any insertable read"
                )
                raise InputError(
                    f"{self.where}: task {self.task}, call {index} ({name}, action "
                    f"{action.get('action_id')}): argument {ptr} = {value!r} has no provenance "
                    f"({looked}){detail}"
                )
            for ptr, _value, _detail in missing:
                prov[ptr] = {"kind": "unsourced", "why": "intended_failure"}

    # ----------------------------------------------------------------- resolution

    def _resolve(self, tool: str, ptr: str, value: Any, consumer_ptr: str, allow_insert: bool) -> dict | None:
        arg = _unescape(ptr.split("/")[1]) if ptr else ""
        if tool == "calculate" and arg == "expression":
            return self._computed(value, consumer_ptr, allow_insert)
        if tool == "transfer_to_human_agents" and arg == "summary":
            return self._request(value)
        if not isinstance(value, str):
            pred = (
                _number_equals(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool)
                else (lambda p, leaf: leaf == value)
            )
            return self._from_reads(pred, arg) or (self._insert_for(pred, consumer_ptr) if allow_insert else None)
        if tool in IDENTITY_TOOLS:
            # Authentication checks what the customer says against the database; a value read
            # from the database would prove nothing, so only the customer's words count here.
            return self._from_opening(value) or self._from_field(value)
        p = (
            self._from_opening(value)
            or self._from_field(value)
            or self._from_vocabulary(arg, value)
            or self._from_reads(_string_equals(value), arg)
        )
        if p is None and allow_insert:
            p = self._insert_for(_string_equals(value), consumer_ptr)
        return p

    def _from_opening(self, value: str) -> dict | None:
        if len(value.strip()) < 2:
            return None
        pattern = r"(?<![A-Za-z0-9])" + re.escape(value.strip()) + r"(?![A-Za-z0-9])"
        if re.search(pattern, self.opening, re.IGNORECASE):
            return {"kind": "opening"}
        return None

    def _from_field(self, value: str) -> dict | None:
        if value == "":
            return None
        for part, transform in _FIELD_PLANS:
            for field in self.fields:
                if _field_form(field, part, transform, value):
                    return {"kind": "field", "token": field["token"], "part": part, "transform": transform}
        return None

    def _from_vocabulary(self, arg: str, value: str) -> dict | None:
        if value in self.vocab.get(arg, ()):
            chosen_by = [f["token"] for f in self.fields if f["kind"] == arg]
            return {"kind": "policy", "vocabulary": arg, "selected_by": chosen_by}
        return None

    def _find_scoped(self, name: str, args: dict, doc: Any, pred: Callable[[str, Any], bool]) -> str | None:
        """The first leaf of a result that matches and that the task's entity scope admits."""
        return _find(doc, lambda ptr, leaf: pred(ptr, leaf) and self.scope.admits(name, args, ptr, leaf))

    def _from_reads(self, pred: Callable[[str, Any], bool], role: str | None = None) -> dict | None:
        """The earliest scoped read that holds the value; `role` is the argument it sources."""
        for j, doc in enumerate(self.docs):
            ptr = self._find_scoped(self.calls[j]["name"], self.calls[j]["arguments"], doc, pred)
            if ptr is not None:
                return {"kind": "read", "call": j, "path": ptr, "selected_by": self._selectors(doc, ptr, role)}
        return None

    def _computed(self, expression: Any, consumer_ptr: str, allow_insert: bool) -> dict | None:
        if not isinstance(expression, str) or not all(ch in "0123456789+-*/(). " for ch in expression):
            self._detail = "; the expression has characters calculate does not accept"
            return None
        parts = []
        for number in _NUMBER.findall(expression):
            pred = _number_equals(number)
            p = self._from_reads(pred) or (self._insert_for(pred, consumer_ptr) if allow_insert else None)
            if p is None:
                self._detail = f"; the operand {number} is in no result"
                return None
            parts.append(dict(p, operand=number))
        return {"kind": "computed", "from": parts}

    def _request(self, summary: Any) -> dict | None:
        requests = self.card.get("requests") or []
        if not isinstance(summary, str) or not requests:
            self._detail = "; the card has no request to summarise"
            return None
        said = _words(summary)
        best, best_score = 0, -1
        for i, req in enumerate(requests):
            text = " ".join([req["demand"], *req.get("fallbacks", [])])
            score = len(said & _words(text))
            if score > best_score:
                best, best_score = i, score
        return {"kind": "request", "demand": best}

    # ----------------------------------------------------------------- selectors

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
        parts = [_unescape(p) for p in ptr.split("/")[1:]]
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
        # of the order, incognita.access.episodes.agent_plan._entry_selectors).
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

    # ----------------------------------------------------------------- read insertion

    def _peek(self, name: str, args: dict) -> Any:
        result, error = self._execute(name, args)  # reads only: the database is not changed
        return _ERROR if error is not None else result_doc(result)

    def _entity_scope(self) -> Scope:
        """The customer, their orders and the products in question, read off the clean
        database (the rule is in the module docstring, "Entity scope"). The customer's own
        fields already say which reads open their records (`_field_candidates`)."""
        fields = self._field_candidates()
        users: set[str] = set()
        orders: set[str] = set()
        for name, args in fields:
            doc = self._peek(name, args)
            if doc is _ERROR:
                continue
            if name in IDENTITY_TOOLS:
                users.add(doc)
            elif name == "get_user_details":
                users.add(args["user_id"])
            elif name == "get_order_details":
                orders.add(args["order_id"])
                users.add(doc["user_id"])
        for uid in sorted(users):
            doc = self._peek("get_user_details", {"user_id": uid})
            if doc is not _ERROR:
                orders.update(o for o in (doc.get("orders") or []) if isinstance(o, str))
        products: set[str] = set()
        for oid in sorted(orders):
            doc = self._peek("get_order_details", {"order_id": oid})
            if doc is not _ERROR:
                products.update(line["product_id"] for line in doc.get("items") or [] if "product_id" in line)
        products.update(self._named_products())
        return Scope(frozenset(users), frozenset(o for o in map(_order_key, orders) if o), frozenset(products))

    def _named_products(self) -> set[str]:
        """Products whose type the customer names: every word of the type's name (stems, as in
        `_words`) is in one request (demand or fallback) or one item field of the card."""
        texts = [" ".join([r["demand"], *r.get("fallbacks", [])]) for r in self.card.get("requests") or []]
        texts += [f["value"] for f in self.fields if f["kind"] == "item"]
        said = [_words(t) for t in texts]
        listing = self._peek("list_all_product_types", {})
        return {
            pid
            for kind, pid in listing.items()
            if isinstance(pid, str) and _words(kind) and any(_words(kind) <= w for w in said)
        }

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
                for m in (_USER_ID.fullmatch(f["value"].strip().lower()) for f in by_base.get("user_id", []))
                if m
            ]
        for first, last in names:
            for z in by_base.get("zip", []):
                out.append(
                    ("find_user_id_by_name_zip", {"first_name": first, "last_name": last, "zip": z["value"].strip()})
                )
        for field in by_base.get("user_id", []):  # a user id the customer states opens the profile
            if _USER_ID.fullmatch(field["value"].strip()):
                out.append(("get_user_details", {"user_id": field["value"].strip()}))
        for field in self.fields:
            m = _ORDER_ID.fullmatch(field["value"].strip())
            if field["kind"] == "order" and m:
                out.append(("get_order_details", {"order_id": f"#W{m.group(1)}"}))
        return out

    @staticmethod
    def _candidates_from(name: str, doc: Any) -> list[tuple[str, dict]]:
        """Reads whose arguments this result supplies (by the result's shape)."""
        out: list[tuple[str, dict]] = []
        if doc is _ERROR:
            return out
        if name in IDENTITY_TOOLS and isinstance(doc, str):
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
                if doc is _ERROR:
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
        return self._from_reads(pred, _top(consumer_ptr))

    def _insert_chain(self, chain: list[tuple[str, dict]], inserted_for: dict) -> None:
        """Append a chain of reads found by `_search`, each argument resolved without insertion."""
        for name, args in chain:
            prov = {}
            for ptr, value in leaves(args):
                p = self._resolve(name, ptr, value, ptr, allow_insert=False)
                if p is None:  # cannot happen: candidates are built from sourced values
                    raise AssertionError(f"inserted {name}{args} has an unsourced argument {ptr}")
                prov[ptr] = p
            index = self._append(
                origin="inserted",
                action_id=None,
                name=name,
                requestor="assistant",
                args=args,
                prov=prov,
                inserted_for=dict(inserted_for),
            )
            if self.calls[index]["error"] is not None:
                raise AssertionError(f"inserted read {name}{args} failed: {self.calls[index]['error']}")

    # ----------------------------------------------------------------- information channel

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
        if _INTEGER.fullmatch(text):
            n = int(text)
            hits.append(
                lambda name, args, doc: (
                    doc is not _ERROR
                    and any(
                        size(coll) == n and self.scope.admits(name, args, ptr, coll)
                        for ptr, coll in _collections(doc)
                        for size in (_available_count, len)
                    )
                )
            )
        # The customer's own records first, the catalog only for what they do not hold.
        for hit, skip in [(h, s) for h in hits for s in (CATALOG_TOOLS, frozenset())]:
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
        if _INTEGER.fullmatch(text):
            return self._trace_count(int(text))
        return None

    @staticmethod
    def _info_attempts(text: str) -> list[tuple[str, Callable[[str, Any], bool]]]:
        """The leaf matches an information item is tried with, in order (`match` names them)."""
        lowered = _ws(text).casefold()
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
                        and contains.search(_ws(leaf).casefold()) is not None
                    ),
                )
            )
        attempts.append(("exact", _string_equals(text)))
        if _is_number_text(text):
            attempts.append(("number", _number_equals(text)))
        attempts.append(("casefold", lambda p, leaf: isinstance(leaf, str) and _ws(leaf).casefold() == lowered))
        if re.search(r"[A-Za-z]", text) and len(text) >= 3:
            attempts.append(
                (
                    "contains",
                    lambda p, leaf: isinstance(leaf, str) and contains.search(_ws(leaf).casefold()) is not None,
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
                if doc is _ERROR:
                    continue
                for ptr, coll in _collections(doc):
                    if size(coll) == n and self.scope.admits(
                        self.calls[j]["name"], self.calls[j]["arguments"], ptr, coll
                    ):
                        return {"kind": "read", "call": j, "path": ptr, "selected_by": [], "match": how}
        return None

    # ----------------------------------------------------------------- counting

    def mark_counted(self, information: list[dict]) -> None:
        used: set[int] = set()

        def uses(prov: dict | None) -> Iterator[int]:
            if not prov:
                return
            if prov.get("kind") == "read":
                yield prov["call"]
            for sub in prov.get("from", []):
                yield from uses(sub)

        for item in information:
            used.update(uses(item["provenance"]))
        for call in reversed(self.calls):
            i = call["index"]
            if call["error"] is not None:
                call["counted"], call["why_not_counted"] = False, "intended_failure"
                continue
            # Only the reference's own writes and hand-offs count for their own sake; every
            # read, identity lookups included, counts only through a use of its result.
            anchor = call["origin"] == "reference" and (
                call["tool_type"] == "write" or call["name"] == "transfer_to_human_agents"
            )
            if anchor or i in used:
                call["counted"] = True
                for prov in call["provenance"].values():
                    used.update(uses(prov))
            else:
                call["counted"], call["why_not_counted"] = False, "exploration_only"


# --------------------------------------------------------------------------- public API


def build_golden(
    card: dict,
    world: RetailWorld,
    vocabulary: dict[str, list[str]],
    *,
    card_sha256: str | None = None,
    where: str | None = None,
    verify_replay: bool = True,
) -> dict:
    """The golden trajectory of one (already validated) card, with its replay check.

    `card_sha256` is recorded as the card's identity (the CLI passes the file's digest; the
    default is the digest of the canonical JSON, which equals it for files written by
    `incognita.common.io.write_json`). `where` prefixes error messages.
    """
    from incognita.access.golden.upstream_replay import verify

    where = where or f"card {card.get('task_id')}"
    builder = _Builder(card, world, vocabulary, where)
    for action in card["reference_actions"]:
        builder.add_reference(action)
    information = builder.trace_information()
    builder.mark_counted(information)
    calls = builder.calls
    doc = {
        "schema_version": GOLDEN_SCHEMA_VERSION,
        "generator_version": GENERATOR_VERSION,
        "task_id": card["task_id"],
        "card": {"sha256": card_sha256 or sha256_obj(card), "card_version": card["card_version"]},
        "inputs": {"db_sha256": world.db_sha256, "vocabulary_sha256": sha256_obj(vocabulary)},
        "calls": calls,
        "information_channel": information,
        "scope": builder.scope.to_json(),
        "counts": {
            "calls": len(calls),
            "reference": sum(c["origin"] == "reference" for c in calls),
            "inserted": sum(c["origin"] == "inserted" for c in calls),
            "counted": sum(bool(c["counted"]) for c in calls),
            "intended_failure": sum(c["why_not_counted"] == "intended_failure" for c in calls),
            "exploration_only": sum(c["why_not_counted"] == "exploration_only" for c in calls),
            "information_traced": sum(i["provenance"] is not None for i in information),
            "information": len(information),
        },
        "replay": None,
    }
    if verify_replay:
        doc["replay"] = verify(world, doc, card["reference_actions"])
    return doc


def check_golden(doc: dict, where: str) -> None:
    """Validate a golden trajectory against incognita/schemas/golden.schema.json."""
    from incognita.common.schema import validate

    validate(doc, "golden.schema.json", where)


def golden_summary(doc: dict) -> str:
    c, r = doc["counts"], doc["replay"] or {}
    return (
        f"task {doc['task_id']}: {c['calls']} calls ({c['reference']} reference, {c['inserted']} inserted), "
        f"{c['counted']} counted, {c['intended_failure']} intended failure(s), "
        f"{c['exploration_only']} exploration-only, info {c['information_traced']}/{c['information']} traced; "
        f"replay {'match' if r.get('match') else 'MISMATCH'}"
    )
