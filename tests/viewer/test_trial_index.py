"""The trials index's data (incognita.viewer.trial_index): each trial's domain, a filterable
column shown at first only when the trials span several domains."""

from __future__ import annotations

import pandas as pd
import pytest
from viewer_helpers import FIXTURES

from incognita.common.io import InputError
from incognita.viewer.trial_index import index_table, load_trials


def _names(table: dict) -> list[str]:
    return [c["name"] for c in table["columns"]]


def test_every_row_carries_its_domain_and_one_domain_hides_the_column():
    rows = load_trials(FIXTURES / "trials.parquet")
    assert {r["domain"] for r in rows} == {"retail"}
    table = index_table(rows)
    at = _names(table).index("domain")
    assert {row[at] for row in table["rows"]} == {"retail"}
    assert "domain" not in table["shown"]  # one domain: the column says nothing, one click away


def test_several_domains_show_the_column(tmp_path):
    trials = pd.read_parquet(FIXTURES / "trials.parquet")
    trials.loc[trials["task"] == "retail/46", "task"] = "mock/update_task_with_message_history"
    trials.to_parquet(tmp_path / "trials.parquet")
    table = index_table(load_trials(tmp_path / "trials.parquet"))
    at = _names(table).index("domain")
    assert sorted({row[at] for row in table["rows"]}) == ["mock", "retail"]
    assert table["shown"].index("domain") == table["shown"].index("task") - 1


def test_an_unqualified_task_is_refused_with_the_file(tmp_path):
    trials = pd.read_parquet(FIXTURES / "trials.parquet")
    trials["task"] = "46"
    trials.to_parquet(tmp_path / "trials.parquet")
    with pytest.raises(InputError, match="trials.parquet: task: '46' is not a qualified task id"):
        load_trials(tmp_path / "trials.parquet")
