"""`snakemake -n` on a built tree against Snakemake's own floor for a DAG of the same size.

The floor is a trivial workflow (no config, no imports, one `touch` rule per output) with as
many jobs and output files as the real workflow plans when nothing is built, built once so
that its dry run, like the real one, checks every file and finds nothing to do. Both dry runs
are timed --repeats times; the table gives the medians and the ratio (issue #25's target: at
most 1.5x).

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


def timed_dry_run(workdir: Path, repeats: int) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(repeats):
        t = time.perf_counter()
        proc = subprocess.run([*SNAKEMAKE, "-n"], cwd=workdir, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            raise SystemExit(f"error: snakemake -n failed in {workdir}:\n{proc.stdout}\n{proc.stderr}")
        out = proc.stdout + proc.stderr
    return statistics.median(times), out


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


def floor_workflow(dest: Path, jobs: int, outputs: int) -> Path:
    """`jobs` rules-worth of jobs writing `outputs` files in all, feeding one target."""
    per_job = max(outputs // max(jobs - 1, 1), 1)
    (dest / "Snakefile").write_text(
        f"N = {jobs - 1}\nK = {per_job}\n"
        "rule all:\n    input: expand('out/{i}_{k}.txt', i=range(N), k=range(K))\n"
        "rule one:\n    output: [f'out/{{i}}_{k}.txt' for k in range(K)]\n    shell: 'touch {output}'\n"
    )
    proc = subprocess.run([*SNAKEMAKE, "--quiet", "all"], cwd=dest, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: building the floor workflow failed:\n{proc.stderr}")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir", nargs="?", type=Path, default=ROOT)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the floor workflow alone, 20 jobs, once")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dry-run-floor-") as tmp:
        if args.quick:
            jobs, outputs, real = 20, 40, None
        else:
            jobs, outputs = dag_size(args.workdir)
            real, out = timed_dry_run(args.workdir, args.repeats)
            if "Nothing to be done" not in out:
                raise SystemExit(
                    f"error: {args.workdir} is not fully built (its dry run plans jobs): run bin/run first"
                )
        floor, _ = timed_dry_run(floor_workflow(Path(tmp), jobs, outputs), 1 if args.quick else args.repeats)
    print(f"{'workflow':<12}{'jobs':>7}{'outputs':>9}{'dry run s':>11}")
    print(f"{'floor':<12}{jobs:>7}{outputs:>9}{floor:>11.2f}")
    if real is not None:
        print(f"{'incognita':<12}{jobs:>7}{outputs:>9}{real:>11.2f}")
        print(f"ratio incognita / floor: {real / floor:.2f}x (target at most 1.5x)")


if __name__ == "__main__":
    main()
