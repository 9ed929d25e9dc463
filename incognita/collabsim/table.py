"""Finished runs -> tidy tables: `runs.parquet` (one row per run, probe summaries joined),
`probes.parquet` (one row per probe answer or probe error) and `convergence.parquet` (one row per
run, question and probe point: the teammates' mean pairwise answer similarity)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from incognita.collabsim.paths import EVENTS, ID_COLUMNS, KEY_FIELDS, MANIFEST, METRICS, RunKey
from incognita.collabsim.probe_analysis import (
    PROBE_MEASURES,
    convergence_rows,
    probe_rows,
    run_summaries,
)
from incognita.collabsim.world.events import read_events
from incognita.common.io import InputError

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
        ids = RunKey.from_dict(manifest).as_dict() | {"variable": manifest["variable"]}
        row = {k: ids[k] for k in ID_COLUMNS}
        row["personas"] = ",".join(f"{a}:{p}" for a, p in sorted(manifest["personas"].items()))
        models = manifest["models"]
        row.update(
            n_agents=len(models),
            models=",".join(sorted(set(models.values()))),
            scripted=all(m.startswith("scripted:") for m in models.values()),
            config_hash=manifest["config_hash"],
            generator_version=manifest["generator_version"],
            steps=manifest["steps"],
            events=manifest["events"],
            state_hash=manifest["state_hash"],
        )
        for key in USAGE:
            row[key] = sum(u.get(key, 0) for u in manifest["usage"].values())
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{run / MANIFEST}: damaged (field {exc})") from None
    except InputError as exc:
        raise InputError(f"{run / MANIFEST}: damaged ({exc})") from None
    row.update({k: (float("nan") if v is None else float(v)) for k, v in metrics.items()})
    return row


def build_tables(runs: list[Path], embeddings=None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, probes, convergence). `embeddings` is an EmbeddingCache (default: the shared one)."""
    if not runs:
        raise InputError("no CollabSim runs given")
    rows, answers = [], []
    for run in map(Path, runs):
        rows.append(run_row(run))
        answers += probe_rows(read_events(run / EVENTS), _read(run / MANIFEST))
    table = pd.DataFrame(rows).sort_values(list(ID_COLUMNS), kind="stable").reset_index(drop=True)
    probes = pd.DataFrame(
        answers,
        columns=[
            *KEY_FIELDS,
            "agent",
            "role",
            "step",
            "t",
            "progress",
            "third",
            "probe",
            "trigger",
            "question",
            "valid",
            "error",
            "answer",
            "confidence",
            "fields",
            "correct",
        ],
    )
    if embeddings is None:
        from incognita.collabsim.sbert import EmbeddingCache

        embeddings = EmbeddingCache()
    texts = probes["answer"].where(probes["valid"], "").astype(str).tolist()
    vectors = embeddings.embed(texts) if len(probes) else None
    convergence = convergence_rows(probes, vectors) if len(probes) else convergence_rows(probes, None)
    summaries = run_summaries(probes, convergence)
    table = table.merge(summaries, on=list(KEY_FIELDS), how="left")
    for col in PROBE_MEASURES:
        if col not in table:
            table[col] = float("nan")
    return table, probes, convergence
