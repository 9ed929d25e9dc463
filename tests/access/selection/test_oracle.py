"""The oracle check: the oracle profile on upstream tasks, and how a failure is described."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from workflow_helpers import retail_inputs

from incognita.access.selection.oracle import HEADER, first_difference, run_tasks, summary, write_table

ROOT = Path(__file__).resolve().parents[3]
TASKS = ("11", "46", "100")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, task_inputs) -> Path:
    """Cards and golden files of three retail tasks: 11 (a return the rules settle), 46 (the robotic
    vacuum cleaner among two, settled since builder 3) and 100 (a payment method the upstream
    instructions never name: ambiguous upstream)."""
    return task_inputs(tmp_path_factory.mktemp("oracle"), TASKS)


@pytest.fixture(scope="module")
def rows(inputs, source_dir):
    return run_tasks(
        list(TASKS),
        inputs / "cards" / "retail",
        inputs / "golden" / "retail",
        corpus={"46", "100"},
        inputs=retail_inputs(source_dir),
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )


def test_solved_tasks_carry_no_diagnosis_and_a_failure_names_its_argument(rows, tmp_path):
    by_task = {r["task"]: r for r in rows}
    assert set(by_task) == set(TASKS) and list(rows[0]) == HEADER
    for task in ("11", "46"):
        assert by_task[task]["success"] == "true", by_task[task]
        assert by_task[task]["first_wrong"] == by_task[task]["why"] == ""
    # 100: the price difference is paid with a card the instructions never name.
    assert by_task["100"]["success"] == "false"
    assert by_task["100"]["first_wrong"].startswith("modify_pending_order_items."), by_task["100"]
    assert by_task["100"]["got"] != by_task["100"]["expected"]
    assert by_task["100"]["corpus"] == "true" and by_task["11"]["corpus"] == "false"
    write_table(rows, tmp_path / "oracle.tsv")
    lines = (tmp_path / "oracle.tsv").read_text().splitlines()
    assert lines[0].split("\t") == HEADER and len(lines) == 1 + len(TASKS)
    assert summary(rows).startswith("oracle solves 2 of 3 tasks (1 of 2 corpus tasks)")


def _record(events, success=False, communicate=None):
    return {"events": events, "success": success, "channels": {"db": success, "communicate": communicate}}


def _decision(tool, args, status="accepted", reason=None, write=True):
    """A gateway decision as the record holds it (`write`: the gateway's own flag, Gateway.is_write)."""
    return {
        "type": "gateway_decision",
        "tool": tool,
        "arguments": args,
        "write": write,
        "status": status,
        "reason": reason,
    }


GOLDEN = {
    "calls": [
        {"name": "get_order_details", "tool_type": "read", "arguments": {"order_id": "#W1"}},
        {
            "name": "return_delivered_order_items",
            "tool_type": "write",
            "arguments": {"order_id": "#W1", "item_ids": ["a", "b"], "payment_method_id": "paypal_1"},
        },
    ],
    "information_channel": [{"info": "12.50"}],
}


def test_first_difference_names_the_argument_and_the_values():
    args = copy.deepcopy(GOLDEN["calls"][1]["arguments"])
    args["item_ids"][1] = "c"
    diff = first_difference(_record([_decision("return_delivered_order_items", args)]), GOLDEN)
    assert diff["first_wrong"] == "return_delivered_order_items.item_ids/1"
    assert (diff["got"], diff["expected"]) == ("c", "b")


def test_a_refused_write_says_why_and_a_missing_one_says_not_made():
    bad = dict(GOLDEN["calls"][1]["arguments"], payment_method_id="credit_card_2")
    diff = first_difference(
        _record([_decision("return_delivered_order_items", bad, "error", "original payment method")]), GOLDEN
    )
    assert diff["first_wrong"] == "return_delivered_order_items.payment_method_id"
    assert "original payment method" in diff["why"]
    gave_up = {
        "type": "message",
        "sender": "agent",
        "recipient": "USER",
        "text": "I am sorry, I could not complete your request (nothing matches).",
    }
    diff = first_difference(_record([gave_up]), GOLDEN)
    assert (diff["first_wrong"], diff["got"], diff["why"]) == (
        "return_delivered_order_items",
        "(not made)",
        "nothing matches",
    )


def test_extra_writes_and_untold_information_are_named():
    right = GOLDEN["calls"][1]["arguments"]
    extra = _record(
        [_decision("return_delivered_order_items", right), _decision("cancel_pending_order", {"order_id": "#W2"})]
    )
    assert first_difference(extra, GOLDEN)["first_wrong"] == "extra cancel_pending_order"
    # A read is no change; a hand-off is one (the domain's handoff tools).
    read = _decision("get_order_details", {"order_id": "#W2"}, write=False)
    only_read = first_difference(_record([_decision("return_delivered_order_items", right), read]), GOLDEN)
    assert only_read["first_wrong"] == "database"  # the writes match the gold: no extra change
    handoff = _decision("transfer_to_human_agents", {"summary": "help"}, write=False)
    made = _record([_decision("return_delivered_order_items", right), handoff])
    assert first_difference(made, GOLDEN, frozenset({"transfer_to_human_agents"}))["first_wrong"] == (
        "extra transfer_to_human_agents"
    )
    told = {"type": "message", "sender": "agent", "recipient": "USER", "text": "The refund is 10.00."}
    diff = first_difference(
        _record([_decision("return_delivered_order_items", right), told], communicate=False), GOLDEN
    )
    assert (diff["first_wrong"], diff["expected"]) == ("information", "12.50")
