"""The reader stage's command (`incognita trials`, incognita.access.reader.reader_stage): episode
records and native results in, the trials table and the reader's validation out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from incognita.cli import main

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "reader"
EPISODES = sorted(FIX.glob("*.json"))


def _native_result(path: Path) -> None:
    """The few fields of a native result (incognita.access.native.native_run) that its row builder
    (incognita.access.native.native_results) reads."""
    facts = {
        "model": "handmade",
        "task": "retail/901",
        "rep": 0,
        "seed": 7,
        "schedule_position": 3,
        "overlay_version": 0,
        "card": {"version": 1, "sha256": "0" * 64},
        "error": None,
        "ground_truth": {"injected": None},
    }
    sim = {
        "termination_reason": "user_stop",
        "agent_cost": 0.5,
        "user_cost": 0.25,
        "messages": [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "hi"}],
        "reward_info": {"reward": 0.0, "reward_breakdown": {"DB": 0.0}, "info": {"incognita": facts}},
    }
    path.write_text(json.dumps({"simulations": [sim]}))


def domain_folders(locked, root: Path) -> tuple[Path, Path]:
    """The reference root and the domains' config folder the command reads: the made-up tasks'
    frozen reference as retail's, with its lock, and retail's shipped holder maps and
    hand-labelled trajectories."""
    ref, locks = locked
    reference_root, domains_config = root / "reference", root / "domains"
    (reference_root / "retail").mkdir(parents=True)
    shutil.copy(ref, reference_root / "retail" / "coordination.json")
    shutil.copytree(ROOT / "config/domains/retail/reader_validation", domains_config / "retail" / "reader_validation")
    shutil.copy(ROOT / "config/domains/retail/partition.yaml", domains_config / "retail" / "partition.yaml")
    shutil.copy(locks, domains_config / "retail" / "locks.yaml")
    return reference_root, domains_config


def test_trials_command(locked, tmp_path):
    reference_root, domains_config = domain_folders(locked, tmp_path / "config")
    native = tmp_path / "native.json"
    _native_result(native)
    out = tmp_path / "results"
    args = [
        "--domains",
        "retail",
        "--reference-root",
        str(reference_root),
        "--domains-config",
        str(domains_config),
        "--out",
        str(out / "trials.parquet"),
        "--csv",
        str(out / "trials.csv"),
        "--validation",
        str(out / "stats" / "reader_validation.csv"),
    ]
    # The hand-made fixtures have no cards: the audit stops on the first, naming it.
    res = CliRunner().invoke(main, ["trials", *args, "--cards-root", str(tmp_path), *map(str, EPISODES)])
    assert res.exit_code == 2 and "no card for task" in res.output and str(tmp_path) in res.output
    args.append("--no-audit")
    res = CliRunner().invoke(main, ["trials", *args, *map(str, EPISODES), str(native)])
    assert res.exit_code == 0, res.output
    assert "11 trials (1 native, 1 excluded, 7 failed and labelled)" in res.output
    df = pd.read_parquet(out / "trials.parquet")
    row = df[df.arm == "native"].iloc[0]
    assert row.success == 0.0 and pd.isna(row.failure_type) and row.cost_episode_usd == 0.75
    assert df["participant_messages"].isna().all() and df["failure_attribution"].isna().all()  # not audited
    assert (out / "stats" / "reader_validation.md").exists()
    assert (out / "stats" / "reader_validation_labelled.csv").exists()  # retail's hand-labelled set was read
    # With no paths, every record under --episodes is read.
    episodes = tmp_path / "episodes"
    for path in EPISODES:
        cell = json.loads(path.read_text())["cell"]
        target = episodes / cell["arm"] / cell["model"] / cell["task"] / f"r{cell['rep']}.json"  # .../retail/901/
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    res = CliRunner().invoke(main, ["trials", *args, "--episodes", str(episodes)])
    assert res.exit_code == 0, res.output
    assert "10 trials (0 native" in res.output
