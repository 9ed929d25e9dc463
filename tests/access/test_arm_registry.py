"""The arm registry: the shipped entries are the paper's arms, bad entries name their key, and
an arm behaves as its entry says, whatever it is called."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from workflow_helpers import scripted_harness

from incognita.access import cells
from incognita.access.arm_registry import arm_registry, load_arm_registry
from incognita.access.episodes import harness as harness_module
from incognita.access.episodes.loop.records import Message, event_to_dict
from incognita.access.golden.provenance import load_vocabulary
from incognita.access.golden.trajectory import build_golden
from incognita.access.reference.partition import load_partition
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "config" / "arms.yaml"
RETAIL = ROOT / "config" / "domains" / "retail"  # the arms are bound to retail's partition here
SOCIAL_DESKS = ("Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn")


@pytest.fixture(scope="module")
def partition():
    return load_partition(RETAIL / "partition.yaml")


def write_registry(tmp_path: Path, arms: dict) -> Path:
    path = tmp_path / "arms.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "arms": arms}))
    return path


def shipped_entries() -> dict:
    return yaml.safe_load(SHIPPED.read_text())["arms"]


def test_the_shipped_entries_are_the_papers_three_arms(partition):
    registry = load_arm_registry(SHIPPED)
    assert registry.names[:3] == ("direct", "indirect", "social")
    direct, indirect, social = (registry.arm(a) for a in registry.names[:3])
    assert direct.owners(partition) == {"agent": frozenset(partition.tools)}
    assert indirect.owners(partition) == {"Vega": frozenset(partition.tools)}
    assert list(social.owners(partition)) == list(SOCIAL_DESKS)  # alphabetical, as the agent is offered them
    assert set().union(*social.owners(partition).values()) == set(partition.tools)
    assert (direct.declared, indirect.declared, social.declared) == (True, True, False)
    assert direct.holder_of(partition) == dict.fromkeys(partition.tools, "agent")
    assert list(social.holder_of(partition)) == list(partition.tools)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda a: a["social"].pop("declared"), "arms.social.declared: missing"),
        (lambda a: a["social"].update(colour="blue"), "arms.social.colour: unknown field"),
        (lambda a: a["social"].update(declared="no"), "arms.social.declared: expected true or false"),
        (lambda a: a["indirect"]["prompts"].update(service=None), "arms.indirect.prompts.service: null exactly"),
        (lambda a: a["direct"]["prompts"].update(service="service/desk.md"), "arms.direct.prompts.service"),
        (lambda a: a["direct"].update(declared=False), "arms.direct.declared: an agent that holds the tools"),
        (lambda a: a["social"]["prompts"].pop("agent"), "arms.social.prompts: expected a mapping with agent, service"),
        (lambda a: a.update(native=a["direct"]), "arms.native: reserved"),
        (lambda a: a["social"].update(referral="yes"), "arms.social.referral: expected true or false"),
        (lambda a: a["social"].update(names={"Aster": "Accounts"}), "arms.social.names: expected the name of a naming"),
        (lambda a: a["social"].update(names="two words"), "arms.social.names: expected the name of a naming"),
        (lambda a: a["direct"].update(names="descriptive"), "arms.direct.names: there are no holders"),
        (lambda a: a["direct"].update(referral=True), "arms.direct.referral: there are no holders"),
        (lambda a: a["social"]["prompts"].update(conduct=""), "arms.social.prompts.conduct: expected a file name"),
        (lambda a: a.update({"so cial": a["direct"]}), "arms.so cial: an arm's name"),
    ],
)
def test_a_bad_entry_names_its_file_and_key(tmp_path, change, key):
    arms = shipped_entries()
    change(arms)
    path = write_registry(tmp_path, arms)
    with pytest.raises(InputError) as err:
        load_arm_registry(path)
    assert str(err.value).startswith(f"{path}: {key}")


def test_a_holder_map_the_partition_lacks_is_named_when_the_arm_is_bound(tmp_path, partition):
    arms = shipped_entries()
    arms["social"]["holders"] = "pairs"
    registry = load_arm_registry(write_registry(tmp_path, arms))
    with pytest.raises(InputError, match=r"arms\.social\.holders: 'pairs' is not a holder map of .*partition\.yaml"):
        registry.arm("social").owners(partition)
    with pytest.raises(InputError, match=r"no arm 'solo' \(registered: direct, indirect, social, social\+map"):
        registry.arm("solo")
    arms["social"].update(holders="social", names="plain")
    registry = load_arm_registry(write_registry(tmp_path, arms))
    with pytest.raises(
        InputError, match=r"arms\.social\.names: 'plain' is not a naming of map 'social' of .*names: descriptive\)"
    ):
        registry.arm("social").owners(partition)
    arms["social"].update(holders="indirect", names="descriptive")  # a naming of another map
    registry = load_arm_registry(write_registry(tmp_path, arms))
    with pytest.raises(InputError, match=r"'descriptive' is not a naming of map 'indirect' .*names: none\)"):
        registry.arm("social").owners(partition)


def test_a_naming_shows_the_holders_under_other_names(partition):
    named = load_arm_registry(SHIPPED).arm("social+named")
    shown = named.shown_names(partition)
    assert sorted(shown) == list(SOCIAL_DESKS) and shown["Fenn"] == "PendingOrders"
    assert list(named.owners(partition)) == sorted(shown.values())
    assert named.prompt_name("PendingOrders", partition) == "Fenn" and named.prompt_name("Fenn", partition) == "Fenn"
    assert load_arm_registry(SHIPPED).arm("social").shown_names(partition) == {}


def test_the_design_lists_registered_arms_only(tmp_path):
    arms = shipped_entries()
    arms["social_copy"] = arms["social"]
    config = {"design": {"arms": ["direct", "native"]}, "arm_registry": str(write_registry(tmp_path, arms))}
    assert cells.design_arms(config) == ("direct", "native")
    with pytest.raises(InputError, match=r"design\.arms: unknown arm\(s\) \['solo'\] \(registered in .*arms\.yaml"):
        cells.design_arms({**config, "design": {"arms": ["direct", "solo"]}})
    assert cells.design_arms({**config, "design": {"arms": ["social_copy", "social"]}}) == ("social_copy", "social")
    with pytest.raises(InputError, match=r"\['direct'\] listed more than once"):
        cells.design_arms({**config, "design": {"arms": ["direct", "direct"]}})


@pytest.fixture(scope="module")
def task46(source_dir, repaired_card):
    card = repaired_card("46")
    world = scripted_harness(source_dir, ("direct",), {}).world
    return card, build_golden(card, world, load_vocabulary(str(RETAIL / "vocabulary.yaml")))


def events(record) -> list[dict]:
    return [event_to_dict(e) for e in record.events]


def test_an_arm_is_its_entry_not_its_name(tmp_path, source_dir, task46, monkeypatch):
    """A copy of the social entry under another name runs exactly the social arm's episode
    (given the same seed: a cell's seed includes the arm's name)."""
    arms = shipped_entries()
    arms["desks_again"] = arms["social"]
    registry = write_registry(tmp_path, arms)
    monkeypatch.setattr(harness_module, "cell_seed", lambda seed, model, task, rep, arm: 4242)
    harness = scripted_harness(
        source_dir, ("social", "desks_again"), {"surveyor": "scripted:surveyor"}, arm_registry=str(registry)
    )
    card, golden = task46
    social = harness.run_cell("social", "surveyor", "retail/46", 0, card, "-", golden, "-")
    again = harness.run_cell("desks_again", "surveyor", "retail/46", 0, card, "-", golden, "-")
    assert social.turns > 5 and events(again) == events(social)
    assert (again.success, again.final_db_hash) == (social.success, social.final_db_hash)


def test_declared_decides_whether_the_agent_must_ask_who_holds_what(tmp_path, source_dir, task46):
    """Vega's holder map with `declared: false`: the surveying agent now asks Vega what it
    handles before working, as it asks the social desks; under `indirect` it never does."""
    arms = shipped_entries()
    arms["vega_undeclared"] = {**arms["indirect"], "declared": False}
    registry = write_registry(tmp_path, arms)
    harness = scripted_harness(
        source_dir, ("indirect", "vega_undeclared"), {"surveyor": "scripted:surveyor"}, arm_registry=str(registry)
    )
    card, golden = task46

    def asked_vega_for_its_remit(arm: str) -> bool:
        record = harness.run_cell(arm, "surveyor", "retail/46", 0, card, "-", golden, "-")
        to_vega = [e for e in record.events if isinstance(e, Message) and e.sender == "agent" and e.recipient == "Vega"]
        return any("#remit" in m.text for m in to_vega)

    assert not asked_vega_for_its_remit("indirect")
    assert asked_vega_for_its_remit("vega_undeclared")


def test_the_registry_is_read_again_when_its_file_changes(tmp_path):
    path = write_registry(tmp_path, shipped_entries())
    assert arm_registry(path).arm("social").declared is False
    arms = shipped_entries()
    arms["social"]["declared"] = True
    path.write_text(yaml.safe_dump({"version": 1, "arms": arms}))
    import os

    os.utime(path, ns=(1, 10**18))  # a different modification time, whatever the clock's resolution
    assert arm_registry(path).arm("social").declared is True
