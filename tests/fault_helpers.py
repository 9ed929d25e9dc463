"""Helpers for the fault tests (tests/test_faults.py): a workflow copy with `bin/run`, the
stages before the episodes built once, the stub model endpoint (tests/stub_openai.py) in its
own process, and the table of outcomes that bench/faults.py prints."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from workflow_helpers import ROOT, add_task_stages, copy_workflow, guarded_env

# Distinctive, so that a grep for it finds nothing but a leak; shaped like a real key so the
# scrubber would have to catch it on its own merits.
FAKE_KEY = "sk-incognita-FAULTTEST-9c4e1b7a2f5d8063-never-written"
KEY_NEEDLE = b"FAULTTEST-9c4e1b7a2f5d8063"
CALLS_PER_CELL = 5  # tests/stub_openai.py: two questions, two customer answers, FINAL
ARMS = ("direct", "indirect", "social")
TARGETS = ("results/episodes/manifest.tsv", "results/trials.parquet")


# --------------------------------------------------------------------------- workflow copies


def build_base(dest: Path, stages: Path) -> Path:
    """A workflow copy with `bin/run` and every stage before the episodes built (source, cards,
    golden trajectories, the coordination reference and its lock check), copied from the test
    session's build of them (`task_stages`); a test's run plans only the episodes and what
    follows them."""
    copy_workflow(dest)
    for name in ("bin", "requirements"):
        shutil.copytree(ROOT / name, dest / name)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")
    (dest / ".venv").symlink_to(ROOT / ".venv")  # bin/run's setup finds it installed and up to date
    add_task_stages(dest, stages)
    return dest


def clone(base: Path, dest: Path) -> Path:
    """A copy of the base with its modification times (Snakemake's view of what is up to date)."""
    shutil.copytree(base, dest, symlinks=True)
    return dest


def write_design(wf: Path, base_url: str, tasks: tuple[str, ...] = ("retail/11", "retail/46")) -> Path:
    """The fault design: one paying model on the stub endpoint, the given tasks, the three arms
    of our harness, one repetition; the customer pays too, the desks are scripted (never asked)."""
    # Sampling (temperature 1) with the seed sent: every cell's requests are its own, so two
    # answers to one request body at the stub are one call paid twice, never a legitimate repeat.
    paying = {
        "base_url": base_url,
        "temperature": 1,
        "send_seed": True,
        "max_retries": 2,
        "backoff_base": 0.05,
        "backoff_max": 0.2,
        "timeout": 20,
    }
    doc = {
        "domains": list(dict.fromkeys(t.split("/")[0] for t in tasks)),  # the tasks' own: each needs trials
        "design": {"arms": list(ARMS), "repetitions": 1, "tasks": list(tasks), "models": ["stub"]},
        "models": {"stub": {"spec": "openai:stub-agent", **paying}},
        "participants": {
            "customer": {"spec": "openai:stub-customer", **paying},
            "service": "scripted:desk",
            "judge": None,
        },
    }
    path = wf / "config" / "faults.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def check_install_stamp(wf: Path) -> None:
    """bin/run re-installs the project when pyproject.toml or requirements/model-files.txt differ
    from what .venv was installed from. The copy shares the checkout's .venv, and an install from
    the copy would point the shared environment at a temporary directory: so the copy takes the
    checkout's current files, and the test stops if the environment is not up to date with them."""
    names = ("pyproject.toml", "requirements/model-files.txt", "requirements/lock.txt")  # as bin/_venv.sh hashes them
    for name in names:
        shutil.copy2(ROOT / name, wf / name)
    want = hashlib.sha256(b"".join((wf / name).read_bytes() for name in names)).hexdigest()
    stamp = (ROOT / ".venv" / ".incognita-installed").read_text().split()
    if not stamp or stamp[0] != want:
        pytest.fail(
            ".venv is not installed from the current pyproject.toml; run bin/test (or bin/run) once "
            "in the checkout first, so that bin/run in a workflow copy does not re-install it"
        )


def run_env(wf: Path) -> dict:
    """bin/run's environment: the fake key, and the network guard (loopback only)."""
    check_install_stamp(wf)
    env = guarded_env(wf.parent / f"{wf.name}.net.log")
    env["OPENAI_API_KEY"] = FAKE_KEY
    # These tests stop a job at a known point between two cells: its cells run one after another.
    env["INCOGNITA_WORKERS"] = "1"
    for name in ("OPENAI_BASE_URL", "INCOGNITA_EXTRAS"):
        env.pop(name, None)
    return env


def bin_run(
    wf: Path, *args: str, cores: int | None = None, check: bool = True, timeout: float = 300
) -> subprocess.CompletedProcess:
    env = run_env(wf)
    if cores:
        env["CORES"] = str(cores)
        args = (*args, "--resources", f"api_calls={cores}")  # API jobs claim no core: bound them too
    proc = subprocess.run(
        [str(wf / "bin" / "run"), *TARGETS, "--configfile", "config/faults.yaml", *args],
        cwd=wf,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"bin/run failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return proc


def start_bin_run(wf: Path, log: Path, cores: int = 1) -> subprocess.Popen:
    """bin/run in a session of its own, so that the test can kill the whole workflow at once.
    `cores` jobs at a time: API jobs claim no core, so their `api_calls` is set to it as well."""
    env = {**run_env(wf), "CORES": str(cores)}
    with log.open("w") as out:
        return subprocess.Popen(
            [
                str(wf / "bin" / "run"),
                *TARGETS,
                "--configfile",
                "config/faults.yaml",
                "--resources",
                f"api_calls={cores}",
            ],
            cwd=wf,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def records(wf: Path) -> dict[str, Path]:
    from incognita.access.paths import episode_records

    return {str(p.relative_to(wf)): p for p in episode_records(wf / "results/episodes")}


def snapshot(paths: dict[str, Path]) -> dict[str, tuple[bytes, int]]:
    return {k: (p.read_bytes(), p.stat().st_mtime_ns) for k, p in paths.items()}


def temp_files(*roots: Path) -> list[Path]:
    """Temp files of atomic writes (incognita.common.io) left behind."""
    return [p for root in roots if root.exists() for p in root.rglob(".*.tmp")]


def incognita(wf: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "incognita", *args],
        cwd=wf,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(wf)},
    )


def processes(wf: Path, *words: str) -> list[int]:
    """Processes working in `wf` whose command line holds every word."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if os.readlink(proc / "cwd") != str(wf.resolve()):
                continue
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if all(w in argv for w in words):
            found.append(int(proc.name))
    return found


def wait_for(predicate, timeout: float, what: str, poll: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def key_leaks(*roots: Path) -> tuple[int, list[str]]:
    """(files scanned, files holding the fake key): every byte of every file, binaries included."""
    scanned, hits = 0, []
    for root in roots:
        if root.is_file():
            files = [root]
        elif root.is_dir():
            files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
        else:
            continue
        for p in files:
            scanned += 1
            if KEY_NEEDLE in p.read_bytes():
                hits.append(str(p))
    return scanned, hits


def written_by_workflow(wf: Path) -> list[Path]:
    """What a run writes (not the copied inputs): results, logs, the cache, .snakemake,
    benchmarks, the report."""
    return [wf / d for d in ("results", "logs", "cache", ".snakemake", "benchmarks", "report.html")]


# --------------------------------------------------------------------------- the stub endpoint


class StubServer:
    """tests/stub_openai.py in a process of its own; its log says what it answered."""

    def __init__(self, workdir: Path, port: int = 0, **options):
        self.workdir = workdir
        self.log = workdir / "stub.log"
        self.release = workdir / "stub.release"
        self.port_file = workdir / f"stub.port.{time.monotonic_ns()}"
        cmd = [
            sys.executable,
            str(ROOT / "tests" / "stub_openai.py"),
            "--port",
            str(port),
            "--port-file",
            str(self.port_file),
            "--log",
            str(self.log),
            "--key",
            FAKE_KEY,
            "--release",
            str(self.release),
        ]
        for name, value in options.items():
            cmd += [f"--{name.replace('_', '-')}", str(value)]
        self.proc = subprocess.Popen(cmd)
        self.port = int(
            wait_for(lambda: self.port_file.exists() and self.port_file.read_text(), 20, "the stub server to listen")
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def events(self, kind: str | None = None) -> list[dict]:
        if not self.log.exists():
            return []
        lines = [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]
        return [e for e in lines if kind is None or e["event"] == kind]

    def answered(self) -> int:
        return len(self.events("answered"))

    def paid_twice(self) -> int:
        """Request bodies answered more than once, over every life of the server (one log)."""
        counts = Counter(e["sha256"] for e in self.events("answered"))
        return sum(n - 1 for n in counts.values())

    def release_held(self) -> None:
        self.release.touch()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --------------------------------------------------------------------------- the outcome table

TABLE_HEADER = ("fault", "runs tried", "results lost", "calls paid twice", "recovered with one command")


def record_outcome(
    rows: list, fault: str, runs: int, lost: int, paid_twice: int, recovered: str, refetched: int = 0
) -> None:
    """One line of the table (item 12 of issue #17). `refetched` counts calls paid again because
    the fault itself destroyed their stored answer (a damaged cache entry): the cost of that fault,
    reported apart from calls paid twice. bench/faults.py collects the rows through
    $INCOGNITA_FAULTS_JSON across repeated runs of the test file."""
    row = {
        "fault": fault,
        "runs": runs,
        "lost": lost,
        "paid_twice": paid_twice,
        "refetched": refetched,
        "recovered": recovered,
    }
    rows.append(row)
    out = os.environ.get("INCOGNITA_FAULTS_JSON")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


def merge_rows(rows: list[dict]) -> list[dict]:
    """Rows of repeated runs summed per fault, in first-seen order."""
    merged: dict[str, dict] = {}
    for r in rows:
        m = merged.setdefault(r["fault"], {**r, "runs": 0, "lost": 0, "paid_twice": 0, "refetched": 0, "recovered": []})
        for k in ("runs", "lost", "paid_twice", "refetched"):
            m[k] += r[k]
        if r["recovered"] not in m["recovered"]:
            m["recovered"].append(r["recovered"])
    return [{**m, "recovered": "; ".join(m["recovered"])} for m in merged.values()]


def format_table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    for r in merge_rows(rows):
        refetched = f" (+{r['refetched']} re-fetched: answers the fault destroyed or kept from the cache)"
        twice = str(r["paid_twice"]) + (refetched if r["refetched"] else "")
        lines.append(f"| {r['fault']} | {r['runs']} | {r['lost']} | {twice} | {r['recovered']} |")
    return "\n".join(lines)
