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
