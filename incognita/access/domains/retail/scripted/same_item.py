"""An exchange for the same item: the new item is the very line being exchanged.

Used by incognita.access.episodes.scripted.scripted_agent.ScriptedAgent when it chooses a read argument.
"Exchange it for the same item" (a broken one for a new one like it) asks for a new item
equal to the old one. When the plan reads that new item from the same order lines as the
item being exchanged, the entry picker would not take the line the call's old-item
argument already took (two item slots of one call name two items), and nothing else
matches the customer's description. So, when the customer asks for the same item and the
line exchanged at that position is one of the read's order lines, the new item is that line.
"""

from __future__ import annotations

from typing import Any

from incognita.access.domains.retail.scripted.picking import _SAME_ITEM
from incognita.access.episodes.loop.agent_plan import Source
from incognita.access.episodes.scripted.picks import Choosing


def same_line_value(requests: list[str], results: dict, src: Source, choosing: Choosing) -> Any | None:
    """The value the new item of an exchange for the same item takes, or None when the rule
    does not apply (see the module docstring)."""
    if choosing.slot != "/new_item_ids" or not any(_SAME_ITEM.search(r) for r in requests):
        return None
    line = choosing.lines.get(choosing.position)
    doc = results.get(src.call)
    if not isinstance(line, dict) or not isinstance(doc, dict) or line not in (doc.get("items") or []):
        return None
    field = src.steps[-1] if src.steps else None
    return line.get(field) if isinstance(field, str) else None
