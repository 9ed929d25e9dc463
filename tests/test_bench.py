"""Every benchmark script under bench/ runs in its quick mode and prints its table.

Nothing here checks a time: benchmarks measure, tests do not. The point is that a change
which breaks a benchmark fails CI instead of being found the next time someone measures.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from workflow_helpers import ROOT, add_task_stages, copy_workflow

# (script, arguments, a line its table must print)
QUICK = [
    ("stage_times.py", ["--quick"], "audit"),
    ("dry_run.py", ["--quick"], "floor"),
    ("stats.py", ["--quick"], "s"),
    ("model_overhead.py", ["--quick"], "raw"),
    ("collabsim.py", ["--quick"], "ratio snakemake / in-process"),
    ("faults.py", ["--quick"], "run 1/1: passed"),
]


# Scripts that read results/cards and results/golden: run from a copy of the checkout that holds
# them (the test session's build of the task stages).
ON_BUILT_CARDS = [
    ("native_vs_harness.py", ["--quick"], "ratio ours/upstream per message"),
    ("episodes.py", ["--quick"], "harness per episode"),
    ("unbundled_arms.py", ["--quick"], "| social+map |"),
    ("participant_audit.py", ["--quick"], "| misreported_value |"),
]


@pytest.fixture(scope="module")
def built_cards(tmp_path_factory, task_stages):
    wf = copy_workflow(tmp_path_factory.mktemp("bench") / "wf")
    shutil.copytree(ROOT / "bench", wf / "bench")
    add_task_stages(wf, task_stages)
    return wf


def test_every_bench_script_has_a_quick_case():
    scripts = {p.name for p in (ROOT / "bench").glob("*.py")} - {"compare_trees.py"}  # tested apart
    covered = {name for name, _, _ in QUICK} | {name for name, _, _ in ON_BUILT_CARDS} | {"throughput.py"}
    assert scripts <= covered, f"bench scripts without a quick run in tests/test_bench.py: {sorted(scripts - covered)}"


@pytest.mark.parametrize(("script", "args", "expected"), QUICK, ids=[q[0] for q in QUICK])
def test_quick_mode_runs_and_prints_its_table(script, args, expected):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"bench/{script} {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    assert expected in proc.stdout, proc.stdout


@pytest.mark.parametrize(("script", "args", "expected"), ON_BUILT_CARDS, ids=[q[0] for q in ON_BUILT_CARDS])
def test_quick_mode_on_built_cards_runs_and_prints_its_table(built_cards, script, args, expected):
    proc = subprocess.run(
        [sys.executable, str(built_cards / "bench" / script), *args],
        cwd=built_cards,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"bench/{script} {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    assert expected in proc.stdout, proc.stdout


def test_throughput_quick_mode_on_the_sessions_task_stages(task_stages, tmp_path):
    """Given built stages (--stages), the script copies them instead of building its own."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench/throughput.py"), "--quick", "--stages", str(task_stages)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"bench/throughput.py --quick failed:\n{proc.stdout}\n{proc.stderr}"
    assert "wall/ideal" in proc.stdout and "building the task stages" not in proc.stdout, proc.stdout
    missing = subprocess.run(
        [sys.executable, str(ROOT / "bench/throughput.py"), "--quick", "--stages", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert missing.returncode != 0 and f"--stages {tmp_path}: not built" in missing.stderr
