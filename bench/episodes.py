"""Harness cost per episode and per turn on the offline default, side by side with the
per-process start-up cost that a Snakemake job pays.

Runs every (harness arm, model, task) cell of the default design once, in one process, and times:
  - the harness itself per episode and per agent turn (loop, gate, gateway, scripted
    participants, evaluation, record serialisation);
  - the one-off start-up of a job (imports plus loading the retail database), measured in a
    fresh interpreter;
  - the ways to get an independent clean database (what an episode's first write costs):
    validating the parsed JSON (what World.fresh_db does), a pickle round-trip,
    `model_copy(deep=True)`, `copy.deepcopy` and `model_validate_json` of the file's bytes.
Prints the ratio of start-up to a block of episodes, which is what decides how many cells
one job should run. The native arm keeps its place in the rotation but runs in the upstream
harness (bench/native.py), so it is not timed here.

Usage: python bench/episodes.py [--config config/config.yaml] [--reps 1] [--results results] [--quick]
  --quick: one model, two tasks (six episodes), one start-up and two copies of each kind;
           a few seconds, for CI. It prints the same table.
Needs results/cards/retail and results/golden/retail (run `bin/run results/golden/retail/replay.tsv`
first); point --results at another built tree to use its cards and golden trajectories.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import pickle
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUICK_TASKS = 2  # tasks (the corpus's first) and models (the design's first) of --quick
QUICK_MODELS = 1


def startup_seconds(config: str, runs: int = 3) -> float:
    code = (
        "from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings;"
        "import yaml;"
        f"cfg=yaml.safe_load(open({config!r}));"
        "Harness(HarnessSettings.from_config(cfg), DomainInputs.of('retail'))"
    )
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def copy_costs(world, runs: int) -> list[tuple[str, float, bool]]:
    """(way, median seconds, exact) of each way to a fresh clean database; exact: the copy
    is a separate object with the clean database's hash."""
    clean = world.fresh_db()
    clean_hash = clean.get_hash()
    blob = pickle.dumps(clean, protocol=pickle.HIGHEST_PROTOCOL)
    raw_bytes = world.path.read_bytes()
    ways = {
        "validate parsed JSON (fresh_db)": world.fresh_db,
        "pickle round-trip": lambda: pickle.loads(blob),
        "model_copy(deep=True)": lambda: clean.model_copy(deep=True),
        "copy.deepcopy": lambda: copy.deepcopy(clean),
        "model_validate_json(file)": lambda: world._db_cls.model_validate_json(raw_bytes),
    }
    out = []
    for name, make in ways.items():
        times, db = [], None
        for _ in range(runs):
            db = None
            gc.collect()
            t = time.perf_counter()
            db = make()
            times.append(time.perf_counter() - t)
        out.append((name, statistics.median(times), db is not clean and db.get_hash() == clean_hash))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--results", default=str(ROOT / "results"), help="built tree with cards/ and golden/")
    ap.add_argument("--quick", action="store_true", help="a few cells, for CI (seconds)")
    args = ap.parse_args()

    import yaml

    from incognita.access.cells import load_corpus
    from incognita.access.domain import domain_files, qualify, split_task
    from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings
    from incognita.access.paths import card_file, golden_file
    from incognita.access.taxonomy import NATIVE
    from incognita.common.io import read_json

    results = Path(args.results)
    cfg = yaml.safe_load((ROOT / args.config).read_text())
    design = HarnessSettings.from_config(cfg)
    retail = domain_files("retail", ROOT / "config/domains", ROOT / "data/source")
    inputs_of = DomainInputs.of(
        "retail", db=retail.db, partition=retail.partition, vocabulary=retail.vocabulary, prompts=retail.prompts
    )
    harness = Harness(design, inputs_of)
    corpus = load_corpus(retail.corpus, locks=retail.locks)
    tasks = [qualify("retail", str(t)) for t in corpus["tasks"]]
    models = list(design.models)
    reps = args.reps
    if args.quick:
        tasks, models, reps = tasks[:QUICK_TASKS], models[:QUICK_MODELS], 1
    arms = [a for a in design.arms if a != NATIVE]
    inputs = {
        t: (
            read_json(card_file(*split_task(t), root=results / "cards")),
            read_json(golden_file(*split_task(t), root=results / "golden")),
        )
        for t in tasks
    }

    per_episode, turns = [], 0
    for rep in range(reps):
        for model in models:
            for task in tasks:
                card, golden = inputs[task]
                for arm in arms:
                    t = time.perf_counter()
                    record = harness.run_cell(arm, model, task, rep, card, "-", golden, "-")
                    json.dumps(record.to_dict())
                    per_episode.append(time.perf_counter() - t)
                    turns += record.turns
    n, total = len(per_episode), sum(per_episode)
    start = startup_seconds(args.config, runs=1 if args.quick else 3)
    copies = copy_costs(harness.world, runs=2 if args.quick else 5)
    block = total / n * len(arms) * design.repetitions
    print(f"mode: {'quick' if args.quick else 'full'}  models: {len(models)}  tasks: {len(tasks)}  arms: {len(arms)}")
    print(f"episodes: {n}  agent turns: {turns}")
    print(f"harness per episode: {1000 * total / n:.1f} ms (median {1000 * statistics.median(per_episode):.1f} ms)")
    print(f"harness per agent turn: {1000 * total / max(turns, 1):.2f} ms")
    print(f"job start-up (imports + database), fresh interpreter: {1000 * start:.0f} ms")
    print(
        f"one job = one (model, task): {len(arms)} arms x {design.repetitions} reps = "
        f"{1000 * block:.0f} ms of episodes; start-up / episodes = {start / block:.2f}"
    )
    print(f"if one job ran one cell instead: start-up / episode = {start / (total / n):.1f}")
    print("fresh clean database (median ms, exact independent copy):")
    for name, seconds, exact in copies:
        print(f"  {name:34s} {1000 * seconds:7.1f}  {'yes' if exact else 'NO'}")


if __name__ == "__main__":
    main()
