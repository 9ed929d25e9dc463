"""Runs made from superseded inputs: kept under results/archive/, never pooled with current ones.

Invariant: a trials table holds, for each task, runs made from exactly one version of its card
(the sha256 of the card file the run read; episode records also name the golden trajectory).
A re-freeze or a card change re-runs the episodes, and Snakemake removes a job's old outputs
before it runs it; a study that wants its earlier runs kept copies them first.

Who writes: `incognita archive LABEL` (by hand, before the rebuild) copies the live runs
(results/episodes, results/native, the trials table) to results/archive/LABEL/ with a
manifest of what they were made from; an existing label is never overwritten. Who reads: the
reader stage calls `check_one_version` on everything it is about to pool and stops, naming two
runs of one task made from different cards, so a run left over from an earlier build (or
copied back from an archive) cannot enter a table unnoticed. Nothing reads the archive.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from incognita.access.paths import NATIVE_DIR, episode_records
from incognita.common.io import InputError, atomic_write_text

ARCHIVE_DIR = "archive"
NATIVE_RUNS = Path(NATIVE_DIR).name  # the native results' directory (and their count in the manifest)
# What `incognita archive` copies, relative to the results directory.
LIVE_RUNS = ("episodes", NATIVE_RUNS, "trials.parquet", "trials.csv")


def check_one_version(runs: Iterable[tuple[str, str, str | None]]) -> None:
    """`runs`: (where, task, card sha256 or None when the run does not say) for every run to be
    pooled. Raises InputError naming the first two runs of one task made from different cards."""
    first: dict[str, tuple[str, str | None]] = {}
    for where, task, sha in runs:
        seen = first.setdefault(task, (where, sha))
        if seen[1] != sha:
            raise InputError(
                f"task {task}: {seen[0]} was made from card {_short(seen[1])} and {where} from card "
                f"{_short(sha)}; runs of different card versions are never pooled. Keep the old runs "
                f"with `incognita archive LABEL` and delete them from the live tree (or rebuild them)"
            )


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "(not recorded)"


def archive_runs(results_dir: str | Path, label: str, locks: dict[str, Path]) -> Path:
    """Copy the live runs to RESULTS/archive/LABEL/ with MANIFEST.json (which also records
    `locks`: each domain's locks file); return that directory.

    The copy is made under a temporary name and renamed when complete, so an interrupted
    archive leaves no half-filled label behind."""
    results_dir = Path(results_dir)
    if not label or "/" in label or label.startswith("."):
        raise InputError(f"archive label {label!r}: expected a plain name such as 'cards-v3'")
    target = results_dir / ARCHIVE_DIR / label
    if target.exists():
        raise InputError(f"{target}: already archived; choose another label (archives are never overwritten)")
    present = [name for name in LIVE_RUNS if (results_dir / name).exists()]
    if not any((results_dir / name).is_dir() for name in ("episodes", NATIVE_RUNS)):
        raise InputError(f"{results_dir}: no episodes/ or native/ to archive")
    staging = results_dir / ARCHIVE_DIR / f".{label}.partial"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    for name in present:
        source = results_dir / name
        if source.is_dir():
            # the unrepaired native runs are already archived where they are; copied with the rest
            shutil.copytree(source, staging / name)
        else:
            shutil.copy2(source, staging / name)
    manifest = _manifest(staging, present, locks)
    atomic_write_text(staging / "MANIFEST.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    staging.rename(target)
    return target


def _manifest(root: Path, present: list[str], locks: dict[str, Path]) -> dict:
    """What the archived runs were made from: per task the card versions seen, and the locks."""
    cards: dict[str, set[str]] = {}
    counts = {"episodes": 0, NATIVE_RUNS: 0}
    for path in episode_records(root / "episodes"):
        counts["episodes"] += 1
        try:
            doc = json.loads(path.read_text())
            task, card = str(doc["cell"]["task"]), doc.get("card") or {}
        except (ValueError, KeyError, TypeError):  # a damaged record is archived as it is
            cards.setdefault("(unreadable)", set()).add(str(path.relative_to(root)))
            continue
        cards.setdefault(task, set()).add(f"v{card.get('version')} {_short(card.get('sha256'))}")
    natives = root / NATIVE_RUNS
    counts[NATIVE_RUNS] = len(list(natives.rglob("r*.json"))) if natives.is_dir() else 0
    return {
        "archived": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "commit": _git_commit(),
        "copied": present,
        "runs": counts,
        "cards": {task: sorted(seen) for task, seen in sorted(cards.items(), key=lambda kv: _task_key(kv[0]))},
        "locks": {domain: Path(path).read_text() for domain, path in locks.items() if Path(path).exists()},
    }


def _task_key(task: str) -> tuple:
    from incognita.access.domain import task_order

    try:
        return (0, *task_order(task))
    except InputError:  # an unreadable record's placeholder
        return (1, task)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None
