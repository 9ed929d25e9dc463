"""Card audit: check every card against its source task under the repair rule.

The rule: whatever the source tells the customer must be releasable, and nothing the
source does not tell the customer may be invented. Each check yields one row
(task, card_version, check, verdict, detail) with verdict pass, fail, warn or info.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from incognita.access.cards.card import WRITE_TOOLS, order_key
from incognita.access.cards.reachability import check_selectors_reachable, json_scalars, load_ambiguities
from incognita.access.cards.source_words import US_STATES, contains_span, norm, source_text

HEADER = ["task", "card_version", "check", "verdict", "detail"]
# Selectors by which a customer picks items without naming them ("all", "the cheapest").
_UNIVERSAL = re.compile(
    r"\b(all|every|everything|each|both|cheapest|most expensive|same|other|remaining|entire|whole)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"\b(know|wonder|ask|tell|get|how many|how much|what|which|why|when|confirm|check|verify|total)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Finding:
    task: str
    card_version: int
    check: str
    verdict: str
    detail: str

    def row(self) -> list[Any]:
        return [self.task, self.card_version, self.check, self.verdict, self.detail]


# --------------------------------------------------------------------------- what reads can return


def readable_values(db: dict, order_ids: set[str]) -> set[str]:
    """Normalised values that service-side reads starting from these orders' owners can return.

    Covers the owners' profiles, all their orders, and every product appearing in them, plus
    the product-type listing: what get_user_details, get_order_details, get_product_details
    and list_all_product_types would show.
    """
    users = {db["orders"][o]["user_id"] for o in order_ids if o in db["orders"]}
    values: set[str] = set()
    product_ids: set[str] = set()
    for uid in users:
        user = db["users"][uid]
        values.update(norm(str(v)) for v in json_scalars(user))
        for oid in user.get("orders", []):
            order = db["orders"].get(oid, {})
            values.update(norm(str(v)) for v in json_scalars(order))
            product_ids.update(it["product_id"] for it in order.get("items", []))
    for pid in product_ids:
        values.update(norm(str(v)) for v in json_scalars(db["products"][pid]))
    for product in db["products"].values():
        values.update({norm(product["name"]), norm(product["product_id"])})
    return values


# --------------------------------------------------------------------------- the checks


def _field_matches(value: str, fields: list[dict]) -> bool:
    v = norm(value)
    for f in fields:
        fv = norm(f["value"])
        if v == fv or (f["kind"] == "order" and order_key(value) == order_key(f["value"])):
            return True
        if f["token"] == "name" and v in {norm(p) for p in f["value"].split()}:
            return True
        if f["kind"] == "address" and US_STATES.get(f["value"].lower()) == value:
            return True
    return False


def check_fields_in_source(card: dict) -> Finding:
    text = source_text(card["source"]["instructions"])
    invented = [
        f"{f['token']}: {span!r}" for f in card["fields"] for span in f["spans"] if not contains_span(text, span)
    ]
    parts_ok = [f["token"] for f in card["fields"] if not all(norm(s) in norm(f["value"]) for s in f["spans"])]
    if invented or parts_ok:
        detail = "; ".join(invented + [f"{t}: value is not made of its spans" for t in parts_ok])
        return _f(card, "fields_in_source", "fail", f"not in the source instructions: {detail}")
    return _f(card, "fields_in_source", "pass", f"{len(card['fields'])} field(s), every span found in the source")


def check_write_values(card: dict, db: dict, vocabulary: dict[str, list[str]]) -> Finding:
    """Every value a reference write consumes is a releasable field, policy vocabulary or readable."""
    writes = [a for a in card["reference_actions"] if a["name"] in WRITE_TOOLS]
    if not writes:
        return _f(card, "write_values_sourced", "pass", "no reference writes")
    orders = {a["arguments"]["order_id"] for a in writes if isinstance(a["arguments"].get("order_id"), str)}
    for f in card["fields"]:
        if f["kind"] == "order":
            orders.update(o for o in db["orders"] if order_key(o) == order_key(f["value"]))
    if not orders:  # profile-only writes: the owner comes from the user id argument
        for a in writes:
            uid = a["arguments"].get("user_id")
            if uid in db["users"]:
                orders.update(db["users"][uid].get("orders", [])[:1])
    readable = readable_values(db, orders)
    vocab_raw = {str(v) for values in vocabulary.values() for v in values}
    vocab = {norm(v) for v in vocab_raw}
    missing = []
    for a in writes:
        if a["name"] == "transfer_to_human_agents":
            continue  # the summary is free text the agent writes from the customer's request
        for arg, value in a["arguments"].items():
            for v in value if isinstance(value, list) else [value]:
                s = str(v)
                if s == "" and "" in vocab_raw:
                    continue  # an empty optional field (address2) is vocabulary, not knowledge
                if _field_matches(s, card["fields"]) or (s and norm(s) in vocab) or norm(s) in readable:
                    continue
                missing.append(f"{a['name']}.{arg}={s!r}")
    if missing:
        return _f(
            card, "write_values_sourced", "fail", "no releasable field, vocabulary or read gives: " + ", ".join(missing)
        )
    return _f(card, "write_values_sourced", "pass", f"{len(writes)} write(s), every argument sourced")


def check_choices_expressed(card: dict, db: dict) -> Finding:
    """Each item a write touches is named by the customer (an item/preference field) or picked by a
    universal selector in their own words ('all', 'the cheapest', 'same')."""
    text = " ".join(card.get("sentences", []))
    tokens = {f["token"] for f in card["fields"]}
    unexpressed = []
    for a in card["reference_actions"]:
        args = a["arguments"]
        if a["name"] not in WRITE_TOOLS or "item_ids" not in args:
            continue
        lines = {it["item_id"]: it for it in db["orders"].get(args.get("order_id"), {}).get("items", [])}
        for item_id in args["item_ids"]:
            name = lines.get(item_id, {}).get("name")
            slug = re.sub(r"[^a-z0-9]+", "_", (name or "").lower()).strip("_")
            if f"item:{slug}" in tokens or _UNIVERSAL.search(text):
                continue
            unexpressed.append(f"{a['name']} item {item_id} ({name})")
    if unexpressed:
        return _f(card, "choices_expressed", "warn", "customer never names: " + ", ".join(unexpressed))
    return _f(card, "choices_expressed", "pass", "every touched item is named or selected by the customer")


def check_info_requests(card: dict) -> Finding:
    info = card["information_channel"]["communicate_info"]
    if not info:
        return _f(card, "info_requested", "pass", "no information channel")
    texts = [r["demand"] for r in card["requests"]] + [fb for r in card["requests"] for fb in r["fallbacks"]]
    if any(_QUESTION.search(t) for t in texts):
        return _f(card, "info_requested", "pass", f"request block asks for information ({len(info)} item(s) expected)")
    return _f(
        card,
        "info_requested",
        "fail",
        f"the agent must communicate {info} but no demand in the request block asks for it",
    )


def check_requests_cover(card: dict) -> Finding:
    n = len(card.get("sentences", []))
    covered = {c for r in card["requests"] for c in r.get("covers", [])}
    uncovered = [i for i in range(n) if i not in covered]
    if uncovered:
        shown = "; ".join(f"[{i}] {card['sentences'][i]}" for i in uncovered)
        return _f(card, "requests_cover_demands", "fail", f"source sentences not in the request block: {shown}")
    return _f(
        card, "requests_cover_demands", "pass", f"{n} source sentence(s) covered by {len(card['requests'])} demand(s)"
    )


_CONCRETE = re.compile(r"#?W?\d[\d,.]*|[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+")


def check_requests_invent_nothing(card: dict) -> Finding:
    """Numbers, ids and emails in the request block must come from the source text."""
    text = norm(source_text(card["source"]["instructions"]))
    texts = [r["demand"] for r in card["requests"]] + [fb for r in card["requests"] for fb in r["fallbacks"]]
    invented = sorted(
        {
            m.group(0).rstrip(".,")
            for t in texts
            for m in _CONCRETE.finditer(t)
            if norm(m.group(0)) and norm(m.group(0)) not in text
        }
    )
    if invented:
        return _f(card, "requests_invent_nothing", "fail", "values not in the source: " + ", ".join(invented))
    return _f(
        card, "requests_invent_nothing", "pass", "every number, id and email in the request block is in the source"
    )


def check_withholding(card: dict) -> Finding:
    if card["withholds_disclosure"]:
        return _f(card, "withholds_disclosure", "info", "the source tells the customer to withhold something by design")
    return _f(card, "withholds_disclosure", "pass", "no withholding instruction")


def audit_card(
    card: dict, db: dict, vocabulary: dict[str, list[str]], ambiguities: dict[str, dict[str, str]] | None = None
) -> list[Finding]:
    """All checks of one card; `ambiguities` defaults to config/upstream_ambiguities.yaml."""
    if ambiguities is None:
        ambiguities = load_ambiguities()
    findings = [
        check_fields_in_source(card),
        check_write_values(card, db, vocabulary),
        check_choices_expressed(card, db),
        check_info_requests(card),
        check_requests_cover(card),
        check_requests_invent_nothing(card),
        _f(card, "selectors_reachable", *check_selectors_reachable(card, db, ambiguities)),
        check_withholding(card),
    ]
    for rep in card["repairs"]:
        findings.append(_f(card, "repair", "info", f"{rep['file']} v{rep['version']}: {rep['reason']}"))
    return findings


def _f(card: dict, check: str, verdict: str, detail: str) -> Finding:
    return Finding(card["task_id"], card["card_version"], check, verdict, detail)
