"""The trials index: one row per trial of results/trials.parquet (our arms and native), in a
compact layout (column descriptions once, rows as lists) that the page filters and sorts.

Each row carries its task's benchmark domain, so the index filters by domain like by any text
column (`#trials?domain=retail`); the column is shown at first only when the trials span more
than one domain (with one it says nothing), and is one click away otherwise."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from incognita.access.domain import split_task, task_order
from incognita.access.taxonomy import FINDING_KINDS
from incognita.common.io import InputError

# (column, header, kind, description). Kind "text" filters by value; the others are numbers
# ("frac" a fraction in [0, 1], "usd" a cost) filtered by expression.
COLUMNS = (
    ("arm", "arm", "text", "access condition (native: the upstream harness)"),
    ("model", "model", "text", "evaluated agent"),
    ("domain", "domain", "text", "benchmark domain of the task (a tau2 domain)"),
    ("task", "task", "text", "corpus task id"),
    ("level", "level", "int", "desks engaged by the required calls (the task's level)"),
    ("rep", "rep", "int", "repetition"),
    ("outcome", "outcome", "text", "success, failed, or excluded (broke outside the agent)"),
    ("failure_type", "failure type", "text", "the reader's label of a failed trial (docs/reader.md)"),
    ("role_identification", "role id", "frac", "share of role assignments whose desk executed its tool (social)"),
    ("holder_contacted", "holder", "frac", "share of role assignments whose desk the agent wrote to (social)"),
    ("information_acquisition", "info", "frac", "information items obtained / items"),
    ("customer_information", "cust", "frac", "customer facts obtained / customer facts"),
    ("service_information", "svc", "frac", "service facts obtained / service facts"),
    ("execution", "exec", "frac", "required calls executed correctly by the expected executor / required calls"),
    ("turns", "turns", "int", "agent turns"),
    ("agent_actions", "actions", "int", "agent actions: messages, tool calls and rejected outputs"),
    ("messages", "msgs", "int", "agent messages, FINAL excluded"),
    ("unanswerable_questions", "unans", "int", "agent messages that reached someone unable to answer"),
    ("protocol_errors", "proto err", "int", "agent outputs rejected by the protocol check"),
    ("non_reference_reads", "extra reads", "int", "accepted reads outside the reference"),
    ("tokens_agent", "tok agent", "int", "the agent's tokens"),
    ("tokens_episode", "tok all", "int", "tokens of every role"),
    ("cost_agent_usd", "$ agent", "usd", "the agent's cost in USD"),
    ("cost_episode_usd", "$ all", "usd", "cost of every role in USD"),
    ("injected_failure", "injected", "text", "failure type a scripted agent injected on purpose (ground truth)"),
    ("termination", "ended", "text", "how the episode ended"),
    ("findings", "findings", "int", "the participant audit's findings in the trial's replies (docs/fidelity.md)"),
    ("failure_attribution", "attribution", "text", "the audit's attribution of an acquisition failure"),
    *(
        (f"findings_{kind}", kind.replace("_", " "), "int", f"the audit's findings of kind {kind}")
        for kind in FINDING_KINDS
    ),
)
# Shown until the reader picks columns: the per-kind finding counts are one click away (the
# column list), and a filter on one of them shows it (table.js), as a fidelity table's link does.
SHOWN = tuple(c[0] for c in COLUMNS if not c[0].startswith("findings_"))
DOMAIN = "domain"  # shown only when the trials span several domains (index_table)
# Kept in the episode page's copy of the row, not in the index (audits and detail).
DETAIL = (
    "seed",
    "schedule_position",
    "error",
    "excluded",
    "success",
    "database_only_success",
    "channel_db",
    "channel_communicate",
    "channel_nl",
    "failure_type_reads_credited",
    "failure_type_request_based",
    "failure_type_exact_credited",
    "action_attempted",
    "non_reference_actions",
    "missing_customer_facts",
    "missing_service_facts",
    "gate_withheld_facts",
    "injected_slips",
    "agent_backend",
    "overlay_version",
    "participant_messages",
    "participant_findings",
)


def plain(value: Any) -> Any:
    """A table cell as JSON: NaN and NA become null, numpy scalars Python ones."""
    import pandas as pd

    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    if hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and math.isinf(value) else value


def outcome(row: dict) -> str:
    if row.get("excluded"):
        return "excluded"
    return "success" if row.get("success") == 1.0 else "failed"


def load_trials(path: str | Path) -> list[dict]:
    """The trials table as plain dicts, with the derived outcome."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: trials table not found (build it with `incognita trials`)")
    df = pd.read_parquet(path)
    missing = [c for c in ("arm", "model", "task", "rep", "excluded", "success") if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
    rows = [{k: plain(v) for k, v in rec.items()} for rec in df.to_dict("records")]
    for row in rows:
        row["outcome"] = outcome(row)
        row["task"] = str(row["task"])
        row[DOMAIN] = split_task(row["task"], f"{path}: task")[0]
        row["findings"] = _findings(row)
    return rows


def _findings(row: dict) -> int | None:
    """The audit's findings in one trial; None where the audit did not read it (native, --no-audit)."""
    if row.get("participant_messages") is None:
        return None
    return sum(row.get(f"findings_{kind}") or 0 for kind in FINDING_KINDS)


def index_table(rows: list[dict]) -> dict:
    """The index's trials section: column descriptions and one list per trial."""
    columns = [{"name": n, "label": label, "kind": kind, "title": title} for n, label, kind, title in COLUMNS]
    several = len({row.get(DOMAIN) for row in rows}) > 1
    shown = [c for c in SHOWN if several or c != DOMAIN]
    return {"columns": columns, "shown": shown, "rows": [[row.get(c[0]) for c in COLUMNS] for row in rows]}


def trial_detail(row: dict) -> dict:
    """The row as the episode page shows it: the index columns and the audit columns."""
    return {k: row.get(k) for k in (*(c[0] for c in COLUMNS), *DETAIL) if k in row}


def task_summaries(reference: dict, tasks: set[str], arms: set[str] | None = None) -> dict:
    """Per task of the design, what the per-task view puts above its grid (for the design's
    `arms`; the reference has every registered arm)."""
    out = {}
    for task in sorted(tasks, key=task_order):
        entry = reference["tasks"].get(task)
        if entry is None:
            raise InputError(f"coordination reference: task {task} of the trials table is not in it")
        out[task] = {
            "level": entry.get("level"),
            "desks_engaged": entry.get("desks_engaged", []),
            "writes": entry.get("writes", []),
            "n_counted": entry.get("n_counted"),
            "customer_facts": len(entry["information_items"]["customer"]),
            "service_facts": len(entry["information_items"]["service"]),
            "arms": {
                arm: {
                    "required_calls": [c["name"] for c in spec["required_calls"]],
                    "executors": spec.get("executors", []),
                    "role_assignments": spec.get("n_role_assignments"),
                }
                for arm, spec in entry["arms"].items()
                if arms is None or arm in arms
            },
        }
    return out
