"""The participant audit's validation against injected faults on the airline (issue #54, item 7):
real episodes of our harness on airline tasks, with the scripted desks and customer injecting every
fault, read by the reader. The faults' values are the airline's identifiers (its reader part), so
the audit finds each fault on the reply that carries it, as on retail
(tests/access/reader/test_fidelity_validation.py)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from workflow_helpers import FAULTY_CUSTOMER as CUSTOMER
from workflow_helpers import FAULTY_SERVICE as SERVICE

from incognita.access.reader.fidelity_validation import fidelity_table
from incognita.access.reader.participant_audit import AuditInputs
from incognita.access.reader.trial_contract import frame
from incognita.access.reader.trial_reading import read_trial
from incognita.cli import main
from incognita.common.io import read_json, sha256_file

ROOT = Path(__file__).resolve().parents[4]
CONFIG = ROOT / "config" / "domains" / "airline"
ARMS = ("direct", "indirect", "social")
TASKS = ("7", "8", "11", "35")  # corpus tasks: a profile, reservations and writes at 2-4 desks


@pytest.fixture(scope="module")
def trials(stages, tmp_path_factory) -> pd.DataFrame:
    from incognita.access.episodes.harness import DomainInputs, Harness, HarnessSettings

    reference = tmp_path_factory.mktemp("airline-audit") / "coordination.json"
    res = CliRunner().invoke(
        main,
        ["reference", "--domain", "airline", "--golden-dir", str(stages / "golden"), "--cards-dir",
         str(stages / "cards"), "--partition", str(CONFIG / "partition.yaml"), "--out", str(reference)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    design = HarnessSettings(
        arms=ARMS,
        models={"prober": "scripted:prober", "surveyor": "scripted:surveyor"},
        repetitions=1,
        seed=20260820,
        budget=300,
        customer=CUSTOMER,
        service=SERVICE,
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )
    inputs = DomainInputs.of(
        "airline",
        db=str(stages / "source" / "db.json"),
        partition=str(CONFIG / "partition.yaml"),
        vocabulary=str(CONFIG / "vocabulary.yaml"),
        prompts=str(CONFIG / "prompts"),
    )
    harness = Harness(design, inputs)
    # The cards live in <root>/airline/ for the audit (paths.card_file); the stages keep them flat.
    cards_root = tmp_path_factory.mktemp("airline-cards")
    (cards_root / "airline").symlink_to(stages / "cards")
    audit_inputs = AuditInputs(cards_root, {"airline": CONFIG / "partition.yaml"}, ROOT / "config/arms.yaml")
    needed = read_json(reference)["tasks"]
    rows = []
    for task in TASKS:
        card_path = stages / "cards" / f"{task}.json"
        card, golden = read_json(card_path), read_json(stages / "golden" / f"{task}.json")
        for arm in ARMS:
            for model in design.models:
                record = harness.run_cell(arm, model, f"airline/{task}", 0, card, sha256_file(card_path), golden, "-")
                rows.append(asdict(read_trial(record, needed[task], audit_inputs)))
    return frame(rows)


def test_every_fault_injected_on_airline_is_found_and_every_finding_is_one(trials):
    table = fidelity_table(trials).set_index("finding")
    injected = table[table["injected"] > 0]
    # An invented date is a misreported value here: these desks' results hold dates (the audit's rule).
    assert set(injected.index) == {
        "misreported_value",
        "claimed_unmade_change",
        "referred_elsewhere",
        "named_tool",
        "formatted_list",
        "customer_invented_value",
        "customer_gate_bypass",
    }, table
    assert (injected["recall"] == 1.0).all(), table
    assert (injected["precision"] == 1.0).all(), table
    assert (table["findings"] == table["true_findings"]).all(), table


def test_a_flight_number_is_no_reservation_number():
    from incognita.access.domains.airline.reader import VALUE_SHAPES

    # Both are six capitals and digits; reading HAT005 as a reservation made the customer's
    # agreement to a restated flight an agreement outside its memory.
    assert VALUE_SHAPES.values("Flight HAT005 on reservation 4WQ150.") == {
        ("flight_number", "hat005"),
        ("reservation_id", "4wq150"),
    }
