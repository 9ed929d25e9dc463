"""Every trial of a run: episode records and native results loaded, checked and read into one table.

The reader stage (incognita.access.reader.reader_stage) hands this module its inputs; each
episode record is loaded (a damaged one stops the stage, naming its file), read against the
locked coordination reference (incognita.access.reader.trial_reading), joined by the rows of
native results (incognita.access.native.native_results), checked to come from one card
version per task (incognita.access.episodes.run_archive) and sorted into the trials table.
`check_result` is the same loading as `incognita errors` sees it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incognita.access.domain import qualify, task_order
from incognita.access.episodes.loop.records import EpisodeRecord
from incognita.access.paths import episode_records
from incognita.access.reader.trial_contract import TrialRow, check_extra_rows, frame
from incognita.access.reader.trial_reading import read_trial, trial_cell
from incognita.access.taxonomy import NATIVE
from incognita.common.io import InputError, read_json

if TYPE_CHECKING:  # pandas is imported where tables are built
    import pandas as pd


def load_references_locked(references: dict[str, tuple[Path, Path]]) -> dict[str, dict]:
    """Each domain's coordination reference (domain -> (reference, locks file)), refused unless
    it matches its frozen lock; its tasks under their qualified ids."""
    from incognita.access.reference.coordination import load_reference

    tasks: dict[str, dict] = {}
    arms: list[str] = []
    for domain, (reference_path, locks_path) in references.items():
        reference = load_reference(reference_path, locks=locks_path, verify=True)
        tasks.update({qualify(domain, local): entry for local, entry in reference["tasks"].items()})
        arms += [a for a in reference["arms"] if a not in arms]
    return {"tasks": tasks, "arms": arms}


def episode_files(root: str | Path) -> list[Path]:
    """Every episode record under `root` ({arm}/{model}/{domain}/{id}/r{rep}.json), in a stable order."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: episode directory not found")
    return episode_records(root)


def load_record(path: Path, data: Any = None) -> EpisodeRecord:
    """An episode record from its file (or its already parsed `data`); InputError naming the file
    when it is not one, so a damaged record stops the reader instead of losing its trial."""
    data = read_json(path) if data is None else data
    if not isinstance(data, dict):
        raise InputError(f"{path}: not an episode record (a JSON {type(data).__name__})")
    try:
        record = EpisodeRecord.from_dict(data)
        trial_cell(record)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InputError(f"{path}: not an episode record ({type(exc).__name__}: {exc})") from None
    return record


def _read_one(path: Path, tasks: dict, audit_inputs=None) -> tuple[TrialRow, str | None]:
    """The trial row of one record, and the sha256 of the card it was made from."""
    record = load_record(path)
    task = str(record.cell.get("task"))
    if task not in tasks:
        raise InputError(f"{path}: cell.task: task {task!r} is not in its domain's coordination reference")
    try:
        return read_trial(record, tasks[task], audit_inputs), (record.card or {}).get("sha256")
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a record damaged inside its events
        raise InputError(f"{path}: not a readable episode record ({type(exc).__name__}: {exc})") from None


def check_result(path: str | Path) -> tuple[dict | None, str | None]:
    """An episode record or native result as `incognita errors` sees it: (its content, None), or
    (None, why) when it is damaged, i.e. the reader would stop on it. A JSON object without
    `schema_version` and `simulations` is left alone here (the reader names it when it meets it)."""
    from incognita.access.native.native_results import native_trial

    path = Path(path)
    try:
        doc = read_json(path)
        if isinstance(doc, dict) and "simulations" in doc:
            native_trial(path, doc)
        elif not isinstance(doc, dict) or "schema_version" in doc:
            load_record(path, doc)
    except InputError as exc:
        return None, str(exc)
    return doc, None


# Keys of a native row that say where it came from (incognita.access.episodes.run_archive), not trial columns.
_PROVENANCE = ("source", "card_sha256")


def build_trials(
    episode_paths: list[Path],
    references: dict[str, tuple[Path, Path]],
    extra_rows: Iterable[dict] = (),
    audit_inputs=None,
) -> pd.DataFrame:
    """One row per trial: every episode record, plus rows built elsewhere (native trials); with
    `audit_inputs` (participant_audit.AuditInputs) the participant-fidelity audit's columns too.
    `references`: domain -> (its coordination reference, its locks file)."""
    from incognita.access.episodes.run_archive import check_one_version

    reference = load_references_locked(references)
    rows, made_from = [], []
    for path in map(Path, episode_paths):
        row, card_sha = _read_one(path, reference["tasks"], audit_inputs)
        rows.append(asdict(row))
        made_from.append((str(path), row.task, card_sha))
    extra_rows = list(extra_rows)
    made_from += [(str(r.get("source", "a native run")), str(r.get("task")), r.get("card_sha256")) for r in extra_rows]
    check_one_version(made_from)
    rows += check_extra_rows([{k: v for k, v in r.items() if k not in _PROVENANCE} for r in extra_rows])
    df = frame(rows)
    arm_order = {a: i for i, a in enumerate((*reference["arms"], NATIVE))}  # the registry's order
    df = df.sort_values(
        ["arm", "model", "task", "rep"],
        key=lambda s: s.map(arm_order) if s.name == "arm" else (s.map(task_order) if s.name == "task" else s),
    )
    duplicated = df.duplicated(["arm", "model", "task", "rep"])
    if duplicated.any():
        first = df[duplicated].iloc[0]
        raise InputError(f"trial {first['arm']}/{first['model']}/{first['task']}/r{first['rep']} appears twice")
    return df.reset_index(drop=True)


def split_inputs(paths: Iterable[str | Path]) -> tuple[list[Path], list[dict]]:
    """Episode records, and rows from native results (told apart by content, not by path)."""
    from incognita.access.native.native_results import native_card_sha, native_trial

    episodes: list[Path] = []
    native: list[dict] = []
    for path in map(Path, paths):
        doc = read_json(path)
        if isinstance(doc, dict) and "simulations" in doc:
            native.append({**native_trial(path, doc), "source": str(path), "card_sha256": native_card_sha(doc)})
        else:
            episodes.append(path)
    return episodes, native
