"""Golden trajectories: provenance of every argument, counting, replay against upstream.

Hand-made card fixtures live in tests/fixtures/golden_cards/ (frozen copies of cards for a
few tasks of each kind, so these tests do not move when the card builder changes). The
all-tasks tests read the cards and golden trajectories the pipeline's own commands built (the
`task_stages` fixture: the live card builder, repair overlays, the golden stage) and are the
stage's done criterion: every task replays to upstream's hash.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from incognita.access.domain import get_domain
from incognita.access.golden.information_tracing import _available_count, _collections
from incognita.access.golden.provenance import leaves, load_vocabulary, resolve_pointer, result_doc
from incognita.access.golden.trajectory import _BuilderCore, build_golden, builder_class, check_golden
from incognita.access.golden.upstream_replay import (
    REPLAY_HEADER,
    World,
    reference_actions_of,
    replay_calls,
    replay_rows,
    upstream_hash,
    verify,
)
from incognita.cli import main
from incognita.common.io import InputError, read_json

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "golden_cards"
VOCAB_PATH = ROOT / "config" / "domains" / "retail" / "vocabulary.yaml"


@pytest.fixture(scope="module")
def world(source_dir) -> World:
    return World(get_domain("retail"), source_dir / "db.json")


@pytest.fixture(scope="module")
def vocab() -> dict:
    return load_vocabulary(str(VOCAB_PATH))


def card(task: str) -> dict:
    return read_json(FIX / f"{task}.json")


def prov(doc: dict, call: int, pointer: str) -> dict:
    return doc["calls"][call]["provenance"][pointer]


def check_provenance_points_backwards(doc: dict) -> None:
    """Every read provenance names an earlier successful call and a pointer that resolves to the value."""
    for call in doc["calls"]:
        for ptr, value in leaves(call["arguments"]):
            p = call["provenance"][ptr]
            reads = p["from"] if p["kind"] == "computed" else [p] if p["kind"] == "read" else []
            for r in reads:
                src = doc["calls"][r["call"]]
                assert r["call"] < call["index"] and src["error"] is None
                leaf = resolve_pointer(result_doc(src["result"]), r["path"])
                if p["kind"] == "read":
                    assert leaf == value
                else:
                    assert round(float(leaf), 2) == round(float(r["operand"]), 2)
            if p["kind"] == "unsourced":
                assert call["intended_failure"]


# --------------------------------------------------------------------------- tasks of each kind


def test_exchange_keeps_reference_verbatim_and_sources_every_argument(world, vocab):
    c = card("0")
    doc = build_golden(c, world, vocab)
    check_golden(doc, "task 0")
    calls = doc["calls"]
    assert [(x["name"], x["arguments"], x["action_id"]) for x in calls] == [
        (a["name"], a["arguments"], a["action_id"]) for a in c["reference_actions"]
    ]
    assert prov(doc, 0, "/first_name") == {"kind": "field", "token": "name", "part": "first", "transform": None}
    assert prov(doc, 0, "/last_name")["part"] == "last"
    assert prov(doc, 1, "/order_id") == {"kind": "field", "token": "order_id", "part": None, "transform": None}
    # the keyboard's product id comes from the order line the customer's description picks
    assert prov(doc, 2, "/product_id") == {
        "kind": "read",
        "call": 1,
        "path": "/items/2/product_id",
        "selected_by": ["item:mechanical_keyboard"],
    }
    new_item = prov(doc, 4, "/new_item_ids/0")
    assert new_item["call"] == 2 and new_item["path"] == "/variants/7706410293/item_id"
    assert new_item["selected_by"] == ["preference:mechanical_keyboard"]
    # The reference's own identity lookup: nothing reads the user id it returns (the order id
    # is the customer's), so it only explores; everything else counts.
    assert calls[0]["name"] == "find_user_id_by_name_zip" and calls[0]["why_not_counted"] == "exploration_only"
    assert all(x["counted"] for x in calls[1:])
    assert doc["replay"]["match"] and not doc["replay"]["unexpected_errors"] and not doc["replay"]["result_diffs"]
    assert doc["card"]["card_version"] == c["card_version"]
    check_provenance_points_backwards(doc)


def test_intended_failures_stay_in_and_out_of_the_denominator(world, vocab):
    doc = build_golden(card("46"), world, vocab)
    check_golden(doc, "task 46")
    calls = doc["calls"]
    failed = [x["index"] for x in calls if x["intended_failure"]]
    assert failed == [1, 2]
    for i in failed:
        assert calls[i]["error"] == "Order not found" and calls[i]["result"] is None
        assert calls[i]["counted"] is False and calls[i]["why_not_counted"] == "intended_failure"
    # "#9502126" is the customer's "9502126" with a '#' added; "#W9502127" their second try plus 'W'
    assert prov(doc, 1, "/order_id") == {"kind": "field", "token": "order_id", "part": None, "transform": "order_id"}
    assert prov(doc, 3, "/order_id")["token"] == "order_id_2"
    # the card gives only a user id: the name for the lookup is read off it
    assert prov(doc, 0, "/first_name")["transform"] == "user_id_name"
    calc = prov(doc, 4, "/expression")
    assert calc["kind"] == "computed" and [r["operand"] for r in calc["from"]] == ["652.61", "473.43"]
    assert all(r["call"] == 3 for r in calc["from"])
    # the second calculation uses the first one's result
    assert any(r["call"] == 4 and r["path"] == "" for r in prov(doc, 6, "/expression")["from"])
    assert [i["provenance"]["call"] for i in doc["information_channel"]] == [4, 6]
    # the lookup's user id is never used (the customer states it, and no call needs it)
    assert calls[0]["name"] == "find_user_id_by_name_zip" and calls[0]["why_not_counted"] == "exploration_only"
    assert all(x["counted"] for x in calls[1:] if not x["intended_failure"])
    assert doc["replay"]["match"]
    check_provenance_points_backwards(doc)


def test_reads_are_inserted_for_the_values_a_write_needs(world, vocab):
    c = card("71")
    doc = build_golden(c, world, vocab)
    check_golden(doc, "task 71")
    calls = doc["calls"]
    assert [x["origin"] for x in calls] == ["inserted", "inserted", "reference", "inserted", "reference"]
    assert [x["name"] for x in calls if x["origin"] == "reference"] == [a["name"] for a in c["reference_actions"]]
    # The order id is one of the customer's orders: lookup -> profile -> order id, inserted as one chain.
    assert calls[0]["name"] == "find_user_id_by_name_zip"
    assert calls[0]["inserted_for"] == {"call": 2, "argument": "/order_id", "reason": "value"}
    assert calls[1]["name"] == "get_user_details"
    assert calls[1]["inserted_for"] == {"call": 2, "argument": "/order_id", "reason": "value"}
    assert prov(doc, 1, "/user_id") == {"kind": "read", "call": 0, "path": "", "selected_by": []}
    # the default address is read from the user record; the country is policy vocabulary
    assert prov(doc, 2, "/address1") == {"kind": "read", "call": 1, "path": "/address/address1", "selected_by": []}
    assert prov(doc, 2, "/country") == {"kind": "policy", "vocabulary": "country", "selected_by": []}
    assert prov(doc, 2, "/city")["kind"] == "field"
    assert calls[3]["name"] == "get_product_details" and calls[3]["inserted_for"]["call"] == 4
    assert all(x["counted"] for x in calls)
    assert doc["replay"]["match"]
    check_provenance_points_backwards(doc)


def test_the_read_search_is_the_builders_over_the_domains_candidates(world, vocab):
    # One search for every domain: the rules give candidates, their order and the depth as data.
    for name in ("retail", "airline", "mock"):
        rules = get_domain(name).golden.RULES
        assert builder_class(rules)._search is _BuilderCore._search
        assert not [k for k in rules.__mro__ if "_search" in vars(k) or "_peek" in vars(k)], name
    retail = get_domain("retail").golden.RULES
    c = card("71")  # its order id needs two inserted reads: the identity lookup, then the profile

    def first_write(rules: type) -> dict:
        builder = builder_class(rules)(c, world, vocab, "task 71")
        builder.add_reference(c["reference_actions"][0])
        return builder.calls[-1]

    assert first_write(retail)["provenance"]["/order_id"]["call"] == 1
    with pytest.raises(InputError, match="/order_id"):  # one read deep, the profile is out of reach
        first_write(type("Shallow", (retail,), {"MAX_INSERT_DEPTH": 1}))
    unordered = type("Unordered", (retail,), {"CANDIDATE_ORDER": ("find_user_id_by_name_zip",)})
    with pytest.raises(AssertionError, match="is not in the domain.s CANDIDATE_ORDER"):
        first_write(unordered)


def test_no_identity_lookup_is_inserted_for_authentication_alone(world, vocab):
    # Task 75: an exchange on an order the customer names. Every argument comes from the
    # order and the catalog, so no identity lookup is in the trajectory (generator 1 inserted
    # one before the write, which engaged the identity desk for nothing).
    doc = build_golden(card("75"), world, vocab)
    check_golden(doc, "task 75")
    assert [x["name"] for x in doc["calls"]] == [
        "get_order_details",
        "get_product_details",
        "exchange_delivered_order_items",
    ]
    assert all(x["inserted_for"]["reason"] == "value" for x in doc["calls"] if x["origin"] == "inserted")
    assert prov(doc, 0, "/order_id")["kind"] == "field"
    assert all(x["counted"] for x in doc["calls"]) and doc["replay"]["match"]
    # Task 105: the only write fails on purpose. Nothing needs the customer's identity, so no
    # lookup; the reads inserted for the failed exchange's values only explore.
    doc = build_golden(card("105"), world, vocab)
    check_golden(doc, "task 105")
    assert not any(x["name"].startswith("find_user_id") for x in doc["calls"])
    assert [x["why_not_counted"] for x in doc["calls"]] == ["exploration_only", "exploration_only", "intended_failure"]
    assert doc["counts"]["counted"] == 0 and doc["replay"]["match"]


def test_a_count_told_to_the_customer_is_traced_to_the_collection(world, vocab):
    # Task 2: the customer must hear "10", the number of t-shirt options available.
    doc = build_golden(card("2"), world, vocab)
    check_golden(doc, "task 2")
    (item,) = doc["information_channel"]
    assert item["info"] == "10"
    p = item["provenance"]
    assert p == {"kind": "read", "call": 3, "path": "/variants", "selected_by": [], "match": "count_available"}
    read = doc["calls"][3]
    assert read["name"] == "get_product_details" and read["counted"] and read["why_not_counted"] is None
    variants = resolve_pointer(result_doc(read["result"]), p["path"])
    assert sum(v["available"] for v in variants.values()) == 10 != len(variants)  # available count preferred
    # the product id of that read comes from the product listing, which now counts too
    assert prov(doc, 3, "/product_id")["call"] == 2 and doc["calls"][2]["counted"]
    assert doc["counts"]["information_traced"] == 1 and doc["replay"]["match"]


def test_plain_counts_and_what_is_a_collection(world, vocab):
    # The exchange of task 0 reads an order with five lines: "5" is their number.
    c = card("0")
    order = next(i for i, a in enumerate(c["reference_actions"]) if a["name"] == "get_order_details")
    c["information_channel"]["communicate_info"] = ["5"]
    doc = build_golden(c, world, vocab)
    check_golden(doc, "task 0 with a count")
    (item,) = doc["information_channel"]
    assert item["provenance"] == {"kind": "read", "call": order, "path": "/items", "selected_by": [], "match": "count"}
    assert len(resolve_pointer(result_doc(doc["calls"][order]["result"]), "/items")) == 5
    # Collections: lists, mappings of records, a whole flat listing; never the fields of a record.
    product = {
        "name": "Lamp",
        "product_id": "1",
        "variants": {
            "a": {"item_id": "a", "options": {"color": "red", "size": "S"}, "available": True, "price": 1.0},
            "b": {"item_id": "b", "options": {"color": "blue", "size": "M"}, "available": False, "price": 2.0},
        },
    }
    assert [ptr for ptr, _ in _collections(product)] == ["/variants"]
    assert [ptr for ptr, _ in _collections({"Lamp": "1", "Desk": "2"})] == [""]
    assert [ptr for ptr, _ in _collections({"items": [{"x": 1}], "address": {"city": "A"}})] == ["/items"]
    assert _available_count(product["variants"]) == 1 and _available_count([{"x": 1}]) is None


def test_cancellation_reason_is_policy_vocabulary_selected_by_the_customer(world, vocab):
    doc = build_golden(card("74"), world, vocab)
    cancel = next(x for x in doc["calls"] if x["name"] == "cancel_pending_order")
    assert cancel["provenance"]["/reason"] == {"kind": "policy", "vocabulary": "reason", "selected_by": ["reason"]}
    assert doc["replay"]["match"]


def test_transfer_summary_comes_from_the_request_and_unused_reads_are_exploration(world, vocab):
    c = card("12")
    doc = build_golden(c, world, vocab)
    calls = doc["calls"]
    transfer = calls[-1]
    assert transfer["name"] == "transfer_to_human_agents" and transfer["counted"]
    p = transfer["provenance"]["/summary"]
    assert p["kind"] == "request" and "PayPal" in c["requests"][p["demand"]]["demand"]
    ret = next(x for x in calls if x["name"] == "return_delivered_order_items")
    assert ret["intended_failure"] and "original payment method" in ret["error"]
    # the reads feed only the failed return: they explore, they are not required; the
    # reference's own lookup too, since the profile read takes the user id the customer states
    assert calls[0]["name"] == "find_user_id_by_email"
    assert prov(doc, 1, "/user_id") == {"kind": "field", "token": "user_id", "part": None, "transform": None}
    assert [x["why_not_counted"] for x in calls if x["tool_type"] == "read"] == ["exploration_only"] * 4
    assert doc["counts"]["counted"] == 1 and doc["replay"]["match"]


@pytest.mark.parametrize("task", ["24", "57"])
def test_tasks_without_reference_actions(world, vocab, task):
    c = card(task)
    assert c["reference_actions"] == []
    doc = build_golden(c, world, vocab)
    check_golden(doc, f"task {task}")
    # 57 has nothing to do and nothing to tell; 24 only answers a question, so its only
    # calls are the reads inserted for what it must tell (none of them writes: the lookup,
    # the profile and the order, see test_information_comes_from_the_customers_own_records)
    assert all(x["origin"] == "inserted" and x["inserted_for"]["reason"] == "information" for x in doc["calls"])
    assert doc["counts"]["calls"] == (3 if task == "24" else 0)
    assert doc["replay"]["final_hash"] == doc["replay"]["upstream_hash"] == world.clean_hash()
    assert doc["replay"]["match"]
    assert [i["info"] for i in doc["information_channel"]] == c["information_channel"]["communicate_info"]


# --------------------------------------------------------------------------- counting rules (generator 3)


def test_an_identity_lookup_whose_result_is_unused_is_not_counted(world, vocab):
    # Task 75 with the reference's own lookup put first: the exchange's arguments all come
    # from the order the customer names and the catalog, so nothing uses the user id.
    c = card("75")
    c["reference_actions"].insert(
        0,
        {"action_id": "lookup", "name": "find_user_id_by_email", "arguments": {"email": "liam.moore6985@example.com"}},
    )
    doc = build_golden(c, world, vocab)
    check_golden(doc, "task 75 with a lookup")
    lookup = doc["calls"][0]
    assert lookup["name"] == "find_user_id_by_email" and lookup["error"] is None
    assert lookup["counted"] is False and lookup["why_not_counted"] == "exploration_only"
    assert all(x["counted"] for x in doc["calls"][1:]) and doc["replay"]["match"]
    # ... and one whose user id opens the profile counts, like any read that is used (task 2)
    doc = build_golden(card("2"), world, vocab)
    assert doc["calls"][0]["name"] == "find_user_id_by_name_zip" and doc["calls"][0]["counted"]
    assert prov(doc, 4, "/user_id") == {"kind": "read", "call": 0, "path": "", "selected_by": []}


def test_a_stated_user_id_is_a_customer_fact(world, vocab):
    # Task 12: the customer states user id and email; the reference looks the id up by
    # email, then opens the profile. The profile read's user id is the stated field.
    doc = build_golden(card("12"), world, vocab)
    assert doc["calls"][0]["result"] == doc["calls"][1]["arguments"]["user_id"] == "mia_garcia_4516"
    assert prov(doc, 1, "/user_id") == {"kind": "field", "token": "user_id", "part": None, "transform": None}
    # Reads inserted for a value in the profile open it with the stated id directly: task 71
    # (an address change) with a user id field gets no identity lookup.
    c = card("71")
    c["fields"].append({"token": "user_id", "kind": "identity", "spans": ["ivan_khan_7475"], "value": "ivan_khan_7475"})
    doc = build_golden(c, world, vocab)
    check_golden(doc, "task 71 with a stated user id")
    assert [x["name"] for x in doc["calls"]][:2] == ["get_user_details", "modify_pending_order_address"]
    assert doc["calls"][0]["arguments"] == {"user_id": "ivan_khan_7475"}
    assert prov(doc, 0, "/user_id")["kind"] == "field"
    assert not any(x["name"].startswith("find_user_id") for x in doc["calls"])
    assert all(x["counted"] for x in doc["calls"]) and doc["replay"]["match"]
    check_provenance_points_backwards(doc)


def test_a_read_is_inserted_for_an_untraced_information_item(world, vocab):
    # Task 104: the customer must be told the tracking number of the cancelled order
    # #W1154986. No reference call reads that order; the search opens it from the profile
    # (its third order) and appends the read after the last reference call.
    doc = build_golden(card("104"), world, vocab)
    check_golden(doc, "task 104")
    calls = doc["calls"]
    (item,) = doc["information_channel"]
    assert item["info"] == "286422338955"
    last_reference = max(x["index"] for x in calls if x["origin"] == "reference")
    read = calls[item["provenance"]["call"]]
    assert read["index"] == last_reference + 1 == len(calls) - 1
    assert read["name"] == "get_order_details" and read["arguments"] == {"order_id": "#W1154986"}
    assert read["inserted_for"] == {"call": None, "argument": None, "reason": "information", "item": 0}
    assert read["counted"] and read["why_not_counted"] is None
    assert item["provenance"] == {
        "kind": "read",
        "call": read["index"],
        "path": "/fulfillments/0/tracking_id/0",
        "selected_by": [],
        "match": "exact",
    }
    profile = calls[read["provenance"]["/order_id"]["call"]]
    assert profile["name"] == "get_user_details" and read["provenance"]["/order_id"]["path"] == "/orders/2"
    assert doc["counts"]["information_traced"] == 1 and doc["replay"]["match"]
    check_provenance_points_backwards(doc)


def test_information_insertion_prefers_existing_results_then_values_then_counts(world, vocab):
    c = card("0")
    # already held by a result: nothing is inserted (the keyboard's product name)
    c["information_channel"]["communicate_info"] = ["Mechanical Keyboard"]
    doc = build_golden(c, world, vocab)
    assert doc["counts"]["inserted"] == 0 and doc["information_channel"][0]["provenance"]["match"] == "name"
    # 16 is no value within reach, but the size of a product's variants: a read of the
    # product of an order line is inserted, and the item is that count
    c["information_channel"]["communicate_info"] = ["16"]
    doc = build_golden(c, world, vocab)
    check_golden(doc, "task 0 with an inserted count")
    (item,) = doc["information_channel"]
    assert item["provenance"]["match"] == "count" and item["provenance"]["path"] == "/variants"
    read = doc["calls"][item["provenance"]["call"]]
    assert read["origin"] == "inserted" and read["inserted_for"]["reason"] == "information" and read["counted"]
    assert len(resolve_pointer(result_doc(read["result"]), "/variants")) == 16
    # a sum no result holds stays untraced, and nothing is inserted for it
    c["information_channel"]["communicate_info"] = ["123456.78"]
    doc = build_golden(c, world, vocab)
    assert doc["information_channel"][0]["provenance"] is None and doc["counts"]["inserted"] == 0


# --------------------------------------------------------------------------- entity scope (generator 4)


def test_information_comes_from_the_customers_own_records(world, vocab):
    # Task 24: which two t-shirts of another order, and their materials. "polyester" also
    # sits in the catalog entry of a backpack and of a patio umbrella she owns; neither is
    # what she asks about. The records are searched first, and her order #W9609649 holds both.
    doc = build_golden(card("24"), world, vocab)
    check_golden(doc, "task 24")
    assert [(x["name"], x["arguments"]) for x in doc["calls"]] == [
        ("find_user_id_by_name_zip", {"first_name": "Sofia", "last_name": "Hernandez", "zip": "98193"}),
        ("get_user_details", {"user_id": "sofia_hernandez_5364"}),
        ("get_order_details", {"order_id": "#W9609649"}),
    ]
    assert [(i["info"], i["provenance"]["call"], i["provenance"]["path"]) for i in doc["information_channel"]] == [
        ("polyester", 2, "/items/2/options/material"),
        ("cotton", 2, "/items/1/options/material"),
    ]
    assert all(x["counted"] for x in doc["calls"]) and doc["scope"]["users"] == ["sofia_hernandez_5364"]
    assert "2524789262" not in doc["scope"]["products"]  # the backpack: no order of hers holds one
    check_provenance_points_backwards(doc)


def test_a_read_outside_the_task_sources_nothing(world, vocab):
    # Task 24 with the backpack's catalog entry read first (as the generator-3 trace did; the
    # customer states its id, since no read in scope holds it): the read stays in, but
    # "polyester" is not traced to it; it only explores.
    c = card("24")
    c["fields"].append({"token": "product_id", "kind": "identity", "spans": [], "value": "2524789262"})
    c["reference_actions"] = [
        {"action_id": "backpack", "name": "get_product_details", "arguments": {"product_id": "2524789262"}}
    ]
    doc = build_golden(c, world, vocab)
    backpack = doc["calls"][0]
    assert "polyester" in json.dumps(backpack["result"])
    assert backpack["counted"] is False and backpack["why_not_counted"] == "exploration_only"
    assert all(i["provenance"]["call"] != 0 for i in doc["information_channel"])
    # ... while a catalog read of a product on her order does source a value: the T-shirt's
    # material options (positive case)
    c["fields"][-1]["value"] = "9523456873"
    c["reference_actions"][0]["arguments"] = {"product_id": "9523456873"}
    doc = build_golden(c, world, vocab)
    assert doc["calls"][0]["counted"] and doc["information_channel"][0]["provenance"]["call"] == 0


def test_the_entity_scope(world, vocab):
    from incognita.access.domains.retail.entity_scope import Scope

    # Named order, its owner, all her orders and their products; a product the request names.
    doc = build_golden(card("2"), world, vocab)
    assert doc["scope"]["users"] == ["yusuf_rossi_9620"]
    assert "#W2378156" in doc["scope"]["orders"] and "9523456873" in doc["scope"]["products"]
    scope = Scope(frozenset({"u_1"}), frozenset({"#W1234567"}), frozenset({"111"}))
    assert scope.admits("get_order_details", {"order_id": "W1234567"}, "/items/0/price", 10.0)
    assert not scope.admits("get_order_details", {"order_id": "#W7654321"}, "/items/0/price", 10.0)
    assert not scope.admits("get_user_details", {"user_id": "u_2"}, "/orders/0", "#W1")
    assert scope.admits("list_all_product_types", {}, "/T-Shirt", "111")
    assert not scope.admits("list_all_product_types", {}, "/Backpack", "222")
    assert not scope.admits("list_all_product_types", {}, "", {"T-Shirt": "111"})  # never the whole listing
    assert scope.admits("calculate", {"expression": "1 + 2"}, "", "3.0")


# --------------------------------------------------------------------------- failure modes


def test_tampered_argument_gives_a_mismatch(world, vocab):
    c = card("0")
    doc = build_golden(c, world, vocab)
    tampered = copy.deepcopy(doc)
    write = tampered["calls"][4]
    keyboard = tampered["calls"][2]["result"]
    other = next(
        v["item_id"]
        for v in keyboard["variants"].values()
        if v["available"] and v["item_id"] != write["arguments"]["new_item_ids"][0]
    )
    write["arguments"]["new_item_ids"][0] = other
    rep = verify(world, tampered, c["reference_actions"])
    assert rep["match"] is False and rep["final_hash"] != rep["upstream_hash"]
    assert rep["upstream_hash"] == doc["replay"]["upstream_hash"]
    assert rep["result_diffs"] == [4]
    # an argument that makes the write fail is reported as an unexpected error, and mismatches too
    broken = copy.deepcopy(doc)
    broken["calls"][4]["arguments"]["order_id"] = "#W0000000"
    rep = verify(world, broken, c["reference_actions"])
    assert rep["match"] is False
    assert rep["unexpected_errors"] == [
        {"call": 4, "name": "exchange_delivered_order_items", "error": "Order not found"}
    ]


def test_missing_card_field_fails_naming_task_call_tool_and_argument(world, vocab):
    c = card("0")
    c["fields"] = [f for f in c["fields"] if f["token"] != "name"]
    with pytest.raises(InputError) as err:
        build_golden(c, world, vocab, where="fixture card 0")
    msg = str(err.value)
    for part in ("fixture card 0", "task 0", "call 0", "find_user_id_by_name_zip", "/first_name", "'Yusuf'"):
        assert part in msg


def test_unsourced_values_are_tolerated_only_on_intended_failures(world, vocab):
    c = card("0")
    c["reference_actions"].insert(
        1, {"action_id": "x", "name": "get_product_details", "arguments": {"product_id": "0000000001"}}
    )
    doc = build_golden(c, world, vocab)
    assert prov(doc, 1, "/product_id") == {"kind": "unsourced", "why": "intended_failure"}
    assert doc["calls"][1]["intended_failure"] and doc["replay"]["match"]
    # the same made-up value in a call that succeeds is an error
    c = card("0")
    c["reference_actions"].insert(
        4, {"action_id": "y", "name": "calculate", "arguments": {"expression": "1234.56 + 1"}}
    )
    with pytest.raises(InputError, match=r"call 4 \(calculate.*/expression.*operand 1234.56"):
        build_golden(c, world, vocab)


def test_unknown_tool_is_an_input_error(world, vocab):
    c = card("0")
    c["reference_actions"][0]["name"] = "delete_everything"
    with pytest.raises(InputError, match="unknown retail tool 'delete_everything'"):
        build_golden(c, world, vocab)


def test_each_replay_starts_from_a_clean_database(world):
    clean = world.clean_hash()
    tools = world.toolkit()
    tools.use_tool("cancel_pending_order", order_id="#W5056519", reason="no longer needed")
    assert tools.get_db_hash() != clean
    assert world.fresh_db().get_hash() == clean  # validation copied, never shared, the parsed JSON
    assert upstream_hash(world, []) == clean
    assert replay_calls(world, [])["final_hash"] == clean


# --------------------------------------------------------------------------- CLI


def test_cli_golden_pairs_and_replay_table(tmp_path, source_dir):
    runner = CliRunner()
    args = ["golden", "--domain", "retail", "--db", str(source_dir / "db.json"), "--vocabulary", str(VOCAB_PATH)]
    for task in ("0", "57"):
        args += ["--card", str(FIX / f"{task}.json"), "--out", str(tmp_path / f"{task}.json")]
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    doc = read_json(tmp_path / "0.json")
    from incognita.common.io import sha256_file

    assert doc["card"]["sha256"] == sha256_file(FIX / "0.json")
    res = runner.invoke(
        main,
        ["replay-table", "--out", str(tmp_path / "replay.tsv"), str(tmp_path / "57.json"), str(tmp_path / "0.json")],
    )
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "replay.tsv").read_text().splitlines()
    assert lines[0].split("\t") == REPLAY_HEADER
    assert [ln.split("\t")[0] for ln in lines[1:]] == ["0", "57"]
    assert all(ln.endswith("\ttrue") for ln in lines[1:])
    # --verify recomputes both hashes from the files alone and agrees
    res = runner.invoke(
        main,
        [
            "replay-table",
            "--verify",
            str(source_dir / "db.json"),
            "--domain",
            "retail",
            "--cards-dir",
            str(FIX),
            "--out",
            str(tmp_path / "replay2.tsv"),
            str(tmp_path / "0.json"),
            str(tmp_path / "57.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "replay2.tsv").read_text() == (tmp_path / "replay.tsv").read_text()


def test_cli_batch_form_reports_every_failure(tmp_path, source_dir):
    cards_dir = tmp_path / "cards"
    cards_dir.mkdir()
    for task in ("0", "24"):
        (cards_dir / f"{task}.json").write_text((FIX / f"{task}.json").read_text())
    broken = card("74")
    broken["fields"] = [f for f in broken["fields"] if f["token"] != "zip"]
    (cards_dir / "74.json").write_text(json.dumps(broken))
    res = CliRunner().invoke(
        main,
        [
            "golden",
            "--domain",
            "retail",
            "--db",
            str(source_dir / "db.json"),
            "--vocabulary",
            str(VOCAB_PATH),
            "--cards-dir",
            str(cards_dir),
            "--out-dir",
            str(tmp_path / "golden"),
        ],
    )
    assert res.exit_code == 2
    assert "1 of 3 golden trajectories failed" in res.output and "74.json" in res.output
    assert sorted(p.name for p in (tmp_path / "golden").iterdir()) == ["0.json", "24.json"]


def test_cli_rejects_unpaired_options(tmp_path):
    res = CliRunner().invoke(main, ["golden", "--domain", "retail", "--card", str(FIX / "0.json")])
    assert res.exit_code == 2 and "one --out per --card" in res.output
    res = CliRunner().invoke(main, ["golden", "--domain", "retail", "--cards-dir", str(tmp_path)])
    assert res.exit_code == 2 and "go together" in res.output


def test_replay_table_refuses_other_json(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    res = CliRunner().invoke(main, ["replay-table", "--out", str(tmp_path / "t.tsv"), str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "not a golden trajectory" in res.output


# --------------------------------------------------------------------------- all tasks


@pytest.fixture(scope="module")
def all_golden(task_stages, tasks) -> dict:
    """Every task through the pipeline's own route (the live card builder with the repair
    overlays, then the golden stage), as the `incognita cards` and `incognita golden` commands
    built them for the test session (`task_stages`; the golden command stops on any task whose
    trajectory cannot be built or does not replay to upstream's hash)."""
    cards = {t: read_json(task_stages / "results" / "cards" / "retail" / f"{t}.json") for t in tasks}
    docs = {t: read_json(task_stages / "results" / "golden" / "retail" / f"{t}.json") for t in tasks}
    return {"docs": docs, "cards": cards}


def test_all_tasks_replay_to_upstream_gold_state(all_golden, tasks):
    docs = all_golden["docs"]
    assert len(docs) == len(tasks) == 114
    rows = replay_rows((t, d) for t, d in docs.items())
    assert [r[0] for r in rows] == sorted(tasks, key=int)
    mismatched = [r[0] for r in rows if r[3] != "true"]
    assert mismatched == []
    for doc in docs.values():
        assert not doc["replay"]["unexpected_errors"] and not doc["replay"]["result_diffs"]


def test_all_tasks_keep_the_reference_and_trace_every_argument(all_golden, tasks):
    intended = 0
    for task_id, doc in all_golden["docs"].items():
        check_golden(doc, f"golden {task_id}")
        refs = reference_actions_of(doc)
        upstream = tasks[task_id]["evaluation_criteria"].get("actions") or []
        assert [(a["name"], a["arguments"]) for a in refs] == [(a["name"], a["arguments"]) for a in upstream]
        check_provenance_points_backwards(doc)
        tokens = {f["token"] for f in all_golden["cards"][task_id]["fields"]}
        for call in doc["calls"]:
            for p in call["provenance"].values():
                named = [p.get("token")] if p["kind"] == "field" else []
                for r in [p, *p.get("from", [])]:
                    named += r.get("selected_by", [])
                assert set(named) <= tokens, (task_id, call["index"], named)
        intended += doc["counts"]["intended_failure"]
        used = {item["provenance"]["call"] for item in doc["information_channel"] if item["provenance"]}
        for call in doc["calls"]:
            for p in call["provenance"].values():
                used.update(
                    r["call"] for r in [p, *p.get("from", [])] if r.get("kind", "read") == "read" and "call" in r
                )
        last_reference = max((c["index"] for c in doc["calls"] if c["origin"] == "reference"), default=-1)
        for call in doc["calls"]:
            if call["origin"] == "inserted":
                assert call["tool_type"] == "read" and call["error"] is None
                # inserted only to source a value or an information item, and something uses it
                assert call["index"] in used, (task_id, call["index"])
                if call["inserted_for"]["reason"] == "information":
                    assert call["index"] > last_reference and call["counted"], (task_id, call["index"])
                else:
                    assert call["inserted_for"]["reason"] == "value", (task_id, call["index"])
            if call["name"] in ("find_user_id_by_email", "find_user_id_by_name_zip") and call["counted"]:
                assert call["index"] in used, (task_id, call["index"])  # no lookup counts for its own sake
    # 23 reference calls in 18 tasks raise on a clean database (upstream skips them)
    assert intended == 23
    assert sum(1 for d in all_golden["docs"].values() if d["counts"]["intended_failure"]) == 18


def test_all_tasks_untraced_information_is_what_no_read_holds(all_golden):
    """What stays untraced after reads are inserted for information items: sums and
    differences worked out without a `calculate` call, and one refund stated without its
    sign (95: the exchange result says -60.78)."""
    untraced = {
        t: [i["info"] for i in d["information_channel"] if i["provenance"] is None]
        for t, d in all_golden["docs"].items()
    }
    assert {t: v for t, v in untraced.items() if v} == {
        "19": ["41.64"],
        "33": ["1093.34"],
        "34": ["1093.34"],
        "54": ["3646.68"],
        "76": ["1939.05"],
        "95": ["60.78", "107.09"],
        "108": ["346.93"],
    }
    for task in ("103", "104"):
        (item,) = all_golden["docs"][task]["information_channel"]
        assert item["info"] == "286422338955" and item["provenance"]["match"] == "exact"


# --------------------------------------------------------------------------- selectors (issue #23)


def test_all_tasks_the_audited_selectors_reach_selected_by(all_golden):
    """Issue #23 item 1: the selectors the source states reach the golden `selected_by`."""
    from incognita.access.episodes.loop.agent_plan import plan_from_golden

    docs, cards = all_golden["docs"], all_golden["cards"]

    def selected(task: str, tool: str, pointer: str) -> list[list[str]]:
        return [c["provenance"][pointer].get("selected_by") for c in docs[task]["calls"] if c["name"] == tool]

    field = {t: {f["token"]: f["value"] for f in cards[t]["fields"]} for t in ("46", "3", "1", "104")}
    assert field["46"]["item:vacuum_cleaner"] == "vacuum cleaner; robotic"
    assert selected("46", "return_delivered_order_items", "/item_ids/0") == [["item:vacuum_cleaner"]]
    assert selected("3", "modify_pending_order_items", "/item_ids/0") == [["item:t_shirt"]]
    assert selected("3", "modify_pending_order_items", "/new_item_ids/0") == [["preference:t_shirt"]]
    assert selected("1", "exchange_delivered_order_items", "/new_item_ids/0") == [["preference:smart_thermostat"]]
    assert field["1"]["preference:smart_thermostat"] == "Google Home"
    assert [s for s in selected("104", "return_delivered_order_items", "/item_ids/0")] == [
        ["item:bookshelf"],
        ["item:backpack"],
        ["item:bookshelf"],
    ]
    for task in ("67", "68"):
        assert selected(task, "get_order_details", "/order_id") == [["which_order"]]
        plan = plan_from_golden(docs[task])
        assert "which_order" in plan.tokens()
        (src,) = [c.args["/order_id"] for c in plan.calls if c.name == "get_order_details"]
        assert src.selected_by == ("which_order",)
