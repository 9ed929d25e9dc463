"""CollabSim runs in the viewer: the runs index and one page per run.

A run directory holds events.jsonl, observations.jsonl.gz, metrics.json and manifest.json
(incognita.collabsim.paths, docs/collabsim.md); its page is named by its key (`page_key`). The
index takes one row per run from runs.parquet when it exists (it carries the probe and
convergence summaries), else from each run's manifest and metrics. A run page carries the
events as written, each probe marked with the action it follows; what each agent was shown at
each turn goes to a data file of its own (`observations_page`), loaded only when a reader asks
for it and still gzip-compressed (the browser decompresses it), since uncompressed it
outweighs the events.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from incognita.collabsim.paths import EVENTS, ID_COLUMNS, MANIFEST, METRICS, OBSERVATIONS, RunKey, runs_table
from incognita.common.io import InputError, read_json
from incognita.viewer.trial_index import plain

# Columns every task has, after the ids; each task's own metrics follow (task_metrics).
COMMON = (
    "n_agents",
    "steps",
    "events",
    "messages",
    "rejected_messages",
    "invalid_actions",
    "probe_answers",
    "probe_errors",
    "confidence",
    "convergence",
    "calibration_brier",
    "cost_usd",
)
_ACTS = ("action", "message", "invalid_action", "message_rejected")
GZIP_MAGIC = b"\x1f\x8b"


def page_key(key: RunKey) -> str:
    """The run's name in the site: its hash route and its page's key."""
    return f"collabsim/{key.rel}"


def _key_of(run: Path) -> str:
    return page_key(RunKey.from_dir(run))


def _rows_from_files(runs: list[Path]) -> list[dict]:
    rows = []
    for run in runs:
        manifest, metrics = read_json(run / MANIFEST), read_json(run / METRICS)
        rows.append(
            {
                **RunKey.from_dict(manifest).as_dict(),
                "variable": manifest.get("variable"),
                "n_agents": len(manifest.get("roles") or {}),
                "steps": manifest.get("steps"),
                "events": manifest.get("events"),
                **metrics,
            }
        )
    return rows


def _rows(root: Path, runs: list[Path]) -> list[dict]:
    table = runs_table(root)
    if not table.is_file():
        return _rows_from_files(runs)
    import pandas as pd

    return [{k: plain(v) for k, v in rec.items()} for rec in pd.read_parquet(table).to_dict("records")]


def runs_index(root: str | Path, runs: list[Path]) -> dict:
    """The index's CollabSim section: columns, rows, and which metrics belong to which task."""
    root = Path(root)
    task_metrics: dict[str, list[str]] = {}
    for run in runs:
        names = read_json(run / METRICS).keys()
        task = RunKey.from_dir(run).cell.task
        task_metrics[task] = sorted(set(task_metrics.get(task, [])) | {n for n in names if n not in COMMON})
    metrics = sorted({m for names in task_metrics.values() for m in names})
    rows = _rows(root, runs)
    names = [*ID_COLUMNS, *COMMON, *metrics]
    columns = [
        {"name": n, "label": n.replace("_", " "), "kind": "text" if n in ID_COLUMNS[:5] else "num", "title": n}
        for n in names
    ]
    keys = {_key_of(r) for r in runs}
    out = []
    for row in rows:
        key = page_key(RunKey.from_dict(row))
        if key in keys:
            out.append([key, *(row.get(n) for n in names)])
    return {
        "columns": [{"name": "key", "label": "run", "kind": "text", "title": "run"}, *columns],
        "rows": out,
        "task_metrics": task_metrics,
    }


def _events(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except ValueError as exc:
        raise InputError(f"{path}: not line-delimited JSON ({exc})") from None


def mark_probes(events: list[dict]) -> list[dict]:
    """Give each probe the id of the action it follows: the prober's last action, message or
    refused output before it (probes run after the moments the cadence names)."""
    last: dict[str, int] = {}
    for e in events:
        if e.get("kind") in _ACTS:
            last[e.get("actor")] = e.get("id")
        elif e.get("kind") in ("probe", "probe_error"):
            e["follows"] = last.get(e.get("actor"))
    return events


def observations_key(run_key: str) -> str:
    return f"{run_key}/observations"


def observations_page(run: Path) -> dict:
    """The run's observations file as it is (base64 of its gzip bytes; each line {agent, step,
    before_event, shown}); the browser decompresses it."""
    path = run / OBSERVATIONS
    raw = path.read_bytes()
    if raw[:2] != GZIP_MAGIC:
        raise InputError(f"{path}: not a gzip file")
    return {
        "kind": "observations",
        "key": observations_key(_key_of(run)),
        "gzip_base64": base64.b64encode(raw).decode(),
    }


def run_page(run: Path) -> dict:
    """`observations` is the count the manifest gives for the run's observations file, None for a
    run written before they were logged (then the page offers none)."""
    manifest = read_json(run / MANIFEST)
    events = mark_probes(_events(run / EVENTS))
    agents = [a["id"] for e in events[:1] if e.get("kind") == "run_start" for a in e["payload"].get("agents", [])]
    agents = agents or sorted(manifest.get("roles") or {})
    return {
        "kind": "run",
        "key": _key_of(run),
        "manifest": {k: v for k, v in manifest.items() if k != "config"},
        "config": manifest.get("config"),
        "metrics": read_json(run / METRICS),
        "lanes": [*agents, "system"],
        "events": events,
        "observations": manifest.get("observations") if (run / OBSERVATIONS).exists() else None,
    }
