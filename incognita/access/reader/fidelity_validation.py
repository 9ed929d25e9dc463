"""The participant audit scored against injected faults: recall and precision per finding kind.

Where scripted participants injected faults (config/fidelity.yaml; incognita.access.episodes.
scripted.participant_faults), each trial carries the audit's score against them
(`participant_faults_scored`, from participant_audit.score_against_injected). This sums them
over the trials into `results/stats/participant_fidelity_validation.{csv,md}`: per finding kind,
faults injected and found (recall), findings made and true (precision). Without injected faults
(the default design) the table says so: its findings are then on faithful participants.

The participants' faults are ground truth only where nothing else was injected into the trial:
where the evaluated agent injected a failure type or slipped an argument, a participant may
depart without a fault of its own (the scripted customer agrees to the wrong order id the agent
restates), so such trials are set aside; column `set_aside` counts the faults they carried.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from incognita.access.taxonomy import FINDING_KINDS
from incognita.common.tables import write_table

COLUMNS = ["finding", "injected", "found", "recall", "findings", "true_findings", "precision", "set_aside"]


def agent_faults(trials: pd.DataFrame) -> pd.Series:
    """Trials the evaluated agent injected a fault into: a failure type, or a slipped argument."""
    slips = pd.to_numeric(trials["injected_slips"], errors="coerce").fillna(0) if "injected_slips" in trials else 0
    failure = trials["injected_failure"].notna() if "injected_failure" in trials else False
    return pd.Series(failure | (slips > 0), index=trials.index).astype(bool)


def _scored(trials: pd.DataFrame) -> pd.Series:
    if "participant_faults_scored" not in trials:
        return pd.Series(dtype=object)
    return trials["participant_faults_scored"].dropna()


def fidelity_table(trials: pd.DataFrame) -> pd.DataFrame:
    scored = _scored(trials)
    aside = agent_faults(trials).reindex(scored.index)
    keys = ("injected", "found", "findings", "true_findings", "set_aside")
    totals = {k: dict.fromkeys(keys, 0) for k in FINDING_KINDS}
    for doc, set_aside in zip(scored, aside, strict=True):
        for kind, counts in json.loads(doc).items():
            if set_aside:
                totals[kind]["set_aside"] += counts.get("injected", 0)
                continue
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
                "set_aside": t["set_aside"],
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def write_fidelity_validation(trials: pd.DataFrame, out_dir: str | Path) -> list[str]:
    """Write the table in `out_dir`; one summary line for the command's output."""
    table = fidelity_table(trials)
    write_table(table, Path(out_dir), "participant_fidelity_validation")
    scored = _scored(trials)
    if not len(scored):
        return [f"{out_dir}/participant_fidelity_validation.csv: no injected participant faults in these trials"]
    aside = int(agent_faults(trials).reindex(scored.index).sum())
    injected, found = int(table["injected"].sum()), int(table["found"].sum())
    return [
        f"{out_dir}/participant_fidelity_validation.csv: {len(scored)} trials with injected participant faults; "
        f"{found}/{injected} faults found; {aside} trials ({int(table['set_aside'].sum())} faults) set aside, "
        "where the agent also injected a failure or slipped an argument"
    ]
