"""Evaluation outside the interaction loop, on the final state and the customer dialogue.

Channels, each recorded separately:
- `db`: the final database hash equals the replayed gold state (upstream's own hash of the
  reference actions on a clean database).
- the information channel, one of two ways (`evaluation.information_channel` in the config):
  - `substring` (the offline default; the pinned upstream evaluator's check): `communicate`
    passes when every `communicate_info` string appears in some message the agent sent to
    USER (lower case, commas removed). Operative only for tasks that carry communicate_info.
  - `judge` (the paper's, Section 3.3): each `communicate_info` item becomes the assertion
    that the agent told the customer that fact, and the judge (`participants.judge`) decides
    every assertion from the customer dialogue; the channel is `nl`, and `communicate` is
    not operative.
- `nl` also carries upstream's natural-language assertions of a task, when a judge is
  configured (no corpus task of the pinned package has any).
Every verdict is recorded with its assertion (`judgements`). Success means every operative
channel passes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from incognita.common.backends.base import BackendError, ModelRequest, Turn

CHANNELS = ("substring", "judge")
# How an information item reads as an assertion for the judge (decided from the dialogue).
INFO_ASSERTION = "The agent told the customer this: {info}"


def check_channel(channel: str, judge: object, where: str = "evaluation.information_channel") -> None:
    """A known channel, and a judge when the channel is the judge's (ValueError otherwise)."""
    if channel not in CHANNELS:
        raise ValueError(f"{where}: {channel!r} is not one of {', '.join(CHANNELS)}")
    if channel == "judge" and not judge:
        raise ValueError(
            f"{where}: 'judge' needs participants.judge (a model entry, or scripted:judge offline), which is null"
        )


@dataclass(frozen=True)
class Outcome:
    channels: dict[str, bool | None]
    success: bool
    database_only_success: bool
    judgements: tuple[dict, ...] = ()  # one per judged assertion: assertion, source, verdict


def communicated(info: str, agent_to_user: list[str]) -> bool:
    needle = info.lower()
    return any(needle in text.lower().replace(",", "") for text in agent_to_user)


def judge_assertions(
    judge: Any, prompt_template: str, assertions: list[str], transcript: list[tuple[str, str]]
) -> list[bool]:
    """Ask the judge whether each assertion holds; its output must be {"verdicts": [bool, ...]}
    with one verdict per assertion. Anything else is a BackendError: the episode is then
    recorded as broken, never scored on a guess."""
    numbered = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(assertions))
    lines = "\n".join(f"{who}: {text}" for who, text in transcript)
    request = ModelRequest(
        role="judge", system=prompt_template.format(assertions=numbered), messages=(Turn("user", lines),)
    )
    raw = judge.respond(request).text or ""
    try:
        verdicts = json.loads(raw)["verdicts"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise BackendError(f'judge output is not {{"verdicts": [...]}}: {raw[:200]!r}') from None
    if (
        not isinstance(verdicts, list)
        or len(verdicts) != len(assertions)
        or not all(isinstance(v, bool) for v in verdicts)
    ):
        raise BackendError(f"judge must give {len(assertions)} true/false verdicts, got {verdicts!r}")
    return verdicts


def evaluate(
    final_hash: str,
    gold_hash: str,
    card: dict,
    agent_to_user: list[str],
    *,
    channel: str = "substring",
    judge: Any = None,
    judge_prompt: str = "",
    transcript: list[tuple[str, str]] | None = None,
) -> Outcome:
    check_channel(channel, judge=True, where="information channel")  # a known channel; the judge below
    db_ok = final_hash == gold_hash
    infos = card["information_channel"]["communicate_info"]
    judged = [(a, "nl_assertion") for a in card["information_channel"]["nl_assertions"] or []]
    communicate = None
    if channel == "judge":
        judged = [(INFO_ASSERTION.format(info=i), "communicate_info") for i in infos] + judged
    elif infos:
        communicate = all(communicated(i, agent_to_user) for i in infos)
    if judged and channel == "judge":
        check_channel(channel, judge, "information channel")  # something to judge: a judge is needed
    judgements: tuple[dict, ...] = ()
    if judged and judge is not None:
        verdicts = judge_assertions(judge, judge_prompt, [a for a, _ in judged], transcript or [])
        judgements = tuple({"assertion": a, "source": src, "verdict": v} for (a, src), v in zip(judged, verdicts))
    channels: dict[str, bool | None] = {
        "db": db_ok,
        "communicate": communicate,
        "nl": all(j["verdict"] for j in judgements) if judgements else None,
    }
    operative = [v for v in channels.values() if v is not None]
    return Outcome(channels=channels, success=all(operative), database_only_success=db_ok, judgements=judgements)
