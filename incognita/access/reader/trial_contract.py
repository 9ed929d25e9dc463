"""The trials table's contract: one trial row, its columns and dtypes, and the checks a table passes.

`TrialRow` is what the reader (incognita.access.reader.trial_reading) makes of one episode;
`CONTRACT_COLUMNS` are the columns the statistics and figures stages read from
`results/trials.parquet` (docs/reader.md). `frame` turns rows into a table with the contract's
order and dtypes, `check_extra_rows` checks rows built elsewhere (native trials) before they
join it, and `write_trials` refuses a table without a contract column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incognita.access.taxonomy import FINDING_KINDS, NATIVE, PROCESS_MEASURES
from incognita.common.io import InputError, atomic_write, atomic_write_text

if TYPE_CHECKING:  # pandas is imported where tables are built: the workflow imports this module at parse time
    import pandas as pd

PROCESS_COLUMNS = PROCESS_MEASURES
FINDING_COLUMNS = tuple(f"findings_{kind}" for kind in FINDING_KINDS)
# Columns fixed by the data contract (statistics and figures read these).
CONTRACT_COLUMNS = (
    "arm",
    "model",
    "task",
    "rep",
    "seed",
    "schedule_position",
    "error",
    "excluded",
    "termination",
    "success",
    "database_only_success",
    "channel_db",
    "channel_communicate",
    "channel_nl",
    "failure_type",
    "failure_type_reads_credited",
    "failure_type_request_based",
    "failure_type_exact_credited",
    "injected_failure",
    *PROCESS_COLUMNS,
    "agent_actions",
    "messages",
    "unanswerable_questions",
    "non_reference_reads",
    "tokens_agent",
    "tokens_episode",
    "cost_agent_usd",
    "cost_episode_usd",
    "cache_hits",
    "cache_misses",
    "agent_backend",
)
_INT_COLUMNS = (
    "rep",
    "seed",
    "schedule_position",
    "agent_actions",
    "messages",
    "unanswerable_questions",
    "non_reference_reads",
    "tokens_agent",
    "tokens_episode",
    "cache_hits",
    "cache_misses",
    "turns",
    "protocol_errors",
    "non_reference_actions",
    "missing_customer_facts",
    "missing_service_facts",
    "gate_withheld_facts",
    "level",
    "injected_slips",
    "participant_messages",
    *FINDING_COLUMNS,
)
_STR_COLUMNS = (
    "arm",
    "model",
    "task",
    "error",
    "termination",
    "failure_type",
    "failure_type_reads_credited",
    "failure_type_request_based",
    "failure_type_exact_credited",
    "injected_failure",
    "agent_backend",
    "agent_structured_output",
    "failure_attribution",
    "participant_faults_scored",
    "participant_findings",
)
NA = float("nan")


@dataclass
class TrialRow:
    """One trial. Fractions are NaN where the arm does not contain the process (never 0)."""

    arm: str
    model: str
    task: str
    rep: int
    seed: int
    schedule_position: int | None
    error: str | None
    excluded: bool
    termination: str
    success: float
    database_only_success: float
    channel_db: float
    channel_communicate: float
    channel_nl: float
    failure_type: str | None
    failure_type_reads_credited: str | None
    failure_type_request_based: str | None
    failure_type_exact_credited: str | None
    injected_failure: str | None
    role_identification: float
    holder_contacted: float
    information_acquisition: float
    customer_information: float
    service_information: float
    execution: float
    agent_actions: int
    messages: int
    unanswerable_questions: int
    non_reference_reads: int
    tokens_agent: int
    tokens_episode: int
    cost_agent_usd: float
    cost_episode_usd: float
    cache_hits: int
    cache_misses: int
    agent_backend: str  # the evaluated agent's backend family: scripted (offline) or openai (a language model)
    # Beyond the contract: what the labels rest on, for audits.
    turns: int
    protocol_errors: int
    action_attempted: bool | None
    non_reference_actions: int
    missing_customer_facts: int
    missing_service_facts: int
    gate_withheld_facts: int
    level: int | None
    injected_slips: int | None
    # How the agent's answers were constrained: none (as the paper), or the entry's structured_output kind.
    agent_structured_output: str | None
    # The participant-fidelity audit (incognita.access.reader.participant_audit): replies audited,
    # findings per kind, and the attribution of an acquisition failure. NA where it did not run.
    participant_messages: int | None = None
    failure_attribution: str | None = None
    findings_ungrounded_value: int | None = None
    findings_misreported_value: int | None = None
    findings_refused_in_remit: int | None = None
    findings_claimed_unmade_change: int | None = None
    findings_named_participant: int | None = None
    findings_referred_elsewhere: int | None = None
    findings_formatted_list: int | None = None
    findings_named_tool: int | None = None
    findings_customer_invented_value: int | None = None
    findings_customer_gate_bypass: int | None = None
    findings_customer_confirmed_outside_memory: int | None = None
    participant_faults_scored: str | None = None  # JSON, where scripted participants injected faults
    participant_findings: str | None = None  # JSON list: each finding's kind, participant, event, turn, detail


def frame(rows: Iterable[dict]) -> pd.DataFrame:
    """Rows to a DataFrame with the column order and dtypes of the contract; columns a row
    builder added beyond ours (e.g. the native overlay version) follow, NA elsewhere."""
    import pandas as pd

    rows = list(rows)
    columns = [f.name for f in fields(TrialRow)]
    columns += list(dict.fromkeys(k for row in rows for k in row if k not in columns))
    df = pd.DataFrame(rows, columns=columns)
    for col in _INT_COLUMNS:
        df[col] = pd.array([None if _missing(v) else int(v) for v in df[col]], dtype="Int64")
    for col in _STR_COLUMNS:
        df[col] = pd.array([None if _missing(v) else str(v) for v in df[col]], dtype="string")
    df["excluded"] = df["excluded"].astype(bool)
    df["action_attempted"] = pd.array(
        [None if _missing(v) else bool(v) for v in df["action_attempted"]], dtype="boolean"
    )
    for f in fields(TrialRow):
        if f.name not in _INT_COLUMNS + _STR_COLUMNS + ("excluded", "action_attempted"):
            df[f.name] = df[f.name].astype(float)
    return df


def _missing(value: Any) -> bool:
    import pandas as pd

    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


_KEYS = ("arm", "model", "task", "rep")

_NOT_FOR_EXTRA = (
    "failure_type",
    "failure_type_reads_credited",
    "failure_type_request_based",
    "failure_type_exact_credited",
    *PROCESS_COLUMNS,
)


def check_extra_rows(rows: Iterable[dict]) -> list[dict]:
    """Rows built elsewhere (native trials): cell keys and outcome required, the reader's own
    measures absent (NA), anything else the builder did not fill left NA."""
    out = []
    for i, row in enumerate(rows):
        where = f"extra_rows[{i}] ({'/'.join(str(row.get(k)) for k in _KEYS)})"
        absent = [c for c in (*_KEYS, "excluded", "success", "termination") if c not in row]
        if absent:
            raise InputError(f"{where}: missing column(s) {', '.join(absent)}")
        if row["arm"] != NATIVE:
            raise InputError(f"{where}: arm {row['arm']!r} is read from episode records, not passed in")
        filled = [c for c in _NOT_FOR_EXTRA if not _missing(row.get(c))]
        if filled:
            raise InputError(f"{where}: {', '.join(filled)}: the reader defines these for episode records only")
        out.append({**{f.name: None for f in fields(TrialRow)}, **row})
    return out


def write_trials(df: pd.DataFrame, parquet_path: str | Path, csv_path: str | Path | None = None) -> None:
    missing = [c for c in CONTRACT_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"trials table: missing contract column(s) {', '.join(missing)}")
    atomic_write(parquet_path, lambda tmp: df.to_parquet(tmp, index=False))
    if csv_path is not None:
        atomic_write_text(csv_path, df.to_csv(index=False))
