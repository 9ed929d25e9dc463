"""The participant audit's rules on all of a domain's upstream tasks, not only the corpus (issues #29, #54).

Runs the scripted population in direct, indirect and social on every task with a card and a
golden trajectory (one repetition, the design seed) twice: with faithful participants (every
finding is then a false alarm, or a real slip of the scripted customer: it agrees to whatever
the agent restates) and with the faults of config/fidelity.yaml injected (recall and precision
per finding kind against the injected ground truth). Prints both tables and the time taken.

Usage: python bench/participant_audit.py [--domain D] [--results DIR] [--source-root SRC]
                                         [--profiles surveyor,prober,hasty] [--quick]
Needs DIR/cards/D, DIR/golden/D and DIR/reference/D/coordination.json for all tasks (default D:
retail, DIR: results/, built by `bin/run`), and the source database under SRC/D (default SRC:
data/source). --quick runs two tasks with one profile (for CI).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARMS = ("direct", "indirect", "social")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="retail", help="a registered domain (incognita.access.domain)")
    parser.add_argument("--results", default=str(ROOT / "results"))
    parser.add_argument("--source-root", default=str(ROOT / "data/source"))
    parser.add_argument("--profiles", default="surveyor,prober,hasty")
    parser.add_argument("--quick", action="store_true", help="two tasks, the surveyor only")
    args = parser.parse_args()

    from incognita.access.domain import domain_files, id_order, qualify
    from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings
    from incognita.access.paths import card_file, coordination_file, golden_dir, golden_file
    from incognita.access.reader.fidelity_validation import fidelity_table
    from incognita.access.reader.participant_audit import AuditInputs
    from incognita.access.reader.trial_contract import FINDING_COLUMNS, frame
    from incognita.access.reader.trial_reading import read_trial
    from incognita.common.io import read_json, read_yaml, sha256_file

    results, domain = Path(args.results), args.domain
    golden_root = golden_dir(domain, results / "golden")
    tasks = sorted((p.stem for p in golden_root.glob("*.json")), key=id_order)  # the domain's upstream ids
    if not tasks:
        sys.exit(f"error: no golden trajectories under {golden_root}: run bin/run first")
    profiles = ["surveyor"] if args.quick else [p for p in args.profiles.split(",") if p]
    tasks = tasks[:2] if args.quick else tasks
    reference = read_json(coordination_file(domain, results / "reference"))["tasks"]
    files = domain_files(domain, ROOT / "config/domains", Path(args.source_root))
    inputs = AuditInputs(results / "cards", {domain: files.partition}, ROOT / "config/arms.yaml")
    domain_inputs = DomainInputs.of(
        domain, db=files.db, partition=files.partition, vocabulary=files.vocabulary, prompts=files.prompts
    )
    faulty = read_yaml(ROOT / "config/fidelity.yaml")["participants"]

    def run(customer, service):
        design = HarnessSettings(
            arms=ARMS,
            models={p: f"scripted:{p}" for p in profiles},
            repetitions=1,
            seed=20260820,  # the design seed of config/config.yaml
            budget=300,
            customer=customer,
            service=service,
            prompts_dir=str(ROOT / "config/prompts"),
            scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
            arm_registry=str(ROOT / "config/arms.yaml"),
        )
        harness = Harness(design, domain_inputs)
        rows = []
        for task in tasks:
            card_path = card_file(domain, task, root=results / "cards")
            card, golden = read_json(card_path), read_json(golden_file(domain, task, root=results / "golden"))
            for arm in ARMS:
                for profile in profiles:
                    cell = (arm, profile, qualify(domain, task), 0)
                    record = harness.run_cell(*cell, card, sha256_file(card_path), golden, "-")
                    rows.append(asdict(read_trial(record, reference[task], inputs)))
        return frame(rows)

    start = time.perf_counter()
    faithful = run("scripted:customer", "scripted:desk")
    injected = run(faulty["customer"], faulty["service"])
    seconds = time.perf_counter() - start
    print(f"{domain}: {len(tasks)} tasks x {len(ARMS)} arms x {len(profiles)} profiles, twice, in {seconds:.0f} s\n")

    replies = int(faithful["participant_messages"].sum())
    print(f"faithful participants: {len(faithful)} episodes, {replies} replies audited")
    print("| finding | findings | per 100 replies | episodes with one |")
    print("|---|---|---|---|")
    for col in FINDING_COLUMNS:
        n = faithful[col].astype(int)
        print(
            f"| {col.removeprefix('findings_')} | {n.sum()} | {100 * n.sum() / max(replies, 1):.2f} | {(n > 0).sum()} |"
        )

    print(f"\ninjected faults (config/fidelity.yaml): {len(injected)} episodes")
    print("| finding | injected | found | recall | findings | true | precision | set aside |")
    print("|---|---|---|---|---|---|---|---|")
    for row in fidelity_table(injected).itertuples():
        fmt = lambda x: "-" if x != x else f"{x:.3f}"  # noqa: E731 (NaN: nothing to divide)
        print(
            f"| {row.finding} | {row.injected} | {row.found} | {fmt(row.recall)} | {row.findings} | "
            f"{row.true_findings} | {fmt(row.precision)} | {row.set_aside} |"
        )


if __name__ == "__main__":
    main()
