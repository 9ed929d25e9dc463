"""Evaluation outside the interaction loop, on the final state only.

Channels, each recorded separately:
- `db`: the final database hash equals the replayed gold state (upstream's own hash of the
  reference actions on a clean database).
- `communicate`: every `communicate_info` string appears in some message the agent sent to
  USER, compared the way the pinned upstream evaluator does (lower case, commas removed).
  Operative only for tasks that carry communicate_info.
- `nl`: natural-language assertions need a judge model; with none configured the channel is
  not operative (None). The pinned tau2 version scores retail by DB and COMMUNICATE only.
Success means every operative channel passes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    channels: dict[str, bool | None]
    success: bool
    database_only_success: bool


def communicated(info: str, agent_to_user: list[str]) -> bool:
    needle = info.lower()
    return any(needle in text.lower().replace(",", "") for text in agent_to_user)


def evaluate(final_hash: str, gold_hash: str, card: dict, agent_to_user: list[str]) -> Outcome:
    db_ok = final_hash == gold_hash
    infos = card["information_channel"]["communicate_info"]
    channels: dict[str, bool | None] = {
        "db": db_ok,
        "communicate": all(communicated(i, agent_to_user) for i in infos) if infos else None,
        "nl": None,
    }
    operative = [v for v in channels.values() if v is not None]
    return Outcome(channels=channels, success=all(operative), database_only_success=db_ok)
