"""Task cards: a source task turned into data the environment renders selectively.

A card holds what only the customer knows, split into named fields that the disclosure
gate releases one at a time (each a token with its value), the customer's own demands in
order with their fallbacks, and the upstream reference actions verbatim. The card is never
shown to the evaluated agent.

The builder is rule-based: every field value is made of spans copied from the source
instructions, found by the extraction rules below. Per-task corrections are data, not
code: YAML overlays in config/repairs/ (see incognita.repairs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1
# Bump when a rule change alters cards: the workflow passes it as a param, so cards (and
# everything built from them) are rebuilt; plain code edits never invalidate results.
BUILDER_VERSION = 2
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

# Sentence openers that make a sentence a condition on the demand before it.
_FALLBACK = re.compile(
    r"^(if|but if|if not|only if|if and only if|otherwise|unless|when the agent|but when|"
    r"in case|if so|if that|if there|if the agent|if several|if no|if cancelling|if you)\b",
    re.IGNORECASE,
)
# Phrases by which the source tells the customer to keep something back on purpose.
_WITHHOLD = re.compile(
    r"(do not|don't|never)\s+(want to\s+)?reveal\b|without revealing|do not mention|don't mention",
    re.IGNORECASE,
)
_EMPTY = {"", ".", "none", "null"}


@dataclass
class Field:
    token: str
    kind: str
    value: str
    spans: list[str]
    note: str | None = None

    def as_dict(self) -> dict:
        out = {"token": self.token, "kind": self.kind, "value": self.value, "spans": self.spans}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class _FieldSet:
    """Collects fields, keeping tokens unique (a second distinct value gets `_2`, `_3`...)."""

    fields: list[Field] = field(default_factory=list)

    def add(self, token: str, kind: str, value: str, spans: list[str], note: str | None = None) -> None:
        for f in self.fields:
            if f.kind == kind and norm(f.value) == norm(value):
                return
        base, n, candidate = token, 1, token
        while any(f.token == candidate for f in self.fields):
            n += 1
            candidate = f"{base}_{n}"
        self.fields.append(Field(candidate, kind, value, spans, note))


# --------------------------------------------------------------------------- text helpers

# US state names and their postal codes: customers write either ("New York", "NY").
US_STATES = {
    "alabama": "AL",
    "alaska": "AK",
    "arizona": "AZ",
    "arkansas": "AR",
    "california": "CA",
    "colorado": "CO",
    "connecticut": "CT",
    "delaware": "DE",
    "florida": "FL",
    "georgia": "GA",
    "hawaii": "HI",
    "idaho": "ID",
    "illinois": "IL",
    "indiana": "IN",
    "iowa": "IA",
    "kansas": "KS",
    "kentucky": "KY",
    "louisiana": "LA",
    "maine": "ME",
    "maryland": "MD",
    "massachusetts": "MA",
    "michigan": "MI",
    "minnesota": "MN",
    "mississippi": "MS",
    "missouri": "MO",
    "montana": "MT",
    "nebraska": "NE",
    "nevada": "NV",
    "new hampshire": "NH",
    "new jersey": "NJ",
    "new mexico": "NM",
    "new york": "NY",
    "north carolina": "NC",
    "north dakota": "ND",
    "ohio": "OH",
    "oklahoma": "OK",
    "oregon": "OR",
    "pennsylvania": "PA",
    "rhode island": "RI",
    "south carolina": "SC",
    "south dakota": "SD",
    "tennessee": "TN",
    "texas": "TX",
    "utah": "UT",
    "vermont": "VT",
    "virginia": "VA",
    "washington": "WA",
    "west virginia": "WV",
    "wisconsin": "WI",
    "wyoming": "WY",
    "district of columbia": "DC",
}


def clean(text: str | None) -> str:
    text = (text or "").strip()
    return "" if text.lower() in _EMPTY else text


def norm(text: str) -> str:
    """Case- and punctuation-blind form used for every value comparison."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def source_text(instructions: dict) -> str:
    parts = [clean(instructions.get(k)) for k in ("known_info", "unknown_info", "reason_for_call", "task_instructions")]
    return "\n".join(p for p in parts if p)


def split_sentences(text: str) -> list[str]:
    text = re.sub(r"\s+", " ", clean(text)).strip()
    if not text:
        return []
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'])", text)
    return [p.strip() for p in parts if p.strip(" .")]


def find_span(text: str, phrase: str) -> str | None:
    """Return the source's own spelling of `phrase` (case-insensitive, word-bounded), if present."""
    pattern = r"(?<![A-Za-z0-9])" + re.escape(phrase).replace(r"\ ", r"\s+") + r"(?![A-Za-z0-9])"
    m = re.search(pattern, text, re.IGNORECASE)
    return m.group(0) if m else None


def contains_span(text: str, span: str) -> bool:
    return re.sub(r"\s+", " ", span.lower()).strip() in re.sub(r"\s+", " ", text.lower())


# --------------------------------------------------------------------------- extraction rules

_NAME = re.compile(r"(?:[Yy]ou are|[Nn]ame is|I am|called|named)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)")
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{4}\b")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_ZIP = re.compile(r"(?<![\d#W])\d{5}(?!\d)")
_ORDER = re.compile(r"(?<![\w#])(#?W\d{7}|\d{7})(?!\d)")


def identity_fields(fs: _FieldSet, known: str, text: str, persona: str = "") -> None:
    m = _NAME.search(known) or _NAME.search(text)
    if m:
        fs.add("name", "identity", m.group(1), [m.group(1)])
    for uid in dict.fromkeys(_USER_ID.findall(known) or _USER_ID.findall(text)):
        fs.add("user_id", "identity", uid, [uid])
    for email in dict.fromkeys(e.rstrip(".") for e in _EMAIL.findall(text)):
        fs.add("email", "identity", email, [email])
    # Zips in the persona text are the alternatives a customer gives when corrected.
    for z in dict.fromkeys(_ZIP.findall(known) + _ZIP.findall(persona)):
        fs.add("zip", "identity", z, [z])


def order_fields(fs: _FieldSet, text: str) -> None:
    for oid in dict.fromkeys(_ORDER.findall(text)):
        fs.add("order_id", "order", oid, [oid])


def order_key(value: str) -> str:
    """Order ids compare without the '#' and 'W' the customer may drop."""
    return norm(value).lstrip("w")


def _name_phrases(product_name: str) -> list[str]:
    """Ways a customer may name a product, longest first: 'Mechanical Keyboard' -> [.., 'keyboard']."""
    words = product_name.lower().replace("-", " ").split()
    phrases = [" ".join(words[i:j]) for i in range(len(words)) for j in range(len(words), i, -1)]
    phrases += ["".join(words)] if len(words) > 1 else []
    generic = {"set", "kit", "smart", "electric", "digital", "wireless", "indoor", "portable", "t"}
    out = [p for p in phrases if p not in generic and len(p) >= 3]
    return sorted(dict.fromkeys(out), key=lambda p: (-len(p), p))


# Everyday names that no sub-phrase of the catalog name yields.
_ALIASES = {
    "Wristwatch": ["watch"],
    "E-Reader": ["ereader", "e reader", "kindle"],
    "Sneakers": ["sneaker", "shoes"],
    "Running Shoes": ["shoes", "shoe"],
    "Hiking Boots": ["boot", "boots"],
}


def _find_product(text: str, product_name: str) -> str | None:
    for phrase in _name_phrases(product_name) + _ALIASES.get(product_name, []):
        for variant in (phrase, phrase + "s", phrase + "es", phrase.rstrip("s")):
            span = find_span(text, variant)
            if span:
                return span
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _orders_items(db: dict, order_id: str) -> dict[str, dict]:
    order = db["orders"].get(order_id) or {}
    return {it["item_id"]: it for it in order.get("items", [])}


def _variant(db: dict, item_id: str) -> tuple[dict | None, dict | None]:
    for product in db["products"].values():
        if item_id in product["variants"]:
            return product, product["variants"][item_id]
    return None, None


def item_fields(fs: _FieldSet, text: str, actions: list[dict], db: dict) -> None:
    """Item descriptions for the lines a write touches; preferences for the items it asks for."""
    for act in actions:
        args = act["arguments"]
        if act["name"] not in WRITE_TOOLS or "order_id" not in args:
            continue
        lines = _orders_items(db, args.get("order_id", ""))
        if "item_ids" not in args:
            # Whole-order writes (cancel, address, payment): the customer names the order by its contents.
            for line in lines.values():
                span = _find_product(text, line["name"])
                if span:
                    fs.add(f"item:{_slug(line['name'])}", "item", span, [span])
            continue
        olds = args.get("item_ids") or []
        news = args.get("new_item_ids") or [None] * len(olds)
        for old_id, new_id in zip(olds, news):
            line = lines.get(old_id)
            product, _ = _variant(db, old_id)
            name = (line or {}).get("name") or (product or {}).get("name")
            if not name:
                continue
            span = _find_product(text, name)
            if span:
                fs.add(f"item:{_slug(name)}", "item", span, [span])
            if new_id is None:
                continue
            new_product, new_variant = _variant(db, new_id)
            if not new_variant:
                continue
            spans = []
            for value in new_variant["options"].values():
                if len(norm(value)) < 3:
                    continue  # single letters such as size 'S' match too much text
                found = find_span(text, value)
                if found and found not in spans:
                    spans.append(found)
            if spans:
                fs.add(f"preference:{_slug(new_product['name'])}", "preference", "; ".join(spans), spans)


_PAYMENT_WORDS = {
    "paypal": ["paypal"],
    "gift_card": ["gift card", "giftcard", "gift-card"],
    "credit_card": ["credit card", "amex", "visa", "mastercard", "discover", "card"],
}


def payment_fields(fs: _FieldSet, text: str, actions: list[dict], db: dict) -> None:
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


def reason_fields(fs: _FieldSet, text: str, actions: list[dict]) -> None:
    for act in actions:
        reason = act["arguments"].get("reason") if act["name"] == "cancel_pending_order" else None
        for word in _REASON_WORDS.get(reason or "", []):
            span = find_span(text, word)
            if span:
                fs.add("reason", "reason", span, [span])
                break


def verbatim_fields(fs: _FieldSet, text: str, actions: list[dict]) -> None:
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


def build_requests(sentences: list[str]) -> list[dict]:
    """Each sentence of the reason for calling is a demand; conditional sentences are fallbacks."""
    requests: list[dict] = []
    for i, sentence in enumerate(sentences):
        if requests and _FALLBACK.match(sentence):
            requests[-1]["fallbacks"].append(sentence)
            requests[-1]["covers"].append(i)
        else:
            requests.append({"demand": sentence, "fallbacks": [], "covers": [i]})
    return requests


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
    found = []
    lowered = reason.lower()
    for pattern, phrase in _INTENTS:
        m = re.search(pattern, lowered)
        if m:
            found.append((m.start(), phrase))
    phrases = [p for _, p in sorted(found)][:3]
    if not phrases:
        return "Hi, I need some help with my account."
    if len(phrases) == 1:
        joined = phrases[0]
    else:
        joined = ", ".join(phrases[:-1]) + " and " + phrases[-1]
    return f"Hi, I need some help: {joined}."


# --------------------------------------------------------------------------- the card


def build_card(task: dict, db: dict, source_meta: dict) -> dict:
    """Build the rule-based (version 1) card for one upstream task."""
    instr = task["user_scenario"]["instructions"]
    known, reason = clean(instr.get("known_info")), clean(instr.get("reason_for_call"))
    text = source_text(instr)
    criteria = task.get("evaluation_criteria") or {}
    actions = criteria.get("actions") or []

    fs = _FieldSet()
    identity_fields(fs, known, text, clean(instr.get("task_instructions")))
    order_fields(fs, text)
    item_fields(fs, text, actions, db)
    payment_fields(fs, text, actions, db)
    reason_fields(fs, text, actions)
    verbatim_fields(fs, text, actions)

    sentences = split_sentences(reason) + demand_sentences(clean(instr.get("task_instructions")))
    unknown = clean(instr.get("unknown_info"))
    return {
        "schema_version": SCHEMA_VERSION,
        "task_id": str(task["id"]),
        "card_version": 1,
        "builder_version": BUILDER_VERSION,
        "source": {
            "package": source_meta["package"],
            "version": source_meta["version"],
            "tasks_sha256": source_meta["tasks_sha256"],
            "instructions": {
                k: instr.get(k) for k in ("known_info", "unknown_info", "reason_for_call", "task_instructions")
            },
        },
        "opening_line": opening_line(reason),
        "fields": [f.as_dict() for f in fs.fields],
        "not_known": [unknown] if unknown else [],
        "sentences": sentences,
        "requests": build_requests(sentences),
        "persona": clean(instr.get("task_instructions")),
        "reference_actions": [
            {"action_id": a.get("action_id"), "name": a["name"], "arguments": a["arguments"]} for a in actions
        ],
        "information_channel": {
            "communicate_info": list(criteria.get("communicate_info") or []),
            "nl_assertions": list(criteria.get("nl_assertions") or []),
        },
        "withholds_disclosure": bool(_WITHHOLD.search(reason)),
        "repairs": [],
    }


def validate_card(card: dict, where: str) -> None:
    """Schema check plus the invariants the schema cannot express."""
    from incognita.common.io import InputError
    from incognita.common.schema import validate

    validate(card, "card.schema.json", where)
    tokens = [f["token"] for f in card["fields"]]
    dupes = sorted({t for t in tokens if tokens.count(t) > 1})
    if dupes:
        raise InputError(f"{where}: field tokens must be unique, repeated: {', '.join(dupes)}")
