"""How a scripted agent settles one change with the customer: confirm it, take in a change of
mind, and relay a refusal, so that the customer's conditional fallbacks can come.

Used by incognita.access.episodes.scripted.scripted_agent.ScriptedAgent (a mixin over its state: `plan`,
`requests`, `released`, `chosen`, `used`, and its `_build_args`, `_execute`, `_hear`,
`_can_do`, `_ask_customer`). Two moments of a change meet a card's fallback condition:

- *the confirmation*: the customer may answer the agent's `#confirm` not with a yes but with
  a new demand ("when the agent asks for confirmation, change your mind and return the
  more expensive one"). The agent hears it, says `#cannot` to it if no planned call makes
  that kind of change (the customer may then raise its refusal fallback), chooses the
  call's arguments again from everything said so far, as if it had not chosen them yet,
  and asks again;
- *the refusal*: the tool (or the desk holding it) refuses the change with an error that
  says it cannot be done as asked ("Payment method should be the original payment
  method", "Non-pending order cannot be cancelled", "Insufficient gift card balance"), not
  one that says an argument names nothing ("Item not found", which is the agent's own
  slip). The agent tells the customer (`#cannot`, with the reason), and if the customer
  answers with what it wants instead, chooses the arguments again and asks to confirm
  again.

Each is bounded (`MAX_CHANGES`), so a customer that keeps changing its mind ends the
episode with a give-up rather than a loop.
"""

from __future__ import annotations

import copy
import json
import re

from incognita.access.episodes.loop.agent_plan import PlannedCall
from incognita.access.episodes.scripted.language import say, tag
from incognita.access.episodes.scripted.picks import GiveUp

MAX_CHANGES = 4  # how many times one change is chosen again after a change of mind or a refusal

# A refusal that states a requirement of the case, not a wrong name ("... not found").
_AS_ASKED = re.compile(
    r"\b(?:should|must|cannot|can\s*not|can['’]t|insufficient|not\s+allowed|only)\b|\bnon-\w+", re.IGNORECASE
)


def refused_as_asked(reason: str | None) -> bool:
    """Does a tool's refusal say that the change cannot be done as asked (rather than that an
    argument names nothing that exists)?"""
    return bool(reason) and _AS_ASKED.search(reason) is not None


def refusal_reason(content: str) -> str:
    """The reason in a tool's error text ("Error: ValueError: Payment method should be ..."), on one
    line: it is restated in a tag, and a validation error (a slipped argument) spans several."""
    text = re.sub(r"^\s*Error:\s*", "", content or "")
    return re.sub(r"\s*\n\s*", " ", re.sub(r"^\w*(?:Error|Exception):\s*", "", text).strip())


class Reconsidering:
    """The agent's confirmation and refusal handling of a planned change (see module docstring)."""

    failure: str | None = None  # the reason of the latest refused call, as the tool or desk gave it

    def _picks(self) -> tuple[dict, dict]:
        """The choices made so far, to choose a call's arguments again as if for the first time."""
        return dict(self.chosen), copy.deepcopy(self.used)

    def _settle_change(self, call: PlannedCall, args: dict, picks: tuple[dict, dict]):
        """Confirm the change with the customer and have it run; returns whether it was made."""
        describe = call.name.replace("_", " ")
        for attempt in range(MAX_CHANGES + 1):
            heard = len(self.requests)
            reply = yield {
                "kind": "message",
                "to": "USER",
                "text": say(
                    f"I will now {describe}. Shall I go ahead?",
                    tag("confirm", f"{call.name} {json.dumps(args, sort_keys=True)}"),
                ),
            }
            self._hear(reply)
            if any(line.strip() == "#yes" for line in (reply or "").splitlines()):
                self.failure = None
                ok = yield from self._execute(call, args, tolerate_failure=True)
                if ok or attempt == MAX_CHANGES or not refused_as_asked(self.failure):
                    return ok
                heard = len(self.requests)
                reply = yield {
                    "kind": "message",
                    "to": "USER",
                    "text": say(
                        f"I am sorry, that cannot be done as asked: {self.failure}.", tag("cannot", self.failure or "")
                    ),
                }
                self._hear(reply)
                if len(self.requests) == heard:
                    return False  # nothing it wants instead
            elif len(self.requests) == heard:
                raise GiveUp("the customer did not confirm")
            yield from self._answer_new_demand()
            self.chosen, self.used = dict(picks[0]), copy.deepcopy(picks[1])
            for token in call.tokens():
                if token not in self.released:
                    yield from self._ask_customer(token)
            args = yield from self._build_args(call)
        raise GiveUp("the customer kept changing what it wants")

    def _answer_new_demand(self):
        """A demand raised at the confirmation or after a refusal that no planned call makes is
        one to say `#cannot` to, which may bring the customer's refusal fallback in turn."""
        for _ in range(MAX_CHANGES):
            if self._can_do(self.requests[-1]):
                return
            heard = len(self.requests)
            reply = yield {
                "kind": "message",
                "to": "USER",
                "text": say("I am afraid that is not something I can do.", tag("cannot")),
            }
            self._hear(reply)
            if len(self.requests) == heard:
                return
