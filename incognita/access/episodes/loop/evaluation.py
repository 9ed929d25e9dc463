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
  configured (no retail task of the pinned package has any).
- `env`: upstream's environment assertions of a task, checked on the final state (only a task
  that has some; the gateway runs them, incognita.access.episodes.loop.tool_gateway).
- `action`: upstream's action check, only where a task's reward basis names it: every reference
  action was proposed by someone in the episode with the same name and the same values of the
  arguments it compares (`compare_args`; all of them when it gives none).
Every verdict is recorded with its assertion (`judgements`). Success means every operative
channel passes. Where a task states its reward basis (upstream's `reward_basis`), the operative
channels are the ones it names (DB -> db, COMMUNICATE -> communicate, or nl under the judge,
NL_ASSERTION -> nl, ENV_ASSERTION -> env, ACTION -> action); where it states none (every retail
task), upstream's default, every channel that has something to check.
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


def action_check(reference_actions: list[dict], proposed: list[tuple[str, Any]]) -> bool:
    """Upstream's action check: each reference action matched by a proposed call of the same name
    whose arguments agree on the ones it compares (`compare_args`; every argument when absent)."""

    def matches(action: dict, name: str, arguments: Any) -> bool:
        if name != action["name"] or not isinstance(arguments, dict):
            return False
        keys = action.get("compare_args")
        keys = list(action["arguments"]) if keys is None else keys
        return all(arguments.get(k) == action["arguments"].get(k) for k in keys)

    return all(any(matches(a, n, args) for n, args in proposed) for a in reference_actions)


# Upstream's reward types -> the channel each decides by (COMMUNICATE: `nl` under the judge).
_BASIS = {"DB": "db", "COMMUNICATE": "communicate", "NL_ASSERTION": "nl", "ENV_ASSERTION": "env", "ACTION": "action"}


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
    assertions_held: list[bool] | None = None,
    proposed: list[tuple[str, Any]] | None = None,
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
    basis = card.get("reward_basis")
    if card.get("env_assertions"):  # only a task that has them carries the channel
        channels["env"] = None if assertions_held is None else all(assertions_held)
    if basis and "ACTION" in basis:
        channels["action"] = action_check(card["reference_actions"], proposed or [])
    if basis is None:
        operative = [v for v in channels.values() if v is not None]
    else:
        names = [_BASIS[b] for b in basis]
        if channel == "judge" and "communicate" in names:
            names.append("nl")  # the judge decides the information items
        operative = [channels[n] for n in dict.fromkeys(names) if channels.get(n) is not None]
    return Outcome(channels=channels, success=all(operative), database_only_success=db_ok, judgements=judgements)
