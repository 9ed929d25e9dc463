"""Evaluation outside the interaction loop, on the final state only.

Channels, each recorded separately:
- `db`: the final database hash equals the replayed gold state (upstream's own hash of the
  reference actions on a clean database).
- `communicate`: every `communicate_info` string appears in some message the agent sent to
  USER, compared the way the pinned upstream evaluator does (lower case, commas removed).
  Operative only for tasks that carry communicate_info.
- `nl`: natural-language assertions, for tasks that carry them, judged by a model when one is
  configured (`participants.judge`); with none configured the channel is not operative
  (None). The pinned tau2 version scores retail by DB and COMMUNICATE only.
Success means every operative channel passes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from incognita.backends.base import BackendError, ModelRequest, Turn


@dataclass(frozen=True)
class Outcome:
    channels: dict[str, bool | None]
    success: bool
    database_only_success: bool


def communicated(info: str, agent_to_user: list[str]) -> bool:
    needle = info.lower()
    return any(needle in text.lower().replace(",", "") for text in agent_to_user)


def judge_assertions(judge: Any, prompt_template: str, assertions: list[str], transcript: list[tuple[str, str]]) -> bool:
    """Ask the judge model whether every assertion holds; its output must be
    {"verdicts": [bool, ...]} with one verdict per assertion. Anything else is a BackendError:
    the episode is then recorded as broken, never scored on a guess."""
    numbered = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(assertions))
    lines = "\n".join(f"{who}: {text}" for who, text in transcript)
    request = ModelRequest(role="judge", system=prompt_template.format(assertions=numbered),
                           messages=(Turn("user", lines),))
    raw = judge.respond(request).text or ""
    try:
        verdicts = json.loads(raw)["verdicts"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise BackendError(f"judge output is not {{\"verdicts\": [...]}}: {raw[:200]!r}") from None
    if not isinstance(verdicts, list) or len(verdicts) != len(assertions) or not all(isinstance(v, bool) for v in verdicts):
        raise BackendError(f"judge must give {len(assertions)} true/false verdicts, got {verdicts!r}")
    return all(verdicts)


def evaluate(final_hash: str, gold_hash: str, card: dict, agent_to_user: list[str],
             judge: Any = None, judge_prompt: str = "", transcript: list[tuple[str, str]] | None = None) -> Outcome:
    db_ok = final_hash == gold_hash
    infos = card["information_channel"]["communicate_info"]
    assertions = card["information_channel"]["nl_assertions"]
    channels: dict[str, bool | None] = {
        "db": db_ok,
        "communicate": all(communicated(i, agent_to_user) for i in infos) if infos else None,
        "nl": judge_assertions(judge, judge_prompt, assertions, transcript or []) if judge and assertions else None,
    }
    operative = [v for v in channels.values() if v is not None]
    return Outcome(channels=channels, success=all(operative), database_only_success=db_ok)
