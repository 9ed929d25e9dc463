"""The airline domain's own card checks (incognita.access.domain.CardRules.audit_checks), beside the
generic ones of incognita.access.cards.audit:

* `identities_on_card`: the name and user id the known information states are fields.
* `conditions_kept`: every sentence of the reason for calling and the further instructions that
  sets a condition ("If the agent says ..., you ...", "... only if ...") is in the request block
  whole, its trigger with it.
* `write_values_sourced`: every text value a reference write consumes is a releasable field (as
  written, or the date or airport it names), a term of the policy vocabulary, or something a read
  can return: the customer's profile and reservations, a flight a search can find, an airport of
  upstream's list. Numbers (bags, amounts) are not text the customer or a record states as such:
  the golden stage derives each from the fields and reads it rests on (incognita.access.domains.
  airline.derivations).
* `choices_reachable`: where a write picks one of several records, the customer can say which:
  a payment method among the profile's several that the write may use (a change of a
  reservation takes a gift card or a credit card, never a certificate) (a payment field), flights other than the ones
  the reservation holds (a flight, date, time or selector field), a reservation the customer does
  not number among several (a description: airport, date, flight or selector fields), and each
  passenger (named, "yourself", or one of the reservation's own). A choice the source does not
  settle is listed in upstream_ambiguities.yaml and reported as warn.
"""

from __future__ import annotations

import re

from incognita.access.cards.text import norm
from incognita.access.domains.airline import source_words as sw
from incognita.access.domains.airline.upstream import airports

HANDOFF = "transfer_to_human_agents"
_CONDITION = re.compile(r"\b(?:if|unless|otherwise|only\s+after|in\s+case)\b", re.IGNORECASE)
_DESCRIBES = ("airport", "date", "date_shift", "flight", "selector", "time", "reservation", "cabin")
_PICKS_FLIGHTS = ("flight", "date", "date_shift", "time", "selector")


def audit_checks(card: dict, db: dict, vocabulary: dict, ambiguities: dict) -> list[tuple[str, str, str]]:
    """(check, verdict, detail) of the airline checks of one card."""
    return [
        check_identities(card),
        check_conditions_kept(card),
        check_write_values(card, db, vocabulary, ambiguities.get(str(card["task_id"]), {})),
        check_choices_reachable(card, db, ambiguities.get(str(card["task_id"]), {})),
    ]


def _writes(card: dict) -> list[dict]:
    return [a for a in card["reference_actions"] if a["name"] in WRITE_TOOLS]


# The airline's write tools (tau2's AirlineTools marks these ToolType.WRITE).
WRITE_TOOLS = frozenset(
    {
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    }
)


def check_identities(card: dict) -> tuple[str, str, str]:
    from incognita.access.domains.airline.card_rules import _NAME, USER_ID

    known = card["source"]["instructions"].get("known_info") or ""
    values = {norm(f["value"]) for f in card["fields"] if f["kind"] == "identity"}
    own = _NAME.search(known)  # the customer's own name: the first one the known information gives
    stated = USER_ID.findall(known) + ([own.group(1)] if own else [])
    missing = [v for v in stated if norm(v) not in values]
    if missing:
        return ("identities_on_card", "fail", "stated in the known information but no field: " + ", ".join(missing))
    return ("identities_on_card", "pass", f"{len(stated)} identity value(s) stated, each a field")


def check_conditions_kept(card: dict) -> tuple[str, str, str]:
    from incognita.access.cards.text import split_sentences

    instr = card["source"]["instructions"]
    source = split_sentences(instr.get("reason_for_call") or "") + split_sentences(instr.get("task_instructions") or "")
    # Every card sentence is in the request block (the generic check requests_cover_demands).
    conditional = [s for s in source if _CONDITION.search(s)]
    lost = [s for s in conditional if s not in card["sentences"]]
    if lost:
        return ("conditions_kept", "fail", "conditions not in the request block whole: " + " | ".join(lost))
    return ("conditions_kept", "pass", f"{len(conditional)} conditional sentence(s), each kept with its trigger")


# --------------------------------------------------------------------------- what can be read


def _customer(card: dict, db: dict) -> list[str]:
    users = [f["value"] for f in card["fields"] if f["token"].startswith("user_id")]
    for a in card["reference_actions"]:
        uid = a["arguments"].get("user_id")
        rid = a["arguments"].get("reservation_id")
        if isinstance(rid, str) and rid in db["reservations"]:
            uid = uid or db["reservations"][rid]["user_id"]
        if isinstance(uid, str) and uid in db["users"] and uid not in users:
            users.append(uid)
    return users


def _scalars(obj) -> list:
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _scalars(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _scalars(v)]
    return [obj]


def readable_values(db: dict, users: list[str]) -> set[str]:
    """What reads can return to the service side for these customers: their profiles and
    reservations, every flight a search can find (its number and the dates it flies), and the
    airports of upstream's list."""
    values: set[str] = set()
    for uid in users:
        user = db["users"][uid]
        values.update(norm(str(v)) for v in _scalars(user))
        for rid in user.get("reservations") or []:
            values.update(norm(str(v)) for v in _scalars(db["reservations"].get(rid) or {}))
    for number, flight in db["flights"].items():
        values.add(norm(number))
        values.update(norm(d) for d, status in flight["dates"].items() if status.get("status") == "available")
    values.update(norm(code) for code, _ in airports())
    return values


def _field_gives(value: str, fields: list[dict]) -> bool:
    v = norm(value)
    for f in fields:
        if (
            norm(f["value"]) == v
            or v in {norm(w) for w in f["value"].split()}
            and f["kind"] in ("identity", "passenger")
        ):
            return True
        if f["kind"] == "date" and sw.month_day_date(f["value"]) == value:
            return True
        if f["kind"] == "airport":
            city = sw.CITY_SHORT_NAMES.get(f["value"].lower(), f["value"])
            if any(code == value and c.lower() == city.lower() for code, c in airports()):
                return True
    return False


def check_write_values(card: dict, db: dict, vocabulary: dict, known: dict | None = None) -> tuple[str, str, str]:
    writes = _writes(card)
    if not writes:
        return ("write_values_sourced", "pass", "no reference writes")
    readable = readable_values(db, _customer(card, db))
    vocab = {norm(str(v)) for values in vocabulary.values() for v in values}
    missing = []
    for a in writes:
        for arg, value in a["arguments"].items():
            for leaf in _scalars(value):
                if not isinstance(leaf, str):
                    continue  # numbers: derived by the golden stage (see the module's docstring)
                if _field_gives(leaf, card["fields"]) or norm(leaf) in vocab or norm(leaf) in readable:
                    continue
                missing.append((f"{a['name']}.{arg}", leaf))
    known = known or {}
    fails = [f"{arg}={leaf!r}" for arg, leaf in missing if arg not in known]
    if fails:
        return ("write_values_sourced", "fail", "no releasable field, vocabulary or read gives: " + ", ".join(fails))
    if missing:
        listed = sorted({arg for arg, _ in missing})
        return ("write_values_sourced", "warn", "; ".join(f"{arg}: ambiguous upstream: {known[arg]}" for arg in listed))
    return ("write_values_sourced", "pass", f"{len(writes)} write(s), every text argument sourced")


# --------------------------------------------------------------------------- choices


def _kinds(card: dict) -> set[str]:
    return {f["kind"] for f in card["fields"]}


def _first_names(card: dict) -> set[str]:
    return {norm(w) for f in card["fields"] if f["kind"] in ("identity", "passenger") for w in f["value"].split()}


def check_choices_reachable(card: dict, db: dict, known: dict) -> tuple[str, str, str]:
    kinds = _kinds(card)
    named = {f["value"] for f in card["fields"] if f["kind"] == "reservation"}
    unreached: list[tuple[str, str]] = []  # (argument, what)
    touched = {a["arguments"].get("reservation_id") for a in card["reference_actions"]}
    for a in _writes(card):
        args, name = a["arguments"], a["name"]
        rid = args.get("reservation_id")
        res = db["reservations"].get(rid) if isinstance(rid, str) else None
        uid = args.get("user_id") or (res or {}).get("user_id")
        user = db["users"].get(uid) or {}
        if res is not None and rid not in named and len(user.get("reservations") or []) > 1:
            if not kinds & set(_DESCRIBES) and "passenger" not in kinds:
                unreached.append((f"{name}.reservation_id", f"{rid} among {len(user['reservations'])} reservations"))
        pid = args.get("payment_id")
        pids = [pid] if isinstance(pid, str) else [p["payment_id"] for p in args.get("payment_methods") or []]
        # A change of a reservation is paid by a gift card or a credit card, never a certificate
        # (the policy, and the tools refuse one): only those are alternatives there.
        change = isinstance(pid, str)  # a change's single payment_id; a booking's payment_methods
        methods = [
            m for m in (user.get("payment_methods") or {}).values() if not change or m["source"] != "certificate"
        ]
        if pids and len(methods) > 1 and "payment" not in kinds:
            unreached.append((f"{name}.payment_id", f"{', '.join(pids)} among {len(methods)} methods"))
        if "flights" in args:
            kept = {(f["flight_number"], f["date"]) for f in (res or {}).get("flights") or []}
            new = [f for f in args["flights"] if (f["flight_number"], f["date"]) not in kept]
            if new and not kinds & set(_PICKS_FLIGHTS):
                unreached.append((f"{name}.flights", ", ".join(f["flight_number"] for f in new)))
        if "passengers" in args:
            own = {
                (p["first_name"], p["last_name"])
                for r in touched
                if r in db["reservations"]
                for p in db["reservations"][r]["passengers"]
            }
            me = user.get("name") or {}
            for p in args["passengers"]:
                if norm(p["first_name"]) in _first_names(card) or (p["first_name"], p["last_name"]) in own:
                    continue
                if (p["first_name"], p["last_name"]) == (me.get("first_name"), me.get("last_name")):
                    continue  # the customer: their own profile
                unreached.append((f"{name}.passengers", f"{p['first_name']} {p['last_name']}"))
    fails = list(dict.fromkeys(f"{arg}: {what}" for arg, what in unreached if arg not in known))
    warns = list(dict.fromkeys(f"{arg}: ambiguous upstream: {known[arg]}" for arg, _ in unreached if arg in known))
    if fails:
        return ("choices_reachable", "fail", "the customer cannot say which: " + "; ".join(fails))
    if warns:
        return ("choices_reachable", "warn", "; ".join(warns))
    return ("choices_reachable", "pass", "every choice among records is one the customer can state")
