"""Commands of the reader stage: the trials table, and the records it cannot read or must exclude.

Imports of the stage's modules stay inside the commands, so `incognita --help` stays cheap.
"""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.cells import CARDS_DIR, COORDINATION_REFERENCE, EPISODES_DIR, NATIVE_DIR, TRIALS_TABLE


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--episodes",
    "episodes_dir",
    default=EPISODES_DIR,
    show_default=True,
    help="read every {arm}/{model}/{task}/r{rep}.json here when no PATHS are given",
)
@click.option("--reference", "reference_path", default=COORDINATION_REFERENCE, show_default=True)
@click.option("--locks", "locks_path", default="config/locks.yaml", show_default=True)
@click.option("--out", default=TRIALS_TABLE, show_default=True)
@click.option("--csv", "csv_path", default="results/trials.csv", show_default=True)
@click.option("--validation", "validation_path", default="results/stats/reader_validation.csv", show_default=True)
@click.option(
    "--labelled",
    "labelled_dir",
    default="config/reader_validation",
    show_default=True,
    help="the hand-labelled trajectories the reader is checked against ('none' to skip)",
)
@click.option(
    "--cards-dir", default=CARDS_DIR, show_default=True, help="the task cards the episodes ran with (for the audit)"
)
@click.option("--partition", "partition_path", default="config/partition.yaml", show_default=True)
@click.option("--arm-registry", "registry_path", default="config/arms.yaml", show_default=True)
@click.option("--no-audit", is_flag=True, help="skip the participant-fidelity audit (its columns stay NA)")
def trials(
    paths,
    episodes_dir,
    reference_path,
    locks_path,
    out,
    csv_path,
    validation_path,
    labelled_dir,
    cards_dir,
    partition_path,
    registry_path,
    no_audit,
) -> None:
    """Read episode records and native results (PATHS, told apart by content) against the frozen
    reference: one row per trial, plus the reader's validation (hand-labelled trajectories, then
    the injected failure types of the scripted agents) and the participant-fidelity audit of
    every Incognita episode (docs/fidelity.md)."""
    from incognita.access.reader.participant_audit import AuditInputs
    from incognita.access.reader.reader_stage import run_reader

    labelled = None if labelled_dir == "none" else labelled_dir
    inputs = None if no_audit else AuditInputs(cards_dir, partition_path, registry_path)
    for line in run_reader(
        paths, episodes_dir, reference_path, locks_path, out, csv_path, validation_path, labelled, inputs
    ):
        click.echo(line)


@click.command()
@click.argument("roots", nargs=-1)
@click.option("--delete", is_flag=True, help="remove them, so the next run re-runs their jobs")
def errors(roots: tuple[str, ...], delete: bool) -> None:
    """List episode records and native results that broke outside the agent (their `error` is
    set; the reader excludes them) and damaged ones (truncated, not JSON, not a record: the
    reader stops on them). With --delete they are removed, together with the tables built from
    them (ROOT/manifest.tsv, ROOT/../trials.parquet): the next `bin/run` re-runs their jobs, and
    model calls that had succeeded come back from the response cache."""
    from incognita.access.native.native_results import native_trial
    from incognita.access.reader.trials_builder import check_result

    found, damaged, derived = [], 0, set()
    for root in map(Path, roots or (EPISODES_DIR, NATIVE_DIR)):
        for path in sorted(root.rglob("r*.json")):
            if "archive" in path.parts:
                continue
            doc, problem = check_result(path)
            if problem:
                click.echo(f"damaged: {problem}")
                damaged += 1
            else:
                error = native_trial(path, doc)["error"] if "simulations" in doc else doc.get("error")
                if not error:
                    continue
                click.echo(f"{path}: {error}")
            found.append(path)
            derived |= {root / "manifest.tsv", root.parent / "trials.parquet"}
    if delete:
        for path in found:
            path.unlink()
        # Snakemake (since 7.7) does not rebuild a deleted file while the files built from it are
        # present and up to date: without these, the next run would find nothing to do.
        for path in sorted(p for p in derived if p.exists()):
            path.unlink()
            click.echo(f"{path}: removed, so that the next run rebuilds the deleted records and then it")
    click.echo(
        f"{len(found)} record(s) with an error"
        + (f" ({damaged} damaged)" if damaged else "")
        + (" deleted" if delete and found else "")
    )


COMMANDS = [trials, errors]
