"""One native run's page data, from the upstream harness's own result format.

The harness records messages (assistant, user, tool), not our events: there is no gateway,
disclosure gate or protocol check to show. Its messages are mapped onto the timeline's event
shapes (a message, a tool call, a tool result) so one page layout draws both, and the
harness's own reward information is shown as it wrote it. Turns are our arms' turns
(incognita.access.native.native_results.agent_turns: an agent output and the answers to it), so
the compare view puts a native run's turn beside the same turn of the other arms; the harness's
own message number stays on each event as `harness_turn`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from incognita.access.native.native_results import agent_turns, history_length
from incognita.access.taxonomy import NATIVE
from incognita.common.io import InputError, read_json
from incognita.viewer.episode_page import ENVIRONMENT, episode_key

# Harness roles -> our lane names.
_LANE = {"assistant": "agent", "user": "USER"}
_OTHER = {"agent": "USER", "USER": "agent"}


def _parsed(content: str | None) -> Any:
    """A tool result as JSON when it is JSON (the harness stores it as a string)."""
    if content is None:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return content


def _participant(message: dict, turn: int, tools: dict[str, str]) -> list[dict]:
    lane = _LANE[message["role"]]
    out = []
    if message.get("content"):
        out.append(
            {
                "type": "message",
                "turn": turn,
                "sender": lane,
                "recipient": _OTHER[lane],
                "text": message["content"],
                "message_type": "MESSAGE",
            }
        )
    for call in message.get("tool_calls") or []:
        tools[call.get("id", "")] = call["name"]
        out.append(
            {
                "type": "tool_proposal",
                "turn": turn,
                "call_id": call.get("id", ""),
                "proposer": lane,
                "tool": call["name"],
                "arguments": call.get("arguments"),
            }
        )
    return out


def _tool(message: dict, turn: int, tools: dict[str, str]) -> dict:
    return {
        "type": "tool_result",
        "turn": turn,
        "call_id": message.get("id", ""),
        "tool": tools.get(message.get("id", ""), "?"),
        "proposer": _LANE.get(message.get("requestor"), "agent"),
        "status": "error" if message.get("error") else "ok",
        "result": _parsed(message.get("content")),
    }


def native_events(messages: list[dict], history: int = 0) -> list[dict]:
    """The harness's messages as timeline events, in order (a multi-tool message is split), each
    with our arms' turn (`history`: how many messages are the conversation the task starts from)."""
    tools: dict[str, str] = {}
    out: list[dict] = []
    for m, turn in zip(messages, agent_turns(messages, history)):
        role = m.get("role")
        if role in _LANE:
            events = _participant(m, turn, tools)
        elif role == "tool" and "tool_messages" in m:
            events = [_tool(t, turn, tools) for t in m["tool_messages"]]
        elif role == "tool":
            events = [_tool(m, turn, tools)]
        else:
            events = [{"type": "note", "turn": turn, "text": m.get("content") or "", "role": role}]
        out += [{**e, "harness_turn": m.get("turn_idx")} for e in events]
    return out


def native_page(path: Path, trial: dict) -> dict:
    doc = read_json(path)
    try:
        sim = doc["simulations"][0]
        facts = sim["reward_info"]["info"]["incognita"]
    except (KeyError, IndexError, TypeError):
        raise InputError(f"{path}: not a native result written by incognita") from None
    reward = dict(sim["reward_info"])
    reward["info"] = {k: v for k, v in (reward.get("info") or {}).items() if k != "incognita"}
    return {
        "kind": NATIVE,  # episode.js draws a native run by this kind
        "key": episode_key(NATIVE, str(facts["model"]), str(facts["task"]), int(facts["rep"])),
        "cell": {
            "arm": NATIVE,
            "model": facts["model"],
            "task": str(facts["task"]),
            "rep": facts["rep"],
            "schedule_position": facts.get("schedule_position"),
        },
        "seed": facts.get("seed"),
        "lanes": ["agent", "USER", ENVIRONMENT],
        "events": native_events(sim.get("messages") or [], history_length(doc, sim)),
        "harness": {
            "termination_reason": sim.get("termination_reason"),
            "reward_info": reward,
            "agent_cost": sim.get("agent_cost"),
            "user_cost": sim.get("user_cost"),
            "duration": sim.get("duration"),
            "version": (doc.get("info") or {}).get("git_commit"),
        },
        "facts": facts,
        "trial": trial,
    }
