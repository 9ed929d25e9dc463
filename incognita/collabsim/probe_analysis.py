"""Probe measures: confidence over a run and its calibration, and SBERT convergence.

`probe_rows` turns a run's probe events into one row per answer (probes.parquet). Calibration
uses the tasks whose probes can be checked (the probe event's `truth`): Hidden Profile's
favoured candidate against the correct one, Map Task's reported route progress against the share
of the route drawn (right when within 0.1). Convergence is the pairwise cosine similarity of
teammates' answers to the same question at the same probe point (a step in which two or more of
them answered; each agent's last answer of the step), with answers encoded by all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd

from incognita.collabsim.paths import KEY_FIELDS, RunKey

PROGRESS_TOLERANCE = 0.1
THIRDS = ("early", "middle", "late")
PROBE_MEASURES = (
    "probe_answers",
    "probe_errors",
    "confidence",
    "confidence_early",
    "confidence_middle",
    "confidence_late",
    "calibration_brier",
    "calibration_gap",
    "convergence",
    "convergence_early",
    "convergence_late",
    "convergence_trend",
)


def third(progress: float) -> str:
    return THIRDS[min(int(progress * 3), 2)]


def correct(fields: dict, truth: dict | None) -> float:
    """1/0 when an answer's field can be checked against the truth, else NaN."""
    if not truth:
        return float("nan")
    for name, true in truth.items():
        value = fields.get(name)
        if value is None:
            continue
        if isinstance(true, (int, float)) and not isinstance(true, bool):
            return float(abs(float(value) - float(true)) <= PROGRESS_TOLERANCE)
        return float(value == true)
    return float("nan")


def probe_rows(events: list[dict], manifest: dict) -> list[dict]:
    key = RunKey.from_dict(manifest).as_dict()
    roles = manifest["roles"]
    last = max(manifest["steps"] - 1, 1)
    rows = []
    for e in events:
        if e["kind"] not in ("probe", "probe_error"):
            continue
        progress = min(e["step"] / last, 1.0)
        base = {
            **key,
            "agent": e["actor"],
            "role": roles.get(e["actor"]),
            "step": e["step"],
            "t": e["t"],
            "progress": progress,
            "third": third(progress),
            "probe": e["payload"]["probe"],
            "trigger": e["payload"]["trigger"],
        }
        if e["kind"] == "probe_error":
            rows.append(
                {
                    **base,
                    "question": e["payload"].get("question"),
                    "valid": False,
                    "error": e["payload"]["reason"],
                    "answer": None,
                    "confidence": float("nan"),
                    "fields": None,
                    "correct": float("nan"),
                }
            )
            continue
        for a in e["payload"]["answers"]:
            rows.append(
                {
                    **base,
                    "question": a["id"],
                    "valid": True,
                    "error": None,
                    "answer": a["answer"],
                    "confidence": a["confidence"],
                    "fields": json.dumps(a["fields"], sort_keys=True),
                    "correct": correct(a["fields"], e["payload"].get("truth")),
                }
            )
    return rows


def convergence_rows(probes: pd.DataFrame, vectors: np.ndarray) -> pd.DataFrame:
    """One row per (run, question, step) with two or more answering agents: the mean pairwise
    cosine of their answers. `vectors` holds the unit vector of each row's answer.

    Grouped in plain Python: a pandas groupby with a per-group de-duplication cost some 20 s
    of CPU on the default build's 90,000 answers; this does the same in well under one."""
    columns = [*KEY_FIELDS, "question", "step"]
    valid = probes["valid"].to_numpy(dtype=bool)
    keys = zip(*(probes[c].tolist() for c in columns))
    agents, progress = probes["agent"].tolist(), probes["progress"].tolist()
    groups: dict[tuple, dict] = {}
    for row, (key, ok) in enumerate(zip(keys, valid)):
        if ok:
            groups.setdefault(key, {})[agents[row]] = row  # each agent's last answer of the step
    out = []
    for key in sorted(groups):
        rows = sorted(groups[key].values())  # in the order of those last answers
        if len(rows) < 2:
            continue
        v = vectors[rows]
        sims = [float(v[i] @ v[j]) for i, j in combinations(range(len(v)), 2)]
        out.append(
            {
                **dict(zip(columns, key)),
                "progress": progress[rows[0]],
                "pairs": len(sims),
                "similarity": float(np.mean(sims)),
            }
        )
    return pd.DataFrame(out, columns=[*columns, "progress", "pairs", "similarity"])


def run_summaries(probes: pd.DataFrame, convergence: pd.DataFrame) -> pd.DataFrame:
    """Per run: counts, confidence overall and by thirds, calibration, convergence and its trend."""
    rows = []
    for keys, part in probes.groupby(list(KEY_FIELDS), sort=True):
        ok = part[part["valid"]]
        row = dict(zip(KEY_FIELDS, keys))
        row.update(
            probe_answers=float(len(ok)), probe_errors=float((~part["valid"]).sum()), confidence=_mean(ok["confidence"])
        )
        for name in THIRDS:
            row[f"confidence_{name}"] = _mean(ok.loc[ok["third"] == name, "confidence"])
        checked = ok.dropna(subset=["correct"])
        row["calibration_brier"] = _mean((checked["confidence"] - checked["correct"]) ** 2)
        row["calibration_gap"] = _mean(checked["confidence"]) - _mean(checked["correct"])
        conv = convergence
        for k, v in zip(KEY_FIELDS, keys):
            conv = conv[conv[k] == v]
        row["convergence"] = _mean(conv["similarity"])
        row["convergence_early"] = _mean(conv.loc[conv["progress"] < 1 / 3, "similarity"])
        row["convergence_late"] = _mean(conv.loc[conv["progress"] >= 2 / 3, "similarity"])
        row["convergence_trend"] = _slope(conv["progress"], conv["similarity"])
        rows.append(row)
    return pd.DataFrame(rows, columns=[*KEY_FIELDS, *PROBE_MEASURES])


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values.dropna()) else float("nan")


def _slope(x: pd.Series, y: pd.Series) -> float:
    """Least-squares change in similarity per whole run (progress 0 -> 1)."""
    if len(x) < 2 or float(np.ptp(x.to_numpy(dtype=float))) == 0:
        return float("nan")
    return float(np.polyfit(x.to_numpy(dtype=float), y.to_numpy(dtype=float), 1)[0])
