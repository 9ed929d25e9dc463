"""Shared fixtures: the extracted source data, built once per test session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from incognita.access.cards import source

ROOT = Path(__file__).resolve().parents[1]
# The made-up tasks 901-904 that the reader's fixture episodes are written against.
READER_REFERENCE = ROOT / "config" / "reader_validation" / "reference.json"
PINNED = "26.3"

# The files that take minutes (a SLURM cluster, a real model, whole workflows), first. bin/test
# hands files to its parallel workers in collection order, two to each at the start, so with
# two workers one runs the SLURM file (mostly waiting on the scheduler) and then DayTrader's
# real-model file, the other the access family's real-model file and then the workflow file;
# the two real-model files (each keeping the CPU busy) do not start together, and the many
# short files fill in around them. Without this the slowest file could start last and run
# alone at the end.
SLOW_FILES_FIRST = (
    "tests/test_slurm.py",
    "tests/access/episodes/test_local_model.py",
    "tests/collabsim/test_local_model.py",
    "tests/test_workflow.py",
    "tests/test_faults.py",
    "tests/viewer/test_viewer.py",
    "tests/test_bench.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep their order


@pytest.fixture(scope="session")
def source_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("source") / "retail"
    source.extract(out, PINNED)
    return out


@pytest.fixture(scope="session")
def db(source_dir) -> dict:
    return json.loads((source_dir / "db.json").read_text())


@pytest.fixture(scope="session")
def tasks(source_dir) -> dict[str, dict]:
    return {str(t["id"]): t for t in json.loads((source_dir / "tasks.json").read_text())}


@pytest.fixture(scope="session")
def meta(source_dir) -> dict:
    manifest = json.loads((source_dir / "MANIFEST.json").read_text())
    return {
        "package": manifest["package"],
        "version": manifest["version"],
        "tasks_sha256": manifest["files"]["tasks.json"],
    }


@pytest.fixture(scope="session")
def vocabulary() -> dict:
    from incognita.common.io import read_yaml

    return read_yaml(ROOT / "config" / "vocabulary.yaml")


@pytest.fixture()
def locked(tmp_path) -> tuple[Path, Path]:
    """The coordination reference of the reader's made-up tasks 901-904 (shared with the
    hand-labelled validation set) and a lock file that freezes it: (reference path, locks path)."""
    from incognita.access.reference.freeze import write_locks
    from incognita.common.io import sha256_file

    ref = tmp_path / "coordination.json"
    shutil.copy(READER_REFERENCE, ref)
    locks = tmp_path / "locks.yaml"
    write_locks(
        locks, {"coordination": {"path": str(ref), "version": 1, "sha256": sha256_file(ref), "frozen": "2026-08-20"}}
    )
    return ref, locks


@pytest.fixture(scope="session")
def repaired_card(tasks, db, meta):
    """A task's card as the pipeline builds it: rule-built, then its repair overlay if it has one."""
    from incognita.access.cards.card import build_card
    from incognita.access.cards.repairs import apply_overlay, load_overlay

    def build(task_id: str) -> dict:
        card = build_card(tasks[task_id], db, meta)
        overlay = ROOT / "config" / "repairs" / f"{task_id}.yaml"
        return apply_overlay(card, load_overlay(overlay), overlay) if overlay.exists() else card

    return build


@pytest.fixture(scope="session")
def task_inputs(repaired_card, source_dir):
    """Writes the cards (repairs applied) and golden files of some tasks under a folder, as the
    card and golden stages lay them out (`<out>/cards/<task>.json`, `<out>/golden/<task>.json`)."""
    from incognita.access.golden.provenance import load_vocabulary
    from incognita.access.golden.trajectory import build_golden
    from incognita.access.golden.upstream_replay import RetailWorld
    from incognita.common.io import write_json

    world, vocab = RetailWorld(source_dir / "db.json"), load_vocabulary(str(ROOT / "config/vocabulary.yaml"))

    def write(out: Path, task_ids) -> Path:
        for task in task_ids:
            card = repaired_card(task)
            write_json(out / "cards" / f"{task}.json", card)
            write_json(out / "golden" / f"{task}.json", build_golden(card, world, vocab))
        return out

    return write
