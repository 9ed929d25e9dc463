"""The seam holds for a second domain: tau2's `mock` goes through every access stage by the same
commands the rules run (source, cards, golden replayed to upstream's hash, the coordination
reference and its lock, a scripted episode in every registered arm, the native harness, the
reader), and a task's initial state reaches the golden replay, the episodes and the native run.

Four mock tasks start from an initial state: initialization data, initialization actions, a
message history, and a message history with an environment assertion. In each, the record the
task acts on (`task_2`) exists only in that state, so a stage that dropped it would either fail
the call or end on a database other than upstream's gold state.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from workflow_helpers import copy_workflow

from incognita.access.arm_registry import load_arm_registry
from incognita.access.taxonomy import NATIVE
from incognita.common.io import read_json

DOMAIN = "mock"
INITIAL_STATE_TASKS = (
    "update_task_with_initialization_data",
    "update_task_with_initialization_actions",
    "update_task_with_message_history",
    "update_task_with_history_and_env_assertions",
)
# The one initial-state task with no gold action: its success is an environment assertion only.
ASSERTION_ONLY = "update_task_with_history_and_env_assertions"
MODEL, SPEC = "oracle", "scripted:oracle"  # the profile told who holds what, never slipping
SEED = "20260820"


def incognita(wf: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "incognita", *args], cwd=wf, capture_output=True, text=True)
    assert proc.returncode == 0, f"incognita {args[0]} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A workflow copy with the mock domain through every stage, for the four initial-state tasks."""
    wf = copy_workflow(tmp_path_factory.mktemp("mock_seam"))
    config, source = f"config/domains/{DOMAIN}", f"data/source/{DOMAIN}"
    cards, golden = f"results/cards/{DOMAIN}", f"results/golden/{DOMAIN}"
    reference = f"results/reference/{DOMAIN}/coordination.json"
    incognita(wf, "source", "--domain", DOMAIN, "--out", source, "--version", "26.3")
    tasks = [t["id"] for t in read_json(wf / source / "tasks.json")]
    incognita(wf, "cards", "--domain", DOMAIN, "--source-dir", source, "--version", "26.3", "--out-dir", cards, *tasks)
    incognita(wf, "golden", "--domain", DOMAIN, "--cards-dir", cards, "--out-dir", golden)
    incognita(
        wf, "reference", "--domain", DOMAIN, "--golden-dir", golden, "--cards-dir", cards,
        "--partition", f"{config}/partition.yaml", "--out", reference, "--locks", f"{config}/locks.yaml",
    )  # fmt: skip
    incognita(wf, "verify-locks", "--locks", f"{config}/locks.yaml")
    arms = list(load_arm_registry(wf / "config/arms.yaml").names)
    common = ["--model", MODEL, "--spec", SPEC, "--models-order", MODEL, "--reps", "1", "--seed", SEED]
    for position, task in enumerate(INITIAL_STATE_TASKS):
        incognita(
            wf, "episodes", *common, "--task", f"{DOMAIN}/{task}", "--task-position", str(position),
            "--arms", ",".join(arms), "--budget", "300", "--customer", "scripted:customer",
            "--service", "scripted:desk", "--judge", "none", "--card", f"{cards}/{task}.json",
            "--golden", f"{golden}/{task}.json", "--db", f"{source}/db.json",
            "--partition", f"{config}/partition.yaml", "--domain-prompts", f"{config}/prompts",
            "--vocabulary", f"{config}/vocabulary.yaml", "--out-dir", "results/episodes",
        )  # fmt: skip
    incognita(
        wf, "native", *common, "--customer", "scripted:customer", "--arms", ",".join([*arms, NATIVE]),
        "--tasks", ",".join(f"{DOMAIN}/{t}" for t in INITIAL_STATE_TASKS), "--source-root", "data/source",
        "--cards-root", "results/cards", "--golden-root", "results/golden", "--out-dir", "results/native",
    )  # fmt: skip
    records = sorted(str(p.relative_to(wf)) for p in (wf / "results/episodes").rglob("r0.json"))
    natives = sorted(str(p.relative_to(wf)) for p in (wf / "results/native").glob(f"{MODEL}/{DOMAIN}/*/r0.json"))
    incognita(
        wf, "trials", "--domains", DOMAIN, "--out", "results/trials.parquet", "--csv", "results/trials.csv",
        "--validation", "results/stats/reader_validation.csv", *records, *natives,
    )  # fmt: skip
    return wf


def golden_doc(wf: Path, task: str) -> dict:
    return read_json(wf / f"results/golden/{DOMAIN}/{task}.json")


def clean_hash(wf: Path) -> str:
    """Upstream's hash of the domain's database as shipped, with no initial state."""
    from incognita.access.domain import get_domain
    from incognita.access.golden.upstream_replay import World

    return World(get_domain(DOMAIN), wf / f"data/source/{DOMAIN}/db.json").clean_hash()


def test_every_golden_trajectory_replays_to_upstreams_hash(built):
    tasks = [t["id"] for t in read_json(built / f"data/source/{DOMAIN}/tasks.json")]
    assert len(tasks) == 9
    for task in tasks:
        replay = golden_doc(built, task)["replay"]
        assert replay["match"] and replay["final_hash"] == replay["upstream_hash"], task


def test_the_initial_state_is_in_the_golden_replay(built):
    """Upstream's gold hash of each initial-state task is of a database holding `task_2`: not the
    shipped database's, so a replay that dropped the state could not have matched it."""
    clean = clean_hash(built)
    for task in INITIAL_STATE_TASKS:
        assert golden_doc(built, task)["replay"]["upstream_hash"] != clean, task


def test_every_arm_carries_the_initial_state_into_its_episodes(built):
    """Each registered arm ends each initial-state task on upstream's gold state; the assertion-only
    task's state is its message history's (no agent action is asked), which differs from the
    shipped database's too."""
    arms = load_arm_registry(built / "config/arms.yaml").names
    for task in INITIAL_STATE_TASKS:
        gold = golden_doc(built, task)["replay"]["upstream_hash"]
        for arm in arms:
            record = read_json(built / f"results/episodes/{arm}/{MODEL}/{DOMAIN}/{task}/r0.json")
            assert record["error"] is None, (arm, task, record["error"])
            assert record["final_db_hash"] == gold, (arm, task)
            assert record["channels"]["db"] is True, (arm, task)


def test_the_native_harness_starts_from_the_initial_state(built):
    for task in INITIAL_STATE_TASKS:
        result = read_json(built / f"results/native/{MODEL}/{DOMAIN}/{task}/r0.json")
        (simulation,) = result["simulations"]
        assert simulation["reward_info"]["db_check"]["db_match"] is True, task


def test_the_reader_labels_every_trial(built):
    trials = pd.read_parquet(built / "results/trials.parquet")
    arms = load_arm_registry(built / "config/arms.yaml").names
    assert len(trials) == len(INITIAL_STATE_TASKS) * (len(arms) + 1)
    assert set(trials["task"]) == {f"{DOMAIN}/{t}" for t in INITIAL_STATE_TASKS}
    assert not trials["excluded"].any()
    ours = trials[trials["arm"] != NATIVE]
    # The tasks whose success rests on the database alone succeed in every arm; a failure is labelled.
    for task in ("update_task_with_initialization_actions", "update_task_with_message_history"):
        assert (ours.loc[ours["task"] == f"{DOMAIN}/{task}", "success"] == 1).all(), task
    failed = ours[ours["success"] == 0]
    assert failed["failure_type"].notna().all()
    # Upstream asks the assertion-only task's agent for no action, yet asserts a change: no arm passes it.
    assert (ours.loc[ours["task"] == f"{DOMAIN}/{ASSERTION_ONLY}", "success"] == 0).all()
