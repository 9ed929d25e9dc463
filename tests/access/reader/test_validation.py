"""How the reader is checked: the hand-labelled sets (each domain's config/domains/<domain>/reader_validation/,
every check below that is not about one set's own tasks runs over all of them) and the injection
consistency check (incognita.access.reader.validation)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from incognita.access.domain import REGISTRY, domain_files, split_task
from incognita.access.reader.trials_builder import build_trials
from incognita.access.reader.validation import (
    injection_matrix,
    injection_summary,
    load_labelled,
    read_labelled,
    write_validation,
)
from incognita.access.taxonomy import FAILURE_TYPES
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
# Every registered domain that has a hand-labelled set: the reader names no domain, so each set
# is checked by the same tests.
LABELLED_SETS = {
    d: domain_files(d, ROOT / "config/domains").reader_validation
    for d in REGISTRY
    if domain_files(d, ROOT / "config/domains").reader_validation.is_dir()
}
LABELLED = LABELLED_SETS["retail"]
FIX = ROOT / "tests" / "fixtures" / "reader"
EPISODES = sorted(FIX.glob("*.json"))


# --------------------------------------------------------------------------- the hand-labelled set


def test_retail_and_airline_have_hand_labelled_sets():
    assert {"retail", "airline"} <= set(LABELLED_SETS)


@pytest.mark.parametrize("domain", sorted(LABELLED_SETS))
def test_the_set_covers_every_type_three_times_over_the_three_arms(domain):
    _, fixtures = load_labelled(LABELLED_SETS[domain], domain)
    counts = Counter(f.expected for f in fixtures)
    assert all(counts[t] >= 3 for t in FAILURE_TYPES) and counts["success"] >= 3
    for label in (*FAILURE_TYPES, "success"):
        assert {f.arm for f in fixtures if f.expected == label} >= {"direct", "indirect", "social"}
    assert all(len(f.reasoning) > 40 for f in fixtures)  # every label comes with its reasoning


def test_the_retail_set_covers_the_arms_that_unbundle_the_social_arm():
    """One hand-labelled retail episode in each arm that unbundles the social arm (issue #28)."""
    _, fixtures = load_labelled(LABELLED, "retail")
    unbundled = Counter(f.arm for f in fixtures if f.arm not in ("direct", "indirect", "social"))
    assert unbundled == {"social+map": 1, "social+referral": 1, "social-3": 1, "social+named": 1}


# The customer-side card fields of issue #23: a recency selector, an item field carrying the old
# line's option values, a preference carrying a price superlative.
NEW_CARD_FIELDS = ("which_order", "item:vacuum_cleaner", "preference:desk_lamp")


def test_the_set_covers_the_new_card_fields():
    """Tasks 903 and 904 need the new tokens as customer facts, and at least three fixtures
    on them release one; the made-up tasks stay out of the real corpus's id range."""
    reference, fixtures = load_labelled(LABELLED, "retail")
    assert all(split_task(t)[0] == "retail" and int(split_task(t)[1]) >= 900 for t in reference["tasks"])
    assert {f.task for f in fixtures} <= set(reference["tasks"]) and all(
        f.record.cell["task"] == f.task for f in fixtures
    )
    needed = {t: {i["token"] for i in task["information_items"]["customer"]} for t, task in reference["tasks"].items()}
    assert {tok for toks in needed.values() for tok in toks} >= set(NEW_CARD_FIELDS)
    released = [
        f
        for f in fixtures
        if any(
            e.type == "disclosure" and e.status == "released" and e.token in NEW_CARD_FIELDS for e in f.record.events
        )
    ]
    assert len(released) >= 3
    on_new = [f for f in fixtures if needed[f.task] & set(NEW_CARD_FIELDS)]
    assert {f.expected for f in on_new} == {"success", *FAILURE_TYPES}


@pytest.mark.parametrize("domain", sorted(LABELLED_SETS))
def test_the_reader_agrees_with_every_hand_label(domain):
    table = read_labelled({domain: LABELLED_SETS[domain]})
    assert len(table) >= 12
    assert table[~table["agree"]].empty, table[~table["agree"]][["fixture", "expected", "read"]]


def test_the_sets_are_read_together_each_under_its_domain():
    """As `incognita trials` reads them for a design with several domains: one table, each
    fixture's task qualified by its own domain."""
    table = read_labelled(LABELLED_SETS)
    assert {split_task(t)[0] for t in table["task"]} == set(LABELLED_SETS)
    assert len(table) == sum(len(load_labelled(d, n)[1]) for n, d in LABELLED_SETS.items())


@pytest.mark.parametrize("domain", sorted(LABELLED_SETS))
def test_a_wrong_hand_label_shows_up_as_a_disagreement(tmp_path, domain):
    """The check can fail: relabel one fixture and the table reports it."""
    copy = tmp_path / "labelled"
    shutil.copytree(LABELLED_SETS[domain], copy)
    path = copy / "obtained_not_delivered.yaml"
    docs = yaml.safe_load(path.read_text())
    docs[0]["label"] = "never_requested"
    path.write_text(yaml.safe_dump(docs, sort_keys=False))
    table = read_labelled({domain: copy})
    wrong = table[~table["agree"]]
    assert list(wrong["fixture"]) == [docs[0]["name"]] and list(wrong["read"]) == ["obtained_not_delivered"]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("reasoning"), "missing key(s) reasoning"),
        (lambda d: d.update(label="gave_up"), "label: 'gave_up' is not success or a failure type"),
        (lambda d: d.update(task="999"), "task '999' is not in"),
        (
            lambda d: d["steps"].insert(0, {"call": {"tool": "x", "args": {}, "status": "maybe"}}),
            "call.status: 'maybe' is not accepted",
        ),
    ],
)
def test_a_broken_fixture_is_named(tmp_path, change, message):
    copy = tmp_path / "labelled"
    shutil.copytree(LABELLED, copy)
    path = copy / "success.yaml"
    docs = yaml.safe_load(path.read_text())
    change(docs[0])
    path.write_text(yaml.safe_dump(docs, sort_keys=False))
    with pytest.raises(InputError, match="success.yaml: fixture 1") as err:
        load_labelled(copy, "retail")
    assert message in str(err.value)


def test_the_report_puts_the_hand_labelled_set_first(tmp_path, locked):
    ref, locks = locked
    matrix = injection_matrix(build_trials(EPISODES, {"retail": (ref, locks)}))
    write_validation(matrix, read_labelled({"retail": LABELLED}), tmp_path / "reader_validation.csv")
    text = (tmp_path / "reader_validation.md").read_text()
    assert text.index("Hand-labelled") < text.index("consistency check, not independent evidence")
    assert "The reader agrees on 33 of 33." in text
    assert len(pd.read_csv(tmp_path / "reader_validation_labelled.csv")) == 33


# --------------------------------------------------------------------------- the injection check


def test_validation_matrix(locked, tmp_path):
    ref, locks = locked
    df = build_trials(EPISODES, {"retail": (ref, locks)})
    m = injection_matrix(df)
    assert list(m.index) == ["none", *FAILURE_TYPES]
    assert list(m.columns) == ["success", *FAILURE_TYPES, "set_aside", "excluded"]
    for t in FAILURE_TYPES:
        assert m.loc[t, t] == 1
    assert m.loc["none", "success"] == 2 and m.loc["none", "excluded"] == 1
    assert m.to_numpy().sum() == len(df)
    s = injection_summary(m)
    assert (s["injected_failed"], s["agree"], s["injected_read_success"], s["set_aside"]) == (5, 5, 0, 0)
    write_validation(m, None, tmp_path / "stats" / "reader_validation.csv")
    back = pd.read_csv(tmp_path / "stats" / "reader_validation.csv", index_col="injected")
    assert back.equals(m.rename_axis("injected"))
    assert "5/5" in (tmp_path / "stats" / "reader_validation.md").read_text()


def test_an_injection_another_injected_fault_touches_is_set_aside(locked, tmp_path):
    """Issue #53: an injection is ground truth only where it is the trial's one injected fault."""
    ref, locks = locked
    df = build_trials(EPISODES, {"retail": (ref, locks)})
    unconfirmed = df["injected_failure"] == "correct_unconfirmed"
    incorrect = df["injected_failure"] == "delivered_incorrect"
    # A slipped argument beside an unconfirmed answer: the reader may rightly read it otherwise.
    slipped = df.assign(injected_slips=df["injected_slips"].mask(unconfirmed | incorrect, 1))
    m = injection_matrix(slipped)
    assert m.loc["correct_unconfirmed", "set_aside"] == 1 and m.loc["correct_unconfirmed", "correct_unconfirmed"] == 0
    # ... but the slips of a delivered_incorrect injection are the injection itself.
    assert m.loc["delivered_incorrect", "delivered_incorrect"] == 1 and m.loc["delivered_incorrect", "set_aside"] == 0
    assert m.to_numpy().sum() == len(df)
    s = injection_summary(m)
    assert (s["injected_failed"], s["agree"], s["set_aside"]) == (4, 4, 1)
    # A participant's injected fault in the same trial sets it aside too.
    fault = json.dumps({"misreported_value": {"injected": 1, "found": 1, "findings": 1, "true_findings": 1}})
    faulted = df.assign(participant_faults_scored=df["participant_faults_scored"].astype(object).mask(incorrect, fault))
    assert injection_matrix(faulted).loc["delivered_incorrect", "set_aside"] == 1
    write_validation(m, None, tmp_path / "reader_validation.csv")
    assert "set aside (another injected fault touches them): 1." in (tmp_path / "reader_validation.md").read_text()
    assert pd.read_csv(tmp_path / "reader_validation.csv")["set_aside"].sum() == 1
