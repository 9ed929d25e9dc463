"""The retail domain's scripted part: its scripted agent, which knows how to choose among retail's
records (EntryPicker: order lines, variants, orders, payment methods) and how to tell what the
customer asked (Telling), and the plain words its desks restate a change in.

The agent is the domain-free core (incognita.access.episodes.scripted.scripted_agent.ScriptedAgent)
with these mixed in, in the order the single class had them before domains had packages, so
every method resolves as it did.
"""

from __future__ import annotations

from typing import Any

from incognita.access.domains.retail.scripted.picking import EntryPicker
from incognita.access.domains.retail.scripted.same_item import same_line_value
from incognita.access.domains.retail.scripted.telling import Telling
from incognita.access.domains.retail.scripted.tool_words import TOOL_WORDS
from incognita.access.domains.retail.scripted.wording import action_words
from incognita.access.episodes.loop.agent_plan import Source
from incognita.access.episodes.scripted.picks import Choosing
from incognita.access.episodes.scripted.reconsidering import Reconsidering
from incognita.access.episodes.scripted.scripted_agent import ScriptedAgent


class RetailAgent(ScriptedAgent, EntryPicker, Reconsidering, Telling):
    TOOL_WORDS = TOOL_WORDS  # retail's toolkit terms in everyday words, for reading a declared map

    def _known_value(self, src: Source, choosing: Choosing) -> Any | None:
        """An exchange for the same item: the new item is the line exchanged (same_item)."""
        return same_line_value(self.requests, self.results, src, choosing)

    def _action_words(self, text: str) -> set[str]:
        """Retail's everyday words for the kinds of change its tools make (wording)."""
        return action_words(text)


AGENT = RetailAgent

# Plain descriptions of the retail write tools, for restating a change without naming a tool.
CHANGE_WORDS = {
    "cancel_pending_order": "cancel a pending order",
    "exchange_delivered_order_items": "exchange items on a delivered order",
    "modify_pending_order_address": "change the shipping address of a pending order",
    "modify_pending_order_items": "change the items on a pending order",
    "modify_pending_order_payment": "change the payment method of a pending order",
    "modify_user_address": "change the default address on a profile",
    "return_delivered_order_items": "return items from a delivered order",
    "transfer_to_human_agents": "hand this case over to a human colleague",
}
