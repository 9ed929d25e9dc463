"""Commands of the native stage: one model on the corpus in the unmodified upstream harness.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

import click

from incognita.access.domain import EXAMPLE_TASK, SOURCE_ROOT
from incognita.access.paths import CARDS_ROOT, GOLDEN_ROOT, NATIVE_DIR
from incognita.access.taxonomy import ALL_ARMS
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
    help="the model's entry: scripted:<profile>, openai:<model>, or a JSON object",
)
@click.option(
    "--customer",
    "customer_spec",
    type=entry_type(),
    default="scripted:customer",
    show_default=True,
    help="the native user: scripted:customer, or openai:<model> for the harness's own user simulator",
)
@click.option("--models-order", required=True, help="all model names, comma-separated (Latin-square rotation)")
@click.option("--arms", default=",".join(ALL_ARMS), show_default=True, help="the full rotation")
@click.option("--tasks", required=True, help=f"the tasks to run, qualified ids ({EXAMPLE_TASK}), comma-separated")
@click.option(
    "--corpus",
    "corpus_tasks",
    default="",
    help="the design's task ids in order, for Latin-square positions (default: --tasks)",
)
@click.option("--reps", type=int, required=True, help="run repetitions 0..REPS-1")
@click.option("--seed", type=int, required=True, help="the design seed")
@click.option("--max-steps", type=int, default=200, show_default=True, help="the harness's step limit")
@click.option("--max-errors", type=int, default=10, show_default=True, help="the harness's tool-error limit")
@click.option("--source-root", default=SOURCE_ROOT, show_default=True, help="<root>/<domain>/tasks.json")
@click.option("--cards-root", default=CARDS_ROOT, show_default=True, help="<root>/<domain>/<id>.json")
@click.option("--golden-root", default=GOLDEN_ROOT, show_default=True, help="<root>/<domain>/<id>.json")
@click.option("--scripted-agents", default="config/scripted_agents.yaml", show_default=True)
@click.option(
    "--archive-unrepaired/--no-archive-unrepaired",
    default=True,
    show_default=True,
    help="also run repaired tasks without their overlay, written under <out-dir>/archive/",
)
@click.option("--out-dir", default=NATIVE_DIR, show_default=True)
@workers_option("runs")
@pacing_option()
def native(
    model,
    spec,
    customer_spec,
    models_order,
    arms,
    tasks,
    corpus_tasks,
    reps,
    seed,
    max_steps,
    max_errors,
    source_root,
    cards_root,
    golden_root,
    scripted_agents,
    archive_unrepaired,
    out_dir,
    workers,
    pacing,
) -> None:
    """Run one model on the corpus tasks in the unmodified upstream harness (the native anchor);
    one result file per (task, repetition) in the harness's own format."""
    from incognita.access.native.native_run import NativeJob, NativeSettings, run_job

    # Each entry's pacing settings come back from --pacing (incognita.common.backends.entry).
    spec, customer_spec = spec.with_pacing(pacing), customer_spec.with_pacing(pacing)

    order = tuple(m for m in models_order.split(",") if m)
    if model not in order:
        raise InputError(f"--model {model!r} is not in --models-order {models_order!r}")
    job = NativeJob(
        model=model,
        spec=spec,
        customer=customer_spec,
        tasks=tuple(t for t in tasks.split(",") if t),
        reps=reps,
        seed=seed,
        arms=tuple(a for a in arms.split(",") if a),
        models_order=order,
        source_root=source_root,
        cards_root=cards_root,
        golden_root=golden_root,
        profiles=scripted_agents,
        out_dir=out_dir,
        archive_unrepaired=archive_unrepaired,
        corpus=tuple(t for t in corpus_tasks.split(",") if t),
    )
    workers = resolve_workers(workers, calls_api([spec, customer_spec]))
    click.echo(f"native runs of {model}: {workers} at a time")
    written = run_job(job, NativeSettings(max_steps=max_steps, max_errors=max_errors), log=click.echo, workers=workers)
    click.echo(f"native: {len(written)} result file(s) for model {model}")


COMMANDS = [native]
