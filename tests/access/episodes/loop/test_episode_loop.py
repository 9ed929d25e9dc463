"""The episode loop: termination contract, gate, gateway and every bad-input case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from incognita.access.arm_registry import arm_registry
from incognita.access.cards.card import build_card
from incognita.access.episodes.loop.episode_loop import Episode
from incognita.access.episodes.loop.prompts import PromptSet
from incognita.access.episodes.loop.records import (
    Disclosure,
    EpisodeRecord,
    GatewayDecision,
    Message,
    ProtocolError,
    Truncation,
)
from incognita.access.episodes.loop.tool_gateway import Gateway
from incognita.access.episodes.scripted.scripted_customer import ScriptedCustomer
from incognita.access.episodes.scripted.scripted_desk import ScriptedDesk
from incognita.access.reference.partition import load_partition
from incognita.common.backends.base import ModelResponse, ToolCall

ROOT = Path(__file__).resolve().parents[4]
RETAIL = ROOT / "config" / "domains" / "retail"
DESKS = ("Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn")


class Puppet:
    """An agent that replays fixed outputs, then sends FINAL."""

    spec = "puppet:test"

    def __init__(self, outputs):
        self.outputs = list(outputs)
        self.seen = []

    def respond(self, request):
        self.seen.append(request.messages[-1].content if request.messages else None)
        if self.outputs:
            out = self.outputs.pop(0)
            return out if isinstance(out, ModelResponse) else ModelResponse(text=out)
        return ModelResponse(text=final())


class RogueDesk:
    """A service participant that proposes a tool it does not hold, then replies."""

    spec = "rogue:desk"

    def respond(self, request):
        if request.messages[-1].role == "user":
            return ModelResponse(
                tool_calls=(
                    ToolCall("x1", "cancel_pending_order", {"order_id": "#W2378156", "reason": "no longer needed"}),
                )
            )
        return ModelResponse(text="I looked into it.")


def msg(to, text):
    return json.dumps({"recipient": to, "message": text, "message_type": "MESSAGE"})


def final():
    return json.dumps({"recipient": "ENVIRONMENT", "message": "done", "message_type": "FINAL"})


@pytest.fixture(scope="module")
def world(source_dir):
    from incognita.access.domain import get_domain
    from incognita.access.golden.upstream_replay import World

    return World(get_domain("retail"), source_dir / "db.json")


@pytest.fixture(scope="module")
def partition():
    return load_partition(RETAIL / "partition.yaml")


@pytest.fixture(scope="module")
def card0(tasks, db, meta):
    from incognita.access.domain import get_domain

    return build_card(tasks["0"], db, meta, get_domain("retail"))


ARMS = arm_registry(ROOT / "config" / "arms.yaml")


def run(world, partition, card, arm, agent, budget=50, service=None, gold_hash="gold"):
    owners = ARMS.arm(arm).owners(partition)
    gateway = Gateway(world, owners)
    if service is None:
        service = {
            name: ScriptedDesk(
                "desk",
                name,
                {
                    "tools": sorted(tools),
                    "area": "work",
                    "write_tools": sorted(t for t in tools if gateway.is_write(t)),
                },
            )
            for name, tools in owners.items()
            if name != "agent"
        }
    record = EpisodeRecord(cell={"arm": arm}, seed=1, models={}, code_version="test", card={}, reference={})
    ep = Episode(
        arm_entry=ARMS.arm(arm),
        recipients=["USER", *(o for o in owners if o != "agent")],
        card=card,
        gold_hash=gold_hash,
        gateway=gateway,
        prompts=PromptSet(ROOT / "config" / "prompts", RETAIL / "prompts", partition),
        agent=agent,
        customer=ScriptedCustomer("customer", {"card": card}),
        service=service,
        seed=1,
        budget=budget,
        record=record,
    )
    return ep.run(), world


def of(record, cls):
    return [e for e in record.events if isinstance(e, cls)]


def test_final_ends_and_messages_never_do(world, partition, card0):
    agent = Puppet([msg("USER", "Hello"), msg("USER", "Anything else?")])
    record, _ = run(world, partition, card0, "indirect", agent)
    assert record.termination == "final" and record.turns == 3
    assert [e.message_type for e in of(record, Message) if e.sender == "agent"] == ["MESSAGE", "MESSAGE", "FINAL"]


def test_budget_truncates(world, partition, card0, tasks):
    """Reaching the budget ends the episode there: the agent gets no further turn, and the
    outcome is whatever state it left. Against task 0's real gold state (upstream's replay), the
    gold calls within budget succeed and the same calls cut short by the budget do not."""
    from incognita.access.golden.upstream_replay import upstream_hash

    actions = tasks["0"]["evaluation_criteria"]["actions"]
    gold = upstream_hash(world, actions)

    def gold_calls():
        return Puppet(
            [ModelResponse(tool_calls=(ToolCall(f"c{i}", a["name"], a["arguments"]),)) for i, a in enumerate(actions)]
        )

    complete, _ = run(world, partition, card0, "direct", gold_calls(), budget=len(actions) + 1, gold_hash=gold)
    assert complete.termination == "final" and complete.success is True

    agent = gold_calls()
    record, _ = run(world, partition, card0, "direct", agent, budget=len(actions) - 1, gold_hash=gold)
    assert record.termination == "truncated" and record.turns == len(actions) - 1
    assert len(agent.seen) == len(actions) - 1 and len(agent.outputs) == 1  # the last write never ran
    assert of(record, Truncation)[0].budget == len(actions) - 1
    assert record.channels["db"] is False and record.success is False


@pytest.mark.parametrize(
    "output, reason",
    [
        ("this is not json", "not a JSON object"),
        (msg("Zorro", "hi"), "unknown recipient 'Zorro'"),
        (json.dumps({"recipient": "USER", "message": "hi"}), "missing key(s): message_type"),
        (json.dumps({"recipient": "USER", "message": "bye", "message_type": "FINAL"}), "FINAL must go to ENVIRONMENT"),
        (
            json.dumps({"recipient": "ENVIRONMENT", "message": "x", "message_type": "MESSAGE"}),
            "only message_type FINAL",
        ),
        (ModelResponse(text="hello", tool_calls=(ToolCall("a", "calculate", {"expression": "1+1"}),)), "same turn"),
    ],
)
def test_bad_agent_output_is_logged_and_the_episode_goes_on(world, partition, card0, output, reason):
    agent = Puppet([output, msg("USER", "Hello")])
    record, _ = run(world, partition, card0, "indirect", agent)
    errors = of(record, ProtocolError)
    assert len(errors) == 1 and reason in errors[0].reason and errors[0].actor == "agent"
    assert record.termination == "final" and record.turns == 3
    assert "rejected" in agent.seen[1]  # the agent is told why


def test_tool_the_agent_does_not_hold(world, partition, card0):
    agent = Puppet([ModelResponse(tool_calls=(ToolCall("a", "get_order_details", {"order_id": "#W2378156"}),))])
    record, _ = run(world, partition, card0, "social", agent)
    (decision,) = of(record, GatewayDecision)
    assert decision.status == "not_owner" and decision.proposer == "agent"


def test_direct_agent_tool_calls_and_inadmissible_arguments(world, partition, card0):
    agent = Puppet(
        [
            ModelResponse(tool_calls=(ToolCall("a", "get_order_details", {"order_id": 42}),)),
            ModelResponse(tool_calls=(ToolCall("b", "get_order_details", {"order": "#W2378156"}),)),
            ModelResponse(tool_calls=(ToolCall("c", "no_such_tool", {}),)),
            ModelResponse(tool_calls=(ToolCall("d", "cancel_pending_order", "{not json"),)),
            ModelResponse(tool_calls=(ToolCall("e", "get_order_details", {"order_id": "#W2378156"}),)),
        ]
    )
    record, w = run(world, partition, card0, "direct", agent)
    statuses = [d.status for d in of(record, GatewayDecision)]
    assert statuses == ["inadmissible", "inadmissible", "inadmissible", "inadmissible", "accepted"]
    assert agent.seen[1].startswith("Error: inadmissible")
    assert json.loads(agent.seen[5])["order_id"] == "#W2378156"
    assert record.final_db_hash == w.clean_hash()  # nothing bad reached the database


def test_desk_proposing_a_tool_it_does_not_own(world, partition, card0):
    agent = Puppet([msg("Cygnus", "please cancel my order")])
    service = {d: RogueDesk() for d in DESKS}
    record, w = run(world, partition, card0, "social", agent, service=service)
    (decision,) = of(record, GatewayDecision)
    assert decision.proposer == "Cygnus" and decision.status == "not_owner"
    assert record.final_db_hash == w.clean_hash()


def test_gate_releases_exactly_what_is_asked(world, partition, card0):
    agent = Puppet(
        [
            msg("USER", "What is your zip code?\n#ask zip"),
            msg("USER", "And your name?\n#ask name"),
            msg("USER", "Your favourite colour?\n#ask colour"),
            msg("USER", "Thanks, that is all."),
        ]
    )
    record, _ = run(world, partition, card0, "direct", agent)
    disclosures = of(record, Disclosure)
    assert [(d.token, d.status, d.turn) for d in disclosures] == [
        ("zip", "released", 1),
        ("name", "released", 2),
        ("colour", "unknown", 3),
    ]
    replies = [e.text for e in of(record, Message) if e.sender == "USER"]
    assert "#notsure colour" in replies[3]
    assert "19122" not in replies[0] and "Rossi" not in replies[1]  # opening line and first reply leak nothing unasked


def test_desk_never_acts_outside_its_remit(world, partition, card0):
    agent = Puppet(
        [
            msg(
                "Cygnus",
                'Cancel it.\n#call cancel_pending_order {"order_id": "#W2378156", "reason": "no longer needed"}',
            )
        ]
    )
    record, _ = run(world, partition, card0, "social", agent)
    assert of(record, GatewayDecision) == []
    reply = [e.text for e in of(record, Message) if e.sender == "Cygnus"][0]
    assert "#decline" in reply and not any(d in reply for d in DESKS if d != "Cygnus")


class Judge:
    """A stand-in judge model: answers with fixed verdicts and records what it was shown."""

    spec = "fake:judge"

    def __init__(self, text):
        self.text, self.requests = text, []

    def respond(self, request):
        self.requests.append(request)
        return ModelResponse(text=self.text)


def run_judged(world, partition, card, judge):
    card = {**card, "information_channel": {"communicate_info": [], "nl_assertions": ["The agent greets.", "x"]}}
    gateway = Gateway(world, {"Vega": frozenset(partition.tools)})
    record = EpisodeRecord(cell={}, seed=1, models={}, code_version="test", card={}, reference={})
    ep = Episode(
        arm_entry=ARMS.arm("indirect"),
        recipients=["USER", "Vega"],
        card=card,
        gold_hash=world.clean_hash(),
        gateway=gateway,
        prompts=PromptSet(ROOT / "config" / "prompts", RETAIL / "prompts", partition),
        agent=Puppet([msg("USER", "Hello there")]),
        customer=ScriptedCustomer("customer", {"card": card}),
        service={"Vega": ScriptedDesk("desk", "Vega", {"tools": sorted(partition.tools)})},
        seed=1,
        budget=10,
        record=record,
        judge=judge,
    )
    return ep.run()


def test_configured_judge_decides_the_nl_channel(world, partition, card0):
    judge = Judge('{"verdicts": [true, false]}')
    record = run_judged(world, partition, card0, judge)
    assert record.channels == {"db": True, "communicate": None, "nl": False} and record.success is False
    shown = judge.requests[0]
    assert "1. The agent greets." in shown.system and "agent: Hello there" in shown.messages[0].content
    record = run_judged(world, partition, card0, Judge('{"verdicts": [true, true]}'))
    assert record.channels["nl"] is True and record.success is True


def test_malformed_judge_output_is_an_error_not_a_score(world, partition, card0):
    record = run_judged(world, partition, card0, Judge("looks fine to me"))
    assert record.termination == "error" and "judge output" in record.error and record.success is None


def test_the_structured_output_schemas_agree_with_the_output_contract():
    """What the message schemas admit, parse_agent_output accepts or refuses as the schema says:
    every (recipient, type) pair is tried, and the grammar form admits exactly the valid ones."""
    import itertools

    import jsonschema

    from incognita.access.episodes.loop.episode_loop import ENVIRONMENT, agent_output_schema, parse_agent_output

    allowed = ["USER", "Vega"]
    schemas = agent_output_schema(allowed)
    for recipient, kind in itertools.product([*allowed, ENVIRONMENT, "Aster"], ["MESSAGE", "FINAL", "NOTE"]):
        doc = {"recipient": recipient, "message": "hello", "message_type": kind}
        action = parse_agent_output(ModelResponse(text=json.dumps(doc)), allowed)

        grammar, strict = (
            jsonschema.Draft202012Validator(schemas[k]).is_valid(doc) for k in ("grammar_schema", "schema")
        )
        assert grammar == (action.kind == "message"), doc
        assert strict >= (action.kind == "message"), doc  # the strict form admits every valid one
    assert not jsonschema.Draft202012Validator(schemas["schema"]).is_valid(
        {"recipient": "USER", "message": "hi", "message_type": "MESSAGE", "cc": "Vega"}
    )
