"""The do-nothing check: the idle profile ends every episode at once; tasks it passes are listed."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import retail_inputs

from incognita.access.selection.idle import HEADER, passed, run_arms, write_table
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, task_inputs) -> Path:
    """Cards and golden files of three retail tasks: 10 (a hand-off only: nothing changes the
    database and nothing must be told), 11 (a return) and 24 (a question only)."""
    return task_inputs(tmp_path_factory.mktemp("idle"), ("10", "11", "24"))


def test_the_idle_agent_does_nothing_and_only_the_empty_task_passes(inputs, source_dir):
    rows = run_arms(
        ["10", "11", "24"],
        inputs / "cards" / "retail",
        inputs / "golden" / "retail",
        inputs=retail_inputs(source_dir),
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )
    assert [(r["task"], r["arm"]) for r in rows] == [
        (t, a) for t in ("10", "11", "24") for a in ("direct", "indirect", "social")
    ]
    # one turn answering the customer's opening, one FINAL: no call, no request to anyone
    assert {(r["turns"], r["termination"]) for r in rows} == {("2", "final")}
    outcome = {(r["task"], r["arm"]): (r["success"], r["channel_db"], r["channel_communicate"]) for r in rows}
    for arm in ("direct", "indirect", "social"):
        assert outcome["10", arm] == ("true", "true", "")  # no communicate_info: that channel is not operative
        assert outcome["11", arm] == ("false", "false", "")  # the return was not made
        assert outcome["24", arm] == ("false", "true", "false")  # the materials were not told


def test_the_idle_profile_is_a_real_knob_that_any_plan_ignores(inputs, source_dir):
    """The profile does nothing because of its own setting, not because it is given nothing to do:
    on task 11's full plan an oracle with `gives_up_at_once` still asks and calls nothing."""
    from incognita.access.episodes.scripted.scripted_agent import Profile

    assert Profile.from_dict("idle", {"gives_up_at_once": True}).gives_up_at_once
    with pytest.raises(ValueError, match="gives_up_at_once must be true or false"):
        Profile.from_dict("idle", {"gives_up_at_once": "yes"})
    rows = run_arms(
        ["11"],
        inputs / "cards" / "retail",
        inputs / "golden" / "retail",
        inputs=retail_inputs(source_dir),
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
        arms=("direct",),
    )
    assert rows[0]["turns"] == "2" and rows[0]["channel_db"] == "false"


def test_table_round_trip_and_bad_tables(tmp_path):
    rows = [
        {
            "task": "10",
            "arm": "direct",
            "success": "true",
            "channel_db": "true",
            "channel_communicate": "",
            "turns": "2",
            "termination": "final",
        },
        {
            "task": "10",
            "arm": "native",
            "success": "true",
            "channel_db": "true",
            "channel_communicate": "true",
            "turns": "3",
            "termination": "user_stop",
        },
        {
            "task": "11",
            "arm": "direct",
            "success": "false",
            "channel_db": "false",
            "channel_communicate": "",
            "turns": "2",
            "termination": "final",
        },
    ]
    write_table(rows, tmp_path / "idle.tsv")
    assert passed(tmp_path / "idle.tsv") == {"10": ["direct", "native"]}
    with pytest.raises(InputError, match="file not found; build it with `incognita idle`"):
        passed(tmp_path / "missing.tsv")
    (tmp_path / "bad.tsv").write_text("task\tarm\n10\tdirect\n")
    with pytest.raises(InputError, match="header"):
        passed(tmp_path / "bad.tsv")
    (tmp_path / "bad.tsv").write_text("\t".join(HEADER) + "\n10\tdirect\tyes\ttrue\t\t2\tfinal\n")
    with pytest.raises(InputError, match="line 2: success = 'yes'"):
        passed(tmp_path / "bad.tsv")
