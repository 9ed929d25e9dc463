"""The airline agent's policy terms and derived values from what it holds (agent.py), task-free:
an agent is made without an episode and given the state an episode would have built."""

from types import SimpleNamespace

import pytest

from incognita.access.domains.airline.scripted.agent import AirlineAgent
from incognita.access.episodes.loop.agent_plan import Source
from incognita.access.episodes.scripted.picks import Choosing, GiveUp

VOCABULARY = {"insurance": ["yes", "no"], "cabin": ["basic_economy", "economy", "business"]}


def _agent(released=None, results=None):
    agent = object.__new__(AirlineAgent)
    agent.vocabulary, agent.released = VOCABULARY, dict(released or {})
    agent.results, agent.explored, agent.requests = dict(results or {}), {}, []
    agent.plan = SimpleNamespace(calls=[])
    return agent


def test_a_negated_answer_picks_no_and_a_plain_one_yes():
    src = Source(kind="policy", vocabulary="insurance", selected_by=("insurance",))
    assert _agent({"insurance": "don't need any travel insurance"})._policy_term(src) == "no"
    assert _agent({"insurance": "do not want insurance"})._policy_term(src) == "no"
    assert _agent({"insurance": "want travel insurance"})._policy_term(src) == "yes"


def test_a_term_nothing_selects_is_the_one_the_records_hold():
    src = Source(kind="policy", vocabulary="cabin")
    assert _agent(results={0: {"reservation_id": "R", "cabin": "economy"}})._policy_term(src) == "economy"
    assert _agent()._policy_term(src) == "basic_economy"  # no record: the vocabulary's first term


def test_the_bags_not_free_weigh_the_calls_cabin_passengers_and_total():
    agent = _agent()
    choosing = Choosing(call="book_reservation", arg="nonfree_baggages", slot="/nonfree_baggages")
    choosing.args.update(cabin="economy", passengers=[{}, {}], total_baggages=3)
    assert agent.derive("bag_allowance", ["silver"], choosing) == 0
    assert agent.derive("bag_allowance", ["regular"], choosing) == 1
    with pytest.raises(GiveUp, match="membership"):
        agent.derive("bag_allowance", [], choosing)


def test_a_reservations_bags_use_its_cabin_as_last_changed():
    before = {"reservation_id": "R", "cabin": "basic_economy", "passengers": [{}]}
    after = {**before, "cabin": "economy"}
    agent = _agent(results={1: before, 3: after})
    choosing = Choosing(call="update_reservation_baggages", arg="nonfree_baggages", slot="/nonfree_baggages")
    choosing.args.update(reservation_id="R", total_baggages=1)
    assert agent.derive("bag_allowance", ["regular", [{}]], choosing) == 0  # economy: one free bag
