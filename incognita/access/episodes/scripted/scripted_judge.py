"""The scripted judge: decides the judged information channel offline, as the substring check would.

It reads what a model judge reads, the numbered statements in its prompt and the customer
dialogue, and for each statement that an information item became
(`incognita.access.episodes.loop.evaluation.INFO_ASSERTION`) answers whether the agent's messages contain that item
the way the upstream check compares them. So the judged channel gives, offline, the same
decision as the substring channel, and the judge path (prompt, verdict parsing, records,
cache) is exercised without a model. Statements of any other form (upstream's free-text
assertions) it cannot decide: it says so instead of guessing.
"""

from __future__ import annotations

import json
import re

from incognita.access.episodes.loop.evaluation import INFO_ASSERTION, communicated
from incognita.access.episodes.loop.records import Usage
from incognita.common.backends.base import BackendError, ModelRequest, ModelResponse

_STATEMENT = re.compile(r"^\s*(\d+)\.\s+(.*)$")
_SPEAKER = re.compile(r"^(agent|customer): ?(.*)$")
_PREFIX = INFO_ASSERTION.split("{info}")[0]


def statements(prompt: str) -> list[str]:
    """The numbered statements after the prompt's 'Statements:' line, in order."""
    _, _, tail = prompt.rpartition("Statements:")
    return [m.group(2) for line in tail.splitlines() if (m := _STATEMENT.match(line))]


def agent_messages(transcript: str) -> list[str]:
    """The agent's messages in the dialogue ("agent: ..." lines; continuation lines belong to
    the message above them)."""
    messages: list[tuple[str, str]] = []
    for line in transcript.splitlines():
        m = _SPEAKER.match(line)
        if m:
            messages.append((m.group(1), m.group(2)))
        elif messages:
            messages[-1] = (messages[-1][0], messages[-1][1] + "\n" + line)
    return [text for who, text in messages if who == "agent"]


class ScriptedJudge:
    spec = "scripted:judge"

    def __init__(self) -> None:
        self.totals = Usage()  # the judge is called outside the episode loop: the record adds these

    def respond(self, request: ModelRequest) -> ModelResponse:
        self.totals.calls += 1
        said = agent_messages(request.messages[-1].content or "" if request.messages else "")
        verdicts = []
        for statement in statements(request.system):
            if not statement.startswith(_PREFIX):
                raise BackendError(f"the scripted judge decides information items only, not {statement[:80]!r}")
            verdicts.append(communicated(statement[len(_PREFIX) :], said))
        return ModelResponse(text=json.dumps({"verdicts": verdicts}))
