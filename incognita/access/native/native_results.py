"""The native stage's result files read as trial facts: one row of the reader's contract per run.

The native stage (incognita.access.native.native_run) writes each cell as one harness
`Results` document with our own facts under `reward_info.info["incognita"]`. This module reads
such a file as plain JSON (no harness import) into a trial row for the reader
(incognita.access.reader.trials_builder) and for `incognita errors`.

Turns are counted as our arms count them (incognita.access.episodes.loop.episode_loop): turn 0
is what comes before the agent's first own output (the harness's fixed greeting, an earlier
conversation the task starts from, the customer's opening), and each later assistant message
opens a turn that holds the user's or the tools' answers to it. The harness numbers every
message instead (`turn_idx`), which puts a native run at twice our arms' turn count.
"""

from __future__ import annotations

from pathlib import Path

from incognita.access.native import native_models
from incognita.access.native.native_scripted import AGENT_NAME
from incognita.access.taxonomy import NATIVE
from incognita.common.io import InputError, read_json


def native_trial(path: str | Path, doc: dict | None = None) -> dict:
    """One trial row (reader contract) from a native output, read as plain JSON (no harness import);
    `doc` is the file's content when the caller has already read it."""
    doc = read_json(path) if doc is None else doc
    try:
        sim = doc["simulations"][0]
        facts = sim["reward_info"]["info"]["incognita"]
    except (KeyError, IndexError, TypeError):
        raise InputError(f"{path}: not a native result written by incognita (no reward_info.info.incognita)") from None
    try:
        return _native_row(doc, sim, facts)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:  # damaged inside: name the file
        raise InputError(f"{path}: not a readable native result ({type(exc).__name__}: {exc})") from None


def history_length(doc: dict, sim: dict) -> int:
    """How many messages of the run's trajectory are the earlier conversation its task starts
    from (the task's `initial_state.message_history`; the harness puts it first)."""
    for task in doc.get("tasks") or []:
        if str(task.get("id")) == str(sim.get("task_id")):
            return len((task.get("initial_state") or {}).get("message_history") or [])
    return 0


def agent_turns(messages: list[dict], history: int = 0) -> list[int]:
    """Each message's turn, counted as our arms count them (module docstring): an assistant
    message opens a turn once the customer has spoken, past the first `history` messages."""
    turn, spoke, out = 0, False, []
    for i, m in enumerate(messages):
        if i >= history and m.get("role") == "assistant" and spoke:
            turn += 1
        spoke = spoke or m.get("role") == "user"
        out.append(turn)
    return out


def _agent_outputs(messages: list[dict], turns: list[int]) -> list[dict]:
    """The assistant messages that open a turn: the evaluated agent's own outputs."""
    return [m for i, m in enumerate(messages) if m.get("role") == "assistant" and turns[i] > (turns[i - 1] if i else 0)]


def _native_row(doc: dict, sim: dict, facts: dict) -> dict:
    reward = sim["reward_info"].get("reward")
    breakdown = sim["reward_info"].get("reward_breakdown") or {}
    error = facts.get("error")
    nan = float("nan")
    turns = agent_turns(sim["messages"], history_length(doc, sim))
    outputs = _agent_outputs(sim["messages"], turns)
    # Calls served by our backend are priced by it (our price table); litellm cannot price them.
    usage = facts.get("usage") or {}
    cost = {
        role: float((usage.get(role) or {}).get("cost_usd", sim.get(f"{role}_cost") or 0.0))
        for role in ("agent", "user")
    }
    return {
        "arm": NATIVE,
        "model": facts["model"],
        "task": str(facts["task"]),
        "rep": int(facts["rep"]),
        "seed": facts["seed"],
        "schedule_position": facts.get("schedule_position"),
        "error": error,
        "excluded": error is not None,
        "termination": sim["termination_reason"],
        "success": nan if error else float(reward == 1.0),
        "database_only_success": nan if error or "DB" not in breakdown else float(breakdown["DB"] == 1.0),
        "channel_db": nan if error or "DB" not in breakdown else float(breakdown["DB"] == 1.0),
        "channel_communicate": (
            nan if error or "COMMUNICATE" not in breakdown else float(breakdown["COMMUNICATE"] == 1.0)
        ),
        "channel_nl": nan,
        "injected_failure": (facts.get("ground_truth") or {}).get("injected"),
        "turns": turns[-1] if turns else 0,
        # As the reader counts an episode's: each message and each tool call of the agent (an
        # output with neither is one rejected action); messages are the agent's own.
        "agent_actions": sum(max(1, bool(m.get("content")) + len(m.get("tool_calls") or [])) for m in outputs),
        "messages": sum(1 for m in outputs if m.get("content")),
        "agent_backend": _agent_backend(doc),
        "cost_agent_usd": cost["agent"],
        "cost_episode_usd": cost["agent"] + cost["user"],
        "overlay_version": facts.get("overlay_version"),
    }


def native_card_sha(doc: dict) -> str | None:
    """The sha256 of the card a native result was made from (None in results written before
    generator 8, which did not record it)."""
    facts = doc["simulations"][0]["reward_info"]["info"]["incognita"]
    return (facts.get("card") or {}).get("sha256")


def _agent_backend(doc: dict) -> str:
    """The evaluated agent's backend family, from the harness's own record of its agent."""
    agent = (doc.get("info") or {}).get("agent_info") or {}
    if agent.get("implementation") == AGENT_NAME:
        return "scripted"
    spec = ((agent.get("llm_args") or {}).get(native_models.PROVIDER) or {}).get("spec")
    return str(spec).partition(":")[0] if spec else "unknown"
