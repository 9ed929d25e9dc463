"""Our harness against the upstream tau2 orchestrator on the same scripted work.

Runs the scripted oracle agent and scripted customer on every corpus task twice in one
process: in our direct arm (incognita.access.episodes.harness) and in the upstream harness (tau2's
`run_task`, through incognita.access.native.native_run). Both include evaluation. Prints the wall time per
episode and per message for each, and the ratio (DESIGN's target: ours costs at most half
of upstream's per message).

A "message" is one step of the conversation: an agent message, a tool call with its
result, a customer reply. Our count is messages plus accepted-or-refused tool calls in the
episode record; upstream's is the length of its message list minus tool results (one
tool call and its result count once, as in ours).

Usage: python bench/native_vs_harness.py [--reps 1] [--profile oracle]
Needs results/cards and results/golden (run `bin/run results/golden/replay.tsv` first).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def ours(tasks, inputs, profile: str, reps: int) -> tuple[float, int, int]:
    from incognita.access.episodes.harness import Harness, HarnessSettings

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
    harness = Harness(design, str(ROOT / "data/source/retail/db.json"), str(ROOT / "config/partition.yaml"))
    start, messages, episodes = time.perf_counter(), 0, 0
    for rep in range(reps):
        for task in tasks:
            card, golden = inputs[task]
            record = harness.run_cell("direct", profile, task, rep, card, "-", golden, "-")
            assert record.success, f"our direct arm: {profile} failed task {task}"
            messages += sum(1 for e in record.events if e.type in ("message", "gateway_decision"))
            episodes += 1
    return time.perf_counter() - start, messages, episodes


def upstream(tasks, profile: str, reps: int) -> tuple[float, int, int]:
    from tau2.data_model.simulation import Results

    from incognita.access.native.native_run import NativeJob, NativeSettings, run_job

    job = NativeJob(
        model=profile,
        spec=f"scripted:{profile}",
        customer="scripted:customer",
        tasks=tuple(tasks),
        reps=reps,
        seed=1,
        arms=("native",),
        models_order=(profile,),
        tasks_json=str(ROOT / "data/source/retail/tasks.json"),
        cards_dir=str(ROOT / "results/cards"),
        golden_dir=str(ROOT / "results/golden"),
        profiles=str(ROOT / "config/scripted_agents.yaml"),
        out_dir="/tmp/incognita-bench-native",
        archive_unrepaired=False,
    )
    run_job(job, NativeSettings(), log=lambda _: None)  # warm-up: the registry import and first-call costs
    start = time.perf_counter()
    paths = run_job(job, NativeSettings(), log=lambda _: None)
    elapsed = time.perf_counter() - start
    messages = 0
    for path in paths:
        sim = Results.load(path).simulations[0]
        assert sim.reward_info.reward == 1.0, f"upstream harness: {profile} failed task {sim.task_id}"
        messages += sum(1 for m in sim.messages if m.role != "tool")
    return elapsed, messages, len(paths)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--profile", default="oracle")
    args = ap.parse_args()

    from incognita.access.selection.corpus import load_corpus
    from incognita.common.io import read_json

    tasks = [str(t) for t in load_corpus(ROOT / "config/corpus.yaml", locks=ROOT / "config/locks.yaml")["tasks"]]
    inputs = {
        t: (read_json(ROOT / f"results/cards/{t}.json"), read_json(ROOT / f"results/golden/{t}.json")) for t in tasks
    }
    ours(tasks[:2], inputs, args.profile, 1)  # warm-up
    t_ours, m_ours, n_ours = ours(tasks, inputs, args.profile, args.reps)
    t_up, m_up, n_up = upstream(tasks, args.profile, args.reps)
    per_ours, per_up = t_ours / m_ours, t_up / m_up
    print(f"{'harness':<22}{'episodes':>9}{'messages':>10}{'s/episode':>11}{'ms/message':>12}")
    print(f"{'incognita (direct)':<22}{n_ours:>9}{m_ours:>10}{t_ours / n_ours:>11.3f}{per_ours * 1000:>12.2f}")
    print(f"{'upstream tau2':<22}{n_up:>9}{m_up:>10}{t_up / n_up:>11.3f}{per_up * 1000:>12.2f}")
    print(f"ratio ours/upstream per message: {per_ours / per_up:.3f} (target <= 0.5)")


if __name__ == "__main__":
    main()
