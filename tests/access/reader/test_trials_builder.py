"""Every trial of a run read into one table (incognita.access.reader.trials_builder): the reference
lock, unknown tasks and duplicates refused, and the invariants of a generated run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from incognita.access.reader.trials_builder import build_trials, episode_files
from incognita.access.reader.validation import injection_matrix
from incognita.access.reference.freeze import LockError
from incognita.access.taxonomy import FAILURE_TYPES
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "reader"
EPISODES = sorted(FIX.glob("*.json"))


def _data(name: str) -> dict:
    return json.loads((FIX / f"{name}.json").read_text())


def test_reference_lock_is_enforced(locked, tmp_path):
    ref, locks = locked
    ref.write_text(ref.read_text().replace('"level": 4', '"level": 5'))
    with pytest.raises(LockError, match="changed since it was frozen"):
        build_trials(EPISODES, ref, locks_path=locks)
    with pytest.raises(LockError, match="has no lock"):
        build_trials(EPISODES, ref, locks_path=tmp_path / "none.yaml")


def test_unknown_task_and_duplicates_are_refused(locked, tmp_path):
    ref, locks = locked
    data = _data("social_success")
    data["cell"]["task"] = "999"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"bad.json: cell.task"):
        build_trials([bad], ref, locks_path=locks)
    with pytest.raises(InputError, match="appears twice"):
        build_trials([EPISODES[0], EPISODES[0]], ref, locks_path=locks)


RESULTS = ROOT / "results"


@pytest.mark.skipif(not (RESULTS / "episodes").is_dir(), reason="no generated episodes")
def test_invariants_on_generated_episodes():
    df = build_trials(
        episode_files(RESULTS / "episodes"),
        RESULTS / "reference" / "coordination.json",
        locks_path=ROOT / "config" / "locks.yaml",
    )
    scored = df[~df.excluded]
    assert (scored.failure_type.notna() == (scored.success == 0)).all()  # every failure labelled, no success
    assert df.loc[df.arm != "social", ["role_identification", "holder_contacted"]].isna().all().all()
    assert df.loc[df.arm == "social", "role_identification"].notna().all()
    assert (df.agent_actions == df.turns).all()  # one action per agent turn
    assert df.loc[df.arm == "direct", "unanswerable_questions"].eq(0).all()
    m = injection_matrix(df)
    assert m.loc[list(FAILURE_TYPES), "success"].eq(0).all()  # an injected failure never reads as success
    # Slips and deliberately wrong arguments always read as a wrong delivery.
    assert m.loc["delivered_incorrect", "delivered_incorrect"] == m.loc["delivered_incorrect"].sum()
    assert m.loc["requested_not_obtained", "requested_not_obtained"] == m.loc["requested_not_obtained"].sum()
