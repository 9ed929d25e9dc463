"""The participant audit scored against injected faults: recall and precision per finding kind.

Where scripted participants injected faults (config/fidelity.yaml; incognita.access.episodes.
scripted.participant_faults), each trial carries the audit's score against them
(`participant_faults_scored`, from participant_audit.score_against_injected). This sums them
over the trials into `results/stats/participant_fidelity_validation.{csv,md}`: per finding kind,
faults injected and found (recall), findings made and true (precision). Without injected faults
(the default design) the table says so: its findings are then on faithful participants.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from incognita.access.taxonomy import FINDING_KINDS
from incognita.common.tables import write_table

COLUMNS = ["finding", "injected", "found", "recall", "findings", "true_findings", "precision"]


def fidelity_table(trials: pd.DataFrame) -> pd.DataFrame:
    scored = trials["participant_faults_scored"].dropna() if "participant_faults_scored" in trials else []
    totals = {k: dict.fromkeys(("injected", "found", "findings", "true_findings"), 0) for k in FINDING_KINDS}
    for doc in scored:
        for kind, counts in json.loads(doc).items():
            for key, n in counts.items():
                totals[kind][key] += n
    rows = []
    for kind, t in totals.items():
        rows.append(
            {
                "finding": kind,
                **{k: t[k] for k in ("injected", "found")},
                "recall": t["found"] / t["injected"] if t["injected"] else float("nan"),
                **{k: t[k] for k in ("findings", "true_findings")},
                "precision": t["true_findings"] / t["findings"] if t["findings"] else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def write_fidelity_validation(trials: pd.DataFrame, out_dir: str | Path) -> list[str]:
    """Write the table in `out_dir`; one summary line for the command's output."""
    table = fidelity_table(trials)
    write_table(table, Path(out_dir), "participant_fidelity_validation")
    audited = int(trials["participant_faults_scored"].notna().sum()) if "participant_faults_scored" in trials else 0
    if not audited:
        return [f"{out_dir}/participant_fidelity_validation.csv: no injected participant faults in these trials"]
    injected, found = int(table["injected"].sum()), int(table["found"].sum())
    return [
        f"{out_dir}/participant_fidelity_validation.csv: {audited} trials with injected participant faults; "
        f"{found}/{injected} faults found"
    ]
