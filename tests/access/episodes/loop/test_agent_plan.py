"""The scripted agent's plan carries every provenance kind of the golden trajectories: a `derived`
argument as its rule and the sources of its inputs, an `unsourced` one as its kind and reason,
neither with the gold's value; and the agent gets a derived value only from its inputs."""

from __future__ import annotations

import pytest

from incognita.access.episodes.loop.agent_plan import Source, plan_from_golden
from incognita.access.episodes.scripted.picks import Choosing, GiveUp
from incognita.access.episodes.scripted.scripted_agent import PlainAgent, _plain_field_value

RESERVATION = {"reservation_id": "ZFA04Y", "flights": [{"date": "2024-05-20"}], "membership": "gold"}


def _golden() -> dict:
    """A read of a reservation, then a change whose date is the read date moved by the days the
    customer states (derived) and whose birth date no record holds (unsourced)."""
    read = {
        "index": 0,
        "name": "get_reservation_details",
        "tool_type": "read",
        "counted": True,
        "origin": "inserted",
        "arguments": {"reservation_id": "ZFA04Y"},
        "provenance": {"/reservation_id": {"kind": "field", "token": "reservation", "part": None, "transform": None}},
        "result": RESERVATION,
    }
    write = {
        "index": 1,
        "name": "update_reservation_flights",
        "tool_type": "write",
        "counted": True,
        "origin": "reference",
        "arguments": {"date": "2024-05-22", "dob": "1990-04-05"},
        "provenance": {
            "/date": {
                "kind": "derived",
                "rule": "date_later",
                "from": [
                    {"kind": "read", "call": 0, "path": "/flights/0/date", "selected_by": []},
                    {"kind": "field", "token": "date_shift", "part": None, "transform": None},
                ],
            },
            "/dob": {"kind": "unsourced", "why": "upstream_ambiguity"},
        },
        "result": {},
    }
    return {"calls": [read, write], "information_channel": []}


def test_derived_and_unsourced_arguments_enter_the_plan_without_their_values():
    plan = plan_from_golden(_golden())
    write = plan.calls[1]
    date, dob = write.args["/date"], write.args["/dob"]
    assert (date.kind, date.rule) == ("derived", "date_later")
    assert [(s.kind, s.call, s.steps, s.token) for s in date.operands] == [
        ("read", 0, ("flights", "*", "date"), None),
        ("field", None, (), "date_shift"),
    ]
    assert (dob.kind, dob.rule, dob.operands) == ("unsourced", "upstream_ambiguity", ())
    # The customer detail a derivation needs is asked for like any other.
    assert write.tokens() == ["date_shift"]
    assert "2024-05-22" not in repr(plan) and "1990-04-05" not in repr(plan)


def _agent(cls=PlainAgent):
    """An agent reduced to what valuing an argument reads: the customer's released details."""
    agent = object.__new__(cls)
    agent.released = {"date_shift": "two days later"}
    agent._field_value = _plain_field_value
    return agent


def _value(agent, src):
    gen = agent._value(src, Choosing(call="update_reservation_flights", arg=None))
    with pytest.raises(StopIteration) as done:
        next(gen)
    return done.value.value


def test_the_plain_agent_gives_up_on_a_value_it_has_no_rule_or_source_for():
    write = plan_from_golden(_golden()).calls[1]
    # Its customer input only: a read's value would need a harness to fetch it.
    derived = Source("derived", rule="date_later", operands=write.args["/date"].operands[1:])
    with pytest.raises(GiveUp, match="no rule to derive 'date_later'"):
        next(_agent()._value(derived, Choosing(call=write.name, arg=None)))
    with pytest.raises(GiveUp, match="no participant can supply"):
        next(_agent()._value(write.args["/dob"], Choosing(call=write.name, arg=None)))


def test_a_domain_agent_derives_from_the_inputs_it_obtained():
    class Deriving(PlainAgent):
        def derive(self, rule, inputs, choosing):
            return f"{rule}({', '.join(inputs)})"

    write = plan_from_golden(_golden()).calls[1]
    # Its customer input only: a read's value would need a harness to fetch it.
    derived = Source("derived", rule="date_later", operands=write.args["/date"].operands[1:])
    assert _value(_agent(Deriving), derived) == "date_later(two days later)"
