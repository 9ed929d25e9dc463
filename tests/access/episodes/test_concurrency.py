"""A job's cells run at once give the records they give one after another (issue #26).

Offline: the scripted population, every arm of two repetitions, one worker against four.
Against the loopback: tests/access/episodes/test_loopback_twins.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from workflow_helpers import scripted_harness

from incognita.access.episodes.harness import arm_order
from incognita.access.taxonomy import HARNESS_ARMS as ARMS

ROOT = Path(__file__).resolve().parents[3]
TASK, MODELS = "retail/11", ["surveyor", "impatient"]
WALL_CLOCK = ("wall_time_s",)


@pytest.fixture(scope="module")
def harness(source_dir):
    return scripted_harness(source_dir, (*ARMS, "native"), {m: f"scripted:{m}" for m in MODELS}, repetitions=2)


@pytest.fixture(scope="module")
def inputs(task_inputs, tmp_path_factory):
    out = task_inputs(tmp_path_factory.mktemp("inputs"), [TASK.split("/")[1]])
    return str(out / "cards" / f"{TASK}.json"), str(out / "golden" / f"{TASK}.json")  # <root>/retail/11.json


def records(paths: list[Path]) -> dict[str, dict]:
    out = {}
    for path in paths:
        doc = json.loads(Path(path).read_text())
        for field in WALL_CLOCK:
            doc.pop(field)
        out[str(Path(path).relative_to(Path(path).parents[4]))] = doc  # <arm>/<model>/<domain>/<id>/r<rep>.json
    return out


def run(harness, inputs, out: Path, workers: int, model: str = "surveyor") -> list[Path]:
    return harness.run_blocks(model, TASK, 2, *inputs, str(out), task_position=0, models_order=MODELS, workers=workers)


def test_cells_at_once_write_the_records_of_cells_one_by_one(harness, inputs, tmp_path):
    one = run(harness, inputs, tmp_path / "one", workers=1)
    four = run(harness, inputs, tmp_path / "four", workers=4)
    assert len(one) == 2 * len(ARMS)  # the native arm keeps its position but runs elsewhere
    assert [p.relative_to(tmp_path / "one") for p in one] == [p.relative_to(tmp_path / "four") for p in four]
    assert records(one) == records(four)
    for doc in records(four).values():  # the Latin-square position is a label, the same however cells ran
        cell = doc["cell"]
        order = arm_order(harness.design.arms, MODELS, "surveyor", 0, cell["rep"])
        assert cell["schedule_position"] == order.index(cell["arm"])


def test_a_failing_cell_stops_the_job_and_names_its_error(harness, inputs, tmp_path, monkeypatch):
    real = harness.run_cell

    def broken(arm, *args, **kwargs):
        if arm == "social":
            raise RuntimeError("social cell broke")
        return real(arm, *args, **kwargs)

    monkeypatch.setattr(harness, "run_cell", broken)
    with pytest.raises(RuntimeError, match="social cell broke"):
        run(harness, inputs, tmp_path, workers=4)


def test_cells_finishing_in_reverse_order_still_write_the_sequential_records(harness, inputs, tmp_path, monkeypatch):
    """Completion order must not reach a record: the cells that start first are held back the
    longest, so they finish last, and the records still equal the one-at-a-time run's."""
    one = records(run(harness, inputs, tmp_path / "one", workers=1))
    real, finished = harness.run_cell, []

    def held(arm, *args, **kwargs):
        out = real(arm, *args, **kwargs)
        time.sleep(0.15 * (len(ARMS) - ARMS.index(arm)))  # direct waits longest, social least
        finished.append(arm)
        return out

    monkeypatch.setattr(harness, "run_cell", held)
    reversed_run = records(run(harness, inputs, tmp_path / "reversed", workers=len(ARMS) * 2))
    assert finished[: len(finished) // 2].count("social") >= 1 and finished[-1] == "direct"  # the order did change
    assert reversed_run == one


def test_harness_marks_the_longest_expected_arm_as_critical(source_dir):
    """Cells of the arm the cost model expects to run longest (social, of the paper's arms) may use
    the reserve; the others leave it. In a design of one arm, every cell is critical."""
    entry = {"spec": "openai:gpt-x", "base_url": "http://127.0.0.1:9/v1"}
    harness = scripted_harness(source_dir, ("direct", "indirect", "social", "native"), {"gpt-x": entry})
    assert harness.critical_arms == {"social"}

    def backend(arm):
        cell = {"family": "access", "arm": arm, "model": "gpt-x", "task": TASK, "rep": 0}
        return harness._make(harness.design.models["gpt-x"], "agent", {}, cell)

    assert backend("social").critical and not backend("direct").critical and not backend("indirect").critical
    assert scripted_harness(source_dir, ("direct",), {}).critical_arms == {"direct"}
