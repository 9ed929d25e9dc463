"""The retail domain's own card checks (incognita.access.domain.CardRules.audit_checks), beside
the generic ones of incognita.access.cards.audit: every value a reference write consumes is
releasable, policy vocabulary or readable; every item a write touches is named or selected by
the customer; the customer can tell each chosen entry apart from its alternatives
(`selectors_reachable`, incognita.access.domains.retail.reachability); every identity the source
states is on the card (`identities_on_card`, incognita.access.domains.retail.identity_check); and
every condition keeps the event that fires it (`triggers_kept`,
incognita.access.domains.retail.trigger_check).
"""

from __future__ import annotations

import re

from incognita.access.cards.text import norm
from incognita.access.domains.retail.card_rules import WRITE_TOOLS, order_key
from incognita.access.domains.retail.identity_check import check_identities_on_card
from incognita.access.domains.retail.reachability import check_selectors_reachable, json_scalars
from incognita.access.domains.retail.source_words import US_STATES
from incognita.access.domains.retail.trigger_check import check_triggers_kept

# Selectors by which a customer picks items without naming them ("all", "the cheapest").
_UNIVERSAL = re.compile(
    r"\b(all|every|everything|each|both|cheapest|most expensive|same|other|remaining|entire|whole)\b",
    re.IGNORECASE,
)


def audit_checks(
    card: dict, db: dict, vocabulary: dict[str, list[str]], ambiguities: dict
) -> list[tuple[str, str, str]]:
    """(check, verdict, detail) of the retail checks of one card."""
    return [
        check_write_values(card, db, vocabulary),
        check_choices_expressed(card, db),
        ("selectors_reachable", *check_selectors_reachable(card, db, ambiguities)),
        check_identities_on_card(card),
        check_triggers_kept(card),
    ]


def _order_key(value: str) -> str:

    return order_key(value)


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


def check_write_values(card: dict, db: dict, vocabulary: dict[str, list[str]]) -> tuple[str, str, str]:
    """Every value a reference write consumes is a releasable field, policy vocabulary or readable."""
    writes = [a for a in card["reference_actions"] if a["name"] in WRITE_TOOLS]
    if not writes:
        return ("write_values_sourced", "pass", "no reference writes")
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
        return ("write_values_sourced", "fail", "no releasable field, vocabulary or read gives: " + ", ".join(missing))
    return ("write_values_sourced", "pass", f"{len(writes)} write(s), every argument sourced")


def check_choices_expressed(card: dict, db: dict) -> tuple[str, str, str]:
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
        return ("choices_expressed", "warn", "customer never names: " + ", ".join(unexpressed))
    return ("choices_expressed", "pass", "every touched item is named or selected by the customer")
