"""Repair overlays: applied as data, validated, never allowed near the success criterion."""

from pathlib import Path

import pytest

from incognita.access.cards.card import build_card, validate_card
from incognita.access.cards.repairs import apply_overlay, load_overlay
from incognita.access.domain import get_domain
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
REPAIRED = ["2", "3", "11", "30", "33", "34", "37", "38", "46", "59"]


@pytest.mark.parametrize("task_id", REPAIRED)
def test_shipped_overlays_apply(tasks, db, meta, task_id):
    path = ROOT / "config" / "domains" / "retail" / "repairs" / f"{task_id}.yaml"
    base = build_card(tasks[task_id], db, meta, get_domain("retail"))
    card = apply_overlay(base, load_overlay(path, set(tasks)), path)
    validate_card(card, str(path))
    version = load_overlay(path)["version"]
    assert card["card_version"] == 1 + version and base["card_version"] == 1
    assert card["reference_actions"] == base["reference_actions"]
    assert card["information_channel"] == base["information_channel"]
    assert card["repairs"][0]["version"] == version


def test_the_t_shirt_question_asks_what_is_available(tasks, db, meta):
    """Task 3 asks "how many tshirt options are available in the online store right now" (10
    available of 12 variants): the repaired demand keeps "available" (issue #53, item 7)."""
    path = ROOT / "config" / "domains" / "retail" / "repairs" / "3.yaml"
    card = apply_overlay(build_card(tasks["3"], db, meta, get_domain("retail")), load_overlay(path), path)
    question = card["requests"][0]["demand"]
    assert "available" in question and "right now" in question


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_overlay_editing_reference_actions_is_refused(tmp_path):
    path = write(
        tmp_path, "5.yaml", 'task: "5"\nversion: 1\nreason: "tries to change the gold"\nreference_actions: []\n'
    )
    with pytest.raises(InputError, match=r"5.yaml: field 'reference_actions' is not allowed"):
        load_overlay(path)


def test_overlay_for_unknown_task_is_refused(tmp_path, tasks):
    path = write(tmp_path, "999.yaml", 'task: "999"\nversion: 1\nreason: "no such task exists"\n')
    with pytest.raises(InputError, match="unknown task '999'"):
        load_overlay(path, set(tasks))


def test_malformed_overlay_names_file_and_field(tmp_path):
    path = write(tmp_path, "5.yaml", 'task: "5"\nversion: one\nreason: "a bad version number"\n')
    with pytest.raises(InputError, match=r"5.yaml: version: 'one' is not of type"):
        load_overlay(path)
    path = write(tmp_path, "6.yaml", "task: [unclosed\n")
    with pytest.raises(InputError, match="6.yaml: not valid YAML"):
        load_overlay(path)


def test_overlay_covers_out_of_range(tmp_path, tasks, db, meta):
    path = write(
        tmp_path,
        "2.yaml",
        'task: "2"\nversion: 1\nreason: "covers a sentence that does not exist"\n'
        "requests:\n  - demand: x\n    covers: [7]\n",
    )
    with pytest.raises(InputError, match=r"requests\[0\].covers"):
        apply_overlay(build_card(tasks["2"], db, meta, get_domain("retail")), load_overlay(path), path)


@pytest.mark.parametrize("task_id", ["0", "1"])
def test_overlays_adding_a_preference_keep_to_the_source_words(tasks, db, meta, task_id):
    """Tasks 0 and 1: the customer's 'Google Home' for the catalog's 'Google Assistant'."""
    from incognita.access.cards.text import contains_span
    from incognita.access.domains.retail.source_words import source_text

    path = ROOT / "config" / "domains" / "retail" / "repairs" / f"{task_id}.yaml"
    base = build_card(tasks[task_id], db, meta, get_domain("retail"))
    card = apply_overlay(base, load_overlay(path, set(tasks)), path)
    validate_card(card, str(path))
    assert card["card_version"] == 2 and card["reference_actions"] == base["reference_actions"]
    added = [f for f in card["fields"] if f["token"] not in {g["token"] for g in base["fields"]}]
    assert [(f["token"], f["value"]) for f in added] == [("preference:smart_thermostat", "Google Home")]
    text = source_text(card["source"]["instructions"])
    assert all(contains_span(text, s) for f in card["fields"] for s in f["spans"])
    assert "Google Assistant" not in " ".join(f["value"] for f in card["fields"])
