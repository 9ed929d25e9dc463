"""The airline's scripted knowledge in whole episodes: the oracle profile, in the direct arm, on
tasks that each need one of its rules (incognita.access.domains.airline.scripted). Without the
rule named, the task's episode fails (the plain agent gives up or writes another value); the
module docstrings of deriving, picking, facts and telling state the rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from incognita.access.selection.oracle import first_difference

ROOT = Path(__file__).resolve().parents[5]

# task -> the rules its episode needs (beyond those every episode uses).
NEEDS = {
    "2": "compensation for a delayed flight; the last reservation the profile lists",
    "7": "the total cost of the upcoming flights, each reservation as it stood before the changes",
    "8": "a certificate by the customer's plural; a negated insurance answer; the bags not free; the fare",
    "11": "the amount a change refunded, told when the customer asks how much",
    "12": "the bags not free of a reservation (membership, cabin, passengers)",
    "15": "a date the day after the reservation's; the cheapest one-stop journey, each leg for itself",
    "17": "the bags not free in the cabin the reservation was just changed to",
    "18": "every reservation in business, each once; each paid with its own payment; the savings in total",
    "20": "a time of day the customer does not want; one certificate per booking; a split payment's shares",
    "21": "the fastest journey; a gift card that covers the change's cost; bags added to the total",
    "23": "the search date of the return; a leg kept is not booked twice; the passengers after the customer "
    "from the first saved one; payments in the order the customer names their kinds, the largest first; "
    "a certificate used is spent; the sums of balances and what the card named was charged",
    "25": "the cabin of the reservation the booking copies; airports by the reservation's own",
    "27": "compensation per passenger of the reservation holding the flight complained of",
    "30": "the return the change keeps: not a leg its new non-stop flight replaces",
    "33": "the return the change keeps, its date derived after its number: not a leg the new flight replaces",
    "42": "of the customer's own reservations flying on one day, the one its facts do not describe is cancelled",
    "37": "a credit card by its last four digits",
    "39": "the reservations the policy lets the agent cancel",
}


# task -> the rules its database outcome needs, where the task still fails on an item to tell
# that the source does not settle (upstream_ambiguities.yaml).
DB_NEEDS = {
    "14": "the most recent reservation orders reservations, not its flights; a kept leg is not booked twice; "
    "the certificates first, then the gift cards, the largest first",
}


@pytest.fixture(scope="module")
def episodes(stages) -> dict[str, tuple[dict, dict]]:
    from incognita.access.episodes.harness import profile_episodes
    from incognita.access.selection.profile_check import TaskSet

    ts = TaskSet.of(
        "airline",
        cards_dir=str(stages / "cards"),
        golden_dir=str(stages / "golden"),
        db_path=str(stages / "source" / "db.json"),
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )
    out = {}
    for task, _arm, golden, record in profile_episodes(
        "oracle", "airline scripted test", [*NEEDS, *DB_NEEDS], ts.cards_dir, ts.golden_dir, arms=("direct",),
        inputs=ts.inputs, prompts_dir=ts.prompts_dir, scripted_agents=ts.scripted_agents, seed=0, budget=300,
    ):  # fmt: skip
        out[task] = (golden, record)
    return out


@pytest.mark.parametrize("task", sorted(NEEDS, key=int))
def test_the_oracle_solves_a_task_that_needs_the_rule(episodes, task):
    golden, record = episodes[task]
    assert record["success"], (task, NEEDS[task], first_difference(record, golden))


@pytest.mark.parametrize("task", sorted(DB_NEEDS, key=int))
def test_the_oracle_writes_what_the_gold_writes_on_a_task_that_needs_the_rule(episodes, task):
    golden, record = episodes[task]
    assert record["database_only_success"], (task, DB_NEEDS[task], first_difference(record, golden))
