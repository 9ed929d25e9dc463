"""Helpers for tests that run the workflow: a copy of it in a temporary directory, Snakemake
as a subprocess, its dry-run job table, and the network guard (tests/netguard)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def copy_workflow(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "rules", "config", "incognita", "profiles", "envs", "report"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


NETGUARD = ROOT / "tests" / "netguard"


def guarded_env(log: Path) -> dict:
    """The environment with the network guard (tests/netguard/sitecustomize.py) in every Python
    process: outbound attempts are refused and written to `log`."""
    path = os.pathsep.join(p for p in (str(NETGUARD), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "INCOGNITA_NETGUARD_LOG": str(log)}


def snakemake(workdir: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*SNAKEMAKE, "--cores", "2", *args], cwd=workdir, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Parse the 'Job stats' table of a dry run into {rule: count}."""
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Job stats"))
    jobs = {}
    for line in lines[start + 3 :]:
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        jobs[parts[0]] = int(parts[1])
    return jobs


def stable_episode(doc: dict) -> dict:
    """An episode record without what differs between two runs of one cell: wall time and the
    usage counters that say whether a call came from the cache."""
    doc = json.loads(json.dumps(doc))
    doc.pop("wall_time_s", None)
    for usage in doc["usage"].values():
        usage.pop("cache_hits"), usage.pop("cache_misses")
    return doc


def stable_native(doc: dict) -> dict:
    """A native result without what differs between two runs of one cell: the harness's run
    id, times, durations, and the cache hit and miss counters."""
    doc = json.loads(json.dumps(doc))
    doc.pop("timestamp", None)
    sim = doc["simulations"][0]
    for key in ("id", "start_time", "end_time", "duration", "timestamp"):
        sim.pop(key, None)
    for m in sim["messages"]:
        m.pop("timestamp", None)
    for usage in sim["reward_info"]["info"]["incognita"].get("usage", {}).values():
        usage.pop("cache_hits"), usage.pop("cache_misses")
    return doc
