"""The card check `identities_on_card`: every identity a retail task states is a field of its card.

An identity is what the customer says to be found: a name, an alias, a zip code, an email or a
user id. The source states them in its known information ("You are Lucas (lucas_santos_6600)",
"Your name is Noah but you go by NoNo"), and its persona instructions may script an order in
which they are given ("say that it is 98178 first ..., then ... 98186 ... If that fails, then
say 98187"). The check reads the source with its own patterns, not the card rules' (so a rule
that misses a name cannot also hide the miss), and fails when a stated identity has no identity
field holding it, or when the fields of one kind (`zip`, `zip_2`, ...) are not in the scripted
order of attempts. Where the source scripts no order, only presence is checked.
"""

from __future__ import annotations

import re

from incognita.access.cards.text import clean

# A name: one or more capitalised words after a phrase that introduces it. The lead is
# case-blind, the name is not ("You are user ..." and "You are a lonely man" state none).
_NAME = re.compile(
    r"(?i:\byou\s+are|\byou['’]re|\byour?\s+name\s+is|\bcalled|\bnamed|\bI\s+am|\bI['’]m)"
    r"\s+([A-Z][a-z]+(?:[ ][A-Z][a-z]+)*)"
)
# An alias: what the customer goes by ("you go by NoNo", "people call you Al").
_ALIAS = re.compile(r"(?i:\bgo(?:es)?\s+by|\bcall\s+(?:you|me)|\bnickname\s+is)\s+([A-Z][A-Za-z]+)")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_USER_ID = re.compile(r"\b[a-z]+(?:_[a-z]+)+_\d+\b")
_ZIP = re.compile(r"(?<![\d$#,.])\d{5}(?!\d|[.,]\d)")
# Words by which an instruction scripts the order values are given in.
_ORDERED = re.compile(r"\b(?:first|then|correct\s+yourself|if\s+that\s+fails|if\s+an\s+error)\b", re.I)
_ZIP_WORD = re.compile(r"\bzip", re.I)

KINDS = ("name", "alias", "zip", "email", "user_id")


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def stated_identities(instructions: dict) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(what the source states per kind, in order of mention; the scripted order of attempts
    per kind, where the persona instructions give one).

    Names and aliases come from the known information and the persona instructions (a name
    in the reason for calling is someone else's business); zips from the known information
    and from persona sentences about the zip code (a zip in the reason for calling is an
    address to write); emails and user ids from every part."""
    known = clean(instructions.get("known_info"))
    persona = clean(instructions.get("task_instructions"))
    reason = clean(instructions.get("reason_for_call"))
    everything = "\n".join(p for p in (known, reason, persona) if p)
    zip_sentences = [s for s in _sentences(persona) if _ZIP_WORD.search(s)]
    stated = {
        "name": [m.group(1) for part in (known, persona) for m in _NAME.finditer(part)],
        "alias": [m.group(1) for part in (known, persona) for m in _ALIAS.finditer(part)],
        "zip": _ZIP.findall(known) + [z for s in zip_sentences for z in _ZIP.findall(s)],
        "email": [e.rstrip(".") for e in _EMAIL.findall(everything)],
        "user_id": _USER_ID.findall(everything),
    }
    stated = {k: list(dict.fromkeys(v)) for k, v in stated.items()}
    # An alias is not also a name ("go by NoNo" is not matched as a name, but keep them apart).
    stated["name"] = [n for n in stated["name"] if n not in stated["alias"]]
    scripted: dict[str, list[str]] = {}
    ordered = [z for s in zip_sentences if _ORDERED.search(s) for z in _ZIP.findall(s)]
    if ordered:
        # The scripted attempts come first; a known zip the script does not name is given last.
        scripted["zip"] = list(dict.fromkeys(ordered + stated["zip"]))
    return stated, scripted


def _base(token: str) -> str:
    return re.sub(r"_\d+$", "", token)


def check_identities_on_card(card: dict) -> tuple[str, str, str]:
    """(check, verdict, detail): every identity the source states is an identity field of the
    card, and the fields of a kind follow the source's scripted order of attempts."""
    stated, scripted = stated_identities(card["source"]["instructions"])
    fields = [f for f in card["fields"] if f["kind"] == "identity"]
    held = {f["value"].strip().casefold() for f in fields}
    missing = [f"{kind} {v!r}" for kind in KINDS for v in stated[kind] if v.casefold() not in held]
    misordered = []
    for kind, order in scripted.items():
        on_card = [f["value"].strip() for f in fields if _base(f["token"]) == kind]
        if [v for v in on_card if v in order] != [v for v in order if v in on_card]:
            misordered.append(f"{kind}: card {' -> '.join(on_card)}, source {' -> '.join(order)}")
    if missing or misordered:
        parts = []
        if missing:
            parts.append("not on the card: " + ", ".join(missing))
        if misordered:
            parts.append("not in the source's order of attempts: " + "; ".join(misordered))
        return ("identities_on_card", "fail", "; ".join(parts))
    n = sum(len(v) for v in stated.values())
    how = f", {', '.join(scripted)} in the scripted order" if scripted else ""
    return ("identities_on_card", "pass", f"{n} stated identit{'y' if n == 1 else 'ies'} on the card{how}")
