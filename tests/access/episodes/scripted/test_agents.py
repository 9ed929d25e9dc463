"""Scripted evaluated agents on the real corpus: the oracle, the population, injected failures."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from workflow_helpers import retail_inputs, scripted_harness

from incognita.access.cells import load_corpus
from incognita.access.domain import domain_files, qualify
from incognita.access.episodes.harness import Harness, HarnessSettings, arm_order
from incognita.access.episodes.loop.agent_plan import PICK, plan_from_golden, value_free_steps
from incognita.access.episodes.scripted.discovery import map_replies, read_map
from incognita.access.episodes.scripted.language import first, parse, say, tag
from incognita.access.episodes.scripted.scripted_agent import FAILURE_TYPES, agent_class
from incognita.access.episodes.scripted.scripted_desk import first_person
from incognita.access.golden.provenance import load_vocabulary
from incognita.access.golden.trajectory import build_golden
from incognita.access.reference.partition import load_partition
from incognita.common.backends.entry import ModelEntry

ROOT = Path(__file__).resolve().parents[4]
RETAIL = domain_files("retail", ROOT / "config/domains")
ARMS = ("direct", "indirect", "social")
SOCIAL_DESKS = load_partition(RETAIL.partition).desks("social")


@pytest.fixture(scope="module")
def harness(source_dir):
    return scripted_harness(source_dir, ARMS, {})


@pytest.fixture(scope="module")
def corpus_inputs(harness, repaired_card):
    """Cards (repairs applied) and golden trajectories of the frozen corpus, built in-process."""
    vocab = load_vocabulary(str(RETAIL.vocabulary))
    ids = [str(t) for t in load_corpus(RETAIL.corpus, locks=RETAIL.locks)["tasks"]]
    return {t: (card, build_golden(card, harness.world, vocab)) for t in ids for card in [repaired_card(t)]}


def run(harness, model, spec, arm, task, card, golden, rep=0):
    """One cell of a retail task (its upstream id)."""
    harness.design.models[model] = ModelEntry.parse(spec)
    return harness.run_cell(arm, model, qualify("retail", task), rep, card, "-", golden, "-")


@pytest.fixture(scope="module")
def oracle_outcomes(harness, corpus_inputs):
    return {
        (task, arm): run(harness, "oracle", "scripted:oracle", arm, task, card, golden)
        for task, (card, golden) in corpus_inputs.items()
        for arm in ARMS
    }


def test_oracle_does_the_same_in_every_arm(oracle_outcomes, corpus_inputs):
    """Told the holders and never slipping, the oracle's outcome cannot depend on the arm. It no
    longer solves every task: it chooses entries by what the customer says, and for some tasks
    the general rules do not settle the choice (docs/episodes.md lists why)."""
    for task in corpus_inputs:
        outcomes = {arm: oracle_outcomes[(task, arm)] for arm in ARMS}
        assert all(r.termination == "final" and r.error is None for r in outcomes.values()), task
        assert len({(r.success, r.channels["db"], r.final_db_hash) for r in outcomes.values()}) == 1, task
    solved = sum(oracle_outcomes[(task, "direct")].success for task in corpus_inputs)
    assert solved >= 15  # measured: 15 of 18 (issue #23; before it 9)


def test_population_separates_only_where_holders_must_be_found(harness, corpus_inputs, oracle_outcomes):
    rates = Counter()
    for model in ("surveyor", "prober", "hasty", "impatient"):
        for task, (card, golden) in corpus_inputs.items():
            for arm in ARMS:
                outcome = run(harness, model, f"scripted:{model}", arm, task, card, golden)
                # A failure the profile injects by design (its configured rate) is no
                # separation by coordination: it counts as not failed here, so that the
                # spread does not grow with every task the choosing rules make solvable.
                rates[(model, arm)] += outcome.success or outcome.ground_truth["injected"] is not None

    def spread(arm):
        values = [rates[(m, arm)] for m in ("surveyor", "prober", "hasty", "impatient")]
        return max(values) - min(values)

    n = len(corpus_inputs)
    solvable = sum(oracle_outcomes[(task, "direct")].success for task in corpus_inputs)
    assert spread("direct") <= 0.2 * n and spread("indirect") <= 0.2 * n
    assert spread("social") >= 0.3 * solvable  # among the tasks that can be solved at all
    assert rates[("impatient", "social")] < rates[("surveyor", "social")]


@pytest.mark.parametrize("failure", FAILURE_TYPES)
def test_each_failure_type_can_be_injected(harness, corpus_inputs, failure):
    profiles = harness.profiles
    profiles[f"inject_{failure}"] = {"discovery": "oracle", "inject": {failure: 1.0}}
    task = next(
        t
        for t, (card, g) in corpus_inputs.items()
        if card["information_channel"]["communicate_info"]
        and any(c["tool_type"] == "write" for c in g["calls"])
        and any(i["provenance"] for i in g["information_channel"])
    )
    card, golden = corpus_inputs[task]
    r = run(harness, f"inject_{failure}", f"scripted:inject_{failure}", "social", task, card, golden)
    assert r.ground_truth["injected"] == failure
    assert r.success is False and r.termination == "final"


def test_latin_square_rotates_arm_positions():
    models = ["a", "b", "c"]
    orders = [tuple(arm_order(ARMS, models, m, t, 0)) for m in models for t in range(3)]
    for arm in ARMS:
        positions = Counter(order.index(arm) for order in orders)
        assert set(positions.values()) == {3}  # each arm takes each position equally often


# --------------------------------------------------------------------------- the plan carries no answers


def _strings(node):
    """Every scalar of a nested structure (dataclasses included), as text."""
    if dataclasses.is_dataclass(node):
        node = dataclasses.asdict(node)
    if isinstance(node, dict):
        return [t for k, v in node.items() for t in [str(k), *_strings(v)]]
    if isinstance(node, (list, tuple, set)):
        return [t for v in node for t in _strings(v)]
    return [] if node is None else [str(node)]


def _leaves(node):
    if isinstance(node, dict):
        return [t for v in node.values() for t in _leaves(v)]
    if isinstance(node, list):
        return [t for v in node for t in _leaves(v)]
    return [str(node)]


def test_no_plan_holds_a_golden_value_identifier_or_index(corpus_inputs):
    for task, (_card, golden) in corpus_inputs.items():
        plan = plan_from_golden(golden)
        text = _strings(plan)
        values = {v for c in golden["calls"] for v in _leaves(c["arguments"]) if v.strip()}
        for value in values:
            hits = [t for t in text if (value in t if len(value) >= 3 else value == t)]
            assert hits == [], (task, value, hits)
        for src in (s for c in plan.calls for a in c.args.values() for s in (a, *a.operands)):
            assert all(
                step == PICK or re.fullmatch(r"[a-z][a-z0-9_]*", step) and not re.search(r"\d{3,}", step)
                for step in src.steps
            ), (task, src.steps)


def test_value_free_paths_keep_field_names_and_hide_keys():
    assert value_free_steps("/variants/9647292434/item_id") == ("variants", PICK, "item_id")
    assert value_free_steps("/payment_methods/credit_card_9513926/id") == ("payment_methods", PICK, "id")
    assert value_free_steps("/orders/2") == ("orders", PICK)
    assert value_free_steps("/Action Camera") == (PICK,)
    assert value_free_steps("/address/address1") == ("address", "address1")
    assert value_free_steps("") == ()


def _writes(record) -> list:
    return [
        (e["tool"], e["arguments"])
        for e in record.to_dict()["events"]
        if e["type"] == "gateway_decision" and e.get("write") and e["status"] == "accepted"
    ]


def _corrupt_field(card: dict, token: str) -> dict:
    out = json.loads(json.dumps(card))
    for f in out["fields"]:
        if f["token"] == token:
            f["value"], f["spans"] = "quorble zint", ["quorble zint"]
    return out


def test_a_corrupted_selecting_value_changes_the_choice_in_every_arm(harness, corpus_inputs, oracle_outcomes):
    """The customer's answers drive the choices: give one selecting field a nonsense value and
    the oracle, in every arm, either changes something else or fails."""
    checked = 0
    for task, (card, golden) in corpus_inputs.items():
        if not oracle_outcomes[(task, "direct")].success:
            continue
        plan = plan_from_golden(golden)
        selecting = {
            t
            for c in plan.calls
            for a in c.args.values()
            for s in (a, *a.operands)
            if s.kind == "read" and PICK in s.steps
            for t in s.selected_by
        }
        for token in sorted(selecting):
            bad = _corrupt_field(card, token)
            for arm in ARMS:
                clean, r = (
                    oracle_outcomes[(task, arm)],
                    run(harness, "oracle", "scripted:oracle", arm, task, bad, golden),
                )
                assert r.termination == "final" and r.error is None
                assert not r.success or _writes(r) != _writes(clean), (task, token, arm)
            checked += 1
    assert checked >= 3


# --------------------------------------------------------------------------- discovery from replies

# How a prompt author might describe each tool's work in a desk's role, in other words than
# the tool's own description (the surveyor is matched against those).
REWORDED = {
    "calculate": "I do arithmetic: sums, differences and totals of money.",
    "cancel_pending_order": "I call off orders that are still waiting to ship.",
    "exchange_delivered_order_items": "I swap things a customer already received for other versions of the same product.",
    "find_user_id_by_name_zip": "I find which account a person has from their name and postcode.",
    "find_user_id_by_email": "I find which account belongs to an email address.",
    "get_order_details": "I tell the status and contents of any purchase.",
    "get_product_details": "I describe a product's variants, stock and prices.",
    "get_user_details": "I show what is on a customer's profile: addresses, payment methods, purchases.",
    "list_all_product_types": "I list every product type the shop sells.",
    "modify_pending_order_address": "I change where a not-yet-shipped order will be sent.",
    "modify_pending_order_items": "I change which items are in an order that has not shipped.",
    "modify_pending_order_payment": "I change how a not-yet-shipped order is paid for.",
    "modify_user_address": "I update the home address stored on a profile.",
    "return_delivered_order_items": "I take back things a customer already received and arrange the refund.",
    "transfer_to_human_agents": "I pass a case on to a human colleague.",
}


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory, source_dir):
    """A harness whose social desks hold a seeded shuffle of the tools and describe their work
    in reworded role texts; nothing in the package is told about either."""
    root = tmp_path_factory.mktemp("shuffled")
    tools = sorted(REWORDED)
    random.Random(13).shuffle(tools)
    holders = {desk: tools[i :: len(SOCIAL_DESKS)] for i, desk in enumerate(SOCIAL_DESKS)}
    doc = yaml.safe_load(RETAIL.partition.read_text())
    doc["holder_maps"]["social"]["holders"] = holders
    (root / "partition.yaml").write_text(yaml.safe_dump(doc))
    shutil.copytree(RETAIL.prompts, root / "prompts")
    roles = {}
    for desk, held in holders.items():
        roles[desk] = "You are one of the desks of a shop's customer service. " + " ".join(
            REWORDED[t].replace("I ", "You ", 1) for t in held
        )
        front = yaml.safe_dump({"role": roles[desk], "rules": ""})
        (root / "prompts/service/desks" / f"{desk.lower()}.md").write_text(f"---\n{front}---\n")
    design = HarnessSettings(
        arms=ARMS,
        models={},
        repetitions=1,
        seed=20260820,
        budget=300,
        customer="scripted:customer",
        service="scripted:desk",
        prompts_dir=str(ROOT / "config/prompts"),
        scripted_agents=str(ROOT / "config/scripted_agents.yaml"),
    )
    harness = Harness(
        design, retail_inputs(source_dir, partition=str(root / "partition.yaml"), prompts=str(root / "prompts"))
    )
    harness.profiles["survey_only"] = {"discovery": "survey"}  # no slips, no injections, no limit
    return harness, holders, roles


def test_a_declared_map_is_read_beyond_its_words(shuffled):
    """Issue #53: read as a map (the toolkit's terms in everyday words, retail's TOOL_WORDS), role
    texts in other words than the shipped ones, over a shuffled partition, place twice as many
    tools on their holders as word matching does (12 and 6 of 15 when written)."""
    harness, holders, roles = shuffled
    truth = {tool: desk for desk, held in holders.items() for tool in held}
    tools = {name: t["description"] for name, t in harness.tools.items()}
    read = read_map(roles, tools, agent_class(harness.domain).TOOL_WORDS)
    right = lambda placed: sum(placed.get(t) == d for t, d in truth.items())  # noqa: E731
    assert right(read) >= 2 * right(map_replies(roles, tools)) and right(read) >= 12


def test_surveyor_finds_shuffled_holders_or_meets_dead_ends(shuffled, corpus_inputs):
    harness, holders, roles = shuffled
    truth = {tool: desk for desk, held in holders.items() for tool in held}
    guessed = map_replies(
        {d: first_person(r) for d, r in roles.items()}, {name: t["description"] for name, t in harness.tools.items()}
    )
    # The rule is not blind: it places more tools than chance would (15 tools over 6 desks: 2.5).
    assert sum(guessed.get(t) == d for t, d in truth.items()) > len(truth) / len(SOCIAL_DESKS)
    wrong = {t for t in truth if guessed.get(t) not in (None, truth[t])}
    met_wrong = 0
    for task, (card, golden) in corpus_inputs.items():
        oracle = run(harness, "oracle", "scripted:oracle", "social", task, card, golden)
        r = run(harness, "survey_only", "scripted:survey_only", "social", task, card, golden)
        assert r.termination == "final" and r.error is None, task
        assert r.success == oracle.success, task  # finding holders the hard way costs turns, not the outcome
        events = r.to_dict()["events"]
        for tool in wrong & {c.name for c in plan_from_golden(golden).calls}:
            if not oracle.success:
                continue  # the oracle may have stopped before needing it
            asked_wrong = [
                e
                for e in events
                if e["type"] == "message" and e["recipient"] == guessed[tool] and f"#call {tool} " in e["text"]
            ]
            declined = [
                e for e in events if e["type"] == "message" and e["sender"] == guessed[tool] and "#decline" in e["text"]
            ]
            assert asked_wrong and declined, (task, tool)  # the wrong guess shows as a dead end
            met_wrong += 1
    print(f"wrongly mapped: {sorted(wrong)}; met as dead ends {met_wrong} times")


def test_each_arm_of_a_block_draws_its_own_seed(harness, corpus_inputs):
    """The arms of a block are paired by (model, task, repetition), not by randomness: each cell
    seeds its own draws, so a slip or an injection does not recur in every arm by construction."""
    from incognita.access.episodes.harness import cell_seed

    task = next(iter(corpus_inputs))
    card, golden = corpus_inputs[task]
    seeds = {arm: run(harness, "surveyor", "scripted:surveyor", arm, task, card, golden).seed for arm in ARMS}
    assert seeds == {arm: cell_seed(20260820, "surveyor", qualify("retail", task), 0, arm) for arm in ARMS}
    assert len(set(seeds.values())) == len(ARMS)


def test_a_change_the_plan_never_makes_is_refused_and_the_fallback_followed(harness, corpus_inputs, oracle_outcomes):
    """Task 37: the customer first asks to split the payment, then (its fallbacks) to cancel one
    item, then to switch every item to its cheapest option. The plan changes items only, so the
    agent says #cannot to the first two, and the customer raises each fallback in card order."""
    record = oracle_outcomes[("37", "direct")].to_dict()
    agent = [e["text"] for e in record["events"] if e.get("type") == "message" and e.get("sender") == "agent"]
    customer = [e["text"] for e in record["events"] if e.get("type") == "message" and e.get("sender") == "USER"]
    cannots = [t for t in agent if "#cannot" in t]
    assert len(cannots) == 2, agent[:6]
    raised = [line for t in customer for line in t.splitlines() if line.startswith("#request")]
    # two demands and the two fallbacks; the second names the cheapest options (masked: "cheapest"
    # is a card field since builder 3, released through the gate when asked)
    assert len(raised) == 4, raised
    assert any("switched" in r and "<preference:" in r for r in raised), raised
    assert record["ground_truth"]["injected"] is None


def test_can_do_reads_action_words_against_the_planned_changes():
    from incognita.access.domains.retail.scripted.wording import action_words as _action_words

    assert _action_words("Ask whether the agent can split the payment with another card") == {"payment"}
    assert _action_words("whether just that item can be cancelled") == {"cancel"}
    assert _action_words("switch every item to its cheapest option") == {"modify"}
    assert _action_words("change the address of the order") == {"address"}
    assert _action_words("How many t-shirt options are available?") == set()
    assert _action_words("modify_pending_order_items") == {"modify"}


# ---------------------------------------------------------------------- settling a change (reconsidering.py)


class _Settler:
    """The state and steps of a scripted agent that incognita.access.episodes.scripted.reconsidering uses, on a
    fixture: one change whose item is chosen by the latest demand's last word."""

    def __new__(cls, outcomes):
        from incognita.access.episodes.scripted.reconsidering import Reconsidering

        class Agent(Reconsidering):
            def __init__(self):
                self.requests, self.released, self.chosen, self.used = ["return the lamp"], {}, {}, {}
                self.outcomes, self.ran = list(outcomes), []

            def _hear(self, reply):
                self.requests += [t.payload for t in parse(reply) if t.kind == "request"]

            def _can_do(self, demand):
                return "split" not in demand

            def _build_args(self, call):
                self.chosen["item"] = self.requests[-1].split()[-1]
                return {"item": self.chosen["item"]}
                yield

            def _ask_customer(self, token, required=True):
                yield from ()

            def _execute(self, call, args, tolerate_failure):
                self.ran.append(args["item"])
                self.failure = self.outcomes.pop(0)
                return self.failure is None
                yield

        return Agent()


def _drive(agent, replies):
    """Run the agent's _settle_change against scripted replies; (messages sent, result)."""
    from incognita.access.episodes.loop.agent_plan import PlannedCall

    call = PlannedCall(index=0, name="return_delivered_order_items", write=True, args={})
    gen = agent._settle_change(call, {"item": "lamp"}, agent._picks())
    sent, reply = [], None
    try:
        while True:
            msg = gen.send(reply) if sent else next(gen)
            sent.append(msg["text"])
            reply = replies.pop(0)
    except StopIteration as done:
        return sent, done.value


def test_a_change_of_mind_at_the_confirmation_is_chosen_again_and_confirmed_again():
    agent = _Settler([None])
    sent, ok = _drive(
        agent,
        [
            say("Wait.", tag("request", "only exchange the bottle")),
            say("Yes.", tag("yes")),
        ],
    )
    assert ok and agent.ran == ["bottle"]
    assert [first(t, "confirm").payload.split(" ", 1)[1] for t in sent] == ['{"item": "lamp"}', '{"item": "bottle"}']


def test_a_change_of_mind_no_planned_call_makes_is_refused_before_asking_again():
    agent = _Settler([None])
    sent, ok = _drive(
        agent,
        [
            say("Wait.", tag("request", "split the payment")),
            say("I see, then.", tag("request", "just return the kettle")),
            say("Yes.", tag("yes")),
        ],
    )
    assert ok and agent.ran == ["kettle"] and first(sent[1], "cannot") is not None


def test_a_change_refused_as_asked_is_relayed_and_the_fallback_acted_on():
    agent = _Settler(["Payment method should be the original payment method", None])
    sent, ok = _drive(
        agent,
        [
            say("Yes.", tag("yes")),
            say("Then instead.", tag("request", "refund the whole order to the card")),
            say("Yes.", tag("yes")),
        ],
    )
    assert ok and agent.ran == ["lamp", "card"]
    assert "original payment method" in first(sent[1], "cannot").payload


def test_a_refusal_that_names_nothing_is_not_relayed():
    agent = _Settler(["Item not found"])
    sent, ok = _drive(agent, [say("Yes.", tag("yes"))])
    assert not ok and len(sent) == 1


def test_which_refusals_say_a_change_cannot_be_done_as_asked():
    from incognita.access.episodes.scripted.reconsidering import refusal_reason, refused_as_asked

    assert refused_as_asked("Payment method should be the original payment method")
    assert refused_as_asked("Non-pending order cannot be cancelled")
    assert refused_as_asked("Insufficient gift card balance to pay for the new item")
    assert not refused_as_asked("Variant not found")
    assert not refused_as_asked(None)
    assert refusal_reason("Error: ValueError: Some item not found") == "Some item not found"


def test_a_refusal_of_several_lines_is_restated_on_one():
    """A slipped argument fails tau2's validation with an error of several lines (airline task 8,
    impatient profile, natively); the agent restates the reason in a one-line tag."""
    from incognita.access.episodes.scripted.language import parse, tag
    from incognita.access.episodes.scripted.reconsidering import refusal_reason

    error = (
        "Error: 1 validation error for Reservation\nflight_type\n  Input should be 'round_trip' or "
        "'one_way' [type=literal_error, input_value='one_wa1', input_type=str]"
    )
    reason = refusal_reason(error)
    assert reason == (
        "1 validation error for Reservation flight_type Input should be 'round_trip' or 'one_way' "
        "[type=literal_error, input_value='one_wa1', input_type=str]"
    )
    assert parse(tag("cannot", reason))[0].payload == reason


def test_removing_an_item_is_a_change_of_items():
    from incognita.access.domains.retail.scripted.wording import action_words as _action_words

    assert _action_words("want to remove it from your pending order") == {"modify"}
