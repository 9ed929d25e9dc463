"""Runs of different card versions are never pooled; `incognita archive` keeps old runs."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from incognita.access.episodes.run_archive import archive_runs, check_one_version
from incognita.access.paths import episode_record
from incognita.access.reader import trials_builder as reader
from incognita.cli import main
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
EPISODES = sorted((ROOT / "tests" / "fixtures" / "reader").glob("*.json"))


def test_one_card_per_task_passes_and_two_are_named():
    check_one_version([("a.json", "1", "x" * 64), ("b.json", "1", "x" * 64), ("c.json", "2", "y" * 64)])
    with pytest.raises(InputError, match=r"task 1: a.json was made from card xxxxxxxxxxxx and b.json from card zzzz"):
        check_one_version([("a.json", "1", "x" * 64), ("b.json", "1", "z" * 64)])
    with pytest.raises(InputError, match=r"from card \(not recorded\)"):
        check_one_version([("a.json", "1", "x" * 64), ("old native", "1", None)])


def test_the_reader_refuses_a_record_of_another_card(locked, tmp_path):
    ref, locks = locked
    stale = json.loads(EPISODES[0].read_text())
    stale["card"]["sha256"] = "f" * 64
    stale["cell"]["rep"] = 99  # not a duplicate: only its card differs
    path = tmp_path / "stale.json"
    path.write_text(json.dumps(stale))
    with pytest.raises(InputError, match=r"stale.json from card ffffffffffff; runs of different card versions"):
        reader.build_trials([*EPISODES, path], {"retail": (ref, locks)})


def _live_tree(root: Path) -> Path:
    results = root / "results"
    for src in EPISODES[:3]:
        doc = json.loads(src.read_text())
        cell = doc["cell"]
        dest = episode_record(cell["arm"], cell["model"], cell["task"], cell["rep"], results / "episodes")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
    (results / "trials.csv").write_text("arm\n")
    return results


def test_archive_copies_runs_with_a_manifest_and_never_overwrites(tmp_path):
    results = _live_tree(tmp_path)
    locks = tmp_path / "locks.yaml"
    locks.write_text("artifacts: {}\n")
    target = archive_runs(results, "cards-v3", {"retail": locks, "mock": tmp_path / "none.yaml"})
    assert target == results / "archive" / "cards-v3"
    live = sorted(p.relative_to(results) for p in (results / "episodes").rglob("*.json"))
    kept = sorted(p.relative_to(target) for p in (target / "episodes").rglob("*.json"))
    assert kept == live and len(kept) == 3  # copied, and the live tree is untouched
    manifest = json.loads((target / "MANIFEST.json").read_text())
    assert manifest["runs"] == {"episodes": 3, "native": 0}
    assert manifest["copied"] == ["episodes", "trials.csv"] and manifest["locks"] == {"retail": "artifacts: {}\n"}
    assert list(manifest["cards"]) == ["retail/901", "retail/902"]  # tasks by their qualified ids, in order
    assert all(v[0].startswith("v") for v in manifest["cards"].values())
    assert not list((results / "archive").glob(".*"))  # no staging directory left behind
    with pytest.raises(InputError, match="already archived"):
        archive_runs(results, "cards-v3", {"retail": locks})
    with pytest.raises(InputError, match="expected a plain name"):
        archive_runs(results, "../elsewhere", {"retail": locks})


def test_archive_command_and_an_empty_tree(tmp_path):
    results = _live_tree(tmp_path)
    out = CliRunner().invoke(main, ["archive", "before-change", "--results-dir", str(results)])
    assert out.exit_code == 0, out.output
    assert "3 episode records, 0 native results archived" in out.output
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no episodes/ or native/ to archive"):
        archive_runs(empty, "x", {"retail": tmp_path / "none.yaml"})
