"""The airline's golden trajectories (incognita.access.domains.airline.golden): on all 50 upstream
tasks the reference actions are kept verbatim, every argument of every call that succeeds has a
provenance, the replay reproduces upstream's gold-state hash, and the trajectory, played as a
conversation, scores 1.0 in tau2's own evaluator."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from incognita.access.domain import get_domain
from incognita.access.golden.provenance import leaves, load_vocabulary
from incognita.access.golden.trajectory import build_golden, check_golden
from incognita.access.golden.upstream_replay import World, reference_actions_of, replay_rows, upstream_hash
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[4]
_environment = get_domain("airline").upstream.environment
CONFIG = ROOT / "config" / "domains" / "airline"


def test_every_golden_trajectory_replays_to_upstreams_hash(golden, tasks):
    assert len(golden) == len(tasks) == 50
    rows = replay_rows(golden.items())
    assert [r[0] for r in rows if r[3] != "true"] == []
    for doc in golden.values():
        assert not doc["replay"]["unexpected_errors"] and not doc["replay"]["result_diffs"]


def _uses(prov: dict) -> list[int]:
    out = [prov["call"]] if prov.get("kind") == "read" else []
    for sub in prov.get("from", []):
        out += _uses(sub)
    return out


def test_every_argument_has_its_provenance(golden, tasks, cards):
    kinds, unsourced = Counter(), []
    for task, doc in golden.items():
        check_golden(doc, f"golden {task}")
        upstream = tasks[task]["evaluation_criteria"].get("actions") or []
        assert [(a["name"], a["arguments"]) for a in reference_actions_of(doc)] == [
            (a["name"], a["arguments"]) for a in upstream
        ]
        tokens = {f["token"] for f in cards[task]["fields"]}
        for call in doc["calls"]:
            assert set(call["provenance"]) == {p for p, _ in leaves(call["arguments"])}, (task, call["index"])
            for prov in call["provenance"].values():
                kinds[prov["kind"]] += 1
                if call["error"] is None and prov["kind"] == "unsourced":
                    # only a value upstream's gold invents, where the ambiguities file lists it
                    assert prov["why"] == "upstream_ambiguity", (task, call["index"])
                    unsourced.append((task, call["name"]))
                assert all(j < call["index"] for j in _uses(prov)), (task, call["index"])
                if prov["kind"] == "field":
                    assert prov["token"] in tokens
            if call["origin"] == "inserted":
                assert call["tool_type"] == "read" and call["error"] is None, (task, call["index"])
    # Values the customer says, the policy's terms, reads, and what the policy's rules derive.
    assert {"field", "policy", "read", "derived"} <= set(kinds)
    assert unsourced == [("35", "book_reservation")]  # a birth date no record holds


def test_a_value_upstream_invents_needs_its_listing(cards, stages):
    """Task 35's gold books the customer with a birth date no record holds: listed in the
    ambiguities file it stays unsourced; unlisted, the stage fails naming the argument."""
    world = World(get_domain("airline"), stages / "source" / "db.json")
    vocab = load_vocabulary(str(CONFIG / "vocabulary.yaml"))
    with pytest.raises(InputError, match=r"task 35, call \d+ \(book_reservation.*/passengers/0/dob = '1985-04-04'"):
        build_golden(cards["35"], world, vocab, where="card 35", verify_replay=False, ambiguities={})


def test_a_derivation_holds_only_when_its_rule_gives_the_value(cards, stages):
    """A certificate the policy does not grant (not $50 or $100 times the reservation's passengers)
    has no provenance, although the tool would send it: no read's number stands in for it, not even
    one the reservation read holds ($87, the price of its first flight)."""
    world = World(get_domain("airline"), stages / "source" / "db.json")
    vocab = load_vocabulary(str(CONFIG / "vocabulary.yaml"))
    card = json.loads(json.dumps(cards["38"]))
    (send,) = [a for a in card["reference_actions"] if a["name"] == "send_certificate"]
    assert send["arguments"]["amount"] == 50
    send["arguments"]["amount"] = 87
    with pytest.raises(InputError, match=r"send_certificate.*argument /amount = 87 has no provenance"):
        build_golden(card, world, vocab, where="tampered card 38", verify_replay=False)


def test_a_task_that_only_reads_ends_on_upstreams_clean_hash(golden, tasks, stages, monkeypatch):
    """The gold state of a task whose actions only read is the clean database's, hashed by
    upstream once per world (an environment per such task cost a second each)."""
    world = World(get_domain("airline"), stages / "source" / "db.json")
    read_only = [
        t
        for t in tasks.values()
        if all(world.tool_types[a["name"]] == "read" for a in t["evaluation_criteria"]["actions"] or [])
    ]
    assert len(read_only) == 19
    made = []
    upstream = get_domain("airline").upstream
    monkeypatch.setattr(upstream, "environment", lambda **kw: made.append(1) or _environment(**kw))
    for task in read_only:
        assert upstream_hash(world, task["evaluation_criteria"]["actions"] or []) == world.clean_hash()
        assert golden[task["id"]]["replay"]["upstream_hash"] == world.clean_hash()
    assert len(made) == 1


def _conversation(doc: dict, card: dict, task: dict, environment):
    """The golden trajectory as tau2 messages: each call made on a fresh environment of the task by
    tau2's own `Environment.get_response` (so each tool message is what the harness would record),
    then one message telling the customer the information items."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason

    env = environment()
    messages = [UserMessage(role="user", content=card["opening_line"])]
    for call in doc["calls"]:
        tool_call = ToolCall(id=f"call_{call['index']}", name=call["name"], arguments=call["arguments"])
        messages.append(AssistantMessage(role="assistant", tool_calls=[tool_call]))
        messages.append(env.get_response(tool_call))
    told = [str(item["info"]) for item in doc["information_channel"]]
    messages.append(AssistantMessage(role="assistant", content="; ".join(told) if told else "Done."))
    return SimulationRun(
        id=f"golden-{task['id']}", task_id=task["id"], start_time="", end_time="", duration=0.0,
        termination_reason=TerminationReason.AGENT_STOP, messages=messages,
    )  # fmt: skip


def test_every_golden_trajectory_scores_one_in_taus_evaluator(golden, cards, tasks, stages, monkeypatch):
    """tau2's `evaluate_simulation` with every channel of the tasks' reward basis (database and
    information; the natural-language assertions are not in it). What is ours is how its
    environments are made, for speed: upstream's airline constructor on a clean copy of the same
    database file that a run gives back restored (`World.private_toolkit`), and the database hash
    from cached record text (`World.db_hash`), which equals upstream's `get_db_hash` on every such
    copy (incognita.access.golden.db_hashing; the golden stage checked it on all 50 gold states).
    Upstream's own, a fresh copy and a full dump per environment, took 207 s for the 50 tasks."""
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import Environment
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry

    world = World(get_domain("airline"), stages / "source" / "db.json")
    upstream = get_domain("airline").upstream
    lent = []

    def environment(solo_mode: bool = False):
        lent.append(world.private_toolkit())
        return upstream.environment(db=lent[-1].db, solo_mode=solo_mode)

    monkeypatch.setattr(registry, "get_env_constructor", lambda name: environment)
    monkeypatch.setattr(Environment, "get_db_hash", lambda env: world.db_hash(env.tools.db))
    rewards = {}
    for task_id, doc in golden.items():
        task = Task.model_validate(tasks[task_id])
        simulation = _conversation(doc, cards[task_id], tasks[task_id], environment)
        info = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain="airline")
        rewards[task_id] = info.reward
        while lent:
            world.release(lent.pop())
    assert len(rewards) == 50 and {t: r for t, r in rewards.items() if r != 1.0} == {}
    # The check has teeth: a trajectory without its last write ends elsewhere and scores 0.
    task_id = "8"
    doc = json.loads(json.dumps(golden[task_id]))
    doc["calls"] = [c for c in doc["calls"] if c["name"] != "book_reservation"]
    simulation = _conversation(doc, cards[task_id], tasks[task_id], environment)
    info = evaluate_simulation(simulation, Task.model_validate(tasks[task_id]), EvaluationType.ALL, False, "airline")
    assert info.reward == 0.0 and info.db_check.db_match is False
