"""Helpers for tests/test_slurm.py: the one-node SLURM cluster that bin/slurm-local starts,
what it remembers about the jobs a Snakemake run submitted, and a comparison of the files two
runs wrote."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from workflow_helpers import ROOT, stable_episode, stable_native

SCRIPT = ROOT / "bin" / "slurm-local"
UNAVAILABLE = 3  # bin/slurm-local's exit code for "this machine cannot run the cluster"
# The workflow profile under test, plus the settings that belong to this particular cluster
# (status command, polling interval); docs/scale-out.md explains the split.
SLURM_PROFILE_ARGS = ("--workflow-profile", "profiles/slurm", "--profile", "profiles/slurm/local-cluster")


def slurm_env(env: dict | None = None) -> dict:
    """The environment for SLURM's commands: without SLURM_CONF, so that they (and the jobs'
    inner srun, which never sees it) all read the cluster's /etc/slurm/slurm.conf."""
    env = dict(os.environ if env is None else env)
    env.pop("SLURM_CONF", None)
    return env


class ClusterUnavailable(Exception):
    """The machine cannot run the cluster (no root, no apt-get, packages, ports): skip."""


def cluster_running() -> bool:
    proc = subprocess.run([str(SCRIPT), "status"], check=False, capture_output=True, text=True, env=slurm_env())
    return proc.returncode == 0


def start_cluster(timeout: float = 900) -> None:
    """Start the cluster, installing its packages on first use. Raises ClusterUnavailable with
    the script's one-line reason when this machine cannot run it, AssertionError when it
    should have come up and did not."""
    proc = subprocess.run(
        [str(SCRIPT), "start"], check=False, capture_output=True, text=True, timeout=timeout, env=slurm_env()
    )
    reason = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
    if proc.returncode == UNAVAILABLE:
        raise ClusterUnavailable(reason)
    if proc.returncode != 0:
        raise AssertionError(f"bin/slurm-local start failed ({proc.returncode}): {proc.stderr}")


def stop_cluster() -> None:
    subprocess.run([str(SCRIPT), "stop"], check=False, capture_output=True, text=True, timeout=120, env=slurm_env())


def snakemake_slurm(
    workdir: Path, *args: str, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Snakemake with the SLURM executor (no --cores: the profile's `jobs` bounds submissions)."""
    cmd = [sys.executable, "-m", "snakemake", *args, *SLURM_PROFILE_ARGS]
    proc = subprocess.run(
        cmd, check=False, cwd=workdir, capture_output=True, text=True, env=slurm_env(env), timeout=timeout
    )
    if proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} (SLURM) failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def run_id(proc: subprocess.CompletedProcess) -> str:
    """The plugin names every job of a run after the run's id ('SLURM run ID: ...')."""
    match = re.search(r"SLURM run ID: (\S+)", proc.stdout + proc.stderr)
    assert match, "no SLURM run ID in the Snakemake output"
    return match.group(1)


def slurm_jobs(name: str | None = None) -> list[dict]:
    """Every job slurmctld remembers (MinJobAge keeps finished ones for a day), optionally only
    those of one run: id, state, memory and time limit as SLURM granted them, and the plugin's
    comment ('rule_<rule>[_wildcards_<values>]')."""
    cmd = ["squeue", "--states=all", "--noheader", "--format=%i|%T|%m|%l|%k"] + (["--name", name] if name else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=slurm_env()).stdout
    jobs = []
    for line in out.splitlines():
        job_id, state, memory, limit, comment = line.split("|", 4)
        jobs.append({"id": job_id.strip(), "state": state, "memory": memory, "limit": limit, "comment": comment})
    return jobs


def rule_of(comment: str) -> str:
    return comment.removeprefix("rule_").split("_wildcards_", 1)[0]


def rules_in_log(text: str) -> set[str]:
    """The rules whose jobs a SLURM job ran, from its log: Snakemake inside the job prints
    `rule <name>:` (or `localrule <name>:`) before each job it runs."""
    return set(re.findall(r"^(?:local)?rule (\w+):$", text, re.MULTILINE))


def all_steps_done(text: str, steps: int) -> bool:
    """Snakemake inside the job finished all its steps ('N of N steps (100%) done')."""
    return f"{steps} of {steps} steps (100%) done" in text


def submitted_job_ids(proc: subprocess.CompletedProcess) -> dict[str, Path]:
    """SLURM job id -> its log file, from the plugin's 'submitted with SLURM jobid' lines."""
    found = re.findall(r"submitted with SLURM jobid (\d+) \(log: (.+?)\)\.", proc.stdout + proc.stderr)
    return {job_id: Path(log) for job_id, log in found}


# --- comparing two runs --------------------------------------------------------------------


def snapshot(workdir: Path, dirs=("results", "data")) -> dict[str, int]:
    """Relative path -> mtime (ns) of every file under `dirs`."""
    return {
        str(p.relative_to(workdir)): p.stat().st_mtime_ns for d in dirs for p in (workdir / d).rglob("*") if p.is_file()
    }


def written_since(workdir: Path, before: dict[str, int]) -> set[str]:
    return {path for path, mtime in snapshot(workdir).items() if before.get(path) != mtime}


# Keys whose values are clocks, not results: the viewer shows them as the records hold them.
VOLATILE_KEYS = {"wall_time_s", "duration", "timestamp", "start_time", "end_time", "cache_hits", "cache_misses"}


def _without_volatile(value):
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


def _viewer_page(data: bytes):
    """A viewer data file is one call, viewerData(<key>,<payload>);, around JSON."""
    text = data.decode()
    head, sep, rest = text.partition(",")
    if not (head.startswith("viewerData(") and sep and rest.endswith(");\n")):
        return data
    payload = json.loads(rest[:-3])
    if isinstance(payload, dict) and set(payload) == {"gzip_json"}:  # a compressed page (viewer/site.py)
        payload = json.loads(gzip.decompress(base64.b64decode(payload["gzip_json"])))
    return json.loads(head.removeprefix("viewerData(")), _without_volatile(payload)


def _without_column(text: str, column: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    drop = rows[0].index(column) if rows and column in rows[0] else None
    return [[v for i, v in enumerate(r) if i != drop] for r in rows]


def comparable(path: str, data: bytes):
    """A file's content without what legitimately differs between two runs of the same job
    (wall times, run ids, cache counters); byte-exact for everything else."""
    # <arm>/<model>/<domain>/<id>/r<rep>.json and <model>/<domain>/<id>/r<rep>.json (incognita.access.paths)
    if re.fullmatch(r"results/episodes/[^/]+/[^/]+/[^/]+/[^/]+/r\d+\.json", path):
        return stable_episode(json.loads(data))
    if re.fullmatch(r"results/native/(archive/unrepaired/)?[^/]+/[^/]+/[^/]+/r\d+\.json", path):
        return stable_native(json.loads(data))
    if path == "results/episodes/manifest.tsv":
        return _without_column(data.decode(), "wall_time_s")
    if path.startswith("results/viewer/data/") and path.endswith(".js"):
        return _viewer_page(data)
    return data


def differing(first: Path, second: Path, paths: set[str]) -> list[str]:
    return sorted(
        p for p in paths if comparable(p, (first / p).read_bytes()) != comparable(p, (second / p).read_bytes())
    )
