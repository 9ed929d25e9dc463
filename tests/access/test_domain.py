"""Benchmark domains (incognita.access.domain): the registry, qualified task ids, a domain's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from incognita.access.domain import (
    REGISTRY,
    domain_files,
    get_domain,
    id_order,
    qualify,
    split_task,
    task_order,
)
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[2]


def test_qualified_ids_name_a_task_across_domains():
    assert qualify("retail", "46") == "retail/46" and split_task("retail/46") == ("retail", "46")
    for bad in ("46", "telecom/4", "retail/", "retail/a b"):
        with pytest.raises(InputError, match=r"design.tasks: .* is not a qualified task id"):
            split_task(bad, "design.tasks")
    assert sorted(["retail/11", "retail/2", "retail/x"], key=task_order) == ["retail/2", "retail/11", "retail/x"]
    assert sorted(["10", "9", "a"], key=id_order) == ["9", "10", "a"]


def test_the_retail_domain():
    retail = get_domain("retail")
    assert retail.name == "retail" and "retail" in REGISTRY
    assert retail.tools_with("identity") == {"find_user_id_by_email", "find_user_id_by_name_zip"}
    assert retail.tools_with("handoff") == {"transfer_to_human_agents"}
    assert retail.subject_arguments[0] == "order_id"
    with pytest.raises(InputError, match="it provides no 'nope' part"):
        retail.part("nope")
    with pytest.raises(InputError, match="unknown domain 'telecom'"):
        get_domain("telecom")


def test_a_domains_files_and_its_corpus_rule(tmp_path):
    files = domain_files("retail", ROOT / "config/domains")
    for path in (files.partition, files.vocabulary, files.corpus, files.locks, files.interpretation, files.prompts):
        assert path.exists(), path
    rule = files.corpus_rule()
    assert rule["per_level"] == 3 and "46" in rule["include"]
    (tmp_path / "retail").mkdir()
    bad = domain_files("retail", tmp_path)
    with pytest.raises(InputError, match=r"domain.yaml: corpus: missing"):
        bad.corpus_rule()
    bad.settings_file.write_text("corpus: {seed: 1, per_level: 3, levels: [0], include: []}\n")
    with pytest.raises(InputError, match=r"corpus.levels: expected positive integers"):
        bad.corpus_rule()
    bad.settings_file.write_text("corpus: {seed: 1, per_level: 3, levels: [1], include: [46]}\n")
    with pytest.raises(InputError, match=r"corpus.include: not upstream task ids \(strings\): \[46\]"):
        bad.corpus_rule()
