"""Commands of the episodes stage: run blocks, tabulate records, list broken ones, archive runs.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

import json

import click

from incognita.access.arm_registry import DEFAULT_PATH as ARM_REGISTRY
from incognita.access.domain import EXAMPLE_TASK
from incognita.access.paths import EPISODES_DIR
from incognita.access.taxonomy import HARNESS_ARMS
from incognita.common.backends.entry import calls_api, entry_type
from incognita.common.fan_out import resolve_workers, workers_option
from incognita.common.io import InputError
from incognita.common.pacing import pacing_option


@click.command()
@click.option("--model", required=True, help="model name (a key of the config's models)")
@click.option(
    "--spec",
    type=entry_type(),
    required=True,
    help="model entry of the evaluated agent: a spec such as scripted:surveyor, or a JSON object",
)
@click.option("--models-order", required=True, help="all model names, comma-separated (Latin-square rotation)")
@click.option("--task", required=True, help=f"the task's qualified id, <domain>/<upstream id> ({EXAMPLE_TASK})")
@click.option("--task-position", type=int, required=True, help="index of the task in the design's tasks")
@click.option("--reps", type=int, required=True, help="run repetitions 0..REPS-1")
@click.option("--arms", default=",".join(HARNESS_ARMS), show_default=True)
@click.option("--seed", type=int, required=True, help="the design seed")
@click.option("--budget", type=int, default=300, show_default=True, help="agent turn budget")
@click.option("--customer", "customer_spec", type=entry_type(), default="scripted:customer", show_default=True)
@click.option("--service", "service_spec", type=entry_type(), default="scripted:desk", show_default=True)
@click.option(
    "--judge",
    "judge_spec",
    type=entry_type(optional=True),
    default="none",
    show_default=True,
    help="backend judging nl_assertions, or 'none' (that channel is then not operative)",
)
@click.option("--card", "card_path", required=True)
@click.option("--golden", "golden_path", required=True)
@click.option("--db", "db_path", default=None, help="default: data/source/<domain>/db.json")
@click.option("--partition", "partition_path", default=None, help="default: config/domains/<domain>/partition.yaml")
@click.option("--arm-registry", default=ARM_REGISTRY, show_default=True, help="what each arm is")
@click.option("--prompts", "prompts_dir", default="config/prompts", show_default=True, help="the generic prompt files")
@click.option(
    "--domain-prompts", default=None, help="the domain's prompt files; default config/domains/<domain>/prompts"
)
@click.option("--scripted-agents", default="config/scripted_agents.yaml", show_default=True)
@click.option(
    "--vocabulary",
    default=None,
    help="the public policy vocabulary scripted agents know; default config/domains/<domain>/vocabulary.yaml",
)
@click.option("--out-dir", default=EPISODES_DIR, show_default=True)
@click.option(
    "--information-channel",
    type=click.Choice(["substring", "judge"]),
    default="substring",
    show_default=True,
    help="how the information channel is scored (judge: by --judge, the paper's)",
)
@workers_option("cells")
@pacing_option()
def episodes(
    model,
    spec,
    models_order,
    task,
    task_position,
    reps,
    arms,
    seed,
    budget,
    customer_spec,
    service_spec,
    judge_spec,
    card_path,
    golden_path,
    db_path,
    partition_path,
    arm_registry,
    prompts_dir,
    domain_prompts,
    scripted_agents,
    vocabulary,
    out_dir,
    information_channel,
    workers,
    pacing,
) -> None:
    """Run the blocks (model, task, repetition) of one model and task, each through the arms in
    Latin-square order, and write one episode record per cell."""
    from incognita.access.domain import split_task
    from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings

    domain = split_task(task, "--task")[0]

    # Each entry's pacing settings come back from --pacing (incognita.common.backends.entry).
    spec, customer_spec, service_spec = (e.with_pacing(pacing) for e in (spec, customer_spec, service_spec))
    judge_spec = judge_spec and judge_spec.with_pacing(pacing)

    order = [m for m in models_order.split(",") if m]
    if model not in order:
        raise InputError(f"--model {model!r} is not in --models-order {models_order!r}")
    design = HarnessSettings(
        arms=tuple(a for a in arms.split(",") if a),
        models={model: spec},
        repetitions=reps,
        seed=seed,
        budget=budget,
        customer=customer_spec,
        service=service_spec,
        prompts_dir=prompts_dir,
        arm_registry=arm_registry,
        scripted_agents=scripted_agents,
        judge=judge_spec,
        information_channel=information_channel,
    )
    inputs = DomainInputs.of(
        domain, db=db_path, partition=partition_path, vocabulary=vocabulary, prompts=domain_prompts
    )
    harness = Harness(design, inputs)
    workers = resolve_workers(workers, calls_api([spec, customer_spec, service_spec, judge_spec]))

    def report(path, record) -> None:
        status = record.error or ("success" if record.success else "failure")
        click.echo(f"{path}: {record.termination} after {record.turns} turns, {status}")

    click.echo(f"episodes of {model} on task {task}: {reps} repetition(s), {workers} at a time")
    harness.run_blocks(
        model, task, reps, card_path, golden_path, out_dir, task_position, order, workers=workers, on_record=report
    )


@click.command("episode-table")
@click.option("--out", "out_path", required=True)
@click.argument("record_files", nargs=-1, required=True)
def episode_table(out_path: str, record_files: tuple[str, ...]) -> None:
    """One row per episode record (a manifest the next stages and people can read), and a
    success summary per arm and model on stdout."""
    from collections import defaultdict

    from incognita.common.io import read_json, write_tsv

    header = [
        "arm",
        "model",
        "task",
        "rep",
        "position",
        "termination",
        "turns",
        "success",
        "db",
        "communicate",
        "error",
        "injected",
        "slips",
        "wall_time_s",
    ]
    rows, tally = [], defaultdict(lambda: [0, 0])
    for path in record_files:
        r = read_json(path)
        c, gt = r["cell"], r.get("ground_truth") or {}
        rows.append(
            [
                c["arm"],
                c["model"],
                c["task"],
                c["rep"],
                c.get("schedule_position", ""),
                r["termination"],
                r["turns"],
                r["success"],
                r["channels"].get("db"),
                r["channels"].get("communicate"),
                r["error"] or "",
                gt.get("injected") or "",
                gt.get("slips", ""),
                r["wall_time_s"],
            ]
        )
        if r["error"] is None:
            tally[(c["model"], c["arm"])][0] += bool(r["success"])
            tally[(c["model"], c["arm"])][1] += 1
    write_tsv(out_path, header, rows)
    click.echo(f"episode-table: {len(rows)} record(s) -> {out_path}")
    for (model, arm), (ok, n) in sorted(tally.items()):
        click.echo(f"  {model:>12} {arm:>9}: {ok}/{n} successful")


@click.command()
@click.argument("label")
@click.option("--results-dir", default="results", show_default=True)
@click.option(
    "--domain",
    "domains",
    multiple=True,
    help="domains whose locks to record (default: every registered one that has a locks file)",
)
def archive(label: str, results_dir: str, domains: tuple[str, ...]) -> None:
    """Copy the live runs (episodes, native results, trials table) to RESULTS/archive/LABEL/ with
    a manifest of the cards and locks they were made from, before a change that re-runs them.
    The reader never reads the archive, and refuses to pool runs of one task made from different
    cards."""
    from incognita.access.domain import REGISTRY, domain_files
    from incognita.access.episodes.run_archive import NATIVE_RUNS, archive_runs

    locks = {d: domain_files(d).locks for d in (domains or REGISTRY)}
    target = archive_runs(results_dir, label, locks)
    manifest = json.loads((target / "MANIFEST.json").read_text())
    runs = manifest["runs"]
    click.echo(f"{target}: {runs['episodes']} episode records, {runs[NATIVE_RUNS]} native results archived")


COMMANDS = [episodes, episode_table, archive]
