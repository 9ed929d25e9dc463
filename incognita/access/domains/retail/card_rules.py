"""The retail domain's card rules: the customer's fields, demands and opening line, read off a
retail task's user scenario (incognita.access.domain.CardRules; the card's layout and its
requests are incognita.access.cards.card's).

The builder is rule-based: every field value is made of spans copied from the source
instructions, found by the extraction rules below (the words they read are
incognita.access.domains.retail.source_words). None names a task, an id or a product.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from incognita.access.cards.card import FALLBACK, WITHHOLD, FieldSet, card_document
from incognita.access.cards.text import clean, find_span, norm, split_sentences
from incognita.access.cards.text import opening_line as text_opening_line
from incognita.access.domains.retail.source_words import (
    PRICE_SUPERLATIVE,
    RECENCY,
    find_option,
    find_product,
    option_matches,
    product_mentions,
    source_text,
)

WRITE_TOOLS = frozenset(
    {
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
        "transfer_to_human_agents",
    }
)
ADDRESS_ARGS = ("address1", "address2", "city", "state", "zip", "country")


# --------------------------------------------------------------------------- extraction rules

# A name after the phrase that introduces it; in the known information one word is a name
# ("You are Lucas (lucas_santos_6600)"), elsewhere only a full name is taken.
_NAME = re.compile(r"(?:[Yy]ou are|[Yy]ou're|[Nn]ame is|I am|called|named)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)")
_FIRST_NAME = re.compile(r"(?:[Yy]ou are|[Yy]ou're|[Nn]ame is|I am|called|named)\s+([A-Z][a-z]+)\b(?!\s+[A-Z])")
# What the customer goes by besides the name ("Your name is Noah but you go by NoNo").
_ALIAS = re.compile(r"\bgo(?:es)? by\s+([A-Z][A-Za-z]+)")
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{4}\b")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_ZIP = re.compile(r"(?<![\d#W])\d{5}(?!\d)")
_ORDER = re.compile(r"(?<![\w#])(#?W\d{7}|\d{7})(?!\d)")


def identity_fields(fs: FieldSet, known: str, text: str, persona: str = "") -> None:
    m = _NAME.search(known) or _FIRST_NAME.search(known) or _NAME.search(text)
    if m:
        fs.add("name", "identity", m.group(1), [m.group(1)])
    for alias in dict.fromkeys(_ALIAS.findall(known) + _ALIAS.findall(persona)):
        fs.add("alias", "identity", alias, [alias])
    for uid in dict.fromkeys(_USER_ID.findall(known) or _USER_ID.findall(text)):
        fs.add("user_id", "identity", uid, [uid])
    for email in dict.fromkeys(e.rstrip(".") for e in _EMAIL.findall(text)):
        fs.add("email", "identity", email, [email])
    # Zips in the persona text are what the customer is told to say when asked, in that order
    # ("say 98178 first ..., then ... 98186 ... If that fails, then say 98187"): they are its
    # attempts, so they come first (`zip`, `zip_2`, ...), and a known zip they leave out last.
    for z in dict.fromkeys(_ZIP.findall(persona) + _ZIP.findall(known)):
        fs.add("zip", "identity", z, [z])


def order_fields(fs: FieldSet, text: str) -> None:
    for oid in dict.fromkeys(_ORDER.findall(text)):
        fs.add("order_id", "order", oid, [oid])


def order_key(value: str) -> str:
    """Order ids compare without the '#' and 'W' the customer may drop."""
    return norm(value).lstrip("w")


def slug(text: str) -> str:
    """The product part of a field token: 'T-Shirt' -> 't_shirt'."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _orders_items(db: dict, order_id: str) -> dict[str, dict]:
    order = db["orders"].get(order_id) or {}
    return {it["item_id"]: it for it in order.get("items", [])}


def _variant(db: dict, item_id: str) -> tuple[dict | None, dict | None]:
    for product in db["products"].values():
        if item_id in product["variants"]:
            return product, product["variants"][item_id]
    return None, None


# Where the words that go with a product name begin, reading back from it.
_CLAUSE_START = re.compile(r"[,;:()]|\b(?:and|but|or|to|for|into)\b", re.IGNORECASE)
# What turns the rest of a clause into a description of the requested item ("... to a red one").
_CHANGE_TO = re.compile(r"\b(?:to|for|into)\b", re.IGNORECASE)
# In a requested item's description, a value that names what the customer has.
_KEEPS = re.compile(
    r"\b(?:same|keep(?:s|ing)?(?:\s+(?:the|my|its|your))?|still(?:\s+with)?(?:\s+(?:the|a|an))?|"
    r"instead\s+of(?:\s+(?:the|a|an|my|your))?)\s+$",
    re.IGNORECASE,
)
# A price superlative about order lines ("the most expensive item"), not about variants.
_ABOUT_ITEMS = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:items?|things?|products?)\b", re.IGNORECASE)


def _clause_start(sentence: str, start: int, mentions: list[tuple[int, int]]) -> int:
    """Where the words before a mention at `start` begin: after the last clause boundary,
    and never before the end of an earlier mention."""
    cut = max((e for s, e in mentions if e <= start), default=0)
    for m in _CLAUSE_START.finditer(sentence, cut, start):
        cut = m.end()
    return cut


def _regions(sentence: str, own: list[tuple[int, int]], others: list[tuple[int, int]], replaced: bool):
    """(description, request) character ranges of one line's product in a sentence.

    A line is described by the words of its clause around each mention of its product: back
    to the clause boundary before it ("the pending small tshirt"), and on to the words of the
    next product named ("which vacuum cleaner, mention the robotic one"). For a line that is
    replaced, what follows 'to', 'for' or 'into' after the mention describes the requested
    item instead, up to a ';' or the next product named ("... to purple, same size")."""
    mentions = sorted(own + others)
    desc: list[tuple[int, int]] = []
    request: list[tuple[int, int]] = []
    for start, end in own:
        if any(a <= start < b for a, b in request):
            continue  # the product named again inside the request is the new item
        desc.append((_clause_start(sentence, start, mentions), start))
        nxt = [s for s, _ in others if s >= end]
        stop = _clause_start(sentence, min(nxt), mentions) if nxt else len(sentence)
        stop = max(stop, end)
        m = _CHANGE_TO.search(sentence, end, stop) if replaced else None
        if m is None:
            desc.append((end, stop))
            continue
        desc.append((end, m.start()))
        semi = sentence.find(";", m.end(), stop)
        request.append((m.start(), semi if semi >= 0 else stop))
    return desc, request


def _line_description(
    sentences: list[str], name: str, options: dict, others: list[str], requested: bool, replaced: bool
) -> list[str]:
    """Spans, in option order, of the option values of one line that the source states about it.

    `requested`: some line of this product is replaced, so the words after 'to'/'for' describe
    the new item; `replaced`: this line is, so "same <value>" there describes it too."""
    spans: list[str] = []
    for key, value in options.items():
        for sentence in sentences:
            own = product_mentions(sentence, name)
            if not own:
                continue
            other = [
                m
                for o in others
                for m in product_mentions(sentence, o)
                if not any(a < m[1] and m[0] < b for a, b in own)
            ]
            desc, request = _regions(sentence, own, other, requested)
            request = request if replaced else []
            hit = next(
                (
                    m.group(0)
                    for m in option_matches(sentence, key, value)
                    if any(a <= m.start() and m.end() <= b for a, b in desc)
                    or any(
                        a <= m.start() and m.end() <= b and _KEEPS.search(sentence[a : m.start()]) for a, b in request
                    )
                ),
                None,
            )
            if hit:
                if hit not in spans:
                    spans.append(hit)
                break
    return spans


def _stated_options(text: str, options: dict) -> list[str]:
    """Spans, in option order, of the option values the text states."""
    spans: list[str] = []
    for key, value in options.items():
        found = find_option(text, key, value)
        if found and found not in spans:
            spans.append(found)
    return spans


def _superlative(text: str, product_name: str) -> str | None:
    """A price superlative the source states for a requested item: in a sentence naming its
    product or a fallback sentence after one (any sentence when none names it); never one
    about order lines ("the most expensive item")."""
    sentences = split_sentences(text)
    naming = [i for i, s in enumerate(sentences) if find_product(s, product_name)]
    chosen: list[int] = []
    for i in naming:
        chosen.append(i)
        j = i + 1
        while j < len(sentences) and FALLBACK.match(sentences[j]):
            chosen.append(j)
            j += 1
    for i in sorted(set(chosen)) if naming else range(len(sentences)):
        for m in PRICE_SUPERLATIVE.finditer(sentences[i]):
            if not _ABOUT_ITEMS.match(sentences[i][m.end() :]):
                return m.group(0)
    return None


def item_fields(fs: FieldSet, text: str, actions: list[dict], db: dict) -> None:
    """Item descriptions for the lines a write touches; preferences for the items it asks for.

    An item field is the customer's name for the product plus every option value of the
    touched line that the source states about that line (`_regions`): "vacuum cleaner;
    robotic". A preference field holds the option values of the requested variant that the
    source states, and a price superlative stated for it (`_superlative`): "green; cheapest".
    """
    writes = [a for a in actions if a["name"] in WRITE_TOOLS and "order_id" in a["arguments"]]
    touched: dict[str, dict] = {}  # item id -> {name, options, new: [new item ids]}, in write order
    for act in writes:
        args = act["arguments"]
        lines = _orders_items(db, args.get("order_id", ""))
        # Whole-order writes (cancel, address, payment): the customer names the order by its contents.
        ids = args["item_ids"] if "item_ids" in args else list(lines)
        new_ids = (args.get("new_item_ids") or []) if "item_ids" in args else []
        for k, item_id in enumerate(ids or []):
            line = lines.get(item_id)
            product, variant = _variant(db, item_id)
            name = (line or {}).get("name") or (product or {}).get("name")
            if not name:
                continue
            options = (line or {}).get("options") or (variant or {}).get("options") or {}
            entry = touched.setdefault(item_id, {"name": name, "options": options, "new": []})
            if k < len(new_ids) and new_ids[k] not in entry["new"]:
                entry["new"].append(new_ids[k])
    names = list(dict.fromkeys(t["name"] for t in touched.values()))
    replaced_products = {t["name"] for t in touched.values() if t["new"]}
    sentences = split_sentences(text)
    for line in touched.values():
        name = line["name"]
        span = find_product(text, name)
        if span:
            others = [n for n in names if n != name]
            stated = _line_description(
                sentences, name, line["options"], others, name in replaced_products, bool(line["new"])
            )
            fs.add(f"item:{slug(name)}", "item", "; ".join([span] + stated), [span] + stated)
        for new_id in line["new"]:
            new_product, new_variant = _variant(db, new_id)
            if not new_variant:
                continue
            spans = _stated_options(text, new_variant["options"])
            superlative = _superlative(text, new_product["name"])
            if superlative and superlative not in spans:
                spans.append(superlative)
            if spans:
                fs.add(f"preference:{slug(new_product['name'])}", "preference", "; ".join(spans), spans)


def selector_fields(fs: FieldSet, text: str, actions: list[dict], db: dict) -> None:
    """`which_order`: the source's phrase that picks one of the customer's orders by when it
    was placed ("the order you most recently placed"), when the reference acts on or reads
    an order of the customer's that the source does not name, out of two or more."""
    m = RECENCY.search(text)
    if not m:
        return
    named = {order_key(f.value) for f in fs.fields if f.kind == "order"}
    owners = {}
    for act in actions:
        oid = act["arguments"].get("order_id")
        order = db["orders"].get(oid) if isinstance(oid, str) else None
        if order and order_key(oid) not in named:
            owners.setdefault(order["user_id"], set()).add(oid)
    for uid in owners:
        if len((db["users"].get(uid) or {}).get("orders") or []) >= 2:
            fs.add("which_order", "selector", m.group(0), [m.group(0)])
            return


_PAYMENT_WORDS = {
    "paypal": ["paypal"],
    "gift_card": ["gift card", "giftcard", "gift-card"],
    "credit_card": ["credit card", "amex", "visa", "mastercard", "discover", "card"],
}


def payment_fields(fs: FieldSet, text: str, actions: list[dict], db: dict) -> None:
    kinds = []
    for act in actions:
        pm = act["arguments"].get("payment_method_id")
        if act["name"] in WRITE_TOOLS and isinstance(pm, str):
            kinds.append(pm.rsplit("_", 1)[0])
    for kind in dict.fromkeys(kinds):
        for word in _PAYMENT_WORDS.get(kind, []):
            span = find_span(text, word)
            if span:
                fs.add(f"payment:{kind}", "payment", span, [span])
                break


_REASON_WORDS = {
    "no longer needed": [
        "no longer needed",
        "no longer need",
        "don't need",
        "do not need",
        "no longer want",
        "not needed",
    ],
    "ordered by mistake": ["ordered by mistake", "by mistake", "by accident", "accidentally"],
}


def reason_fields(fs: FieldSet, text: str, actions: list[dict]) -> None:
    for act in actions:
        reason = act["arguments"].get("reason") if act["name"] == "cancel_pending_order" else None
        for word in _REASON_WORDS.get(reason or "", []):
            span = find_span(text, word)
            if span:
                fs.add("reason", "reason", span, [span])
                break


def verbatim_fields(fs: FieldSet, text: str, actions: list[dict]) -> None:
    """Write arguments that the instructions spell out literally (addresses, item ids)."""
    known = {norm(f.value) for f in fs.fields}
    for act in actions:
        if act["name"] not in WRITE_TOOLS or act["name"] == "transfer_to_human_agents":
            continue
        for arg, value in _leaves(act["arguments"]):
            if not isinstance(value, str) or len(norm(value)) < 2 or norm(value) in known:
                continue
            if arg in ("reason", "payment_method_id"):
                continue
            span = find_span(text, value)
            if span:
                kind = "address" if arg in ADDRESS_ARGS else "value"
                fs.add(arg, kind, span, [span])
                known.add(norm(value))


def _leaves(args: dict) -> Iterable[tuple[str, Any]]:
    for key, value in args.items():
        if isinstance(value, list):
            for v in value:
                yield key, v
        else:
            yield key, value


# --------------------------------------------------------------------------- requests, opening


_DEMAND_IN_PERSONA = re.compile(r"\b(you want|want to know|wonder|ask the agent|do not end|don't end)\b", re.IGNORECASE)


def demand_sentences(task_instructions: str) -> list[str]:
    """Sentences of the persona text that are demands rather than manner ('You want to know ...')."""
    return [s for s in split_sentences(task_instructions) if _DEMAND_IN_PERSONA.search(s)]


_INTENTS = [  # (pattern over the reason for calling, phrase for the opening line)
    (r"\bexchang", "an exchange"),
    (r"\breturn", "a return"),
    (r"\bcancel", "a cancellation"),
    (r"\baddress\b", "an address change"),
    (r"\b(modify|change|switch|upgrade|update|add)\b", "a change to an order"),
    (r"\b(know|wonder|ask|tell|how many|how much|check|confirm|what|which|why)\b", "a question"),
]


def opening_line(reason: str) -> str:
    """A neutral first message: what kind of help, never a field value."""
    return text_opening_line(reason, _INTENTS, "Hi, I need some help with my account.")


# --------------------------------------------------------------------------- the card


def build_card(task: dict, db: dict, source_meta: dict) -> dict:
    """Build the rule-based (version 1) card for one upstream task."""
    instr = task["user_scenario"]["instructions"]
    known, reason = clean(instr.get("known_info")), clean(instr.get("reason_for_call"))
    text = source_text(instr)
    actions = (task.get("evaluation_criteria") or {}).get("actions") or []

    fs = FieldSet()
    identity_fields(fs, known, text, clean(instr.get("task_instructions")))
    order_fields(fs, text)
    item_fields(fs, text, actions, db)
    selector_fields(fs, text, actions, db)
    payment_fields(fs, text, actions, db)
    reason_fields(fs, text, actions)
    verbatim_fields(fs, text, actions)

    sentences = split_sentences(reason) + demand_sentences(clean(instr.get("task_instructions")))
    unknown = clean(instr.get("unknown_info"))
    return card_document(
        task,
        source_meta,
        instructions={k: instr.get(k) for k in ("known_info", "unknown_info", "reason_for_call", "task_instructions")},
        opening_line=opening_line(reason),
        fields=fs,
        not_known=[unknown] if unknown else [],
        sentences=sentences,
        persona=clean(instr.get("task_instructions")),
        withholds_disclosure=bool(WITHHOLD.search(reason)),
    )
