"""How a scripted agent picks one entry of a collection in a result it has read.

The plan (incognita.access.episodes.loop.agent_plan) says where each argument comes from as a value-free path; at each
`*` step the agent chooses the entry itself. `EntryPicker` holds that choice, mixed into
`incognita.access.domains.retail.scripted.scripted_agent.ScriptedAgent`, whose state it reads: the results read so
far (`results`, `explored`), what the customer released and raised (`released`, `requests`,
`mentioned`, `unsure`), earlier choices (`chosen`, `used`), the tools and the plan; and whose
steps it uses (`_ask_customer`, `_execute`). The language rules it compares by live in
incognita.access.domains.retail.scripted.choosing; docs/episodes.md states the rule in full.
"""

from __future__ import annotations

import re
from typing import Any

from incognita.access.domains.retail.scripted.choosing import (
    entry_kind,
    leaf_texts,
    match_score,
    reading_tool,
    superlative,
    superlative_picks,
)
from incognita.access.domains.retail.scripted.comparing import (
    compared_goals,
    demands_in_scope,
    named_option_scores,
    read_lines,
    scope_tokens,
)
from incognita.access.domains.retail.scripted.relations import RelationPicker
from incognita.access.domains.retail.scripted.sets import SetChooser, quantified
from incognita.access.domains.retail.scripted.wording import absence_score, expand_abbreviations, stated_ids
from incognita.access.episodes.loop.agent_plan import PICK, Source
from incognita.access.episodes.scripted.discovery import content_words
from incognita.access.episodes.scripted.picks import Choosing, GiveUp, has_path

# Reading every entry of a list of bare ids to choose one costs a turn each; beyond this many
# the agent judges the entries by what the list itself says.
MAX_EXPLORED = 12
_SAME_ITEM = re.compile(r"\b(?:the )?(?:exact )?same (?:item|one|product)\b(?!\s+but)", re.IGNORECASE)


class EntryPicker(SetChooser, RelationPicker):
    """The choosing half of a scripted agent (module docstring); the set rules are
    incognita.access.domains.retail.scripted.sets, the relations between records incognita.access.domains.retail.scripted.relations."""

    def _read_value(self, src: Source, choosing: Choosing):
        """Follow a value-free path through an earlier result, choosing at each PICK."""
        if src.call not in self.results:  # an earlier change failed (a slip), so its result never came
            raise GiveUp(f"the result of call {src.call} is missing: an earlier step was not carried out")
        node = self.results[src.call]
        if (
            choosing.slot == "/item_ids"
            and isinstance(node, dict)
            and node.get("order_id") not in (None, choosing.record)
        ):
            # The items a change of an order acts on are that order's lines: read them from its
            # record when the planned read turned out to be another order.
            node = next((d for d in self._order_docs() if d.get("order_id") == choosing.record), node)
        for depth, step in enumerate(src.steps):
            if step == PICK:
                node = yield from self._pick(node, src, depth, choosing)
            elif isinstance(node, dict) and step in node:
                node = node[step]
            else:
                raise GiveUp(f"the result of call {src.call} has no {step!r} where the plan expects it")
        return node

    def _pick(self, collection: Any, src: Source, depth: int, choosing: Choosing):
        """The entry of a collection that best matches what the customer said.

        Facts: the released values of the selecting tokens, or, when none select, everything
        the customer released and asked for; the consuming call's name counts first (a change
        to a pending order wants the order whose status is pending). An entry is judged by
        its key and its text leaves; a list of bare ids is judged by reading each entry. An
        entry taken by the call's other arguments, or by an earlier run of the same tool on
        the same argument, is not taken again; on a tie an earlier call's choice from the
        same list wins (the order read is the order changed)."""
        if isinstance(collection, dict):
            entries = list(collection.items())
        elif isinstance(collection, list):
            entries = list(enumerate(collection))
        else:
            raise GiveUp(f"the result of call {src.call} has no collection where the plan expects one")
        if not entries:
            raise GiveUp(f"the result of call {src.call} lists nothing to choose from")
        where = (src.call, src.steps[: depth + 1])
        memo = (where, src.selected_by)
        taken = choosing.taken.setdefault(where, set())  # by this call's other arguments
        used = self.used.setdefault((where, choosing.call, choosing.slot), set())  # by earlier runs of this tool
        # "All my t-shirts to purple": an earlier run of this tool that took an entry by the
        # same description may take it again.
        described_as = self.used.setdefault((where, choosing.call, choosing.slot, src.selected_by), set())
        if src.selected_by and quantified(self.requests):
            used = used - described_as
        if choosing.slot.endswith("payment_method_id"):
            used = set()  # a payment method pays for any number of changes: no earlier one uses it up
        # Only entries the rest of the path leads through can give the value (a line with a
        # "battery life" option), when any can.
        rest = src.steps[depth + 1 :]
        entries = [(k, e) for k, e in entries if has_path(e, rest)] or entries
        key = yield from self._best_entry(
            entries, src, choosing, taken | used, self.chosen.get(memo), isinstance(collection, list)
        )
        self.chosen.setdefault(memo, key)
        taken.add(key)
        self.used[(where, choosing.call, choosing.slot)].add(key)
        described_as.add(key)
        choosing.picked.append(leaf_texts(collection[key]))
        if entry_kind(collection[key]) == "line":
            choosing.lines[choosing.position] = collection[key]
        return collection[key]

    def _best_entry(
        self, entries: list, src: Source, choosing: Choosing, taken: set, earlier: Any, is_list: bool = False
    ):
        """Score: the consuming call's words, then the customer's facts, then likeness to the
        entries the call's other arguments took (a replacement keeps the options it does not
        change); on a tie, the entry an earlier call chose from the same list, else the first."""
        # The new item is not the old one, unless the customer asks for the same item again
        # (an exchange for an identical one) and names nothing else about it.
        same_again = not src.selected_by and any(_SAME_ITEM.search(r) for r in self.requests)
        free = (
            [
                (k, e)
                for k, e in entries
                if k not in taken and (same_again or not (set(leaf_texts(e)) & choosing.values))
            ]
            or [(k, e) for k, e in entries if k not in taken]
            or entries
        )
        # An entry the record marks unavailable is not one to choose while any other is.
        if choosing.slot == "/item_ids":
            # The items a change of an order acts on are lines of an order, whatever list the
            # plan reads them from (a product's variants hold the same ids): keep the entries
            # some order read so far holds.
            on_an_order = self._line_ids(choosing.record)
            free = [(k, e) for k, e in free if str(k) in on_an_order or _entry_id(e) in on_an_order] or free
        else:
            available = [(k, e) for k, e in free if not (isinstance(e, dict) and e.get("available") is False)]
            free = available or free
        if len(free) == 1:
            return free[0][0]
        explore = (
            reading_tool(self.tools, choosing.arg)
            if all(not isinstance(e, (dict, list)) for _, e in free) and len(free) <= MAX_EXPLORED and choosing.arg
            else None
        )
        records = {}  # key -> the record read for a bare id
        for key, entry in free:
            if explore and isinstance(entry, str):
                records[key] = yield from self._explore(explore, {choosing.arg: entry})
        free = yield from self._narrow_to_set(free, records, src, choosing)
        if len(free) == 1:
            return free[0][0]
        # The consuming call's own words come first: a change to a pending order needs an
        # order whose status is pending, whatever else matches.
        call_words = sorted(content_words(choosing.call))
        described = []  # (key, every text the entry states, its own and, for a bare id, its record's)
        for key, entry in free:
            texts = leaf_texts(entry) + ([str(key)] if isinstance(key, str) else [])
            texts += leaf_texts(records.get(key))
            described.append((key, texts))
        choosing.relation = yield from self._relation_scores(free, choosing, explore)
        facts = [expand_abbreviations(self.released[t]) for t in src.selected_by if t in self.released]
        best_key, best = self._score(
            described, free, facts or self._said(choosing), call_words, src, choosing, earlier, is_list
        )
        if not facts and best[1] <= 0 and any(t not in self.released and t not in self.unsure for t in self.mentioned):
            # Nothing the customer said tells the entries apart, but its demands named details
            # (masked as placeholders): ask for those, as one asks "which items?", and judge again.
            for token in self.mentioned:
                if token not in self.released and token not in self.unsure:
                    yield from self._ask_customer(token, required=False)
            best_key, best = self._score(
                described, free, self._said(choosing), call_words, src, choosing, earlier, is_list
            )
        if src.selected_by and best[1] <= 0:
            # The customer described the entry and nothing matches: choosing blindly would act
            # on something it never asked about.
            raise GiveUp(f"nothing in the result of call {src.call} matches what the customer described")
        return best_key

    def _order_docs(self) -> list[dict]:
        return [d for d in [*self.results.values(), *self.explored.values()] if isinstance(d, dict) and "order_id" in d]

    def _line_ids(self, order_id: str | None) -> set[str]:
        """The item ids of the lines of that order (of every order read so far, when none is
        chosen yet), from the results read so far."""
        ids = set()
        for doc in [*self.results.values(), *self.explored.values()]:
            if isinstance(doc, dict) and isinstance(doc.get("items"), list):
                if order_id is None or doc.get("order_id") == order_id:
                    ids |= {str(line.get("item_id")) for line in doc["items"] if isinstance(line, dict)}
        return ids

    def _record_texts(self, order_id: str | None) -> set[str]:
        """Every scalar of the order record read so far (planned or explored) with this id."""
        if order_id is None:
            return set()
        return {
            t
            for doc in [*self.results.values(), *self.explored.values()]
            if isinstance(doc, dict) and doc.get("order_id") == order_id
            for t in leaf_texts(doc)
        }

    def _is_change(self, index: int | None) -> bool:
        return any(c.index == index and c.write for c in self.plan.calls)

    def _said(self, choosing: Choosing | None = None) -> list[str]:
        """Everything the customer has said: released details and raised demands (for a
        replacement, less the details that described the item it replaces)."""
        old = self._replaced_descriptions(choosing) if choosing is not None else set()
        said = [v for v in self.released.values() if v not in old] + self.requests
        return [expand_abbreviations(t) for t in said]  # "refund to GC" names the gift card

    def _score(self, described, free, facts, call_words, src, choosing, earlier, is_list):
        """(key, score) of the best entry; the score is (the call's words, the customer's facts
        with any superlative they state, what the case's records point at, likeness to the
        entries the call's other arguments took, an earlier call's choice)."""
        near = self._context_texts(src.call, only=choosing.sources)  # the records this call acts on
        near |= self._record_texts(choosing.record)  # ... and the order it acts on, once chosen
        far = self._context_texts(src.call)
        first = {key: (match_score(call_words, texts), match_score(facts, texts)) for key, texts in described}
        for key, extra in named_option_scores(facts, free).items():  # "size 8" names an option's value
            first[key] = (first[key][0], first[key][1] + extra)
        # A superlative or comparison the customer states ("the cheapest", "the most recent
        # order", "a brighter one") picks by price, list position or an option's scale, among
        # the entries that match its words best (the cheapest *green* one).
        top = max(first.values())
        group = [(k, e) for k, e in free if first[k] == top]
        picks = superlative_picks(superlative(facts), group, is_list)
        if is_list and self._is_change(src.call) and group:
            # In the record a change returns, what the change added comes last (the refund
            # in an order's payment history).
            picks.add(group[-1][0])
        # An option's scale may be named in a demand while a detail selects (the demand says
        # "a less bright one", the detail "AC adapter"): those are read in both, and apply
        # only where the entries have that option (brightness), so they stay with their item.
        said = list(dict.fromkeys([*facts, *self.requests]))
        old = choosing.lines.get(choosing.position)
        # Constraints relative to the old line ("1000 more pieces", "the same difficulty",
        # "within the previous price") come from the details and the demands about this item.
        scoped = demands_in_scope(self.demands, scope_tokens(src.selected_by, group, old))
        details = [f for f in facts if f not in self.requests]
        lines = read_lines([*self.results.values(), *self.explored.values()])
        goals = compared_goals(details, scoped, said, group, old, lines)
        # An id the customer wrote, or an absence it asks for ("without water resistance"),
        # names an entry's value in words the matching above does not compare (wording.py).
        ids, entries = stated_ids(facts), dict(free)
        for key, texts in described:
            goals[key] = goals.get(key, 0) + bool(ids & set(texts)) + absence_score(facts, entries.get(key))
        best_key, best = described[0][0], None
        for key, texts in described:
            likeness = max((len(set(texts) & set(other)) for other in choosing.picked), default=0)
            # What the case already points at (the payment method the order was paid with):
            # after the customer's words, the records of this case break the tie.
            mentioned = (key in near) * 2 + (key in far) if isinstance(key, str) else 0
            stated = first[key][1] + (key in picks) + goals.get(key, 0)
            # A relation the customer states ("the LA order", "my NYC address") comes right
            # after the call's own words.
            score = ((first[key][0], choosing.relation.get(key, 0)), stated, mentioned, likeness, key == earlier)
            if best is None or score > best:
                best_key, best = key, score
        return best_key, best

    def _context_texts(self, exclude: int, only: frozenset | None = None) -> set[str]:
        """Every scalar in the results read so far (or in those of the calls `only`), but the
        one being chosen from."""
        return {
            t
            for index, doc in self.results.items()
            if index != exclude and (only is None or index in only)
            for t in leaf_texts(doc)
        }


def _entry_id(entry: Any) -> str | None:
    return str(entry.get("item_id")) if isinstance(entry, dict) and "item_id" in entry else None
