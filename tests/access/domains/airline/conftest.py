"""The airline domain through the task stages, built once per module that asks: the source copy,
the cards of all 50 tasks (with the repair overlays), their audit and their golden trajectories,
each by the command the workflow runs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from incognita.access.cards import source
from incognita.cli import main
from incognita.common.io import read_json

ROOT = Path(__file__).resolve().parents[4]
CONFIG = ROOT / "config" / "domains" / "airline"
PINNED = "26.3"


def run(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 0, f"incognita {args[0]} failed:\n{res.output}\n{res.exception!r}"
    return res.output


def build_stages(out: Path) -> None:
    src, cards, golden = out / "source", out / "cards", out / "golden"
    source.extract(src, PINNED, "airline")
    run("cards", "--domain", "airline", "--source-dir", str(src), "--version", PINNED,
        "--repairs-dir", str(CONFIG / "repairs"), "--out-dir", str(cards), "all")  # fmt: skip
    files = sorted(str(p) for p in cards.glob("*.json"))
    run("audit", "--domain", "airline", "--source-dir", str(src), "--vocabulary", str(CONFIG / "vocabulary.yaml"),
        "--ambiguities", str(CONFIG / "upstream_ambiguities.yaml"), "--out", str(out / "audit.tsv"), *files)  # fmt: skip
    run("golden", "--domain", "airline", "--cards-dir", str(cards), "--out-dir", str(golden),
        "--db", str(src / "db.json"), "--vocabulary", str(CONFIG / "vocabulary.yaml"))  # fmt: skip


@pytest.fixture(scope="session")
def stages(tmp_path_factory) -> Path:
    """Built once per session, shared by the parallel workers (tests/conftest.py, `_built_once`):
    the 50 tasks' golden replay takes about half a minute."""
    from conftest import _built_once  # tests/conftest.py (the tests folder is on the path)

    return _built_once(tmp_path_factory, "airline-stages", build_stages)


@pytest.fixture(scope="session")
def tasks(stages) -> dict[str, dict]:
    return {str(t["id"]): t for t in read_json(stages / "source" / "tasks.json")}


@pytest.fixture(scope="session")
def cards(stages, tasks) -> dict[str, dict]:
    return {t: read_json(stages / "cards" / f"{t}.json") for t in tasks}


@pytest.fixture(scope="session")
def golden(stages, tasks) -> dict[str, dict]:
    return {t: read_json(stages / "golden" / f"{t}.json") for t in tasks}


@pytest.fixture(scope="session")
def audit_rows(stages) -> list[dict]:
    with (stages / "audit.tsv").open() as fh:
        return list(csv.DictReader(fh, delimiter="\t"))
