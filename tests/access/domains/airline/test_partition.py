"""Airline's holder maps and service texts (config/domains/airline/): the tool list is upstream's
toolkit, each map places every tool once, each policy condition sits with the holder of the action
it governs (docs/airline.md), the mediated agent's prompt carries none of it (Appendix A.1), and
the desks' names say nothing about the order their work comes in (docs/partition.md, "Airline").

That every map an arm names exists, with a role text for each of its holders, is checked for every
domain at once by tests/access/episodes/loop/test_prompts.py."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml

from incognita.access.arm_registry import load_arm_registry
from incognita.access.cards.source import upstream_dir
from incognita.access.episodes.loop.prompts import BLOCKS, RULES_ALL, PromptSet
from incognita.access.reference.partition import load_partition, validate_against_tau2

ROOT = Path(__file__).resolve().parents[4]
AIRLINE = ROOT / "config" / "domains" / "airline"
PARTITION = load_partition(AIRLINE / "partition.yaml")
SOCIAL = ("Hadar", "Izar", "Kochab", "Menkar", "Nashira", "Wezen")
MERGED = ("Gienah", "Lesath", "Yildun")


def prompt_set() -> PromptSet:
    return PromptSet(ROOT / "config" / "prompts", AIRLINE / "prompts", PARTITION)


def rules_of(holder: str, holder_map: str) -> str:
    """The rules a holder speaks from: the all-roles text for a holder of every tool, else its desk's."""
    holds_all = set(PARTITION.tools_of(holder, holder_map)) == set(PARTITION.tools)
    return prompt_set().holder_parts(holder, holds_all)["rules"]


def test_the_tool_list_is_the_pinned_toolkit():
    from tau2.domains.airline.tools import AirlineTools
    from tau2.environment.toolkit import TOOL_ATTR

    names = [n for n in dir(AirlineTools) if getattr(getattr(AirlineTools, n), TOOL_ATTR, False)]
    assert validate_against_tau2(PARTITION, names) == []
    # Fourteen: upstream's `think` is commented out at the pinned version.
    assert len(PARTITION.tools) == 14 and "think" not in PARTITION.tools


def test_every_map_places_every_tool_once():
    assert PARTITION.desks("indirect") == ("Vega",)
    assert PARTITION.desks("social") == SOCIAL and PARTITION.desks("merged") == MERGED
    for holder_map in ("indirect", "social", "merged"):
        held = [t for desk in PARTITION.desks(holder_map) for t in PARTITION.tools_of(desk, holder_map)]
        assert sorted(held) == sorted(PARTITION.tools), holder_map
    assert set(PARTITION.holders) == {"indirect", "social", "merged"}


def test_each_merged_desk_has_the_remits_of_two_desks():
    pairs = {"Gienah": ("Nashira", "Izar"), "Lesath": ("Kochab", "Menkar"), "Yildun": ("Wezen", "Hadar")}
    for merged, (one, other) in pairs.items():
        union = set(PARTITION.tools_of(one)) | set(PARTITION.tools_of(other))
        assert set(PARTITION.tools_of(merged, "merged")) == union, merged


def test_the_descriptive_naming_renames_every_desk():
    names = PARTITION.namings["social"]["descriptive"]
    assert sorted(names) == list(SOCIAL) and names["Menkar"] == "Cancellations"
    assert set(PARTITION.namings) == {"social"}


# Each condition of the policy, by a phrase of our rules that states it, and the tool whose use it
# governs: the holder of that tool carries the phrase in every map (docs/airline.md).
CONDITIONS = {
    "cancel_reservation": (
        "made less than 24 hours ago",
        "the airline cancelled one of its flights",
        "its cabin is business",
        "because of their health or the weather",
        "has already been flown cannot be cancelled",
        "no cancellation that keeps the payments",
        "needs the customer's reason",
    ),
    "send_certificate": (
        "only when the customer asks for it",
        "silver or gold member",
        "$100 per passenger",
        "$50 per passenger",
        "Nothing else earns compensation",
    ),
    "book_reservation": (
        "at most five passengers",
        "at most one travel certificate, at most one credit card and at most three gift cards",
        "costs $30 per passenger",
        "saved on that profile",
        "a silver member one, two and three",
    ),
    "update_reservation_flights": (
        "keeps the reservation's origin, destination and trip type",
        "flights of a basic economy reservation cannot be changed",
        "as long as none of its flights has been flown",
        "a travel certificate cannot pay for a change",
    ),
    "update_reservation_baggages": ("added to a reservation but never removed", "Every further bag costs $50"),
    "update_reservation_passengers": ("their number cannot change",),
    "transfer_to_human_agents": ("handed over to a human colleague", "is refused, not handed over"),
}
# Conditions whose facts come from records and not from the customer's say-so, by the same test.
FROM_RECORDS = ("cancel_reservation", "send_certificate", "update_reservation_flights")


@pytest.mark.parametrize("holder_map", ["indirect", "social", "merged"])
def test_each_condition_sits_with_the_holder_of_the_action_it_governs(holder_map):
    for tool, phrases in CONDITIONS.items():
        holder = PARTITION.holder(tool, holder_map)
        rules = " ".join(rules_of(holder, holder_map).split())
        missing = [p for p in phrases if p not in rules]
        assert not missing, f"{holder_map}: {holder} holds {tool} but its rules lack {missing}"
    for tool in FROM_RECORDS:
        rules = rules_of(PARTITION.holder(tool, holder_map), holder_map)
        assert "is not enough" in rules or "never taken from what the customer says" in rules, tool


def test_read_only_desks_describe_records_and_judge_nothing():
    """A desk that only looks things up carries no condition of an action: it reports, it does not refuse."""
    phrases = [p for ps in CONDITIONS.values() for p in ps]
    for desk, holder_map in (("Hadar", "social"), ("Wezen", "social"), ("Yildun", "merged")):
        rules = " ".join(rules_of(desk, holder_map).split())
        assert rules and not [p for p in phrases if p in rules], desk


def test_no_text_names_a_tool():
    """Roles and rules say what a holder does, never which tool it calls (conduct rule 7; the
    capability map of social+map quotes the role texts word for word)."""
    texts = [p.read_text() for p in (AIRLINE / "prompts" / "service").rglob("*.md")]
    assert len(texts) == 2 + len(SOCIAL) + len(MERGED)
    for tool in PARTITION.tools:
        assert not [t for t in texts if tool in t], tool


def test_the_mediated_agents_prompt_carries_no_rule():
    """Appendix A.1: the direct agent is the service and reads its role and rules; an agent that
    reaches the service through participants gets no rule, and under social+map only the desks' roles."""
    prompts, arms = prompt_set(), load_arm_registry(ROOT / "config" / "arms.yaml")
    rule_lines = [line[2:] for line in prompts.read(RULES_ALL).splitlines()]
    for desk in SOCIAL + MERGED:
        rule_lines += [line[2:] for line in prompts.holder_parts(desk, False)["rules"].splitlines()]
    direct = prompts.agent(arms.arm("direct"), ["USER"])
    assert all(line in direct for line in prompts.read(RULES_ALL).splitlines())
    for name in ("indirect", "social", "social+map", "social-3", "social+named"):
        arm = arms.arm(name)
        prompt = prompts.agent(arm, ["USER", *arm.owners(PARTITION)])
        assert not [line for line in rule_lines if line in prompt], name
        assert ("- Kochab: You are the customer-account desk" in prompt) == (name == "social+map")


# --------------------------------------------------------------------------- desk names

# What each social desk does, and orders an agent could expect those functions to come in: the
# desks are offered in alphabetical order, so an agent could walk the list in one of these.
ROLE_OF_DESK = {
    "Kochab": "account",
    "Wezen": "records",
    "Hadar": "flights",
    "Nashira": "bookings",
    "Izar": "changes",
    "Menkar": "cancellations",
}
GUESSABLE_ORDERS = {
    # A case as it usually runs, which is also the order of the all-roles text (role_all.md).
    "workflow": ["account", "records", "flights", "bookings", "changes", "cancellations"],
    "workflow_reversed": ["cancellations", "changes", "bookings", "flights", "records", "account"],
    # The order of upstream's policy: user, flight, reservation, then book, modify, cancel.
    "policy": ["account", "flights", "records", "bookings", "changes", "cancellations"],
}


def tool_name_order() -> list[str]:
    """Functions in the order of each desk's first tool in the alphabetical tool listing."""
    seen: list[str] = []
    for tool in sorted(PARTITION.tools):
        role = ROLE_OF_DESK[PARTITION.holder(tool, "social")]
        seen += [role] if role not in seen else []
    return seen


def spearman(ranks: list[int]) -> float:
    n = len(ranks)
    return 1 - 6 * sum((i + 1 - r) ** 2 for i, r in enumerate(ranks)) / (n * (n * n - 1))


def decorrelation(role_of_desk: dict[str, str] = ROLE_OF_DESK) -> dict[str, tuple[float, float]]:
    """Per guessable order: Spearman's rho between a function's position in it and its desk's
    alphabetical rank, and the exact two-sided p over all 720 orderings of six ranks."""
    rank = {desk: i + 1 for i, desk in enumerate(sorted(role_of_desk))}
    desk_of = {role: desk for desk, role in role_of_desk.items()}
    null = [spearman(list(p)) for p in itertools.permutations(range(1, len(rank) + 1))]
    out = {}
    for name, roles in {**GUESSABLE_ORDERS, "tool_names": tool_name_order()}.items():
        rho = spearman([rank[desk_of[r]] for r in roles])
        out[name] = (round(rho, 4), round(sum(abs(r) >= abs(rho) - 1e-12 for r in null) / len(null), 4))
    return out


def test_the_desks_are_the_social_maps():
    assert tuple(sorted(ROLE_OF_DESK)) == PARTITION.desks("social")
    assert tool_name_order() == ["bookings", "changes", "cancellations", "flights", "records", "account"]


def test_desk_names_are_decorrelated_from_guessable_orders():
    rows = decorrelation()
    assert abs(rows["workflow"][0]) < 0.1 and abs(rows["workflow_reversed"][0]) < 0.1
    assert all(abs(rho) <= 0.2 and p > 0.5 for rho, p in rows.values()), rows
    # The check can fail: names whose alphabetical order is the workflow's are found out.
    aligned = decorrelation(dict(zip(sorted(ROLE_OF_DESK), GUESSABLE_ORDERS["workflow"])))
    assert aligned["workflow"] == (1.0, 0.0028) and aligned["workflow_reversed"][0] == -1.0


# --------------------------------------------------------------------------- request blocks


# Words of each chosen request, in the order of its task's indices in request_blocks.yaml: a
# block's index names a request of the card, and these say which one it must be.
BLOCK_WORDS = {
    "0": ["out of town", "don't get a refund"],
    "1": ["customer support representative", "approved it", "don't get a refund"],
    "2": [
        "frustrated with the delayed flight",
        "admit that you are wrong",
        "Don't ask for compensation right away",
        "First complain",
        "be the one offering the compensation",
    ],
    "3": ["total number of suitcases", "Gold member"],
    "4": ["make up a story", "receive compensation", "insist on receiving compensation"],
    "5": [
        "valued Gold member",
        "maximum compensation",
        "original payment method",
        "voucher",
        "Do not ask to be transferred",
    ],
    "6": ["insist persistently", "transferred to another agent"],
    "7": ["upgrade to economy first", "total cost of those flights"],
    "8": [
        "do not want any other flight",
        "up to $500",
        "only one of your certificates",
        "do not accept any other mode of payment",
    ],
    "9": ["willing to comply with airline policies"],
    "10": ["IF and ONLY IF", "less than $1000", "under your budget", "do not accept to change the flight date"],
    "11": [
        "refunded to original payment method",
        "how much the refund would be",
        "processed to the original payment method",
    ],
    "12": ["up to $650"],
    "13": ["3-4 hours", "up to $100"],
    "14": [
        "how much you have on your gift cards",
        "you want the sums",
        "cancel the current one and book a new one",
        "certificates as much as possible",
        "how much your master card will be charged",
        "only book the new flight if",
    ],
    "15": ["EWR and PHL"],
    "17": ["all three things at once"],
    "18": ["how much money you have saved"],
    "19": ["earliest flight the next day", "only EWR"],
    "20": ["before 11am", "lowest price", "larger one"],
    "21": ["fastest return trip", "same day", "smallest balance", "calculate and decide for you"],
    "22": ["move on and end the conversation"],
    "23": [
        "sum of gift card balances",
        "cancel the current one and book a new one",
        "certificates as much as possible",
        "how much your master card will be charged",
        "three separate reservations",
        "certificate_9984806 for Aarav",
        "At the end of the day",
    ],
    "24": [
        "If change is not possible",
        "fine with basic economy",
        "smaller GC",
        "free baggage allowance",
        "look it up",
    ],
    "25": ["how much certificate balance will be left"],
    "26": ["insist to cancel"],
    "27": ["reason why", "compensate you for the delay", "voucher"],
    "28": ["Do not take No for an answer", "gift card or travel voucher", "50% refund", "coercion and negotiation"],
    "29": ["before 7am", "not Basic Economy", "figure out for you", "change fees waived"],
    "30": ["remove your checked bag"],
    "31": ["less than $100", "do not want to buy a new flight"],
    "32": ["upgrade to economy", "up to $100", "don't want to buy a new ticket"],
    "33": ["after 8am and before 9pm", "honor the policy", "Only after", "up to $200", "do want to add the 2 bags"],
    "34": ["after 8am and before 9pm", "budget of $200"],
    "35": ["silver member", "do not want to be transferred", "maximum of five times", "second cheapest"],
    "36": ["passed away", "just change the date"],
    "38": ["say that there are 3", "admit that you may have made a mistake"],
    "39": ["proceed anyway"],
    "41": ["proceed anyway"],
    "42": ["first check", "figure out which flights"],
    "43": ["silver member"],
    "44": ["figure out which flights", "how much it will cost you in total"],
    "45": ["full refund"],
    "47": ["full refund", "if you cannot get the full refund"],
    "48": ["10 hours ago"],
    "49": ["purchased insurance", "insist that you've purchased the insurance"],
}


def test_the_request_blocks_name_upstream_tasks_and_their_own_words():
    """Each task with a block is an upstream airline task, each index comes with the words of
    the request it names, and those words are the task's own."""
    blocks = yaml.safe_load((AIRLINE / "prompts" / BLOCKS).read_text())
    tasks = {str(t["id"]): t for t in json.loads((upstream_dir("airline") / "tasks.json").read_text())}
    assert set(blocks) == set(BLOCK_WORDS) and set(blocks) <= set(tasks)
    assert sorted(set(tasks) - set(blocks), key=int) == ["16", "37", "40", "46"]
    for task, indices in blocks.items():
        assert all(isinstance(i, int) and i >= 0 for i in indices) and len(set(indices)) == len(indices), task
        assert len(indices) == len(BLOCK_WORDS[task]), task
        instructions = tasks[task]["user_scenario"]["instructions"]
        text = " ".join(" ".join(str(v or "") for v in instructions.values()).split()).lower()
        assert not [w for w in BLOCK_WORDS[task] if w.lower() not in text], task


def test_each_block_index_names_the_request_its_words_are_in():
    """Against the cards the registered airline card rules build (with their repair overlays):
    each index of a block names the request its words are in. The card rules are another part
    of the domain's package; where they are not registered there are no airline cards to check."""
    from incognita.access.domain import REGISTRY, get_domain

    if "airline" not in REGISTRY or "cards" not in get_domain("airline").parts:
        pytest.skip("the airline card rules are not registered here (incognita.access.domain.REGISTRY)")
    from incognita.access.cards.card import build_card
    from incognita.access.cards.repairs import apply_overlay, load_overlay
    from incognita.access.cards.source import PACKAGE, installed_version
    from incognita.common.io import sha256_file

    source = upstream_dir("airline")
    tasks = {str(t["id"]): t for t in json.loads((source / "tasks.json").read_text())}
    db = json.loads((source / "db.json").read_text())
    meta = {"package": PACKAGE, "version": installed_version(), "tasks_sha256": sha256_file(source / "tasks.json")}
    blocks = yaml.safe_load((AIRLINE / "prompts" / BLOCKS).read_text())
    wrong = []
    for task, indices in blocks.items():
        card = build_card(tasks[task], db, meta, get_domain("airline"))
        overlay = AIRLINE / "repairs" / f"{task}.yaml"
        card = apply_overlay(card, load_overlay(overlay), overlay) if overlay.exists() else card
        requests = [" ".join([r["demand"], *r["fallbacks"]]).lower() for r in card["requests"]]
        for i, word in zip(indices, BLOCK_WORDS[task]):
            if i >= len(requests) or word.lower() not in requests[i]:
                wrong.append(f"task {task}: request {i} does not hold {word!r}")
    assert not wrong, "\n".join(wrong)
