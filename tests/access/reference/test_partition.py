"""The tool partition (retail's file): completeness, exactly-once placement, clear errors. The
decorrelation of retail's desk names is tests/access/domains/retail/test_desk_order.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from incognita.access.reference.partition import load_partition, validate_against_tau2
from incognita.common.io import InputError

PARTITION = Path(__file__).resolve().parents[3] / "config" / "domains" / "retail" / "partition.yaml"
SOCIAL_DESKS = ("Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn")


@pytest.fixture()
def doc() -> dict:
    return yaml.safe_load(PARTITION.read_text())


def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "partition.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_every_tool_has_exactly_one_holder_per_arm():
    p = load_partition(PARTITION)
    assert len(p.tools) == len(set(p.tools)) == 15
    assert p.desks("social") == SOCIAL_DESKS and p.desks("indirect") == ("Vega",)
    for tool in p.tools:
        assert p.holder(tool, "indirect") == "Vega"
        assert p.holder(tool, "social") in SOCIAL_DESKS
    assert sum(len(p.tools_of(d)) for d in SOCIAL_DESKS) == 15
    assert all(p.tools_of(d) for d in SOCIAL_DESKS)


def test_desk_remits_follow_the_paper():
    p = load_partition(PARTITION)
    assert set(p.tools_of("Aster")) >= {"get_user_details", "modify_user_address"}
    assert set(p.tools_of("Boreal")) >= {"return_delivered_order_items", "exchange_delivered_order_items"}
    assert set(p.tools_of("Cygnus")) == {"get_product_details", "list_all_product_types"}
    assert set(p.tools_of("Dorian")) == {"get_order_details"}
    assert set(p.tools_of("Elara")) == {"find_user_id_by_email", "find_user_id_by_name_zip"}
    assert set(p.tools_of("Fenn")) >= {
        "cancel_pending_order",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
    }
    assert p.holder("calculate", "social") == "Fenn"
    assert p.holder("transfer_to_human_agents", "social") == "Aster"


def test_tool_list_matches_the_pinned_toolkit():
    tools = pytest.importorskip("tau2.domains.retail.tools")
    from tau2.environment.toolkit import TOOL_ATTR

    names = [n for n in dir(tools.RetailTools) if getattr(getattr(tools.RetailTools, n), TOOL_ATTR, False)]
    partition = load_partition(PARTITION)
    assert validate_against_tau2(partition, names) == []
    # A toolkit the file does not match is reported both ways.
    assert validate_against_tau2(partition, [*names[1:], "think"]) == [
        "missing here: think",
        f"not in toolkit: {names[0]}",
    ]


def test_the_tools_list_is_the_domains_toolkit(tmp_path, doc):
    doc["tools"].append("calculate")
    with pytest.raises(InputError, match=r"partition.yaml: tools: listed more than once: calculate"):
        load_partition(_write(tmp_path, doc))
    doc["tools"] = []
    with pytest.raises(InputError, match=r"partition.yaml: tools: expected the domain's tools"):
        load_partition(_write(tmp_path, doc))


def test_tool_held_twice_is_refused(tmp_path, doc):
    doc["holder_maps"]["social"]["holders"]["Dorian"].append("calculate")
    with pytest.raises(InputError, match=r"partition.yaml: holder_maps.social.holders.(Dorian|Fenn): .*calculate"):
        load_partition(_write(tmp_path, doc))


def test_tool_held_by_nobody_is_refused(tmp_path, doc):
    doc["holder_maps"]["social"]["holders"]["Fenn"].remove("calculate")
    with pytest.raises(InputError, match=r"holder_maps.social.holders: tool\(s\) held by no desk: calculate"):
        load_partition(_write(tmp_path, doc))


def test_unknown_tool_is_refused_with_its_key(tmp_path, doc):
    doc["holder_maps"]["social"]["holders"]["Cygnus"].append("think")
    with pytest.raises(InputError, match=r"partition.yaml: holder_maps.social.holders.Cygnus: unknown tool 'think'"):
        load_partition(_write(tmp_path, doc))


def test_a_holder_is_one_capitalised_word_holding_something(tmp_path, doc):
    holders = doc["holder_maps"]["social"]["holders"]
    holders["front desk"] = holders.pop("Fenn")
    with pytest.raises(InputError, match=r"partition.yaml: holder_maps.social.holders.front desk: a holder's name"):
        load_partition(_write(tmp_path, doc))
    holders["Fenn"] = holders.pop("front desk")
    holders["Gale"] = []
    with pytest.raises(InputError, match=r"holder_maps.social.holders.Gale: holds no tool"):
        load_partition(_write(tmp_path, doc))


def test_a_new_map_is_checked_like_the_papers(tmp_path, doc):
    """Three desks with merged remits: a map of its own, every tool exactly once."""
    social = doc["holder_maps"]["social"]["holders"]
    merged = {"Aster": social["Aster"] + social["Elara"], "Boreal": social["Boreal"] + social["Fenn"]}
    merged["Cygnus"] = social["Cygnus"] + social["Dorian"]
    doc["holder_maps"]["merged_again"] = {"holders": merged}
    p = load_partition(_write(tmp_path, doc))
    assert p.desks("merged_again") == ("Aster", "Boreal", "Cygnus")
    assert (
        p.holder("get_order_details", "merged_again") == "Cygnus" and p.holder("calculate", "merged_again") == "Boreal"
    )
    # The paper's maps, and so the hash the coordination reference records, are unchanged.
    assert p.holders["social"] == load_partition(PARTITION).holders["social"]


def test_missing_maps_and_bad_query(tmp_path, doc):
    del doc["holder_maps"]
    with pytest.raises(InputError, match=r"holder_maps: expected a mapping"):
        load_partition(_write(tmp_path, doc))
    p = load_partition(PARTITION)
    with pytest.raises(InputError, match="unknown tool"):
        p.holder("think", "social")
    with pytest.raises(InputError, match=r"no holder map 'direct' \(it has indirect, social, merged\)"):
        p.holder("calculate", "direct")


@pytest.mark.parametrize(
    "names, message",
    [
        ({"plain": {"Vega": "Desk"}}, r"holder_maps.social.names.plain: Vega hold\(s\) nothing in this map"),
        ({"plain": {"Aster": "Desk", "Boreal": "Desk"}}, "names.plain: two holders would be shown by the same name"),
        (
            {"plain": {"Aster": "the accounts desk"}},
            "names.plain: expected a mapping of holder names to one capitalised",
        ),
        ([], "holder_maps.social.names: expected a mapping of naming"),
    ],
)
def test_a_bad_naming_names_its_key(tmp_path, doc, names, message):
    doc["holder_maps"]["social"]["names"] = names
    with pytest.raises(InputError, match=message):
        load_partition(_write(tmp_path, doc))


def test_the_shipped_naming_renames_every_desk():
    p = load_partition(PARTITION)
    assert sorted(p.namings["social"]["descriptive"]) == list(SOCIAL_DESKS)
    assert p.namings["social"]["descriptive"]["Fenn"] == "PendingOrders" and "indirect" not in p.namings
