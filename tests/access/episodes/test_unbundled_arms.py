"""The unbundled arms of issue #28 (config/arms.yaml): each changes one component of the
social bundle, and the episode shows that component and nothing else changed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from workflow_helpers import scripted_harness

from incognita.access.episodes.loop.records import GatewayDecision, Message, Referral
from incognita.access.episodes.scripted.discovery import map_replies, read_map
from incognita.access.episodes.scripted.scripted_agent import agent_class
from incognita.access.golden.provenance import load_vocabulary
from incognita.access.golden.trajectory import build_golden
from incognita.access.reference.partition import load_partition
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
RETAIL = ROOT / "config/domains/retail"
RETAIL_TOOLS = load_partition(RETAIL / "partition.yaml").tools
SOCIAL_DESKS = load_partition(RETAIL / "partition.yaml").desks("social")
ARMS = ("social", "social+map", "social+referral", "social-3", "social+named")
MODELS = {m: f"scripted:{m}" for m in ("surveyor", "prober", "impatient")}


@pytest.fixture(scope="module")
def harness(source_dir):
    return scripted_harness(source_dir, ARMS, dict(MODELS))


@pytest.fixture(scope="module")
def task46(harness, repaired_card):
    card = repaired_card("46")
    return card, build_golden(card, harness.world, load_vocabulary(str(RETAIL / "vocabulary.yaml")))


def run(harness, task46, arm: str, model: str = "surveyor"):
    card, golden = task46
    return harness.run_cell(arm, model, "retail/46", 0, card, "-", golden, "-")


def agent_messages(record, to: str | None = None) -> list[Message]:
    return [e for e in record.events if isinstance(e, Message) and e.sender == "agent" and to in (None, e.recipient)]


def test_the_map_is_the_desks_role_texts_and_names_no_tool(harness):
    arm = harness.arms.arm("social+map")
    prompt = harness.prompts.agent(arm, harness.recipients("social+map"))
    for desk in SOCIAL_DESKS:
        role = " ".join(harness.prompts.holder_parts(desk, False, arm)["role"].split())
        assert f"- {desk}: {role}" in prompt
    assert not any(tool in prompt for tool in RETAIL_TOOLS)
    # The social arm's prompt is the same but for the map.
    social = harness.prompts.agent(harness.arms.arm("social"), harness.recipients("social"))
    assert "- Aster:" not in social and social.splitlines()[:3] == prompt.splitlines()[:3]


def test_a_declared_map_replaces_the_survey(harness, task46):
    social, mapped = run(harness, task46, "social"), run(harness, task46, "social+map")
    remit = lambda r: sum("#remit" in m.text for m in agent_messages(r))  # noqa: E731
    assert remit(social) == len(SOCIAL_DESKS) and remit(mapped) == 0
    assert mapped.success and len(agent_messages(mapped)) < len(agent_messages(social))


def test_a_template_must_match_what_the_arm_declares(harness):
    mapped, social = harness.arms.arm("social+map"), harness.arms.arm("social")
    with pytest.raises(InputError, match=r"arms\.social\+map\.prompts\.agent: .*must carry \{capability_map\}"):
        harness.prompts.agent(
            type(mapped)(**{**vars(mapped), "agent_prompt": "agent/mediated.md"}), ["USER", "Aster", "Boreal"]
        )
    with pytest.raises(InputError, match=r"arms\.social\.prompts\.agent: .*carries \{capability_map\}, which only"):
        harness.prompts.agent(
            type(social)(**{**vars(social), "agent_prompt": "agent/mediated_map.md"}), ["USER", "Aster", "Boreal"]
        )


def test_a_referring_desk_names_the_holder_and_the_agent_goes_there(harness, task46):
    """The prober guesses desks at random: under social+referral a wrong guess is answered with
    the holder's name, logged as a referral, and the agent's next try goes to that holder."""
    record = run(harness, task46, "social+referral", "prober")
    referrals = [e for e in record.events if isinstance(e, Referral)]
    assert referrals and record.success
    holder_of = harness.arms.arm("social+referral").holder_of(harness.partition)
    for ref in referrals:
        i = next(i for i, e in enumerate(record.events) if isinstance(e, Referral) and e is ref)
        reply = next(e for e in reversed(record.events[:i]) if isinstance(e, Message) and e.sender == ref.referrer)
        asked = next(e for e in reversed(record.events[:i]) if isinstance(e, Message) and e.recipient == ref.referrer)
        tool = re.search(r"#call (\w+)", asked.text).group(1)
        assert ref.holder == holder_of[tool]  # the right holder
        others = [d for d in SOCIAL_DESKS if d not in (ref.referrer, ref.holder)]
        assert not any(re.search(rf"\b{d}\b", reply.text) for d in others)  # and nobody else
        after = next(e for e in record.events[i:] if isinstance(e, Message) and e.sender == "agent")
        assert after.recipient == ref.holder
    # Under social, the same agent meets plain refusals and no referral is logged.
    assert not any(isinstance(e, Referral) for e in run(harness, task46, "social", "prober").events)


def test_the_referring_conduct_lists_the_other_desks(harness):
    arm = harness.arms.arm("social+referral")
    prompt = harness.prompts.service(arm, "Dorian", False, list(SOCIAL_DESKS))
    assert "- Fenn: You are the pending-order desk" in prompt and "- Dorian:" not in prompt
    assert "Never send the asker to anyone else" not in prompt
    social = harness.prompts.service(harness.arms.arm("social"), "Dorian", False, list(SOCIAL_DESKS))
    assert "Never send the asker to anyone else" in social and "- Fenn:" not in social


def test_three_merged_desks_hold_every_tool(harness, task46):
    owners = harness.arms.arm("social-3").owners(harness.partition)
    assert list(owners) == ["Linden", "Marlow", "Nyland"]
    assert sorted(t for tools in owners.values() for t in tools) == sorted(RETAIL_TOOLS)
    record = run(harness, task46, "social-3")
    assert record.success
    assert {m.recipient for m in agent_messages(record)} <= {"USER", "ENVIRONMENT", *owners}
    accepted = {e.proposer for e in record.events if isinstance(e, GatewayDecision) and e.status == "accepted"}
    assert accepted and accepted <= set(owners)


def test_named_desks_are_the_six_desks_under_other_names(harness, task46):
    arm = harness.arms.arm("social+named")
    owners = arm.owners(harness.partition)
    social = harness.arms.arm("social").owners(harness.partition)
    assert sorted(owners.values(), key=sorted) == sorted(social.values(), key=sorted)
    assert owners["PendingOrders"] == social["Fenn"] and arm.prompt_name("PendingOrders", harness.partition) == "Fenn"
    # Each named desk speaks from the role text of the desk it renames.
    assert harness.prompts.service(arm, "Returns", False, list(owners)) == harness.prompts.service(
        harness.arms.arm("social"), "Boreal", False, list(social)
    )
    record = run(harness, task46, "social+named")
    assert {m.recipient for m in agent_messages(record)} - {"USER", "ENVIRONMENT"} <= set(owners)
    assert json.dumps([m.text for m in agent_messages(record)]).count("Aster") == 0


def test_a_referral_is_followed_before_patience_is_charged(harness, task46):
    """Issue #53: the impatient profile tolerates one dead end. Sent on by a desk that names the
    holder, it goes there first, as a person would: the referral is no dead end, so referrals
    beyond its patience do not make it give up."""
    record = run(harness, task46, "social+referral", "impatient")
    referrals = [e for e in record.events if isinstance(e, Referral)]
    assert len(referrals) > 1  # more than its patience would allow if each were charged
    assert not any("too many dead ends" in m.text for m in agent_messages(record, "USER"))
    assert record.success


def role_texts(harness, name: str) -> dict[str, str]:
    arm = harness.arms.arm(name)
    return {h: harness.prompts.holder_parts(h, False, arm)["role"] for h in arm.owners(harness.partition)}


def test_the_declared_map_is_read_whole(harness):
    """Issue #53: the map's role texts are read as a reader of the domain reads them (the toolkit's
    terms in everyday words, retail's TOOL_WORDS), and every tool lands on its holder: the six
    desks' map, and the three merged desks' role texts read as a map."""
    tools = {name: tool["description"] for name, tool in harness.tools.items()}
    words = agent_class(harness.domain).TOOL_WORDS
    for name in ("social+map", "social-3"):
        truth = harness.arms.arm(name).holder_of(harness.partition)
        assert read_map(role_texts(harness, name), tools, words) == truth, name
    # Word for word, the same texts put get_user_details with the order-records desk and leave
    # calculate unplaced: the dead ends the map arm used to meet.
    plain = map_replies(role_texts(harness, "social+map"), tools)
    assert plain.get("get_user_details") == "Dorian" and "calculate" not in plain


def test_the_map_arm_meets_no_dead_end(harness, task46):
    """With every tool placed, the agent told the map is never declined (task 46 needs calculate,
    which word matching left unplaced, so the agent had to probe for it)."""
    record = run(harness, task46, "social+map", "impatient")
    asked = {re.search(r"#call (\w+)", m.text).group(1) for m in agent_messages(record) if "#call " in m.text}
    assert "calculate" in asked
    replies = [e for e in record.events if isinstance(e, Message) and e.recipient == "agent"]
    assert not any("#decline" in m.text for m in replies) and record.success
