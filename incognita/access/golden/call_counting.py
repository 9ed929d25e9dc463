"""Counting: which calls of a golden trajectory a solution needs.

Calls that raise on the replay are `counted: false` (`intended_failure`), and so are the calls of
a task's message history (`initial_state`: made before the task began). Every successful
reference write and hand-off (the domain's tools with role `handoff`) counts. Every other call, reads and
`calculate` and identity lookups alike, counts only if a counted call's provenance, a
traced information-channel item (a count included: the read that holds the collection),
or the provenance chain of either uses its result; otherwise it is `exploration_only`.
An identity lookup whose user id nothing uses (the customer stated the id, or the solution
never opens the profile) therefore only explores (generator 3 on; generators 1 and 2
counted every successful lookup).

`CallCounting` is the last step of the golden builder (`incognita.access.golden.trajectory`);
the coordination reference (`incognita.access.reference.coordination`) and the agent plan
(`incognita.access.episodes.loop.agent_plan`) keep only the counted calls.
"""

from __future__ import annotations

from collections.abc import Iterator

from incognita.access.golden.upstream_replay import INITIAL_STATE


class CallCounting:
    """Marking each call counted or not (a part of the golden builder; it relies on the
    builder's `calls` and `handoff_tools`)."""

    def mark_counted(self, information: list[dict]) -> None:
        used: set[int] = set()

        def uses(prov: dict | None) -> Iterator[int]:
            if not prov:
                return
            if prov.get("kind") == "read":
                yield prov["call"]
            for sub in prov.get("from", []):
                yield from uses(sub)

        for item in information:
            used.update(uses(item["provenance"]))
        for call in reversed(self.calls):
            i = call["index"]
            if call["origin"] == INITIAL_STATE:
                continue  # made before the task began: never required of an agent
            if call["error"] is not None:
                call["counted"], call["why_not_counted"] = False, "intended_failure"
                continue
            # Only the reference's own writes and hand-offs count for their own sake; every
            # read, identity lookups included, counts only through a use of its result.
            anchor = call["origin"] == "reference" and (
                call["tool_type"] == "write" or call["name"] in self.handoff_tools
            )
            if anchor or i in used:
                call["counted"] = True
                for prov in call["provenance"].values():
                    used.update(uses(prov))
            else:
                call["counted"], call["why_not_counted"] = False, "exploration_only"
