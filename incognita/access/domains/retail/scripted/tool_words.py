"""How retail's toolkit terms are said in everyday words: what a reader of the domain knows when
it reads a declared capability map (incognita.access.episodes.scripted.discovery.read_map).

The tools are named in the toolkit's words ("get user details", "calculate"); a map's role
texts describe work in the words of a shop's customer service ("what is stored on a customer's
profile", "you work out the amounts"). Each entry gives the plain words for one term of the
tools' names and first sentences, as anyone who has dealt with a shop would say it; none names a
desk, a holder or a role text's wording beyond ordinary synonyms.
"""

from __future__ import annotations

TOOL_WORDS = {
    "user id": "customer identifier",  # the identifier, not the profile it opens
    "user": "customer profile account",
    "calculate": "work out amounts arithmetic sums totals",
    "mathematical expression": "arithmetic",
    "modify": "change update",
    "pending": "still waiting not yet shipped",
    "delivered": "received",
    "cancel": "call off",
    "exchange": "swap",
    "return": "take back refund",
    "order": "purchase",
    "zip": "postal code postcode",
    "inventory": "availability stock",
    "product": "catalogue",
    "human agent": "human colleague person",
    "transfer": "hand over pass on",
}
