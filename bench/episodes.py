"""Harness cost per episode and per turn on the offline default, side by side with the
per-process start-up cost that a Snakemake job pays.

Runs every (arm, model, task) cell of the default design once, in one process, and times:
  - the harness itself per episode and per agent turn (loop, gate, gateway, scripted
    participants, evaluation, record serialisation);
  - the one-off start-up of a job (imports plus loading the retail database), measured in a
    fresh interpreter.
Prints the ratio of start-up to a block of episodes, which is what decides how many cells
one job should run.

Usage: python bench/episodes.py [--config config/config.yaml] [--reps 1]
Needs results/cards and results/golden (run `bin/run results/golden/replay.tsv` first).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def startup_seconds(runs: int = 3) -> float:
    code = (
        "from incognita.access.episodes.harness import Harness, HarnessSettings;"
        "import yaml;"
        "cfg=yaml.safe_load(open('config/config.yaml'));"
        "Harness(HarnessSettings.from_config(cfg), 'data/source/retail/db.json', 'config/partition.yaml')"
    )
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()

    import yaml

    from incognita.access.episodes.harness import Harness, HarnessSettings
    from incognita.access.selection.corpus import load_corpus
    from incognita.common.io import read_json

    cfg = yaml.safe_load((ROOT / args.config).read_text())
    design = HarnessSettings.from_config(cfg)
    harness = Harness(design, str(ROOT / "data/source/retail/db.json"), str(ROOT / "config/partition.yaml"))
    tasks = [str(t) for t in load_corpus(ROOT / "config/corpus.yaml", locks=ROOT / "config/locks.yaml")["tasks"]]
    inputs = {
        t: (read_json(ROOT / f"results/cards/{t}.json"), read_json(ROOT / f"results/golden/{t}.json")) for t in tasks
    }

    per_episode, turns = [], 0
    for rep in range(args.reps):
        for model in design.models:
            for task in tasks:
                card, golden = inputs[task]
                for arm in design.arms:
                    t = time.perf_counter()
                    record = harness.run_cell(arm, model, task, rep, card, "-", golden, "-")
                    json.dumps(record.to_dict())
                    per_episode.append(time.perf_counter() - t)
                    turns += record.turns
    n, total = len(per_episode), sum(per_episode)
    start = startup_seconds()
    block = total / n * len(design.arms) * design.repetitions
    print(f"episodes: {n}  agent turns: {turns}")
    print(f"harness per episode: {1000 * total / n:.1f} ms (median {1000 * statistics.median(per_episode):.1f} ms)")
    print(f"harness per agent turn: {1000 * total / turns:.2f} ms")
    print(f"job start-up (imports + database), fresh interpreter: {1000 * start:.0f} ms")
    print(
        f"one job = one (model, task): {len(design.arms)} arms x {design.repetitions} reps = "
        f"{1000 * block:.0f} ms of episodes; start-up / episodes = {start / block:.2f}"
    )
    print(f"if one job ran one cell instead: start-up / episode = {start / (total / n):.1f}")


if __name__ == "__main__":
    main()
