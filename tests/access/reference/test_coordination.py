"""Coordination reference: projection of golden trajectories onto the three arms."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from incognita.access.reference.coordination import build_reference, format_totals, load_golden, totals
from incognita.cli import main
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures"
GOLDEN = FIX / "reference_golden"
CARDS = FIX / "reference_cards"
PARTITION = ROOT / "config" / "domains" / "retail" / "partition.yaml"


@pytest.fixture(scope="module")
def ref() -> dict:
    return build_reference(GOLDEN, CARDS, PARTITION)


def test_executors_per_arm(ref):
    task = ref["tasks"]["903"]
    execs = {c["name"]: c["executor"] for c in task["calls"]}
    assert execs["calculate"] == {
        "direct": "agent",
        "indirect": "Vega",
        "social": "Fenn",
        "social+map": "Fenn",
        "social+referral": "Fenn",
        "social-3": "Linden",  # the merged desks (retail's partition.yaml, holder_maps.merged)
        "social+named": "PendingOrders",  # Fenn, under its descriptive name
    }
    assert execs["find_user_id_by_email"]["social"] == "Elara"
    assert task["arms"]["direct"]["executors"] == ["agent"]
    assert task["arms"]["indirect"]["executors"] == ["Vega"]
    assert task["arms"]["social"]["executors"] == ["Aster", "Cygnus", "Dorian", "Elara", "Fenn"]
    # The same required calls in every arm, with the same reference arguments.
    calls = {arm: [(r["index"], r["arguments"]) for r in task["arms"][arm]["required_calls"]] for arm in ref["arms"]}
    assert all(c == calls["direct"] for c in calls.values())
    # Role assignments exist only where the holders are undeclared.
    assert [a for a in ref["arms"] if task["arms"][a]["role_assignments"] is not None] == [
        "social",
        "social+referral",
        "social-3",
        "social+named",
    ]


def test_uncounted_calls_stay_listed_but_out_of_the_denominators(ref):
    task = ref["tasks"]["903"]  # call 0 fails on purpose
    assert task["n_calls"] == 7 and task["n_counted"] == 6
    assert task["calls"][0]["why_not_counted"] == "intended_failure"
    assert [r["index"] for r in task["arms"]["social"]["required_calls"]] == [1, 2, 3, 4, 5, 6]
    # The email token is consumed only by the failed call, so it is not an item.
    assert "email" not in {c["token"] for c in task["information_items"]["customer"]}
    explore = ref["tasks"]["902"]  # call 2 only explores
    assert explore["calls"][2]["why_not_counted"] == "exploration_only"
    assert 2 not in [r["index"] for r in explore["arms"]["direct"]["required_calls"]]
    assert 2 not in [s["read_call"] for s in explore["information_items"]["service"]]


def test_role_assignments_only_in_the_social_arm(ref):
    task = ref["tasks"]["903"]
    assert task["arms"]["direct"]["role_assignments"] is None
    assert task["arms"]["indirect"]["n_role_assignments"] is None
    roles = task["arms"]["social"]["role_assignments"]
    assert {(r["desk"], r["tool"]) for r in roles} == {
        ("Elara", "find_user_id_by_name_zip"),
        ("Aster", "get_user_details"),
        ("Dorian", "get_order_details"),
        ("Cygnus", "get_product_details"),
        ("Fenn", "calculate"),
        ("Fenn", "modify_pending_order_items"),
    }
    # One assignment per distinct desk-tool pair: two order reads of task 904 make one assignment.
    roles904 = {(r["desk"], r["tool"]): r["calls"] for r in ref["tasks"]["904"]["arms"]["social"]["role_assignments"]}
    assert roles904[("Dorian", "get_order_details")] == [2, 5]
    assert ref["tasks"]["904"]["arms"]["social"]["n_role_assignments"] == 6


def test_information_items(ref):
    task = ref["tasks"]["903"]
    tokens = {c["token"]: c["consumed_by"] for c in task["information_items"]["customer"]}
    # Field tokens plus the tokens that select from reads or vocabularies.
    assert set(tokens) == {"name", "zip", "order_id", "item:shirt", "preference:shirt", "payment:paypal"}
    assert tokens["item:shirt"] == [4, 5, 6]
    service = {s["read_call"]: s for s in task["information_items"]["service"]}
    assert sorted(service) == [1, 2, 3, 4]
    assert service[4]["name"] == "get_product_details" and service[4]["arguments"] == {"product_id": "P3"}
    assert service[4]["consumed_by"] == [5, 6]  # via the computed expression and the write
    assert service[4]["executor"]["social"] == "Cygnus"
    # Opening-line and request values are not gated: no item.
    assert "first_name" not in {c["token"] for c in ref["tasks"]["907"]["information_items"]["customer"]}
    assert ref["tasks"]["901"]["information_items"] == {"customer": [], "service": []}
    # Policy vocabulary selected by a customer token.
    assert "reason" in {c["token"] for c in ref["tasks"]["904"]["information_items"]["customer"]}
    # The same items in every arm.
    assert {ref["tasks"]["903"]["arms"][a]["n_information_items"] for a in ("direct", "indirect", "social")} == {10}


def test_levels_and_writes(ref):
    levels = {t: d["level"] for t, d in ref["tasks"].items()}
    assert levels == {"901": 1, "902": 4, "903": 5, "904": 6, "905": 2, "906": 3, "907": 3, "908": 4}
    assert ref["tasks"]["907"]["has_write"] is False
    assert ref["tasks"]["901"]["has_write"] is False  # transfer is not a database write
    assert ref["tasks"]["906"]["withholds_disclosure"] is True
    assert ref["tasks"]["908"]["match"] is False


def test_a_read_behind_the_information_channel_is_required(ref, tmp_path):
    # 904 must tell the customer a count: how many variants of the product read by call 3
    # are available. That read is required like the reads the writes consume.
    task = ref["tasks"]["904"]
    assert task["channel_sources"] == {"tokens": [], "reads": [3]}
    assert 3 in [r["index"] for r in task["arms"]["social"]["required_calls"]]
    assert ("Cygnus", "get_product_details") in {
        (r["desk"], r["tool"]) for r in task["arms"]["social"]["role_assignments"]
    }
    # A golden file where that read is not counted is refused, naming the file and the key.
    g, c = _copy(tmp_path)
    doc = json.loads((g / "904.json").read_text())
    doc["calls"][3]["counted"], doc["calls"][3]["why_not_counted"] = False, "exploration_only"
    (g / "904.json").write_text(json.dumps(doc))
    with pytest.raises(
        InputError,
        match=r"904.json: information_channel: draws on call 3 \(get_product_details\), "
        r"which is not counted",
    ):
        build_reference(g, c, PARTITION)


def test_generator_3_golden_in_the_reference(tmp_path, source_dir):
    """Live golden trajectories: a read inserted for an information item is required, and a
    user id the customer states is a customer fact that engages no identity desk."""
    from incognita.access.domain import get_domain
    from incognita.access.golden.provenance import load_vocabulary
    from incognita.access.golden.trajectory import build_golden
    from incognita.access.golden.upstream_replay import World
    from incognita.common.io import read_json, sha256_file, write_json

    world = World(get_domain("retail"), source_dir / "db.json")
    vocab = load_vocabulary(str(ROOT / "config" / "domains" / "retail" / "vocabulary.yaml"))
    g, c = tmp_path / "golden", tmp_path / "cards"
    g.mkdir()
    c.mkdir()
    card71 = read_json(FIX / "golden_cards" / "71.json")
    card71["fields"].append(
        {"token": "user_id", "kind": "identity", "spans": ["ivan_khan_7475"], "value": "ivan_khan_7475"}
    )
    for card in (read_json(FIX / "golden_cards" / "104.json"), card71):
        path = c / f"{card['task_id']}.json"
        write_json(path, card)
        write_json(g / path.name, build_golden(card, world, vocab, card_sha256=sha256_file(path)))
    ref = build_reference(g, c, PARTITION)
    t = ref["tasks"]["104"]
    last = t["n_calls"] - 1
    assert t["calls"][last]["origin"] == "inserted" and t["calls"][last]["counted"]
    assert t["channel_sources"]["reads"] == [last]
    assert last in [r["index"] for r in t["arms"]["direct"]["required_calls"]]
    assert t["calls"][last]["executor"]["social"] == "Dorian"
    # the profile it takes the order id from is a service fact it consumes
    profile = next(s for s in t["information_items"]["service"] if s["name"] == "get_user_details")
    assert last in profile["consumed_by"] and "/orders/2" in profile["paths"]
    assert t["diagnostics"]["untraced_information"] == [] and t["level"] == 6
    t = ref["tasks"]["71"]
    assert {"token": "user_id", "consumed_by": [0]} in t["information_items"]["customer"]
    assert "Elara" not in t["desks_engaged"]


def test_totals(ref):
    t = totals(ref)
    assert (t["tasks"], t["calls"], t["counted"], t["role_assignments"], t["information_items"]) == (8, 34, 31, 29, 46)
    assert format_totals(totals(ref, ["902"])) == "5 calls, 4 counted, 4 role assignments, 7 information items"
    assert ref["totals"] == t


def test_build_is_byte_deterministic(tmp_path):
    runner = CliRunner()
    outs = []
    for k in range(2):
        out = tmp_path / f"c{k}.json"
        res = runner.invoke(
            main,
            [
                "reference",
                "--domain",
                "retail",
                "--golden-dir",
                str(GOLDEN),
                "--cards-dir",
                str(CARDS),
                "--partition",
                str(PARTITION),
                "--out",
                str(out),
                "--no-verify",
                "--corpus",
                str(tmp_path / "none.yaml"),
            ],
        )
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert "8 tasks: 34 calls, 31 counted, 29 role assignments, 46 information items" in res.output


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    g, c = tmp_path / "golden", tmp_path / "cards"
    shutil.copytree(GOLDEN, g)
    shutil.copytree(CARDS, c)
    return g, c


def test_bad_golden_is_an_input_error_naming_file_and_key(tmp_path):
    g, c = _copy(tmp_path)
    doc = json.loads((g / "902.json").read_text())
    del doc["calls"][1]["counted"]
    (g / "902.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"902.json: calls\[1\].counted: missing"):
        build_reference(g, c, PARTITION)
    doc["calls"][1]["counted"] = True
    doc["calls"][4]["provenance"]["order_id"] = {"kind": "rumour"}
    (g / "902.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"902.json: calls\[4\].provenance.order_id.kind: unknown provenance kind"):
        build_reference(g, c, PARTITION)


def test_read_of_a_later_call_is_refused(tmp_path):
    g, c = _copy(tmp_path)
    doc = json.loads((g / "902.json").read_text())
    doc["calls"][1]["provenance"]["user_id"]["call"] = 3
    (g / "902.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="does not come before it"):
        build_reference(g, c, PARTITION)


def test_golden_built_from_another_card_is_refused(tmp_path):
    g, c = _copy(tmp_path)
    card = json.loads((c / "905.json").read_text())
    card["withholds_disclosure"] = True
    (c / "905.json").write_text(json.dumps(card))
    with pytest.raises(InputError, match=r"905.json: card_sha256: .*different version"):
        build_reference(g, c, PARTITION)


def test_load_golden_checks_file_name(tmp_path):
    doc = json.loads((GOLDEN / "901.json").read_text())
    (tmp_path / "77.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="does not match the file name"):
        load_golden(tmp_path / "77.json")


def test_cli_missing_golden_dir_exits_cleanly(tmp_path):
    res = CliRunner().invoke(
        main,
        [
            "reference",
            "--domain",
            "retail",
            "--golden-dir",
            str(tmp_path / "nope"),
            "--cards-dir",
            str(CARDS),
            "--partition",
            str(PARTITION),
            "--out",
            str(tmp_path / "c.json"),
        ],
    )
    assert res.exit_code == 2
    assert "golden directory not found" in res.output


def test_a_derived_value_draws_on_what_it_is_derived_from():
    """A `derived` provenance (a domain's rule over fields and reads, airline's fares and dates)
    consumes the gate tokens and reads it is derived from, as a `computed` one does."""
    from incognita.access.reference.coordination import sources_of

    call = {
        "index": 3,
        "provenance": {
            "/date": {
                "kind": "derived",
                "rule": "date_later",
                "from": [
                    {"kind": "read", "call": 1, "path": "/flights/0/date", "selected_by": []},
                    {"kind": "field", "token": "date_shift", "part": None, "transform": None},
                ],
            }
        },
    }
    found = sources_of(call)
    assert found.tokens == ["date_shift"] and found.reads == [(1, "/flights/0/date")] and found.untraced == 0
