"""The CollabSim engine: communication controls, visibility, invalid actions, replay, config
errors. DayTrader serves as the task; participants are fixed answer lists so every event is
known in advance."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from incognita.collabsim.engine import Engine, parse_actions
from incognita.collabsim.run import events_bytes, simulate
from incognita.collabsim.world.experiment import Communication, load_experiment
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[2]
DAYTRADER = ROOT / "config/collabsim/daytrader/baseline.yaml"


class Fixed:
    """Answers from a list (then passes); keeps every observation it was shown."""

    def __init__(self, answers: list) -> None:
        self.answers = list(answers)
        self.seen: list[dict] = []

    def act(self, observation: dict) -> str:
        self.seen.append(observation)
        answer = self.answers.pop(0) if self.answers else {"action": "do_nothing"}
        return answer if isinstance(answer, str) else json.dumps(answer)

    def probe(self, prompt: str) -> str:
        return json.dumps(
            {
                "answers": [
                    {"id": q, "answer": "fine", "confidence": 0.5, "fields": {}}
                    for q in ("situation", "partners", "plan")
                ]
            }
        )


def engine(
    answers: dict[str, list], rounds: int = 2, turn_taking: str | None = None, **communication
) -> tuple[Engine, dict[str, Fixed]]:
    exp = load_experiment(DAYTRADER)
    exp = replace(
        exp,
        params={**exp.params, "rounds": rounds, "discussion_every": 0},
        communication=replace(exp.communication, **communication) if communication else exp.communication,
        protocol=replace(exp.protocol, turn_taking=turn_taking or exp.protocol.turn_taking),
    )
    players = {a: Fixed(answers.get(a, [])) for a in ("A", "B", "C")}
    return Engine(exp, 1, players), players


def kinds(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["kind"] == kind]


def msg(text: str, to: str = "all") -> dict:
    return {"action": "message", "to": to, "text": text}


def test_a_message_over_the_word_limit_is_rejected_whole_and_only_the_sender_is_told():
    long = "one two three four five six seven"
    eng, players = engine({"A": [[msg(long)], [msg("short one")]]}, max_words=6)
    events = eng.run()
    rejected = kinds(events, "message_rejected")
    assert len(rejected) == 1
    assert rejected[0]["payload"]["text"] == long  # kept whole, not truncated
    assert "7 words" in rejected[0]["payload"]["reason"] and "6" in rejected[0]["payload"]["reason"]
    assert rejected[0]["visibility"] == ["A"]
    assert [e["payload"]["text"] for e in kinds(events, "message")] == ["short one"]
    # A learns of the rejection in its next observation; B and C never see it.
    assert any(e["kind"] == "message_rejected" for e in players["A"].seen[1]["events"])
    assert not any(e["kind"] == "message_rejected" for p in ("B", "C") for o in players[p].seen for e in o["events"])


def test_direct_messages_and_actions_are_hidden_from_others_unless_observed():
    answers = {"A": [[msg("psst", to="B"), {"action": "make_group_investment", "amount": 20}]]}
    eng, players = engine(answers, mode="direct")
    events = eng.run()
    sent = kinds(events, "message")[0]
    assert sent["visibility"] == ["A", "B"]
    seen_by = {p: [e for o in players[p].seen for e in o["events"]] for p in players}
    assert any(e["kind"] == "message" for e in seen_by["B"])
    assert not any(e["kind"] == "message" for e in seen_by["C"])
    invest = [e for e in events if e["kind"] == "action" and e["actor"] == "A"][0]
    assert invest["visibility"] == ["A"]
    assert not any(e["kind"] == "action" and e["actor"] == "A" for e in seen_by["B"] + seen_by["C"])


def test_an_observer_sees_the_observed_agents_actions_and_state():
    exp = load_experiment(DAYTRADER)
    exp = replace(exp, observes={"A": (), "B": (), "C": ("A",)}, params={**exp.params, "rounds": 1})
    players = {a: Fixed([{"action": "make_group_investment", "amount": 20}] if a == "A" else []) for a in "ABC"}
    events = Engine(exp, 1, players).run()
    invest = [e for e in events if e["kind"] == "action" and e["actor"] == "A"][0]
    assert invest["visibility"] == ["A", "C"]
    assert "peers" in players["C"].seen[0]["state"] and "peers" not in players["B"].seen[0]["state"]


@pytest.mark.parametrize(
    "answer, reason",
    [
        ("this is not json", "not JSON"),
        ({"action": "fly"}, "unknown action 'fly'"),
        ({"action": "make_group_investment", "amount": 500}, "outside 15-100"),
        ({"action": "make_group_investment", "amount": "lots"}, "whole number"),
        (
            [{"action": "make_group_investment", "amount": 20}, {"action": "make_individual_investment", "amount": 20}],
            "at most 1 action",
        ),
        ({"action": "message", "to": "all", "text": ""}, "non-empty"),
        ({"action": "message", "to": "Z", "text": "hi"}, "everyone"),
    ],
)
def test_each_invalid_action_is_an_event_and_the_run_goes_on(answer, reason):
    eng, players = engine({"A": [answer, {"action": "make_individual_investment", "amount": 20}]})
    events = eng.run()
    problems = kinds(events, "invalid_action") + kinds(events, "message_rejected")
    assert len(problems) == 1 and reason in problems[0]["payload"]["reason"]
    assert problems[0]["visibility"] == ["A"]
    # the run continued: A's next turn was applied, and the run ended normally
    assert any(
        e["kind"] == "action" and e["actor"] == "A" and e["payload"]["action"] == "make_individual_investment"
        for e in events
    )
    assert events[-1]["kind"] == "run_end"


def test_not_allowed_in_the_discussion_phase():
    exp = load_experiment(DAYTRADER)
    exp = replace(exp, params={**exp.params, "rounds": 2, "discussion_every": 1})
    answers = [{"action": "make_group_investment", "amount": 20}] * 3
    players = {a: Fixed(answers) for a in "ABC"}
    events = Engine(exp, 1, players).run()
    refused = [e for e in kinds(events, "invalid_action") if "discussion" in e["payload"]["reason"]]
    assert len(refused) == 3  # the second turn of each player falls in the discussion phase


@pytest.mark.parametrize("turn_taking, first_step_seen", [("simultaneous", 1), ("round_robin", 0)])
def test_a_simultaneous_turn_sees_a_teammates_message_only_in_the_next_step(turn_taking, first_step_seen):
    eng, players = engine({"A": [msg("I will pool")]}, rounds=3, turn_taking=turn_taking)
    eng.run()
    for agent in ("B", "C"):  # later in agent order than A, so round-robin shows it at once
        steps = [o["step"] for o in players[agent].seen if any(e.get("text") == "I will pool" for e in o["events"])]
        assert steps == [first_step_seen]


def test_message_pacing_by_actions_and_by_simulated_seconds():
    talk = [[msg("a"), {"action": "do_nothing"}]] * 4
    eng, _ = engine({"A": talk}, rounds=4, min_actions_between=2)
    events = eng.run()
    # messages at steps 0 and 2 pass (two actions in between); steps 1 and 3 are refused
    assert [e["step"] for e in kinds(events, "message")] == [0, 2]
    assert [e["step"] for e in kinds(events, "message_rejected")] == [1, 3]
    eng, _ = engine({"A": talk}, rounds=4, min_seconds_between=120)  # steps are 60 s
    events = eng.run()
    assert [e["step"] for e in kinds(events, "message")] == [0, 2]


def test_a_run_replays_byte_identically_from_its_seed():
    exp = load_experiment(ROOT / "config/collabsim/daytrader/group_size_6.yaml")
    first, again, other = simulate(exp, 3), simulate(exp, 3), simulate(exp, 4)
    assert events_bytes(first) == events_bytes(again)
    assert first.manifest["state_hash"] == again.manifest["state_hash"]
    assert events_bytes(first) != events_bytes(other)
    lines = events_bytes(first).decode().splitlines()
    assert all(json.loads(line)["id"] == n for n, line in enumerate(lines))  # true JSON lines


def test_parse_actions_forms():
    assert parse_actions('{"action": "do_nothing"}') == ([{"action": "do_nothing"}], None)
    assert parse_actions('```json\n{"actions": [{"action": "do_nothing"}]}\n```')[1] is None
    assert parse_actions('{"actions": []}')[1].startswith("no action")
    assert "expected" in parse_actions("[1, 2]")[1]


# --- config errors: one line naming the file and the key ----------------------------------


def write_condition(tmp_path: Path, body: str, baseline_edit=None) -> Path:
    root = tmp_path / "collabsim"
    (root / "daytrader").mkdir(parents=True)
    (root / "prompts").mkdir()
    (root / "scripted").mkdir()
    (root / "prompts/daytrader.md").write_text((ROOT / "config/collabsim/prompts/daytrader.md").read_text())
    (root / "scripted/daytrader.yaml").write_text((ROOT / "config/collabsim/scripted/daytrader.yaml").read_text())
    base = DAYTRADER.read_text()
    (root / "daytrader/baseline.yaml").write_text(baseline_edit(base) if baseline_edit else base)
    path = root / "daytrader/cond.yaml"
    path.write_text(body)
    return path


@pytest.mark.parametrize(
    "body, baseline_edit, expected",
    [
        ("extends: baseline\nvariable: group_size\ndescription: x\nset: {agents.0.cuont: 4}\n", None, None),
        ("extends: baseline\nvariable: group_size\ndescription: x\nset: {protocol.nosuch.x: 4}\n", None, "no 'nosuch'"),
        ("extends: baseline\nvariable: louder\ndescription: x\nset: {agents.0.count: 4}\n", None, "variable"),
        (
            "extends: baseline\nvariable: group_size\ndescription: x\nset: {agents.0.model: 'llama:big'}\n",
            None,
            "unknown backend family 'llama'",
        ),
        (
            "extends: baseline\nvariable: group_size\ndescription: x\nset: {agents.0.model: 'scripted:nobody'}\n",
            None,
            "no scripted profile 'nobody'",
        ),
        (
            "extends: baseline\nvariable: group_size\ndescription: x\nset: {prompts.player: prompts/missing.md}\n",
            None,
            "missing prompt file",
        ),
        ("extends: baseline\nvariable: group_size\ndescription: x\nset: {task_params.rounds_: 3}\n", None, "rounds_"),
    ],
)
def test_config_errors_name_the_problem(tmp_path, body, baseline_edit, expected):
    path = write_condition(tmp_path, body, baseline_edit)
    with pytest.raises(InputError) as err:
        load_experiment(path)
    text = str(err.value)
    assert str(path) in text
    if expected:
        assert expected in text
    else:  # a misspelt key fails the schema with its path
        assert "cuont" in text


def test_a_condition_changes_one_thing_from_its_baseline():
    base = load_experiment(DAYTRADER)
    cond = load_experiment(ROOT / "config/collabsim/daytrader/communication_bandwidth.yaml")
    assert cond.communication == Communication(**{**vars(base.communication), "min_actions_between": 5})
    assert (cond.agents, cond.params, cond.protocol) == (base.agents, base.params, base.protocol)
    assert cond.condition == "communication_bandwidth" and cond.config_hash != base.config_hash


def test_the_action_space_can_narrow_a_role():
    exp = load_experiment(DAYTRADER)
    exp = replace(exp, action_space={"player": ("make_individual_investment",)}, params={**exp.params, "rounds": 1})
    players = {a: Fixed([{"action": "make_group_investment", "amount": 20}]) for a in "ABC"}
    events = Engine(exp, 1, players).run()
    assert len(kinds(events, "invalid_action")) == 3
    assert "unknown action 'make_group_investment'" in kinds(events, "invalid_action")[0]["payload"]["reason"]
    assert players["A"].seen[0]["allowed_actions"] == ["do_nothing", "make_individual_investment", "message"]


@pytest.mark.parametrize("to", [["B"], {"id": "B"}, 7, "A", "Z"])
def test_a_direct_message_to_a_bad_recipient_is_rejected_not_a_crash(to):
    eng, _ = engine({"A": [[msg("hi", to=to)]]}, mode="direct")
    events = eng.run()
    rejected = kinds(events, "message_rejected")
    assert len(rejected) == 1 and "recipient" in rejected[0]["payload"]["reason"]
