"""Finished runs -> one tidy table, one row per run (`results/collabsim/runs.parquet`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from incognita.collabsim.run import MANIFEST, METRICS
from incognita.common.io import InputError

ID_COLUMNS = ("task", "condition", "variable", "seed")
USAGE = ("calls", "prompt_tokens", "completion_tokens", "cost_usd", "cache_hits", "cache_misses")


def _read(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: missing (rebuild this run)") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: damaged ({exc}); delete the run directory and rebuild it") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: damaged (not a JSON object)")
    return doc


def run_row(run: Path) -> dict:
    manifest, metrics = _read(run / MANIFEST), _read(run / METRICS)
    try:
        row = {k: manifest[k] for k in ID_COLUMNS}
        models = manifest["models"]
        row.update(
            n_agents=len(models), models=",".join(sorted(set(models.values()))),
            scripted=all(m.startswith("scripted:") for m in models.values()),
            config_hash=manifest["config_hash"], generator_version=manifest["generator_version"],
            steps=manifest["steps"], events=manifest["events"], state_hash=manifest["state_hash"])
        for key in USAGE:
            row[key] = sum(u.get(key, 0) for u in manifest["usage"].values())
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{run / MANIFEST}: damaged (field {exc})") from None
    row.update({k: (float("nan") if v is None else float(v)) for k, v in metrics.items()})
    return row


def build_table(runs: list[Path]) -> pd.DataFrame:
    if not runs:
        raise InputError("no CollabSim runs given")
    df = pd.DataFrame([run_row(Path(r)) for r in runs])
    return df.sort_values(list(ID_COLUMNS), kind="stable").reset_index(drop=True)
