"""Prompt rendering; here the customer's prompt, built to the paper's Appendix A.2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from incognita.access.arm_registry import arm_registry
from incognita.access.episodes.loop.prompts import BLOCKS, PromptSet, mask
from incognita.access.reference.partition import load_partition
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[4]
PROMPTS = ROOT / "config" / "prompts"  # the generic prompt files
RETAIL = ROOT / "config" / "domains" / "retail"
RETAIL_PROMPTS = RETAIL / "prompts"  # the retail domain's (its request blocks among them)
PARTITION = load_partition(RETAIL / "partition.yaml")
NAMED = ["2", "3", "11", "30", "37", "38", "46", "59"]  # the paper's eight tasks with a request block


def prompt_set(domain_root: Path = RETAIL_PROMPTS) -> PromptSet:
    return PromptSet(PROMPTS, domain_root, PARTITION)


def test_only_the_eight_named_tasks_get_a_request_block(repaired_card):
    blocks = yaml.safe_load((RETAIL_PROMPTS / BLOCKS).read_text())
    assert sorted(blocks, key=int) == NAMED
    prompts = prompt_set()
    for task_id in NAMED:  # every index names one of the card's requests
        assert prompts.request_block(repaired_card(task_id))
    assert "<requests>" not in prompts.customer(repaired_card("1"), {}, [])


def test_the_block_holds_the_customers_own_requests_not_the_main_demand(repaired_card):
    card = repaired_card("46")
    text = prompt_set().customer(card, {"order_id": "#W9502127"}, [f["token"] for f in card["fields"]])
    own = [mask(r["demand"], card) for r in card["requests"][1:]]
    assert all(o in text for o in own) and mask(card["requests"][0]["demand"], card) not in text
    assert text.startswith((PROMPTS / "customer" / "behaviour.md").read_text().strip())
    assert "<manner>" not in text and card["persona"] not in text
    assert "- order_id: #W9502127" in text and "Details you can release" not in text


def test_the_prompt_is_the_same_in_every_arm_for_a_memory_state(repaired_card):
    card = repaired_card("2")
    prompts = prompt_set()
    assert prompts.customer(card, {}, []) == prompt_set().customer(card, {}, ["x"])
    registry = arm_registry(ROOT / "config" / "arms.yaml")
    assert all(RETAIL_PROMPTS / BLOCKS in prompts.files_for(arm, PARTITION) for arm in registry.arms.values())


def test_a_bad_block_index_names_the_file_and_the_task(repaired_card, tmp_path):
    copy = tmp_path / "prompts"
    shutil.copytree(RETAIL_PROMPTS, copy)
    (copy / BLOCKS).write_text('"2": [7]\n')
    with pytest.raises(InputError, match=r"request_blocks.yaml: task 2: request index\(es\) \[7\]"):
        prompt_set(copy).customer(repaired_card("2"), {}, [])


DOMAINS = sorted(p.parent for p in (ROOT / "config" / "domains").glob("*/partition.yaml"))


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda p: p.name)
def test_every_domain_has_every_map_an_arm_names_and_a_text_for_each_holder(domain):
    """Each arm of the registry binds to each domain's partition (its map and naming exist), every
    prompt file its cells read exists, and every holder it shows has a role text."""
    partition = load_partition(domain / "partition.yaml")
    prompts = PromptSet(PROMPTS, domain / "prompts", partition)
    for arm in arm_registry(ROOT / "config" / "arms.yaml").arms.values():
        missing = [p for p in prompts.files_for(arm, partition) if not p.exists()]
        assert not missing, f"{domain.name}: arm {arm.name}: {missing}"
        if arm.agent_executes:
            continue
        for holder, tools in arm.owners(partition).items():
            assert prompts.holder_parts(holder, set(partition.tools) <= tools, arm)["role"], (arm.name, holder)
