"""Our harness against the upstream tau2 orchestrator on the same scripted work.

Runs the scripted agent of one profile (default: oracle) and the scripted customer on the
corpus tasks in one process: in our direct arm (incognita.access.episodes.harness) and in the
upstream harness (tau2's `run_task`, through incognita.access.native.native_run). Both include
evaluation. Every episode is timed on its own; the table counts only the tasks that *both*
harnesses solve with the profile (it says how many), so neither side is charged for a run
the other did not finish. It prints the wall time per episode and per message for each, and
the ratio (the goal, issue #25: ours costs at most 0.10x of upstream's per message).

A "message" is one step of the conversation: an agent message, a tool call with its
result, a customer reply. Our count is messages plus accepted-or-refused tool calls in the
episode record; upstream's is the length of its message list minus tool results (one
tool call and its result count once, as in ours).

The default of three repetitions is the design's (config/config.yaml): an episodes job runs
every repetition of its (model, task) in one process, so what it learns about a task's
records once (the scripted agent's term caches, the world's clean record text) serves all of
them; upstream's harness gets the same repetitions.

Usage: python bench/native_vs_harness.py [--reps 3] [--profile oracle] [--quick] [--results DIR]
--quick runs the first two corpus tasks once (seconds, for CI); it still prints the table.
Needs DIR/cards/retail and DIR/golden/retail (default DIR: results/; run `bin/run results/golden/retail/replay.tsv` first).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def ours(tasks, inputs, profile: str, reps: int) -> dict:
    """{(task, rep): (seconds, messages, solved)} for our direct arm (tasks: qualified retail ids)."""
    from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings

    design = HarnessSettings(
        arms=("direct",),
        models={profile: f"scripted:{profile}"},
        repetitions=reps,
        seed=1,
        budget=300,
        customer="scripted:customer",
        service="scripted:desk",
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )
    retail = ROOT / "config/domains/retail"
    inputs_of = DomainInputs.of(
        "retail",
        db=str(ROOT / "data/source/retail/db.json"),
        partition=str(retail / "partition.yaml"),
        vocabulary=str(retail / "vocabulary.yaml"),
        prompts=str(retail / "prompts"),
    )
    harness = Harness(design, inputs_of)
    runs = {}
    for rep in range(reps):
        for task in tasks:
            card, golden = inputs[task]
            start = time.perf_counter()
            record = harness.run_cell("direct", profile, task, rep, card, "-", golden, "-")
            elapsed = time.perf_counter() - start
            messages = sum(1 for e in record.events if e.type in ("message", "gateway_decision"))
            runs[(task, rep)] = (elapsed, messages, bool(record.success))
    return runs


def upstream(
    tasks, profile: str, reps: int, results: Path, out_dir: str, warm_up: bool = True, upstream_loader: bool = False
) -> dict:
    """{(task, rep): (seconds, messages, solved)} for the upstream harness. Each run's time is
    the time between the job's consecutive per-run log lines (run, evaluation, result file).
    `upstream_loader`: upstream's own registered domain instead of the native job's copy."""
    from tau2.data_model.simulation import Results

    from incognita.access.native.native_run import NativeJob, NativeSettings, run_job

    def job(task_ids):
        return NativeJob(
            model=profile,
            spec=f"scripted:{profile}",
            customer="scripted:customer",
            tasks=tuple(task_ids),
            reps=reps,
            seed=1,
            arms=("native",),
            models_order=(profile,),
            source_root=str(ROOT / "data/source"),
            cards_root=str(results / "cards"),
            golden_root=str(results / "golden"),
            profiles=str(ROOT / "config/scripted_agents.yaml"),
            out_dir=out_dir,
            archive_unrepaired=False,
            corpus=tuple(tasks),
            upstream_loader=upstream_loader,
        )

    if warm_up:  # the registry import, the database read and first-call costs
        run_job(job(tasks[:1]), NativeSettings(), log=lambda _: None)
    stamps = [time.perf_counter()]  # the first run also carries the job's few ms of setup
    paths = run_job(job(tasks), NativeSettings(), log=lambda _: stamps.append(time.perf_counter()))
    runs = {}
    for path, begin, end in zip(paths, stamps, stamps[1:]):
        sim = Results.load(path).simulations[0]
        facts = sim.reward_info.info["incognita"]
        messages = sum(1 for m in sim.messages if m.role != "tool")
        runs[(str(facts["task"]), int(facts["rep"]))] = (end - begin, messages, sim.reward_info.reward == 1.0)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--profile", default="oracle")
    ap.add_argument("--quick", action="store_true", help="two corpus tasks, one repetition (CI)")
    ap.add_argument("--results", default=str(ROOT / "results"), help="the results tree with cards/ and golden/")
    ap.add_argument(
        "--out-dir",
        default=None,
        help="where the upstream runs are written (default: a temporary directory, removed at the end)",
    )
    args = ap.parse_args()

    from incognita.access.cells import load_corpus
    from incognita.access.domain import qualify, split_task
    from incognita.access.paths import card_file, golden_file
    from incognita.common.io import read_json

    results = Path(args.results)
    if args.out_dir is None:
        import atexit
        import shutil
        import tempfile

        # A temporary directory is the bench's own: removed when it ends (CI runs this bench in every
        # test run, which otherwise left a directory behind each time).
        args.out_dir = tempfile.mkdtemp(prefix="bench-native-")
        atexit.register(shutil.rmtree, args.out_dir, ignore_errors=True)
    retail = ROOT / "config/domains/retail"
    corpus = load_corpus(retail / "corpus.yaml", locks=retail / "locks.yaml")
    tasks = [qualify("retail", str(t)) for t in corpus["tasks"]]
    reps = args.reps
    if args.quick:
        tasks, reps = tasks[:2], 1
    inputs = {
        t: (
            read_json(card_file(*split_task(t), root=results / "cards")),
            read_json(golden_file(*split_task(t), root=results / "golden")),
        )
        for t in tasks
    }
    ours(tasks[:2], inputs, args.profile, 1)  # warm-up
    mine = ours(tasks, inputs, args.profile, reps)
    # Upstream as shipped (its `retail` domain loads the database for every environment), and
    # as our native job runs it (incognita_retail: one validation per process).
    theirs = upstream(tasks, args.profile, reps, results, args.out_dir, upstream_loader=True)
    job = upstream(tasks, args.profile, reps, results, args.out_dir)
    both = [k for k in mine if mine[k][2] and theirs[k][2]]
    print(
        f"profile {args.profile}: {len(both)} of {len(mine)} runs solved by both harnesses "
        f"(ours solved {sum(r[2] for r in mine.values())}, upstream {sum(r[2] for r in theirs.values())}); "
        "the table counts those only"
    )
    if not both:
        print("no run solved by both: nothing to compare")
        return
    print(f"{'harness':<22}{'episodes':>9}{'messages':>10}{'s/episode':>11}{'ms/message':>12}")
    per = {}
    for label, runs in (("incognita (direct)", mine), ("upstream tau2", theirs), ("upstream, native job", job)):
        t = sum(runs[k][0] for k in both)
        m = sum(runs[k][1] for k in both)
        per[label] = t / m
        print(f"{label:<22}{len(both):>9}{m:>10}{t / len(both):>11.3f}{per[label] * 1000:>12.2f}")
    ratio = per["incognita (direct)"] / per["upstream tau2"]
    print(f"ratio ours/upstream per message: {ratio:.3f} (goal <= 0.10)")
    print(
        f"ratio ours/upstream as the native job runs it: {per['incognita (direct)'] / per['upstream, native job']:.3f}"
    )


if __name__ == "__main__":
    main()
