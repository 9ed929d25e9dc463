"""Where the access family's stages write (incognita.access.paths): one folder per domain for a
domain's artifacts, qualified task ids for a cell's records, and the roots read back off a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from incognita.access.paths import (
    audit_table,
    card_file,
    coordination_file,
    domain_of,
    domain_root,
    episode_record,
    episode_records,
    episodes_root,
    golden_file,
    locks_verified,
    native_result,
    native_results,
    native_root,
    replay_table,
)


def test_record_paths():
    assert episode_record("social", "prober", "retail/46", 2) == Path(
        "results/episodes/social/prober/retail/46/r2.json"
    )
    assert native_result("prober", "retail/46", 0) == Path("results/native/prober/retail/46/r0.json")
    assert native_result("prober", "retail/46", 0, unrepaired=True) == Path(
        "results/native/archive/unrepaired/prober/retail/46/r0.json"
    )
    # The workflow builds its patterns with the same functions, wildcards left in place.
    pattern = episode_record("direct", "{model}", "{domain}/{task}", 0)
    assert str(pattern) == "results/episodes/direct/{model}/{domain}/{task}/r0.json"


def test_a_domains_artifacts_sit_in_its_own_folder():
    assert card_file("retail", "46") == Path("results/cards/retail/46.json")
    assert card_file("retail", "46", rule_built=True) == Path("results/cards/retail/v1/46.json")
    assert golden_file("retail", "46", root="g") == Path("g/retail/46.json")
    assert replay_table("retail") == Path("results/golden/retail/replay.tsv")
    assert audit_table("retail") == Path("results/audit/retail/cards.tsv")
    assert coordination_file("retail") == Path("results/reference/retail/coordination.json")
    assert locks_verified("retail") == Path("results/reference/retail/locks_verified.txt")


def test_the_roots_are_read_back_off_a_path():
    record = episode_record("social", "m", "retail/46", 0, "out/episodes")
    assert episodes_root(record) == Path("out/episodes")
    assert native_root(native_result("m", "retail/46", 0, "out/native")) == Path("out/native")
    card = card_file("retail", "46", root="out/cards")
    assert domain_root(card) == Path("out/cards") and domain_of(card) == "retail"
    with pytest.raises(ValueError, match="not an episode record path"):
        episodes_root("retail/46/r0.json")


def test_episode_records_lists_the_record_layout(tmp_path):
    written = [episode_record(a, "m", t, 0, tmp_path) for a in ("social", "direct") for t in ("retail/2", "retail/11")]
    for path in [*written, tmp_path / "manifest.tsv", tmp_path / "direct" / "m" / "notes.json"]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    assert episode_records(tmp_path) == sorted(written)
    assert episode_records(tmp_path / "absent") == []


def test_native_results_leave_the_archive_out(tmp_path):
    live = native_result("m", "retail/46", 0, tmp_path)
    archived = native_result("m", "retail/46", 0, tmp_path, unrepaired=True)
    for path in (live, archived):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    assert native_results(tmp_path) == [live]
