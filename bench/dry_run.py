"""`snakemake -n` on a built tree against Snakemake's own floor for a DAG of the same size.

The floor is a trivial workflow (no config, no imports, one `touch` rule per output) with as
many jobs and output files as the real workflow plans when nothing is built, built once so
that its dry run, like the real one, checks every file and finds nothing to do. The two dry
runs take turns, --repeats pairs (a shared machine's speed drifts by a fifth within minutes,
and a pair run back to back sees the same machine); the table gives the median time of each
and the median, lowest and highest ratio of a pair (issue #25's target: at most 1.5x).

A second floor gives each job what every rule here has: a parameter, a log and a benchmark
file. Snakemake compares a job's parameters with its metadata on every dry run, and the first
comparison imports pandas when pandas is installed (`persistence._serialize_param`, about a
quarter of a second here); the ratio against this floor is the part of the dry run that is the
workflow's own code and checks.

Usage: python bench/dry_run.py [WORKDIR] [--repeats 3] [--quick]
  WORKDIR  a built checkout (default: this one; build it first with bin/run)
  --quick  time the floor workflow alone at a small size, once (seconds; what CI runs)
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--cores", "2"]


def timed_dry_run(workdir: Path) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run([*SNAKEMAKE, "-n"], cwd=workdir, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"error: snakemake -n failed in {workdir}:\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc.stdout + proc.stderr


def dag_size(workdir: Path) -> tuple[int, int]:
    """(jobs, output files) the workflow plans from nothing, read from a dry run that ignores
    what is built (--forceall)."""
    proc = subprocess.run(
        [*SNAKEMAKE, "-n", "--forceall", "--quiet", "rules"], cwd=workdir, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"error: snakemake -n --forceall failed in {workdir}:\n{proc.stderr}")
    total = re.search(r"^total\s+(\d+)$", proc.stdout, re.MULTILINE)
    if not total:
        raise SystemExit(f"error: no job count in the dry run of {workdir}")
    summary = subprocess.run([*SNAKEMAKE, "--summary"], cwd=workdir, capture_output=True, text=True).stdout.splitlines()
    return int(total.group(1)), max(len(summary) - 1, 1)


def floor_workflow(dest: Path, jobs: int, outputs: int, features: bool = False) -> Path:
    """`jobs` rules-worth of jobs writing `outputs` files in all, feeding one target; with
    `features`, each job also has a parameter, a log and a benchmark file."""
    per_job = max(outputs // max(jobs - 1, 1), 1)
    dest.mkdir(parents=True, exist_ok=True)
    extra = (
        "    params: version='1'\n    log: 'logs/{i}.log'\n    benchmark: 'benchmarks/{i}.tsv'\n" if features else ""
    )
    (dest / "Snakefile").write_text(
        f"N = {jobs - 1}\nK = {per_job}\n"
        "rule all:\n    input: expand('out/{i}_{k}.txt', i=range(N), k=range(K))\n"
        "rule one:\n    output: [f'out/{{i}}_{k}.txt' for k in range(K)]\n"
        f"{extra}    shell: 'touch {{output}}'\n"
    )
    proc = subprocess.run([*SNAKEMAKE, "--quiet", "all"], cwd=dest, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: building the floor workflow failed:\n{proc.stderr}")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir", nargs="?", type=Path, default=ROOT)
    ap.add_argument("--repeats", type=int, default=5, help="pairs of dry runs (default 5)")
    ap.add_argument("--quick", action="store_true", help="the floor workflow alone, 20 jobs, once")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dry-run-floor-") as tmp:
        if args.quick:
            floor = floor_workflow(Path(tmp) / "plain", 20, 40)
            print(f"{'workflow':<12}{'jobs':>7}{'outputs':>9}{'dry run s':>11}")
            print(f"{'floor':<12}{20:>7}{40:>9}{timed_dry_run(floor)[0]:>11.2f}")
            return
        jobs, outputs = dag_size(args.workdir)
        floor = floor_workflow(Path(tmp) / "plain", jobs, outputs)
        featured = floor_workflow(Path(tmp) / "featured", jobs, outputs, features=True)
        real_times, floor_times, featured_times = [], [], []
        for _ in range(args.repeats):
            real, out = timed_dry_run(args.workdir)
            if "Nothing to be done" not in out:
                raise SystemExit(
                    f"error: {args.workdir} is not fully built (its dry run plans jobs): run bin/run first"
                )
            real_times.append(real)
            floor_times.append(timed_dry_run(floor)[0])
            featured_times.append(timed_dry_run(featured)[0])
    print(f"{'workflow':<32}{'jobs':>7}{'outputs':>9}{'dry run s':>11}")
    for name, times in (
        ("floor", floor_times),
        ("floor, params + log + benchmark", featured_times),
        ("incognita", real_times),
    ):
        print(f"{name:<32}{jobs:>7}{outputs:>9}{statistics.median(times):>11.2f}")
    for name, times, target in (
        ("floor", floor_times, " (target at most 1.5x)"),
        ("featured floor", featured_times, ""),
    ):
        ratios = sorted(r / f for r, f in zip(real_times, times))
        print(
            f"ratio incognita / {name}: {statistics.median(ratios):.2f}x, pairs {ratios[0]:.2f}x to "
            f"{ratios[-1]:.2f}x over {len(ratios)}{target}"
        )


if __name__ == "__main__":
    main()
