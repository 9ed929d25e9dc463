"""How the reader is checked: a hand-labelled set first, the injection check second.

1. **Hand-labelled trajectories** (each domain's `config/domains/<name>/reader_validation/`): short episodes written by
   hand, each with the label a person assigned from the paper's Section 4 definitions
   *before* the reader was run on it, and the reasoning for that label. They are written in
   a small step language (below) against tasks whose coordination reference is frozen beside
   them (`reference.json`: retail's set uses made-up tasks, 901-904; airline's uses real tasks,
   with their entries as the reference stage builds them), and the reader reads them exactly
   as it reads real episodes. Agreement here is evidence about the reader, because the labels do not
   come from its code.
2. **The injection check**: the scripted population injects failure types on purpose and
   records what it injected; the matrix compares that with the reader's label. The
   injection rules were written with the reader's definitions in view, so agreement there
   is a consistency check between two parts of this code base, not independent evidence.
   An injection is ground truth only where it is the trial's one injected fault: a trial
   where a slipped argument or a participant's fault touches it too is set aside
   (`injection_set_aside`), and the table says how many.

Step language of a fixture (one step = one agent turn):

`opening` (optional) is the customer's first line. `final` ends the episode (the agent's FINAL).
- `{to: USER, say: TEXT, release: {TOKEN: VALUE}}`: a message to the customer; `release`
  (optional) makes the disclosure gate release those fields, and the customer answers with
  their values. `ask: TOKEN` instead records a request the gate refuses (unknown token).
- `{to: PARTICIPANT, say: TEXT, call: CALL}`: a message to Vega or a desk, which then
  proposes CALL. Without `to`, CALL is the agent's own (direct arm). `reply: TEXT` instead of
  `call`: the participant only answers, with that text (a refusal, or a referral: "Cygnus
  handles product details").
- CALL: `{tool, args, status: accepted|error|not_owner|inadmissible, result, write}`;
  `status` defaults to accepted, `write` to false.

`outcome` gives the reward channels (`db`, `communicate`, `nl`: true, false or absent for a
channel that is not operative); success is every operative channel passing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from incognita.access.domain import qualify
from incognita.access.episodes.loop.records import EpisodeRecord
from incognita.access.reader.trial_reading import read_trial
from incognita.access.taxonomy import DELIVERED_INCORRECT, FAILURE_TYPES, NATIVE
from incognita.common.io import InputError, atomic_write_text, read_json, read_yaml

LABELLED_COLUMNS = ("fixture", "task", "arm", "expected", "read", "agree", "reasoning")


# --------------------------------------------------------------------------- the hand-labelled set


@dataclass(frozen=True)
class Labelled:
    name: str
    task: str
    arm: str
    expected: str  # a failure type, or "success"
    reasoning: str
    record: EpisodeRecord


def _events(steps: list, where: str) -> list[dict]:
    events: list[dict] = []
    for turn, step in enumerate(steps, start=1):
        if step == "final":
            events.append(_message(turn, "agent", "ENVIRONMENT", "done", "FINAL"))
            continue
        if not isinstance(step, dict):
            raise InputError(f"{where}: step {turn}: expected 'final' or a mapping, got {step!r}")
        to = step.get("to")
        if to is not None:
            events.append(_message(turn, "agent", to, str(step.get("say", ""))))
        if to == "USER":
            events += _customer_reply(turn, step, where)
        if to not in (None, "USER") and "reply" in step:
            events.append(_message(turn, to, "agent", str(step["reply"])))
        if "call" in step:
            events += _call(turn, to or "agent", step["call"], f"{where}: step {turn}")
            if to is not None:
                events.append(
                    _message(
                        turn,
                        to,
                        "agent",
                        "Done." if step["call"].get("status", "accepted") == "accepted" else "That did not go through.",
                    )
                )
    return events


def _message(turn: int, sender: str, recipient: str, text: str, kind: str = "MESSAGE") -> dict:
    return {
        "type": "message",
        "turn": turn,
        "sender": sender,
        "recipient": recipient,
        "text": text,
        "message_type": kind,
    }


def _customer_reply(turn: int, step: dict, where: str) -> list[dict]:
    released = step.get("release") or {}
    events = [
        {"type": "disclosure", "turn": turn, "token": token, "status": "released", "value": str(value)}
        for token, value in released.items()
    ]
    if step.get("ask"):
        events.append({"type": "disclosure", "turn": turn, "token": step["ask"], "status": "unknown", "value": None})
    reply = ", ".join(str(v) for v in released.values()) or "I am not sure what you mean."
    return events + [_message(turn, "USER", "agent", reply)]


def _call(turn: int, proposer: str, call: dict, where: str) -> list[dict]:
    if not isinstance(call, dict) or "tool" not in call:
        raise InputError(f"{where}: call: expected a mapping with 'tool', got {call!r}")
    status = call.get("status", "accepted")
    if status not in ("accepted", "error", "not_owner", "inadmissible"):
        raise InputError(f"{where}: call.status: {status!r} is not accepted, error, not_owner or inadmissible")
    base = {
        "turn": turn,
        "call_id": f"c{turn}",
        "proposer": proposer,
        "tool": call["tool"],
        "arguments": call.get("args") or {},
    }
    decision = {
        "type": "gateway_decision",
        **base,
        "status": status,
        "reason": None if status == "accepted" else call.get("reason", status),
        "result": call.get("result") if status == "accepted" else None,
        "write": bool(call.get("write")),
    }
    return [{"type": "tool_proposal", **base}, decision]


def _record(doc: dict, opening: str, where: str, task: str) -> EpisodeRecord:
    outcome = doc.get("outcome") or {}
    channels = {k: outcome.get(k) for k in ("db", "communicate", "nl")}
    operative = [v for v in channels.values() if v is not None]
    if not operative:
        raise InputError(f"{where}: outcome: give at least the db channel")
    events = [_message(0, "USER", "agent", opening)] + _events(doc.get("steps") or [], where)
    turns = max(e["turn"] for e in events)
    return EpisodeRecord.from_dict(
        {
            "schema_version": 1,
            "seed": 0,
            "code_version": "hand-labelled",
            "cell": {
                "arm": doc["arm"],
                "model": "hand-labelled",
                "task": task,
                "rep": 0,
                "schedule_position": 0,
            },
            "models": {
                "agent": "hand-labelled",
                "customer": "scripted:customer",
                "service": "scripted:desk",
                "judge": None,
            },
            "card": {"version": 1, "sha256": "0" * 64},
            "reference": {"golden_sha256": "0" * 64, "gold_hash": "1" * 64},
            "events": events,
            "termination": "final",
            "turns": turns,
            "final_db_hash": "2" * 64,
            "channels": channels,
            "success": all(operative),
            "database_only_success": channels["db"],
            "usage": {},
            "wall_time_s": 0.0,
            "error": None,
            "ground_truth": {},
        }
    )


def load_labelled(directory: str | Path, domain: str) -> tuple[dict, list[Labelled]]:
    """The frozen reference of a domain's fixture tasks and every fixture in `directory`/*.yaml;
    their tasks named by qualified ids (`retail/901`), the reference's tasks too."""
    directory = Path(directory)
    reference = read_json(directory / "reference.json")
    fixtures: list[Labelled] = []
    for path in sorted(directory.glob("*.yaml")):
        for i, doc in enumerate(read_yaml(path) or []):
            where = f"{path}: fixture {i + 1} ({doc.get('name', '?')})"
            missing = [k for k in ("name", "task", "arm", "label", "reasoning", "outcome", "steps") if k not in doc]
            if missing:
                raise InputError(f"{where}: missing key(s) {', '.join(missing)}")
            if doc["label"] not in ("success", *FAILURE_TYPES):
                raise InputError(f"{where}: label: {doc['label']!r} is not success or a failure type")
            task = reference["tasks"].get(str(doc["task"]))
            if task is None:
                raise InputError(f"{where}: task {doc['task']!r} is not in {directory / 'reference.json'}")
            qualified = qualify(domain, str(doc["task"]))
            fixtures.append(
                Labelled(
                    doc["name"],
                    qualified,
                    doc["arm"],
                    doc["label"],
                    " ".join(str(doc["reasoning"]).split()),
                    _record(doc, str(doc.get("opening", "Hi, I need some help with an order.")), where, qualified),
                )
            )
    if not fixtures:
        raise InputError(f"{directory}: no hand-labelled fixtures (*.yaml)")
    return {"tasks": {qualify(domain, t): entry for t, entry in reference["tasks"].items()}}, fixtures


def read_labelled(directories: dict[str, str | Path | None]) -> pd.DataFrame:
    """One row per fixture of each domain (`directories`: domain -> its fixtures, None for a
    domain that has no hand-labelled set): the label assigned by hand and the reader's."""
    rows = []
    for domain, directory in directories.items():
        if directory is not None:
            rows += _read_labelled(directory, domain)
    return pd.DataFrame(rows, columns=list(LABELLED_COLUMNS))


def _read_labelled(directory: str | Path, domain: str) -> list[dict]:
    reference, fixtures = load_labelled(directory, domain)
    rows = []
    for f in fixtures:
        row = read_trial(f.record, reference["tasks"][f.task])
        read = "success" if row.success == 1.0 else (row.failure_type or "unlabelled")
        rows.append(
            {
                "fixture": f.name,
                "task": f.task,
                "arm": f.arm,
                "expected": f.expected,
                "read": read,
                "agree": read == f.expected,
                "reasoning": f.reasoning,
            }
        )
    return rows


# --------------------------------------------------------------------------- the injection check


SET_ASIDE = "set_aside"  # the matrix's column of injected trials that are not ground truth


def injection_set_aside(df: pd.DataFrame) -> pd.Series:
    """Trials whose injected failure type is not the only fault injected into them: a slipped
    argument (except under `delivered_incorrect`, whose slips are the injection itself) or a
    scripted participant's fault. The reader may rightly read such a trial as another type, so
    the injection is no ground truth there."""
    kind = df["injected_failure"].astype(object)
    injected = kind.notna()
    slips = pd.to_numeric(df["injected_slips"], errors="coerce").fillna(0) if "injected_slips" in df else 0
    slipped = (slips > 0) & (kind.fillna("") != DELIVERED_INCORRECT)
    faults = (
        df["participant_faults_scored"].map(_participant_faults)
        if "participant_faults_scored" in df
        else pd.Series(0, index=df.index)
    )
    return (injected & (slipped | (faults > 0))).astype(bool)


def _participant_faults(doc) -> int:
    """How many faults scripted participants injected into a trial (its audit score's JSON)."""
    if not isinstance(doc, str):
        return 0
    return sum(int(counts.get("injected", 0)) for counts in json.loads(doc).values())


def injection_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """Confusion matrix of injected failure type (rows, 'none' for no injection) against the
    reader's outcome (columns: 'success', the five types, 'set_aside' for injected trials another
    injected fault also touches (`injection_set_aside`), and 'excluded' when any)."""
    scored = df[df["arm"] != NATIVE]
    injected = scored["injected_failure"].fillna("none").astype(str)
    read = scored["failure_type"].astype(object).where(scored["failure_type"].notna(), "success")
    read = read.where(~injection_set_aside(scored), SET_ASIDE)
    read = read.where(~scored["excluded"].astype(bool), "excluded").astype(str)  # never scored at all
    cols = ["success", *FAILURE_TYPES, SET_ASIDE] + (["excluded"] if (read == "excluded").any() else [])
    unknown = sorted(set(injected) - {"none", *FAILURE_TYPES})
    if unknown:
        raise InputError(f"trials table: injected_failure: unknown type(s) {', '.join(unknown)}")
    table = pd.crosstab(injected, read).reindex(index=["none", *FAILURE_TYPES], columns=cols, fill_value=0)
    table.index.name, table.columns.name = "injected", None
    return table.astype(int)


def injection_summary(matrix: pd.DataFrame) -> dict:
    """Agreement on trials with an injected failure; labels on successful trials must be zero."""
    types = list(FAILURE_TYPES)
    injected = matrix.loc[types]
    n = int(injected[types].to_numpy().sum())
    agree = int(sum(matrix.loc[t, t] for t in types))
    return {
        "injected_failed": n,
        "agree": agree,
        "agreement": agree / n if n else float("nan"),
        "injected_read_success": int(injected["success"].sum()),
        "uninjected_failures": int(matrix.loc["none", types].sum()),
        "set_aside": int(matrix[SET_ASIDE].sum()) if SET_ASIDE in matrix else 0,
    }


# --------------------------------------------------------------------------- the report


def _labelled_markdown(labelled: pd.DataFrame, without: list[str]) -> list[str]:
    agree = int(labelled["agree"].sum())
    by_type = labelled.groupby("expected")["agree"].agg(["sum", "count"])
    lines = [
        "## 1. Hand-labelled trajectories (independent of the reader's code)",
        "",
        (
            f"{len(labelled)} short episodes written by hand in each domain's `config/domains/<domain>/"
            "reader_validation/`, each labelled from the paper's Section 4 definitions before the reader was "
            f"run on it. The reader agrees on {agree} of {len(labelled)}."
        ),
        "",
    ]
    if without:
        lines += [f"No hand-labelled set (no fixtures are read for it): {', '.join(without)}.", ""]
    lines += [
        "| label assigned by hand | fixtures | reader agrees |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {label} | {int(r['count'])} | {int(r['sum'])} |" for label, r in by_type.iterrows()]
    lines += ["", "| fixture | arm | by hand | reader |", "| --- | --- | --- | --- |"]
    lines += [
        f"| {r.fixture} | {r.arm} | {r.expected} | {r.read}{'' if r.agree else ' (disagrees)'} |"
        for r in labelled.itertuples()
    ]
    return lines + [""]


def _injection_markdown(matrix: pd.DataFrame) -> list[str]:
    s = injection_summary(matrix)
    agreement = "n/a" if math.isnan(s["agreement"]) else f"{s['agreement']:.3f}"
    lines = [
        "## 2. Injection check (a consistency check, not independent evidence)",
        "",
        (
            "The scripted agents inject failure types on purpose; rows are what was injected, columns what the "
            "reader read. The injection rules were written with the reader's definitions in view, so agreement "
            "here shows the two parts of this code base agree with each other, not that the reader is right. "
            "An injection counts as ground truth only where it is the trial's one injected fault; column "
            "set_aside counts the injected trials that a slipped argument or a participant's fault also "
            "touches, which are left out of the agreement."
        ),
        "",
        "| injected | " + " | ".join(matrix.columns) + " |",
        "|" + " --- |" * (len(matrix.columns) + 1),
    ]
    lines += [f"| {idx} | " + " | ".join(str(v) for v in row) + " |" for idx, row in matrix.iterrows()]
    lines += [
        "",
        (
            f"Agreement on failed trials with an injected type: {s['agree']}/{s['injected_failed']} "
            f"({agreement}). Injected trials read as success: {s['injected_read_success']}. "
            f"Failures without an injection: {s['uninjected_failures']}. "
            f"Injected trials set aside (another injected fault touches them): {s['set_aside']}."
        ),
    ]
    return lines


def write_validation(
    matrix: pd.DataFrame, labelled: pd.DataFrame | None, path: str | Path, without: list[str] = ()
) -> None:
    """The injection matrix as CSV at `path`, the hand-labelled table beside it
    (`<stem>_labelled.csv`), and both as Markdown (`<stem>.md`), the hand-labelled set first;
    `without` names the domains that have no hand-labelled set."""
    path = Path(path)
    atomic_write_text(path, matrix.reset_index().to_csv(index=False))
    lines = ["# Reader validation", ""]
    if labelled is not None:
        atomic_write_text(path.with_name(f"{path.stem}_labelled.csv"), labelled.to_csv(index=False))
        lines += _labelled_markdown(labelled, list(without))
    lines += _injection_markdown(matrix)
    atomic_write_text(path.with_suffix(".md"), "\n".join(lines) + "\n")


def validate(trials: pd.DataFrame, labelled_dirs: dict[str, str | Path | None] | None, path: str | Path) -> list[str]:
    """Both checks, written at `path` (`labelled_dirs`: domain -> its hand-labelled fixtures or
    None where it has none; None to skip the hand-labelled check); summary lines for the output."""
    matrix = injection_matrix(trials)
    labelled = read_labelled(labelled_dirs) if labelled_dirs is not None else None
    without = sorted(d for d, directory in (labelled_dirs or {}).items() if directory is None)
    write_validation(matrix, labelled, path, without)
    s = injection_summary(matrix)
    out = []
    if labelled is not None:
        out.append(
            f"{path}: hand-labelled trajectories read as labelled {int(labelled['agree'].sum())}/{len(labelled)}"
        )
    return out + [
        f"{path}: injected failures read as injected {s['agree']}/{s['injected_failed']} (a consistency check; "
        f"{s['set_aside']} injected trials set aside, another injected fault touches them)"
    ]
