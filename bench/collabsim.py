"""Wall time the default CollabSim design adds to `bin/run`, against the 2-minute budget.

Builds `results/collabsim/figures` (every task x condition x design x seed of the default
config, then the tables with SBERT encoding into an empty embedding cache, statistics and
figures) with Snakemake on 2 cores in a fresh copy of the workflow, so nothing is cached. CollabSim's targets depend on no Incognita stage, so this is the time the
family adds to the default build. Side by side it times the same runs in one Python process
(`simulate` only), which shows how much of the Snakemake wall time is process start-up and
scheduling rather than simulation.

Usage: python bench/collabsim.py [--cores 2]
Target: under 120 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
BUDGET_S = 120.0


def in_process_seconds() -> tuple[float, int]:
    from incognita.collabsim.design import design_from_config
    from incognita.collabsim.run import simulate
    from incognita.common.io import read_yaml

    design = design_from_config(read_yaml(ROOT / "config/config.yaml"))
    t, n = time.perf_counter(), 0
    for cell in design.cells():
        exp = design.load(cell)
        for seed in design.seeds:
            simulate(exp, seed, model_label=cell.model)
            n += 1
    return time.perf_counter() - t, n


def snakemake_seconds(cores: int) -> float:
    from workflow_helpers import copy_workflow

    with tempfile.TemporaryDirectory() as tmp:
        wf = copy_workflow(Path(tmp) / "wf")
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "snakemake", "--cores", str(cores), "results/collabsim/figures", "--quiet", "all"],
            cwd=wf,
            env=env,
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    inproc, runs = in_process_seconds()
    wall = snakemake_seconds(args.cores)
    print(f"default CollabSim design: {runs} runs")
    print(f"  simulate() in one process: {inproc:7.2f} s ({inproc / runs * 1000:.0f} ms per run)")
    print(f"  snakemake --cores {args.cores} results/collabsim/figures, nothing cached: {wall:7.2f} s")
    print(f"  ratio snakemake / in-process: {wall / inproc:6.2f}")
    print(f"  ratio snakemake / budget ({BUDGET_S:.0f} s): {wall / BUDGET_S:6.2f}")


if __name__ == "__main__":
    main()
