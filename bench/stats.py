"""Wall time of the statistics stage on the full design, and exact enumeration vs a Python loop.

Times `run_stats` (every table, 4000 split-half splits, seven exact sign-flip tests over 2^18
patterns, CSV + Markdown written) on a synthetic 864-trial table (18 tasks x 4 arms x 4
models x 3 repetitions), with the interpretation table lock-checked as in the pipeline. Then
times the exact sign-flip p-value two ways on the same differences, side by side: the
vectorised enumeration used by the stage and a plain Python loop over every sign pattern.

Usage: python bench/stats.py [--runs 3] [--loop-tasks 14 16] [--seed 0] [--quick]
Target: the stage well under 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def import_seconds() -> float:
    """Start-up of a fresh interpreter that imports the stage (what a Snakemake job pays once)."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import incognita.access.stats.stats_stage"], cwd=ROOT, check=True)
    return time.perf_counter() - t


def time_run_stats(runs: int, seed: int) -> tuple[list[float], int, int]:
    from incognita.access.freeze import freeze
    from incognita.access.stats.stats_stage import run_stats
    from incognita.access.stats.synthetic import synthetic_trials

    trials = synthetic_trials(seed=seed, usd_per_1k_tokens=0.01)
    times, files = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        table, locks = Path(tmp) / "interpretation.yaml", Path(tmp) / "locks.yaml"
        shutil.copy(ROOT / "config" / "domains" / "retail" / "interpretation.yaml", table)
        freeze(locks, names=["interpretation"], extra={"interpretation": str(table)})
        for i in range(runs):
            t = time.perf_counter()
            files = len(run_stats(trials, [(table, locks)], Path(tmp) / f"out{i}"))
            times.append(time.perf_counter() - t)
    return times, len(trials), files


def naive_signflip_p(d: list[float]) -> float:
    """The definition as a Python loop over every sign pattern."""
    observed = abs(sum(d))
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        if abs(sum(s * x for s, x in zip(signs, d))) >= observed - 1e-9:
            hits += 1
    return hits / 2 ** len(d)


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--loop-tasks", type=int, nargs="+", default=[14, 16])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="one run, a 10-task loop: seconds (what CI runs)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.loop_tasks = 1, [10]

    import numpy as np

    from incognita.access.stats.signflip import signflip_p

    start = import_seconds()
    times, n_trials, n_files = time_run_stats(args.runs, args.seed)
    print(f"fresh interpreter importing the stage: {start:.2f} s")
    print(
        f"run_stats on {n_trials} trials -> {n_files} files: median {statistics.median(times):.2f} s "
        f"(runs: {', '.join(f'{t:.2f}' for t in times)}; target well under 30 s)"
    )

    rng = np.random.default_rng(args.seed)
    print("exact sign-flip p, same differences: vectorised enumeration vs Python loop")
    for n in [*args.loop_tasks, 18]:
        d = (rng.integers(-3, 4, n) / 3.0).tolist()
        fast = best_of(lambda d=d: signflip_p(d))
        line = f"  n={n:2d} ({2**n:>7d} patterns): vectorised {1000 * fast:8.2f} ms"
        if n in args.loop_tasks:
            slow = best_of(lambda d=d: naive_signflip_p(d), repeat=1)
            assert abs(naive_signflip_p(d) - signflip_p(d)) < 1e-12
            line += f"   loop {1000 * slow:9.1f} ms   loop/vectorised {slow / fast:8.0f}x"
        print(line)


if __name__ == "__main__":
    main()
