"""The participant audit scored against faults the scripted participants injected on purpose:
real episodes of our harness (task stages built once per session), read by the reader."""

from __future__ import annotations

import json
from dataclasses import asdict

import pandas as pd
import pytest
from workflow_helpers import FAULTY_CUSTOMER as CUSTOMER
from workflow_helpers import FAULTY_SERVICE as SERVICE
from workflow_helpers import scripted_harness

from incognita.access.reader.fidelity_validation import fidelity_table, write_fidelity_validation
from incognita.access.reader.participant_audit import AuditInputs
from incognita.access.reader.trial_contract import frame
from incognita.access.reader.trial_reading import read_trial
from incognita.common.io import read_json, sha256_file

ARMS = ("direct", "indirect", "social")
TASKS = ("0", "46", "59")  # retail upstream ids


@pytest.fixture(scope="module")
def trials(task_stages, source_dir) -> pd.DataFrame:
    harness = scripted_harness(
        source_dir,
        ARMS,
        {"prober": "scripted:prober", "surveyor": "scripted:surveyor"},
        customer=CUSTOMER,
        service=SERVICE,
    )
    reference = read_json(task_stages / "results/reference/retail/coordination.json")["tasks"]
    inputs = AuditInputs(
        task_stages / "results/cards",
        {"retail": task_stages / "config/domains/retail/partition.yaml"},
        task_stages / "config/arms.yaml",
    )
    rows = []
    for task in TASKS:
        card_path = task_stages / f"results/cards/retail/{task}.json"
        golden_path = task_stages / f"results/golden/retail/{task}.json"
        card, golden = read_json(card_path), read_json(golden_path)
        for arm in ARMS:
            for model in ("prober", "surveyor"):
                record = harness.run_cell(arm, model, f"retail/{task}", 0, card, sha256_file(card_path), golden, "-")
                rows.append(asdict(read_trial(record, reference[task], inputs)))
    return frame(rows)


def test_every_injected_fault_is_found_and_every_finding_is_one(trials):
    table = fidelity_table(trials).set_index("finding")
    injected = table[table["injected"] > 0]
    # Each injected kind occurred (the probabilities are high enough on these 18 episodes) ...
    assert set(injected.index) >= {
        "misreported_value",
        "ungrounded_value",
        "claimed_unmade_change",
        "referred_elsewhere",
        "customer_invented_value",
        "customer_gate_bypass",
    }
    # ... and the audit found each on the reply that carries it, and nothing else.
    assert (injected["recall"] == 1.0).all() and (injected["precision"] == 1.0).all()
    assert (table["findings"] == table["true_findings"]).all()


def test_the_trials_carry_the_scores_and_the_stage_writes_the_table(trials, tmp_path):
    assert trials["participant_faults_scored"].notna().all()
    one = json.loads(trials["participant_faults_scored"].iloc[0])
    assert set(one) == set(fidelity_table(trials)["finding"])
    lines = write_fidelity_validation(trials, tmp_path)
    assert "18 trials with injected participant faults" in lines[0]
    md = (tmp_path / "participant_fidelity_validation.md").read_text()
    assert md.startswith("# participant_fidelity_validation") and "| misreported_value |" in md
    faithful = trials.assign(participant_faults_scored=None)
    assert "no injected participant faults" in write_fidelity_validation(faithful, tmp_path)[0]


def test_trials_the_agent_also_injected_into_are_set_aside(trials, tmp_path):
    """Issue #53: a participant's fault is ground truth only where the agent injected nothing
    into the trial (no failure type, no slipped argument)."""
    clean = trials.assign(injected_failure=None, injected_slips=0)
    whole = fidelity_table(clean).set_index("finding")
    assert whole["set_aside"].sum() == 0
    faults = clean["participant_faults_scored"].map(lambda d: sum(c["injected"] for c in json.loads(d).values()))
    busiest = faults.idxmax()
    touched = clean.assign(injected_slips=(clean.index == busiest).astype(int))
    table = fidelity_table(touched).set_index("finding")
    first = json.loads(clean.loc[busiest, "participant_faults_scored"])
    carried = sum(c["injected"] for c in first.values())
    assert carried > 0 and table["set_aside"].sum() == carried
    assert table["injected"].sum() == whole["injected"].sum() - carried
    for kind, counts in first.items():
        assert table.loc[kind, "set_aside"] == counts["injected"]
        assert table.loc[kind, "findings"] == whole.loc[kind, "findings"] - counts["findings"]
    line = write_fidelity_validation(touched, tmp_path)[0]
    assert f"1 trials ({carried} faults) set aside" in line
