"""The oracle check: how far the scripted choosing rules get on every upstream task.

The `oracle` profile (config/scripted_agents.yaml) is told who holds which tool and never
slips, so whatever it gets wrong is a choice: an entry of a list it picked by the general
rules of incognita.access.episodes.scripted.scripted_agent, from what the customer released and what the
database says. Running it on all 114 upstream tasks, not only the corpus, keeps those rules
from being fitted to 18 tasks (issue #23).

The table (results/reference/oracle.tsv) has one row per task: the outcome, its channels,
and for a failure the first thing that went wrong, found by comparing the writes the
episode made with the golden trajectory's writes in order: the first write argument that
differs (`tool.argument`, with what the agent gave and what the gold has), a write never
made, an extra write, or an information item never told; `why` carries the agent's own
reason when it gave up. Deterministic: every participant is scripted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from incognita.access.episodes.harness import DomainInputs
from incognita.access.golden.upstream_replay import INITIAL_STATE
from incognita.access.selection.profile_check import flag, outcome_columns, write_tsv
from incognita.access.taxonomy import DIRECT

PROFILE = "oracle"
HEADER = [
    "task",
    "corpus",
    "success",
    "channel_db",
    "channel_communicate",
    "first_wrong",
    "got",
    "expected",
    "why",
]


_NOTHING = {"first_wrong": "", "got": "", "expected": "", "why": ""}


def _leaves(doc: Any, pointer: str = "") -> list[tuple[str, Any]]:
    if isinstance(doc, dict):
        return [leaf for key in sorted(doc) for leaf in _leaves(doc[key], f"{pointer}/{key}")]
    if isinstance(doc, list):
        return [leaf for i, v in enumerate(doc) for leaf in _leaves(v, f"{pointer}/{i}")]
    return [(pointer, doc)]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."


def first_difference(record: dict, golden: dict, handoff_tools: frozenset[str] = frozenset()) -> dict[str, str]:
    """The first way the episode's writes and information depart from the golden trajectory
    (the changes the episode made: its writes and hand-offs, the domain's `handoff_tools`)."""
    decisions = [
        e
        for e in record["events"]
        if e.get("type") == "gateway_decision" and (e.get("write") or e["tool"] in handoff_tools)
    ]
    made = [(e["tool"], e["arguments"]) for e in decisions if e.get("status") == "accepted"]
    refused = [e for e in decisions if e.get("status") != "accepted"]
    gold = [
        (c["name"], c["arguments"])
        for c in golden["calls"]
        if c["tool_type"] == "write" and not c.get("intended_failure") and c.get("origin") != INITIAL_STATE
    ]
    why = _gave_up(record)
    for i, (tool, args) in enumerate(gold):
        if i >= len(made):
            tried = next((e for e in refused if e["tool"] == tool), None)
            if tried is not None:  # proposed but refused: say how its arguments differ and why
                diff = _first_leaf_difference(tried["arguments"], args)
                reason = f"{tried['status']}: {tried.get('reason') or ''}".strip()
                if diff:
                    return {"first_wrong": f"{tool}{diff[0]}", "got": diff[1], "expected": diff[2], "why": reason}
                return {"first_wrong": tool, "got": "(refused)", "expected": _short(args), "why": reason}
            return {"first_wrong": tool, "got": "(not made)", "expected": _short(args), "why": why}
        got_tool, got_args = made[i]
        if got_tool != tool:
            return {"first_wrong": tool, "got": f"{got_tool} {_short(got_args)}", "expected": _short(args), "why": why}
        diff = _first_leaf_difference(got_args, args)
        if diff:
            return {"first_wrong": f"{tool}{diff[0]}", "got": diff[1], "expected": diff[2], "why": why}
    if len(made) > len(gold):
        tool, args = made[len(gold)]
        return {"first_wrong": f"extra {tool}", "got": _short(args), "expected": "(no such write)", "why": why}
    if record["channels"].get("communicate") is False:
        told = " ".join(
            (e.get("text") or "").lower().replace(",", "")
            for e in record["events"]
            if e.get("type") == "message" and e.get("sender") == "agent" and e.get("recipient") == "USER"
        )
        missing = [
            item["info"]
            for item in golden["information_channel"]
            if str(item["info"]).lower().replace(",", "") not in told
        ]
        return {"first_wrong": "information", "got": "(not told)", "expected": "; ".join(missing), "why": why}
    return {"first_wrong": "database", "got": "(writes match the gold)", "expected": "", "why": why}


def _first_leaf_difference(got: dict, want: dict) -> tuple[str, str, str] | None:
    """(".argument/position", got, expected) of the first argument leaf that differs."""
    got_leaves, want_leaves = dict(_leaves(got)), dict(_leaves(want))
    for pointer in sorted(set(got_leaves) | set(want_leaves)):
        if got_leaves.get(pointer) != want_leaves.get(pointer):
            return (
                pointer.replace("/", ".", 1),
                _short(got_leaves.get(pointer, "(none)")),
                _short(want_leaves.get(pointer, "(none)")),
            )
    return None


def _gave_up(record: dict) -> str:
    """The agent's own words when it stopped ("I could not complete your request (...)")."""
    for e in record["events"]:
        text = e.get("text") or ""
        if e.get("type") == "message" and e.get("sender") == "agent" and "could not complete" in text:
            start, end = text.find("("), text.rfind(")")
            return text[start + 1 : end] if 0 <= start < end else text
    return ""


def run_tasks(
    tasks: list[str],
    cards_dir: str | Path,
    golden_dir: str | Path,
    *,
    corpus: set[str],
    inputs: DomainInputs,
    prompts_dir: str,
    scripted_agents: str,
    arm: str = DIRECT,
    seed: int = 0,
    budget: int = 300,
) -> list[dict]:
    """One oracle episode per task (upstream ids of the domain of `inputs`) in `arm`; the rows of the table."""
    from incognita.access.domain import get_domain
    from incognita.access.episodes.harness import profile_episodes

    handoffs = get_domain(inputs.domain).tools_with("handoff")
    rows = []
    for task, _arm, golden, record in profile_episodes(
        PROFILE,
        "oracle check",
        tasks,
        cards_dir,
        golden_dir,
        arms=(arm,),
        inputs=inputs,
        prompts_dir=prompts_dir,
        scripted_agents=scripted_agents,
        seed=seed,
        budget=budget,
    ):
        rows.append(
            {
                "task": task,
                "corpus": flag(task in corpus),
                **outcome_columns(record),
                **(first_difference(record, golden, handoffs) if not record["success"] else _NOTHING),
            }
        )
    return rows


def write_table(rows: list[dict], out: str | Path) -> None:
    write_tsv(rows, HEADER, out)


def summary(rows: list[dict]) -> str:
    solved = [r for r in rows if r["success"] == "true"]
    corpus = [r for r in rows if r["corpus"] == "true"]
    return (
        f"oracle solves {len(solved)} of {len(rows)} tasks"
        f" ({sum(r['success'] == 'true' for r in corpus)} of {len(corpus)} corpus tasks);"
        f" failures: {', '.join(r['task'] for r in rows if r['success'] != 'true') or 'none'}"
    )
