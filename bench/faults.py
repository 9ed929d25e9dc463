"""The fault table of issue #17 (items 4-12): for each fault, how often it was injected, how many
finished results it lost, how many model calls it made us pay twice, and whether one command
recovered from it.

Runs tests/test_faults.py (every fault against a copy of the workflow, a stub model endpoint
in its own process and a fake key; see that file) --runs times, collects the outcome each test
reports, and prints one table summed over the runs. A run that fails is reported with its
pytest summary and counted: its faults then show fewer runs tried.

Usage: python bench/faults.py [--runs 3] [--quick]
Linux, as root for the disk-full fault (a size-limited tmpfs); about 3 minutes a run on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fault_helpers import format_table  # noqa: E402  (after the path is set)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1, help="how many times to run the fault tests")
    ap.add_argument("--quick", action="store_true", help="only the cache-damage fault, once: seconds (what CI runs)")
    args = ap.parse_args()
    selection = ["-k", "damaged_cache_entry"] if args.quick else []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "faults.jsonl"
        failed, times = 0, []
        for i in range(args.runs):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_faults.py", *selection],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env={**os.environ, "INCOGNITA_FAULTS_JSON": str(out)},
            )
            times.append(time.perf_counter() - start)
            status = "passed" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
            print(f"run {i + 1}/{args.runs}: {status} in {times[-1]:.0f} s", flush=True)
            if proc.returncode != 0:
                failed += 1
                print("\n".join(line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))))
        rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    print(f"\n{args.runs} run(s) of tests/test_faults.py, {failed} failed, {sum(times) / len(times):.0f} s each\n")
    print(format_table(rows))


if __name__ == "__main__":
    main()
