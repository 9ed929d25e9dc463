"""The reader stage (`incognita trials`, rules/reader.smk): the trials table and the reader's validation.

It reads every episode record and native result (incognita.access.reader.trials_builder),
writes `results/trials.parquet` and `results/trials.csv` (incognita.access.reader.trial_contract)
and then the reader's validation table (incognita.access.reader.validation).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from incognita.access.reader.fidelity_validation import write_fidelity_validation
from incognita.access.reader.trial_contract import write_trials
from incognita.access.reader.trials_builder import build_trials, episode_files, split_inputs
from incognita.access.reader.validation import validate


def run_reader(
    paths: Iterable[str | Path],
    episodes_dir: str | Path,
    references: dict[str, tuple[Path, Path]],
    out: str | Path,
    csv_path: str | Path,
    validation_path: str | Path,
    labelled_dirs: dict[str, Path] | None = None,
    audit_inputs=None,
) -> list[str]:
    """The reader stage (`incognita trials`): read episode records and native results against each
    domain's frozen reference (`references`: domain -> (coordination reference, locks file)),
    write the trials table and the reader's validation (incognita.access.reader.validation: the
    hand-labelled sets in `labelled_dirs`, then the injection check); return a summary."""
    paths = list(paths)
    episodes, native = split_inputs(paths) if paths else (episode_files(episodes_dir), [])
    df = build_trials(episodes, references, native, audit_inputs)
    write_trials(df, out, csv_path)
    failed = int(df["failure_type"].notna().sum())
    summary = [
        (
            f"{out}: {len(df)} trials ({len(native)} native, {int(df['excluded'].sum())} excluded, "
            f"{failed} failed and labelled)"
        )
    ]
    summary += validate(df, labelled_dirs, validation_path)
    if audit_inputs is not None:
        summary += write_fidelity_validation(df, Path(validation_path).parent)
    return summary
