"""Wall time the default CollabSim design adds to `bin/run`, against the 2-minute budget.

Builds `results/collabsim/figures` (every task x condition x design x seed of the default
config, then the tables with SBERT encoding into an empty embedding cache, statistics and
figures) with Snakemake on 2 cores in a fresh copy of the workflow, so nothing is cached. CollabSim's targets depend on no Incognita stage, so this is the time the
family adds to the default build. Side by side it times the same runs in one Python process
(`simulate` only), which shows how much of the Snakemake wall time is process start-up and
scheduling rather than simulation.

Usage: python bench/collabsim.py [--cores 2] [--quick]
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

from incognita.collabsim.paths import FIGURES_DIR  # noqa: E402 -- after the checkout is on the path

BUDGET_S = 120.0


def merged(base: dict, overlay: dict) -> dict:
    """The config as Snakemake's --configfile makes it: the overlay's keys replace the base's,
    nested mappings key by key."""
    out = dict(base)
    for key, value in overlay.items():
        out[key] = merged(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return out


def in_process_seconds(config: str = "config/config.yaml") -> tuple[float, int]:
    from incognita.collabsim.design import design_from_config
    from incognita.collabsim.run import simulate
    from incognita.common.io import read_yaml

    cfg = read_yaml(ROOT / "config/config.yaml")
    if config != "config/config.yaml":
        cfg = merged(cfg, read_yaml(ROOT / config))
    design = design_from_config(cfg)
    t, n = time.perf_counter(), 0
    for cell in design.cells():
        exp = design.load(cell)
        for seed in design.seeds:
            simulate(exp, seed, model_label=cell.model)
            n += 1
    return time.perf_counter() - t, n


def snakemake_seconds(cores: int, config: str = "config/config.yaml") -> float:
    from workflow_helpers import copy_workflow

    with tempfile.TemporaryDirectory() as tmp:
        wf = copy_workflow(Path(tmp) / "wf")
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "snakemake", FIGURES_DIR, "--cores", str(cores)]
            + ["--quiet", "all", "--configfile", config],
            cwd=wf,
            env=env,
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="the smoke design's CollabSim part (8 runs): what CI runs")
    args = ap.parse_args()
    config = "config/smoke.yaml" if args.quick else "config/config.yaml"
    inproc, runs = in_process_seconds(config)
    wall = snakemake_seconds(args.cores, config)
    print(f"{'smoke' if args.quick else 'default'} CollabSim design: {runs} runs")
    print(f"  simulate() in one process: {inproc:7.2f} s ({inproc / runs * 1000:.0f} ms per run)")
    print(f"  snakemake --cores {args.cores} {FIGURES_DIR}, nothing cached: {wall:7.2f} s")
    print(f"  ratio snakemake / in-process: {wall / inproc:6.2f}")
    print(f"  ratio snakemake / budget ({BUDGET_S:.0f} s): {wall / BUDGET_S:6.2f}")


if __name__ == "__main__":
    main()
