"""The participant-fidelity tables: what the audit found in the participants' replies, and what
it makes of the acquisition failures (docs/fidelity.md).

`participant_fidelity`: per arm, model (and `all`) and finding kind, the findings and the trials
with one, over the audited trials. `attribution`: per arm, model (and `all`) and attributed
failure type (the composition table's count of that label beside it), the trials per
attribution. The audit runs in the reader (incognita.access.reader.participant_audit); a trials
table without its columns (`--no-audit`) gets tables that say so rather than zeros.
"""

from __future__ import annotations

import pandas as pd

from incognita.access.stats.estimator import NATIVE, scored
from incognita.access.taxonomy import ATTRIBUTED_FAILURES, ATTRIBUTIONS, FINDING_KINDS, SERVICE_FINDINGS

FINDING_COLUMNS = [f"findings_{k}" for k in FINDING_KINDS]


def audited(trials: pd.DataFrame) -> pd.DataFrame:
    """Scored Incognita trials the audit read (its columns present and filled)."""
    s = scored(trials)
    s = s[s["arm"] != NATIVE]
    if not set(FINDING_COLUMNS) <= set(s.columns):
        return s.iloc[0:0]
    return s[s["participant_messages"].notna()]


def _groups(s: pd.DataFrame, arms: list[str], models: list[str]):
    for arm in [a for a in arms if a != NATIVE]:
        cell_arm = s[s["arm"] == arm]
        if cell_arm.empty:
            continue
        for model in [*models, "all"]:
            sub = cell_arm if model == "all" else cell_arm[cell_arm["model"] == model]
            if not sub.empty:
                yield arm, model, sub


def participant_fidelity_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    rows = []
    for arm, model, sub in _groups(audited(trials), arms, models):
        replies = int(pd.to_numeric(sub["participant_messages"]).sum())
        for kind in FINDING_KINDS:
            n = pd.to_numeric(sub[f"findings_{kind}"]).fillna(0)
            rows.append(
                {
                    "arm": arm,
                    "model": model,
                    "participant": "service" if kind in SERVICE_FINDINGS else "customer",
                    "finding": kind,
                    "findings": int(n.sum()),
                    "trials_with": int((n > 0).sum()),
                    "trials": len(sub),
                    "replies": replies,
                    "per_100_replies": 100 * float(n.sum()) / replies if replies else float("nan"),
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "arm",
            "model",
            "participant",
            "finding",
            "findings",
            "trials_with",
            "trials",
            "replies",
            "per_100_replies",
        ],
    )


def attribution_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    s = scored(trials)
    s = s[s["arm"] != NATIVE]
    has_audit = set(FINDING_COLUMNS) <= set(s.columns)
    rows = []
    for arm, model, sub in _groups(s, arms, models):
        for failure in ATTRIBUTED_FAILURES:
            labelled = sub[(sub["failure_type"] == failure).fillna(False).astype(bool)]
            by = labelled["failure_attribution"] if has_audit else pd.Series([None] * len(labelled), dtype=object)
            row = {"arm": arm, "model": model, "failure_type": failure, "labelled": len(labelled)}
            for a in ATTRIBUTIONS:
                row[a] = int((by == a).fillna(False).sum())
            row["not_audited"] = int(by.isna().sum())
            rows.append(row)
    return pd.DataFrame(rows, columns=["arm", "model", "failure_type", "labelled", *ATTRIBUTIONS, "not_audited"])
