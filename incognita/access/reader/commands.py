"""Commands of the reader stage: the trials table, and the records it cannot read or must exclude.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from incognita.access.domain import CONFIG_ROOT, REGISTRY
from incognita.access.paths import (
    CARDS_ROOT,
    EPISODES_DIR,
    NATIVE_DIR,
    READER_VALIDATION,
    REFERENCE_ROOT,
    TRIALS_CSV,
    TRIALS_TABLE,
)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--domains", required=True, help=f"the domains of the records, comma-separated ({', '.join(REGISTRY)})")
@click.option(
    "--episodes",
    "episodes_dir",
    default=EPISODES_DIR,
    show_default=True,
    help="read every {arm}/{model}/{domain}/{id}/r{rep}.json here when no PATHS are given",
)
@click.option("--reference-root", default=REFERENCE_ROOT, show_default=True, help="<root>/<domain>/coordination.json")
@click.option(
    "--domains-config",
    default=CONFIG_ROOT,
    show_default=True,
    help="<root>/<domain>/: each domain's locks.yaml, partition.yaml and reader_validation/",
)
@click.option("--out", default=TRIALS_TABLE, show_default=True)
@click.option("--csv", "csv_path", default=TRIALS_CSV, show_default=True)
@click.option("--validation", "validation_path", default=READER_VALIDATION["validation"], show_default=True)
@click.option("--no-labelled", is_flag=True, help="skip the hand-labelled trajectories the reader is checked against")
@click.option(
    "--cards-root",
    default=CARDS_ROOT,
    show_default=True,
    help="<root>/<domain>/<id>.json: the task cards the episodes ran with (for the audit)",
)
@click.option("--arm-registry", "registry_path", default="config/arms.yaml", show_default=True)
@click.option("--no-audit", is_flag=True, help="skip the participant-fidelity audit (its columns stay NA)")
def trials(
    paths,
    domains,
    episodes_dir,
    reference_root,
    domains_config,
    out,
    csv_path,
    validation_path,
    no_labelled,
    cards_root,
    registry_path,
    no_audit,
) -> None:
    """Read episode records and native results (PATHS, told apart by content) against each
    domain's frozen reference: one row per trial, plus the reader's validation (each domain's
    hand-labelled trajectories, then the injected failure types of the scripted agents) and the
    participant-fidelity audit of every Incognita episode (docs/fidelity.md)."""
    from incognita.access.domain import domain_files
    from incognita.access.paths import coordination_file
    from incognita.access.reader.participant_audit import AuditInputs
    from incognita.access.reader.reader_stage import run_reader

    files = {d: domain_files(d, domains_config) for d in domains.split(",") if d}
    references = {d: (coordination_file(d, reference_root), f.locks) for d, f in files.items()}
    labelled = None
    if not no_labelled:
        # A domain without a hand-labelled set maps to None: the report names it instead of
        # passing over it in silence.
        labelled = {d: f.reader_validation if f.reader_validation.is_dir() else None for d, f in files.items()}
    partitions = {d: f.partition for d, f in files.items()}
    inputs = None if no_audit else AuditInputs(cards_root, partitions, registry_path)
    for line in run_reader(paths, episodes_dir, references, out, csv_path, validation_path, labelled, inputs):
        click.echo(line)


RETRY = "`incognita errors --delete`, then `bin/run`, retries them (calls answered before come from the cache)"


@click.command()
@click.argument("roots", nargs=-1)
@click.option("--delete", is_flag=True, help="remove them, so the next run re-runs their jobs")
@click.option(
    "--since",
    type=float,
    default=None,
    help="only records written at or after this time (seconds since the epoch): bin/run passes its start",
)
@click.option("--brief", is_flag=True, help="the count and how to retry them, without a line per record")
def errors(roots: tuple[str, ...], delete: bool, since: float | None, brief: bool) -> None:
    """List episode records and native results that broke outside the agent (their `error` is
    set; the reader excludes them) and damaged ones (truncated, not JSON, not a record: the
    reader stops on them). With --delete they are removed, together with the tables built from
    them (ROOT/manifest.tsv, ROOT/../trials.parquet): the next `bin/run` re-runs their jobs, and
    model calls that had succeeded come back from the response cache.

    Exit status: 0 when there is none (or --delete removed them), 1 when error records are
    listed, 2 when a damaged one is."""
    from incognita.access.native.native_results import native_trial
    from incognita.access.reader.trials_builder import check_result

    found, damaged, derived = [], 0, set()
    for root in map(Path, roots or (EPISODES_DIR, NATIVE_DIR)):
        for path in sorted(root.rglob("r*.json")):
            if "archive" in path.parts or (since is not None and path.stat().st_mtime < since):
                continue
            doc, problem = check_result(path)
            if problem:
                line = f"damaged: {problem}"
                damaged += 1
            else:
                error = native_trial(path, doc)["error"] if "simulations" in doc else doc.get("error")
                if not error:
                    continue
                line = f"{path}: {error}"
            if not brief:
                click.echo(line)
            found.append(path)
            derived |= {root / "manifest.tsv", root.parent / "trials.parquet"}
    if delete:
        for path in found:
            path.unlink()
        # The default target names every record, but a run of another target (results/trials.parquet)
        # does not rebuild a deleted record while the tables built from it are present and up to
        # date (snakemake/snakemake#1978): without these, it would find nothing to do.
        for path in sorted(p for p in derived if p.exists()):
            path.unlink()
            click.echo(f"{path}: removed, so that the next run rebuilds the deleted records and then it")
    if brief and not found:
        return
    written = "" if since is None else f" written since {time.strftime('%H:%M:%S', time.localtime(since))}"
    click.echo(
        f"{len(found)} record(s){written} with an error"
        + (f" ({damaged} damaged)" if damaged else "")
        + (" deleted" if delete and found else "")
        + (f": `incognita errors` lists them; {RETRY}" if brief else "")
    )
    if found and not delete:
        if not brief:
            click.echo(RETRY)
        click.get_current_context().exit(2 if damaged else 1)


COMMANDS = [trials, errors]
