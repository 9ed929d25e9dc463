"""Hash locks: a changed frozen artifact is refused until it is re-frozen with a new version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from incognita.access.domain import domain_files
from incognita.access.freeze import (
    LockError,
    domain_artifacts,
    embedded_version,
    freeze,
    load_locks,
    verify_all,
    verify_lock,
)
from incognita.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
PARTITION = ROOT / "config" / "domains" / "retail" / "partition.yaml"
# The retail domain's frozen artifacts where a project keeps them (relative to the scratch project):
# results/reference/retail/coordination.json, config/domains/retail/corpus.yaml and interpretation.yaml.
ARTIFACTS = domain_artifacts(domain_files("retail"))
REFERENCE = ARTIFACTS["coordination"]


@pytest.fixture()
def work(tmp_path, monkeypatch) -> Path:
    """A scratch project: fixture golden + cards (made-up tasks, as retail's), a built reference, no locks yet."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIX / "reference_golden", "results/golden/retail")
    shutil.copytree(FIX / "reference_cards", "results/cards/retail")
    shutil.copy(PARTITION, tmp_path / "partition.yaml")
    shutil.copy(ROOT / "config" / "arms.yaml", tmp_path / "arms.yaml")
    res = _reference()
    assert res.exit_code == 2 and "has not been frozen" in res.output  # nothing locked yet
    return tmp_path


def _reference(*extra: str):
    return CliRunner().invoke(
        main,
        [
            "reference",
            "--domain",
            "retail",
            "--golden-dir",
            "results/golden/retail",
            "--cards-dir",
            "results/cards/retail",
            "--partition",
            "partition.yaml",
            "--arm-registry",
            "arms.yaml",
            "--out",
            REFERENCE,
            "--locks",
            "locks.yaml",
            *extra,
        ],
    )


def test_freeze_then_verify(work):
    rows = freeze("locks.yaml", today="2026-08-20", extra=ARTIFACTS)
    assert {r["artifact"]: r["action"] for r in rows} == {
        "coordination": "frozen",
        "corpus": "not built, skipped",
        "interpretation": "not built, skipped",
    }
    entry = load_locks("locks.yaml")["coordination"]
    assert entry["version"] == 1 and entry["frozen"] == "2026-08-20" and entry["path"] == REFERENCE
    assert verify_lock("coordination", REFERENCE, "locks.yaml")["version"] == 1
    assert _reference().exit_code == 0  # rebuilding gives the same bytes
    assert freeze("locks.yaml")[0]["action"] == "unchanged"  # once locked, known from the locks file


def test_modified_reference_is_refused(work):
    freeze("locks.yaml", extra=ARTIFACTS)
    path = Path(REFERENCE)
    ref = json.loads(path.read_text())
    ref["tasks"]["902"]["arms"]["social"]["required_calls"][0]["executor"] = "Boreal"
    path.write_text(json.dumps(ref))
    with pytest.raises(LockError) as err:
        verify_lock("coordination", path, "locks.yaml")
    msg = str(err.value)
    assert REFERENCE in msg and "expected sha256" in msg and "actual   sha256" in msg
    assert "incognita freeze --domain <domain> --locks locks.yaml --bump" in msg  # not a domain's own file
    from incognita.access.reference.coordination import load_reference

    with pytest.raises(LockError):
        load_reference(path, locks="locks.yaml")


def test_upstream_change_is_refused_by_the_reference_stage(work):
    freeze("locks.yaml", extra=ARTIFACTS)
    golden = Path("results/golden/retail/905.json")
    doc = json.loads(golden.read_text())
    doc["calls"][1]["counted"], doc["calls"][1]["why_not_counted"] = True, None  # a read becomes required
    golden.write_text(json.dumps(doc))
    res = _reference()
    assert res.exit_code == 2
    assert "refused" in res.output and "incognita freeze --domain <domain> --locks locks.yaml --bump" in res.output


def test_partition_change_is_refused_by_the_reference_stage(work):
    freeze("locks.yaml", extra=ARTIFACTS)
    doc = yaml.safe_load(Path("partition.yaml").read_text())
    doc["holder_maps"]["social"]["holders"]["Fenn"].remove("calculate")
    doc["holder_maps"]["social"]["holders"]["Boreal"].append("calculate")
    Path("partition.yaml").write_text(yaml.safe_dump(doc))
    assert _reference().exit_code == 2


def test_a_registered_arm_changes_the_reference_until_refrozen(work):
    """The reference projects onto every registered arm: a new one is a new reference."""
    freeze("locks.yaml", extra=ARTIFACTS)
    assert _reference().exit_code == 0
    doc = yaml.safe_load(Path("arms.yaml").read_text())
    doc["arms"]["social_declared"] = {**doc["arms"]["social"], "declared": True}
    Path("arms.yaml").write_text(yaml.safe_dump(doc))
    res = _reference()
    assert res.exit_code == 2 and "refused" in res.output
    built = json.loads(Path(REFERENCE).read_text())
    assert built["arms"][-1] == "social_declared" and built["arms"][:3] == ["direct", "indirect", "social"]
    task = next(iter(built["tasks"].values()))
    assert task["arms"]["social_declared"]["role_assignments"] is None  # declared: no discovery to measure
    social, declared = task["arms"]["social"], task["arms"]["social_declared"]
    assert [c["executor"] for c in declared["required_calls"]] == [c["executor"] for c in social["required_calls"]]


def test_refreeze_needs_bump_and_bumps_the_version(work):
    freeze("locks.yaml", extra=ARTIFACTS)
    before = Path("locks.yaml").read_text()
    Path(REFERENCE).write_text("{}\n")
    with pytest.raises(LockError, match="--bump"):
        freeze("locks.yaml", extra=ARTIFACTS)
    assert Path("locks.yaml").read_text() == before  # a refusal writes nothing
    rows = freeze("locks.yaml", bump=True, extra=ARTIFACTS)
    assert rows[0]["action"] == "bumped" and rows[0]["version"] == 2
    verify_lock("coordination", REFERENCE, "locks.yaml")


def test_embedded_version_follows_the_lock(work):
    corpus = Path(ARTIFACTS["corpus"])
    corpus.parent.mkdir(parents=True)
    corpus.write_text("# frozen corpus\nversion: 1\ntasks: ['902']\nlevels:\n  4: ['902']\n")
    freeze("locks.yaml", extra=ARTIFACTS)
    assert load_locks("locks.yaml")["corpus"]["version"] == 1
    corpus.write_text(corpus.read_text().replace("'902'", "'908'"))
    with pytest.raises(LockError, match="changed since it was frozen"):
        verify_lock("corpus", corpus, "locks.yaml")
    freeze("locks.yaml", bump=True, extra=ARTIFACTS)
    assert embedded_version(corpus) == 2 and load_locks("locks.yaml")["corpus"]["version"] == 2
    assert corpus.read_text().startswith("# frozen corpus\nversion: 2\n")  # comments kept
    assert [name for name, _ in verify_all("locks.yaml")] == ["coordination", "corpus"]


def test_cli_freeze_and_verify_locks(work):
    runner = CliRunner()
    res = runner.invoke(main, ["freeze", "--domain", "retail", "--locks", "locks.yaml"])
    assert res.exit_code == 0 and "coordination v1: frozen" in res.output
    res = runner.invoke(main, ["verify-locks", "--locks", "locks.yaml"])
    assert res.exit_code == 0 and "coordination v1: ok" in res.output
    Path(REFERENCE).write_text("{}\n")
    res = runner.invoke(main, ["verify-locks", "--locks", "locks.yaml"])
    assert res.exit_code == 2 and "refused" in res.output
    res = runner.invoke(main, ["freeze", "--domain", "retail", "--bump", "--locks", "locks.yaml"])
    assert res.exit_code == 0 and "coordination v2: bumped" in res.output


def test_unlocked_artifact_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{}")
    with pytest.raises(LockError, match="has not been frozen"):
        verify_lock("coordination", path, tmp_path / "locks.yaml")


def test_the_refreeze_command_names_a_domains_own_locks_file_by_its_domain():
    from incognita.access.freeze import refreeze

    assert refreeze("config/domains/retail/locks.yaml") == "incognita freeze --domain retail --bump"
    assert refreeze("config/domains/mock/locks.yaml", bump=False) == "incognita freeze --domain mock"
    assert refreeze("/tmp/x/locks.yaml") == "incognita freeze --domain <domain> --locks /tmp/x/locks.yaml --bump"
