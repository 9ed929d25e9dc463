"""Shared fixtures: the extracted source data, built once per test session."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest

from incognita.access.cards import source

ROOT = Path(__file__).resolve().parents[1]
# The made-up tasks 901-904 that the reader's fixture episodes are written against.
RETAIL = ROOT / "config" / "domains" / "retail"  # the retail domain's config folder
READER_REFERENCE = RETAIL / "reader_validation" / "reference.json"
PINNED = "26.3"

# The files that take minutes (a real model, a SLURM cluster, whole workflows), first. bin/test
# runs one worker more than the CPUs and hands files to the workers in collection order, one to
# each, then a second to each: with two CPUs, the three workers start DayTrader's real-model
# file (the most CPU), the SLURM file (mostly waiting on the scheduler, which is what the extra
# worker is for) and the access family's real-model file, then its tool-call file, the workflow,
# fault and viewer files, and the many short files fill in around them. Without this the slowest file could
# start last and run alone at the end.
SLOW_FILES_FIRST = (
    "tests/collabsim/test_local_model.py",
    "tests/test_slurm.py",
    "tests/access/episodes/test_local_model.py",
    "tests/access/episodes/test_local_model_tool_calls.py",
    "tests/test_workflow.py",
    "tests/test_storage_fs.py",  # about a minute: the smoke design again, through a storage provider
    "tests/test_faults.py",
    "tests/viewer/test_viewer.py",
    "tests/viewer/test_viewer_widths.py",
    "tests/viewer/test_viewer_reading.py",
    "tests/test_bench.py",
)


def pytest_configure(config):
    """Model calls made in this process keep their shared pacing state and progress log out of the
    checkout (workflow tests run in copies, where the defaults under the copy are right)."""
    import atexit
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="incognita-test-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    os.environ.setdefault("INCOGNITA_PACING_DIR", str(scratch / "pacing"))
    os.environ.setdefault("INCOGNITA_PROGRESS_DIR", str(scratch / "progress"))


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep their order


def _built_once(tmp_path_factory, name: str, build) -> Path:
    """`build(path)` once per test session: the parallel workers share one build, the first to ask
    builds it under a file lock while the others wait. Those who use it only read it."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # xdist: one base per worker
    built, done = shared / name, shared / f"{name}.done"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(built, ignore_errors=True)  # a build that failed half-way
            build(built)
            done.touch()
    return built


@pytest.fixture(scope="session")
def task_stages(tmp_path_factory) -> Path:
    """A workflow copy with the task stages built (tests/workflow_helpers.py, build_task_stages)."""
    from workflow_helpers import build_task_stages

    return _built_once(tmp_path_factory, "task-stages", build_task_stages)


@pytest.fixture(scope="session")
def smoke_build(tmp_path_factory) -> Path:
    """A workflow copy with the smoke design built from nothing by Snakemake, every outbound
    connection refused and recorded in `smoke.net.log` inside it (tests/workflow_helpers.py,
    build_smoke). The smoke design's end-to-end test checks it; the SLURM test compares what its
    jobs write with it."""
    from workflow_helpers import build_smoke

    return _built_once(tmp_path_factory, "smoke-build", build_smoke)


@pytest.fixture(scope="session")
def two_domain_build(tmp_path_factory, task_stages) -> Path:
    """A workflow copy with a design of two domains (retail and mock) built by Snakemake up to the
    figures and the viewer (tests/workflow_helpers.py, build_two_domains)."""
    from workflow_helpers import build_two_domains

    return _built_once(tmp_path_factory, "two-domain-build", lambda path: build_two_domains(path, task_stages))


@pytest.fixture(scope="session")
def source_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("source") / "retail"
    source.extract(out, PINNED, "retail")
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

    return read_yaml(RETAIL / "vocabulary.yaml")


@pytest.fixture()
def locked(tmp_path) -> tuple[Path, Path]:
    """The coordination reference of the reader's made-up tasks 901-904 (shared with the
    hand-labelled validation set) and a lock file that freezes it: (reference path, locks path)."""
    from incognita.access.freeze import write_locks
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
    from incognita.access.domain import get_domain

    def build(task_id: str) -> dict:
        card = build_card(tasks[task_id], db, meta, get_domain("retail"))
        overlay = RETAIL / "repairs" / f"{task_id}.yaml"
        return apply_overlay(card, load_overlay(overlay), overlay) if overlay.exists() else card

    return build


@pytest.fixture(scope="session")
def task_inputs(repaired_card, source_dir):
    """Writes the cards (repairs applied) and golden files of some retail tasks (upstream ids)
    under a folder, as the card and golden stages lay them out under their roots
    (`<out>/cards/retail/<task>.json`, `<out>/golden/retail/<task>.json`)."""
    from incognita.access.domain import get_domain
    from incognita.access.golden.provenance import load_vocabulary
    from incognita.access.golden.trajectory import build_golden
    from incognita.access.golden.upstream_replay import World
    from incognita.access.paths import card_file, golden_file
    from incognita.common.io import write_json

    world = World(get_domain("retail"), source_dir / "db.json")
    vocab = load_vocabulary(str(RETAIL / "vocabulary.yaml"))

    def write(out: Path, task_ids) -> Path:
        for task in task_ids:
            card = repaired_card(task)
            write_json(card_file("retail", task, root=out / "cards"), card)
            write_json(golden_file("retail", task, root=out / "golden"), build_golden(card, world, vocab))
        return out

    return write
