"""What the airline's scripted agent tells beyond traced items (telling.py), task-free."""

from types import SimpleNamespace

from incognita.access.domains.airline.scripted.telling import ChangeTelling


def _agent(requests, results, writes):
    agent = ChangeTelling()
    agent.requests = requests
    agent.results = results
    agent.explored = {}
    agent.plan = SimpleNamespace(calls=[SimpleNamespace(index=i, write=i in writes) for i in results])
    return agent


def _told(agent):
    steps = agent._untraced_values(None)
    try:
        while True:
            next(steps)
    except StopIteration as done:
        return done.value


def test_the_amount_a_change_refunded_is_told_when_the_customer_asks_how_much():
    before = {"reservation_id": "R", "payment_history": [{"payment_id": "gc", "amount": 5700}]}
    after = {
        "reservation_id": "R",
        "payment_history": [*before["payment_history"], {"payment_id": "gc", "amount": -5244}],
    }
    asked = ["Ask how much the refund would be."]
    assert _told(_agent(asked, {0: before, 1: after}, writes={1})) == ["5244"]
    # Not asked, or no change made: nothing more to tell.
    assert _told(_agent(["Make the change."], {0: before, 1: after}, writes={1})) == []
    assert _told(_agent(asked, {0: before}, writes=set())) == []


def test_several_changes_are_told_each_and_in_total():
    one = {"reservation_id": "A", "payment_history": [{"amount": -100}]}
    two = {"reservation_id": "B", "payment_history": [{"amount": 500}, {"amount": -50.5}]}
    before_two = {"reservation_id": "B", "payment_history": [{"amount": 500}]}
    agent = _agent(["You want to know how much you saved in total."], {0: before_two, 1: one, 2: two}, writes={1, 2})
    assert _told(agent) == ["100", "50.5", "150.5 in total"]


PROFILE = {"user_id": "u", "payment_methods": {
    "gift_card_1": {"id": "gift_card_1", "source": "gift_card", "amount": 198.0},
    "gift_card_2": {"id": "gift_card_2", "source": "gift_card", "amount": 129.0},
    "certificate_1": {"id": "certificate_1", "source": "certificate", "amount": 500.0},
    "credit_card_1": {"id": "credit_card_1", "source": "credit_card", "brand": "mastercard", "last_four": "9363"},
    "credit_card_2": {"id": "credit_card_2", "source": "credit_card", "brand": "visa", "last_four": "2395"},
}}  # fmt: skip


def test_the_sum_of_a_kinds_balances_is_told_when_the_customer_asks_it():
    agent = _agent(["You want to know the sum of gift card balances."], {0: PROFILE}, writes=set())
    agent.demands = ["You want to know the sum of <payment> balances and sum of <payment_2> balances."]
    agent.released = {"payment": "gift card", "payment_2": "certificate"}
    assert _told(agent) == ["327", "500"]
    agent.demands = ["You want to know how much you have on your <payment>."]  # no sum asked
    assert _told(agent) == []


def test_what_the_changes_charged_to_the_named_card_is_told_together():
    one = {"reservation_id": "A", "payment_history": [{"payment_id": "gift_card_1", "amount": 198},
                                                       {"payment_id": "credit_card_1", "amount": 44}]}  # fmt: skip
    two = {"reservation_id": "B", "payment_history": [{"payment_id": "credit_card_1", "amount": 621}]}
    agent = _agent(["You want to know how much your master card will be charged."], {0: PROFILE, 1: one, 2: two},
                   writes={1, 2})  # fmt: skip
    agent.demands = ["You want to know how much your <payment_5> will be charged."]
    agent.released = {"payment_5": "master card"}
    assert _told(agent)[-1] == "665"


def test_the_total_cost_of_upcoming_flights_counts_each_reservation_as_it_stood_before_the_changes():
    def reservation(rid, dates, paid, status=None):
        return {"reservation_id": rid, "status": status, "flights": [{"date": d} for d in dates],
                "payment_history": [{"payment_id": "p", "amount": a} for a in paid]}  # fmt: skip

    records = {
        "UP": reservation("UP", ["2024-05-28"], [402]),
        "PAST": reservation("PAST", ["2024-05-14"], [308]),
        "GONE": reservation("GONE", ["2024-05-28"], [100, -100], status="cancelled"),  # cancelled before
    }
    # CUT: upcoming, first seen as the episode's cancellation (its refund came after the question).
    cut = {**reservation("CUT", ["2024-05-29"], [624, -624], status="cancelled"), "user_id": "u"}
    profile = {"user_id": "u", "reservations": ["UP", "PAST", "GONE", "CUT"]}
    agent = _agent([], {0: cut}, writes={0})
    agent.demands = ["You want to check your other <selector> flights and ask for the total cost of those flights."]
    agent.released = {}
    agent.tools = {
        "get_user_details": {"params": ["user_id"]},
        "get_reservation_details": {"params": ["reservation_id"]},
    }
    asked = []

    def ask(token, required=True):
        asked.append(token)
        agent.released[token] = "upcoming"
        return
        yield

    def explore(tool, args):
        return profile if tool == "get_user_details" else records[args["reservation_id"]]
        yield

    agent._ask_customer, agent._explore = ask, explore
    agent._reading_tool = lambda arg: {"user_id": "get_user_details", "reservation_id": "get_reservation_details"}[arg]
    assert _told(agent) == ["1026"] and asked == ["selector"]
