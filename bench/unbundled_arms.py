"""The scripted rules of the unbundled arms (issue #28) on all 114 upstream tasks, not only the corpus.

Two rules are general and are measured here where they act:
- an agent told several holders' role texts reads them as a reader of the domain would
  (scripted/discovery.read_map, the toolkit's terms in everyday words): how many of the 15 tools
  it places, how many of those on the right desk, and over every task's plan how many of the
  tools it needs are placed right (beside the plain word matching its survey applies to the
  desks' replies, discovery.map_replies);
- a desk that refers names the holder of the tool it was asked for; the agent tries that holder
  before it counts a dead end.

Then every scripted profile runs in social and the four arms that unbundle it on every task
with a card and a golden trajectory (one repetition, the design seed), and the table gives
success per arm and profile, agent messages per episode, and referral events.

Usage: python bench/unbundled_arms.py [--results DIR] [--profiles surveyor,prober,hasty,impatient] [--quick]
Needs DIR/cards/retail and DIR/golden/retail for all tasks (default DIR: results/, built by `bin/run`),
and the source database under data/source/retail. --quick runs two tasks with one profile (for CI).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARMS = ("social", "social+map", "social+referral", "social-3", "social+named")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(ROOT / "results"))
    parser.add_argument("--profiles", default="surveyor,prober,hasty,impatient")
    parser.add_argument("--quick", action="store_true", help="two tasks, the surveyor only")
    args = parser.parse_args()

    from incognita.access.domain import domain_files, id_order, qualify
    from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings
    from incognita.access.episodes.loop.agent_plan import plan_from_golden
    from incognita.access.episodes.loop.records import Message, Referral
    from incognita.access.episodes.scripted.discovery import map_replies, read_map
    from incognita.access.episodes.scripted.scripted_agent import agent_class
    from incognita.access.paths import card_file, golden_dir, golden_file
    from incognita.common.io import read_json

    results = Path(args.results)
    golden_root = golden_dir("retail", results / "golden")
    tasks = sorted((p.stem for p in golden_root.glob("*.json")), key=id_order)  # retail's upstream ids
    if not tasks:
        sys.exit(f"error: no golden trajectories under {golden_root}: run bin/run first")
    profiles = ["surveyor"] if args.quick else [p for p in args.profiles.split(",") if p]
    tasks = tasks[:2] if args.quick else tasks
    design = HarnessSettings(
        arms=ARMS,
        models={p: f"scripted:{p}" for p in profiles},
        repetitions=1,
        seed=20260820,  # the design seed of config/config.yaml
        budget=300,
        customer="scripted:customer",
        service="scripted:desk",
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
        arm_registry=str(ROOT / "config/arms.yaml"),
    )
    retail = domain_files("retail", ROOT / "config/domains", ROOT / "data/source")
    inputs = DomainInputs.of(
        "retail", db=retail.db, partition=retail.partition, vocabulary=retail.vocabulary, prompts=retail.prompts
    )
    harness = Harness(design, inputs)

    arm = harness.arms.arm("social+map")
    roles = {h: harness.prompts.holder_parts(h, False, arm)["role"] for h in arm.owners(harness.partition)}
    described = {name: tool["description"] for name, tool in harness.tools.items()}
    truth = arm.holder_of(harness.partition)
    needed = {
        t: {c.name for c in plan_from_golden(read_json(golden_file("retail", t, root=results / "golden"))).calls}
        for t in tasks
    }
    pairs = sum(len(n) for n in needed.values())  # (task, tool) pairs: the map places every tool
    for label, placed in (
        ("declared map, read (read_map)", read_map(roles, described, agent_class(harness.domain).TOOL_WORDS)),
        ("the same texts, word matching (map_replies)", map_replies(roles, described)),
    ):
        right = {t for t, d in placed.items() if truth[t] == d}
        on_tasks = sum(len(n & right) for n in needed.values())
        print(
            f"{label}: {len(placed)} of {len(truth)} tools placed, {len(right)} on the right desk; "
            f"over the {len(tasks)} tasks' plans {on_tasks} of {pairs} needed tools placed right"
        )

    counts: dict = defaultdict(lambda: [0, 0, 0, 0])  # episodes, successes, agent messages, referrals
    start = time.perf_counter()
    for task in tasks:
        card = read_json(card_file("retail", task, root=results / "cards"))
        golden = read_json(golden_file("retail", task, root=results / "golden"))
        for name in ARMS:
            for profile in profiles:
                record = harness.run_cell(name, profile, qualify("retail", task), 0, card, "-", golden, "-")
                c = counts[(name, profile)]
                c[0] += 1
                c[1] += bool(record.success)
                c[2] += sum(isinstance(e, Message) and e.sender == "agent" for e in record.events)
                c[3] += sum(isinstance(e, Referral) for e in record.events)
    seconds = time.perf_counter() - start
    print(f"{len(tasks)} tasks x {len(ARMS)} arms x {len(profiles)} profiles in {seconds:.0f} s\n")
    print("| arm | " + " | ".join(profiles) + " | agent messages per episode | referrals |")
    print("|---|" + "---|" * (len(profiles) + 2))
    for name in ARMS:
        cells = [counts[(name, p)] for p in profiles]
        rates = " | ".join(f"{c[1] / c[0]:.3f}" for c in cells)
        episodes = sum(c[0] for c in cells)
        print(f"| {name} | {rates} | {sum(c[2] for c in cells) / episodes:.1f} | {sum(c[3] for c in cells)} |")


if __name__ == "__main__":
    main()
