"""Corpus selection: 18 tasks, three per level where the pool allows, deterministic for a seed,
rule exclusions (tasks an agent passes by doing nothing among them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from incognita.access.selection.corpus import corpus_document, render, select, write_corpus
from incognita.cli import main
from incognita.common.io import InputError, sha256_file, write_json

ROOT = Path(__file__).resolve().parents[3]

LEVELS = [1, 2, 3, 4, 5, 6]
NAMED = ["2", "3", "11", "30", "37", "38", "46", "59"]
RULE = {"per_level": 3, "levels": LEVELS, "include": NAMED}


def _task(tid: str, level: int, write: bool = True, withholds: bool = False, match: bool = True) -> dict:
    desks = ["Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn"][:level]
    arms = {arm: {"n_role_assignments": level if arm == "social" else None} for arm in ("direct", "indirect", "social")}
    return {
        "task_id": tid,
        "level": level,
        "desks_engaged": desks,
        "has_write": write,
        "withholds_disclosure": withholds,
        "match": match,
        "n_calls": level + 2,
        "n_counted": level + 1,
        "arms": arms,
        "information_items": {"customer": [{"token": "name"}], "service": []},
    }


def synthetic_reference() -> dict:
    """60 tasks: ten per level, three or four of them without a write; a few withhold or fail replay."""
    tasks = {}
    for n in range(60):
        tid = str(n)
        tasks[tid] = _task(tid, level=n % 6 + 1, write=(n // 6) % 3 != 0)
    tasks["13"] = _task("13", 2, withholds=True)
    tasks["19"] = _task("19", 2, match=False)
    tasks["50"] = _task("50", 3, write=False, withholds=True)
    return {"schema_version": 1, "partition": {"version": 1, "sha256": "0" * 64}, "tasks": tasks}


def test_eighteen_tasks_three_per_level():
    sel = select(synthetic_reference(), seed=20260820, **RULE)
    assert len(sel["tasks"]) == 18 == len(set(sel["tasks"]))
    assert {lv: len(ids) for lv, ids in sel["levels"].items()} == {lv: 3 for lv in LEVELS}
    ref = synthetic_reference()
    for lv, ids in sel["levels"].items():
        assert all(ref["tasks"][t]["level"] == lv for t in ids)


def test_selection_is_deterministic_for_a_seed():
    a = select(synthetic_reference(), seed=20260820, **RULE)
    b = select(synthetic_reference(), seed=20260820, **RULE)
    assert a == b
    others = {tuple(select(synthetic_reference(), seed=s, **RULE)["tasks"]) for s in range(1, 6)}
    assert len(others) > 1  # the seed matters
    # Independent of the order the reference lists its tasks in.
    ref = synthetic_reference()
    ref["tasks"] = dict(reversed(list(ref["tasks"].items())))
    assert select(ref, seed=20260820, **RULE)["tasks"] == a["tasks"]


def test_named_tasks_included_and_withholding_excluded():
    sel = select(synthetic_reference(), seed=20260820, **RULE)
    assert set(NAMED) <= set(sel["tasks"])
    assert all(e["status"] == "included" for e in sel["named"])
    assert not {"13", "19", "50"} & set(sel["tasks"])
    reasons = {e["task"]: e["reason"] for e in sel["exclusions"]}
    assert "withholds disclosure" in reasons["13"] and "withholds disclosure" in reasons["50"]
    assert "golden replay" in reasons["19"]


def test_named_task_excluded_by_the_rule_is_recorded():
    ref = synthetic_reference()
    ref["tasks"]["38"] = _task("38", 3, withholds=True)
    sel = select(ref, seed=20260820, **RULE)
    entry = next(e for e in sel["named"] if e["task"] == "38")
    assert entry["status"] == "excluded" and "withholds disclosure" in entry["reason"]
    assert "38" not in sel["tasks"] and len(sel["tasks"]) == 18


def test_named_overflow_at_one_level_is_recorded():
    ref = synthetic_reference()
    for tid in ("2", "3", "11", "30"):
        ref["tasks"][tid] = _task(tid, 5)
    sel = select(ref, seed=20260820, **RULE)
    out = [e for e in sel["named"] if e["status"] == "excluded"]
    # 46 is at level 5 too: five named tasks for three slots, kept in id order.
    assert [e["task"] for e in out] == ["30", "46"] and "already holds 3 named tasks" in out[0]["reason"]
    assert sel["shortfalls"] == []


def test_write_tasks_are_preferred():
    ref = synthetic_reference()
    sel = select(ref, seed=7, per_level=3, levels=LEVELS, include=[])
    assert all(ref["tasks"][t]["has_write"] for t in sel["tasks"])
    # A level with too few write tasks is topped up from the others.
    for tid, t in ref["tasks"].items():
        if t["level"] == 1 and tid != "12":
            t["has_write"] = False
    sel = select(ref, seed=7, per_level=3, levels=LEVELS, include=[])
    assert "12" in sel["levels"][1] and len(sel["levels"][1]) == 3


def test_a_short_level_is_filled_from_the_nearest_level_and_recorded():
    ref = synthetic_reference()
    for tid, t in ref["tasks"].items():
        if t["level"] == 1 and tid not in ("6", "12"):
            t["withholds_disclosure"] = True
    sel = select(ref, seed=20260820, **RULE)
    assert len(sel["tasks"]) == 18
    assert sel["levels"][1] == ["6", "12"]  # every task stays under its true level
    (short,) = sel["shortfalls"]
    assert short["level"] == 1 and short["missing"] == 1
    (fill,) = short["filled_with"]
    assert fill["level"] == 2 and fill["task"] in sel["levels"][2] and len(sel["levels"][2]) == 4


def test_named_leftovers_fill_short_levels_first():
    ref = synthetic_reference()
    for tid in ("2", "3", "11", "30"):
        ref["tasks"][tid] = _task(tid, 5)
    for t in ref["tasks"].values():
        if t["level"] == 1:
            t["withholds_disclosure"] = True
    sel = select(ref, seed=20260820, **RULE)
    assert set(NAMED) <= set(sel["tasks"]) and len(sel["tasks"]) == 18
    (short,) = sel["shortfalls"]  # three level-1 slots: the two named leftovers, then level 2
    assert [(f["task"], f["level"]) for f in short["filled_with"]][:2] == [("30", 5), ("46", 5)]
    assert short["filled_with"][2]["level"] == 2


def test_tasks_passed_by_doing_nothing_are_excluded_with_that_reason():
    ref = synthetic_reference()
    idle = {"6": ["direct", "indirect", "social", "native"], "13": ["native"], "11": ["social"]}
    sel = select(ref, seed=20260820, idle=idle, **RULE)
    assert not {"6", "11", "13"} & set(sel["tasks"])
    reasons = {e["task"]: e["reason"] for e in sel["exclusions"]}
    assert reasons["6"].startswith("passed by an agent that does nothing")
    assert reasons["6"].endswith("arms: direct, indirect, social, native")
    # every reason that applies is kept: 13 also withholds disclosure
    assert "does nothing" in reasons["13"] and "withholds disclosure" in reasons["13"]
    # a named task it passes is excluded by name, with the reason
    (entry,) = [e for e in sel["named"] if e["task"] == "11"]
    assert entry["status"] == "excluded" and entry["reason"].endswith(
        "does nothing (the idle profile ends the episode at once); arms: social"
    )
    assert select(ref, seed=20260820, **RULE)["tasks"] != sel["tasks"]


def test_tasks_unsolvable_by_construction_are_excluded_with_that_reason():
    """A required argument no participant can supply (golden provenance `unsourced`): no agent
    passes the task by the rules it is given, so it measures nothing; a named task too."""
    ref = synthetic_reference()
    for tid in ("7", "11"):
        ref["tasks"][tid]["diagnostics"] = {"untraced_arguments": 1}
    sel = select(ref, seed=20260820, **RULE)
    assert not {"7", "11"} & set(sel["tasks"])
    reasons = {e["task"]: e["reason"] for e in sel["exclusions"]}
    assert reasons["7"].startswith("unsolvable by construction: a required call has an argument no participant")
    (entry,) = [e for e in sel["named"] if e["task"] == "11"]
    assert entry["status"] == "excluded" and "unsolvable by construction" in entry["reason"]
    assert "a required argument no participant can supply (golden provenance unsourced)" in sel["rule"]["exclude"]
    # no unsourced argument (a reference without the diagnostic counts as none): a candidate
    ref["tasks"]["7"]["diagnostics"] = {"untraced_arguments": 0}
    del ref["tasks"]["11"]["diagnostics"]
    again = select(ref, seed=20260820, **RULE)
    assert not any("unsolvable" in e["reason"] for e in again["exclusions"])
    assert "11" in again["tasks"]


def test_too_few_tasks_overall_is_an_error():
    ref = synthetic_reference()
    for t in list(ref["tasks"].values())[:50]:
        t["withholds_disclosure"] = True
    with pytest.raises(InputError, match="too few eligible tasks"):
        select(ref, seed=1, **RULE)


def _cli_setup(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A reference and a do-nothing table of the synthetic tasks, as retail's; the selection rule is
    retail's (config/domains/retail/domain.yaml, read from the checkout), the corpus goes to `out`."""
    monkeypatch.chdir(ROOT)
    ref = synthetic_reference()
    ref_path = tmp_path / "coordination.json"
    write_json(ref_path, ref)
    out = tmp_path / "corpus.yaml"
    from incognita.access.selection.idle import write_table

    write_table(
        [
            {
                "task": "6",
                "arm": "direct",
                "success": "true",
                "channel_db": "true",
                "channel_communicate": "",
                "turns": "2",
                "termination": "final",
            }
        ],
        tmp_path / "idle.tsv",
    )
    return ref_path, out


def test_cli_writes_a_frozen_corpus_and_refuses_silent_changes(tmp_path, monkeypatch):
    ref_path, out = _cli_setup(tmp_path, monkeypatch)
    runner = CliRunner()
    args = [
        "corpus",
        "--domain",
        "retail",
        "--reference",
        str(ref_path),
        "--out",
        str(out),
        "--locks",
        str(tmp_path / "locks.yaml"),
        "--idle",
        str(tmp_path / "idle.tsv"),
        "--no-verify",
    ]
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    doc = yaml.safe_load(out.read_text())
    assert doc["version"] == 1 and len(doc["tasks"]) == 18 and doc["rule"]["seed"] == 20260820
    assert "6" not in doc["tasks"] and doc["selected_from"]["idle_sha256"] == sha256_file(tmp_path / "idle.tsv")
    assert doc["totals"]["tasks"] == 18 and "calls" in res.output
    assert runner.invoke(main, args).output.endswith("unchanged\n")  # same inputs, same bytes
    ref = json.loads(ref_path.read_text())
    ref["tasks"]["59"]["level"] = 1
    write_json(ref_path, ref)
    res = runner.invoke(main, args)
    assert res.exit_code == 2 and "differs from the committed corpus" in res.output
    assert runner.invoke(main, args + ["--force"]).exit_code == 0


def test_cli_needs_the_do_nothing_table(tmp_path, monkeypatch):
    ref_path, out = _cli_setup(tmp_path, monkeypatch)
    res = CliRunner().invoke(
        main,
        [
            "corpus",
            "--domain",
            "retail",
            "--reference",
            str(ref_path),
            "--out",
            str(out),
            "--no-verify",
            "--idle",
            str(tmp_path / "none.tsv"),
        ],
    )
    assert res.exit_code == 2 and "none.tsv: file not found; build it with `incognita idle`" in res.output


def test_cli_refuses_an_unfrozen_reference(tmp_path, monkeypatch):
    ref_path, out = _cli_setup(tmp_path, monkeypatch)
    res = CliRunner().invoke(
        main,
        [
            "corpus",
            "--domain",
            "retail",
            "--reference",
            str(ref_path),
            "--out",
            str(out),
            "--locks",
            str(tmp_path / "locks.yaml"),
        ],
    )
    assert not out.exists()
    assert res.exit_code == 2 and "has not been frozen" in res.output


def test_render_round_trips(tmp_path):
    ref = synthetic_reference()
    write_json(tmp_path / "c.json", ref)
    sel = select(ref, seed=20260820, **RULE)
    doc = corpus_document(sel, ref, tmp_path / "c.json", version=3)
    assert yaml.safe_load(render(doc))["levels"] == {lv: sel["levels"][lv] for lv in LEVELS}
    assert write_corpus(doc, tmp_path / "corpus.yaml") is True
    assert write_corpus(doc, tmp_path / "corpus.yaml") is False


def test_a_new_candidate_changes_only_its_own_level():
    before = select(synthetic_reference(), seed=20260820, **RULE)["levels"]
    ref = synthetic_reference()
    ref["tasks"]["60"] = _task("60", 4)
    after = select(ref, seed=20260820, **RULE)["levels"]
    assert {lv: ids for lv, ids in after.items() if lv != 4} == {lv: ids for lv, ids in before.items() if lv != 4}


# --------------------------------------------------------------------------- retail's frozen corpus


@pytest.fixture(scope="module")
def frozen() -> dict:
    from incognita.access.cells import load_corpus

    retail = ROOT / "config" / "domains" / "retail"
    return load_corpus(retail / "corpus.yaml", locks=retail / "locks.yaml")


def test_the_rule_of_the_frozen_corpus_is_retails(frozen):
    """The corpus records the rule of retail's domain.yaml it was selected by."""
    from incognita.access.domain import domain_files

    rule = domain_files("retail", ROOT / "config" / "domains").corpus_rule()
    assert {k: frozen["rule"][k] for k in rule} == rule


def test_frozen_corpus_has_eighteen_tasks_and_every_named_task(frozen):
    assert len(frozen["tasks"]) == 18 == len(set(frozen["tasks"]))
    assert sorted(t for ids in frozen["levels"].values() for t in ids) == sorted(frozen["tasks"])
    assert {e["task"]: e["status"] for e in frozen["named"]} == {t: "included" for t in NAMED}
    assert frozen["totals"]["tasks"] == 18


def test_frozen_corpus_fills_each_level_as_far_as_its_candidates_allow(frozen):
    """Three per level wherever a level has three eligible tasks; a level with fewer keeps all
    of them, and each missing slot is accounted for under `shortfalls` by a task listed at its
    own, true level."""
    short = {s["level"]: s for s in frozen["shortfalls"]}
    fillers = [f for s in frozen["shortfalls"] for f in s["filled_with"]]
    for lv, ids in frozen["levels"].items():
        eligible = frozen["candidates"][lv]["eligible"]
        extra = sum(1 for f in fillers if f["level"] == lv)
        assert len(ids) == min(3, eligible) + extra, lv
        if eligible < 3:
            assert short[lv]["eligible"] == eligible and short[lv]["missing"] == 3 - eligible
            assert len(short[lv]["filled_with"]) == 3 - eligible
        else:
            assert lv not in short
    for f in fillers:
        assert f["task"] in frozen["levels"][f["level"]]


def test_frozen_corpus_holds_every_named_task_at_its_own_level(frozen):
    """Under golden generator 4 the eight named tasks sit at most three per level, so none
    waits for a short level's slot (as the paper's corpus requires)."""
    fillers = {f["task"] for s in frozen["shortfalls"] for f in s["filled_with"]}
    for lv, ids in frozen["levels"].items():
        named = [t for t in ids if t in NAMED]
        assert len(named) <= 3, lv
        assert not set(named) & fillers
    assert {e["task"]: e["level"] for e in frozen["named"]} == {
        "2": 5,
        "3": 4,
        "11": 3,
        "30": 5,
        "37": 5,
        "38": 4,
        "46": 3,
        "59": 2,
    }


def test_frozen_corpus_follows_the_decided_rule(frozen):
    """Issue #12: the paper's three tasks at each level 1-6 cannot be met (no eligible task
    engages a single desk), so each level holds min(3, its pool) tasks of its own and every
    missing slot goes, by the recorded rule, to the nearest level with spare candidates."""
    fillers = [f for s in frozen["shortfalls"] for f in s["filled_with"]]
    filler_ids = {f["task"] for f in fillers}
    own = {lv: [t for t in ids if t not in filler_ids] for lv, ids in frozen["levels"].items()}
    pool = {lv: frozen["candidates"][lv]["eligible"] for lv in LEVELS}
    assert {lv: len(own[lv]) for lv in LEVELS} == {lv: min(3, pool[lv]) for lv in LEVELS}
    for short in frozen["shortfalls"]:
        # nearest first: a farther level gives a slot only once every nearer one has no spare
        taken: dict[int, int] = {}
        for f in short["filled_with"]:
            nearer = [
                lv
                for lv in LEVELS
                if lv != short["level"]
                and (abs(lv - short["level"]), lv) < (abs(f["level"] - short["level"]), f["level"])
            ]
            assert all(taken.get(lv, 0) == pool[lv] - min(3, pool[lv]) for lv in nearer), f
            taken[f["level"]] = taken.get(f["level"], 0) + 1
    # what was decided, as selected from reference v5: level 1 is empty, its slots are 68, 67, 17
    assert {lv: len(ids) for lv, ids in frozen["levels"].items()} == {1: 0, 2: 5, 3: 4, 4: 3, 5: 3, 6: 3}
    assert [(f["task"], f["level"]) for f in fillers] == [("68", 2), ("67", 2), ("17", 3)]
    assert set(NAMED) <= set(frozen["tasks"])


def test_frozen_corpus_excludes_what_doing_nothing_passes(frozen):
    reasons = {e["task"]: e["reason"] for e in frozen["exclusions"]}
    idle = sorted((t for t, r in reasons.items() if r.startswith("passed by an agent that does nothing")), key=int)
    assert idle == ["10", "12", "25", "50", "57", "65", "105"]
    assert not set(idle) & set(frozen["tasks"])
    assert "native" in reasons["10"] and frozen["selected_from"]["idle_sha256"]
