"""Exploratory contrasts and the unbundling table: configured beyond the frozen analysis, labelled
exploratory, and computed as the pre-specified contrasts are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from incognita.access.freeze import freeze
from incognita.access.planning.workflow_config import load_config
from incognita.access.stats.commands import stats_command
from incognita.access.stats.exploratory_spec import ExploratorySpec, spec_from_doc
from incognita.access.stats.interpretation import load_interpretation
from incognita.access.stats.outputs import EXPLORATORY_FILES, OUTPUT_FILES
from incognita.access.stats.stats_stage import build_tables
from incognita.access.stats.synthetic import synthetic_trials
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "config" / "domains" / "retail" / "interpretation.yaml"
LOCKS = ROOT / "config" / "domains" / "retail" / "locks.yaml"
SPEC = ExploratorySpec(contrasts=(("indirect", "social"),), unbundle_from="social", unbundle_to="direct")


@pytest.fixture(scope="module")
def synth() -> pd.DataFrame:
    return synthetic_trials(seed=5)


@pytest.fixture(scope="module")
def tables(synth):
    return build_tables(synth, load_interpretation(TABLE, LOCKS), splits=50, exploratory=SPEC)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"contrasts": [["social"]]}, r"exploratory\.contrasts\[0\]: expected \[minuend, subtrahend\]"),
        ({"contrasts": [["social", "social"]]}, r"exploratory\.contrasts\[0\]: expected .* two different arms"),
        (
            {"contrasts": [["social", "solo"]]},
            r"exploratory\.contrasts\[0\]\[1\]: 'solo' is not an arm of design\.arms",
        ),
        ({"unbundle": {"from": "social"}}, r"exploratory\.unbundle: expected \{from: <arm>, to: <arm>\}"),
        ({"unbundle": {"from": "social", "to": "social"}}, r"exploratory\.unbundle: from and to are the same arm"),
        ({"unbundled": {}}, r"config key exploratory: expected a mapping with contrasts and/or unbundle"),
    ],
)
def test_a_bad_block_names_its_key(doc, message):
    with pytest.raises(InputError, match=message):
        spec_from_doc(doc, ("direct", "indirect", "social"))


def test_the_spec_round_trips_through_its_json():
    assert spec_from_doc(json.loads(SPEC.to_json()), None) == SPEC
    assert spec_from_doc(None, None).empty and json.loads(ExploratorySpec().to_json()) == {"contrasts": []}


def test_an_exploratory_contrast_is_computed_as_the_pre_specified_one(tables):
    """indirect - social is also the frozen primary contrast: the same numbers, another label."""
    ours = tables["exploratory"].set_index(["model", "scope"])
    frozen = tables["contrasts"].query("contrast == 'indirect-social'").set_index(["model", "scope"])
    cols = ["n_tasks", "mean_diff", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(ours.loc[frozen.index, cols], frozen[cols], check_dtype=False)
    assert set(ours["label"]) == {"exploratory"} and "decision" not in ours.columns


def test_unbundling_places_an_arm_by_the_share_of_the_gap(tables):
    """From the success table's cell means, independently: (indirect - social) / (direct - social)."""
    table = tables["unbundling"]
    assert set(table["arm"]) == {"indirect"}  # native is never placed; the ends are not placed
    success = tables["success"].set_index(["arm", "model"])["success"]
    for row in table.itertuples():
        low, x, high = (success[(a, row.model)] for a in ("social", "indirect", "direct"))
        assert row.diff == pytest.approx(x - low) and row.gap == pytest.approx(high - low)
        assert row.recovered == pytest.approx((x - low) / (high - low))
        lo, hi = sorted((row.diff_low / row.gap, row.diff_high / row.gap))
        assert (row.recovered_low, row.recovered_high) == pytest.approx((lo, hi))
    assert set(table["label"]) == {"exploratory"}


def test_no_gap_means_no_share():
    flat = synthetic_trials(seed=1)
    flat["success"] = flat["database_only_success"] = flat["success"].where(flat["excluded"], 1.0)
    interp = load_interpretation(TABLE, LOCKS)
    table = build_tables(flat, interp, splits=20, exploratory=SPEC)["unbundling"]
    assert (table["gap"] == 0).all() and table["recovered"].isna().all()


def test_an_arm_without_trials_is_refused(synth):
    interp = load_interpretation(TABLE, LOCKS)
    spec = ExploratorySpec(contrasts=(("social+map", "social"),))
    with pytest.raises(InputError, match=r"exploratory: arm\(s\) social\+map have no trials"):
        build_tables(synth, interp, splits=20, exploratory=spec)


def test_the_command_writes_the_exploratory_files_only_when_asked(synth, tmp_path):
    table, locks = tmp_path / "interpretation.yaml", tmp_path / "locks.yaml"
    shutil.copy(TABLE, table)
    freeze(locks, names=["interpretation"], extra={"interpretation": str(table)}, today="2026-08-20")
    synth.to_parquet(trials := tmp_path / "trials.parquet")
    common = ["--trials", str(trials), "--interpretation", str(table), "--locks", str(locks), "--splits", "20"]
    common += ["--config", str(tmp_path / "none.yaml")]
    res = CliRunner().invoke(stats_command, [*common, "--out", str(tmp_path / "plain")])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == sorted(OUTPUT_FILES)
    res = CliRunner().invoke(stats_command, [*common, "--out", str(tmp_path / "more"), "--exploratory", SPEC.to_json()])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "more").iterdir()) == sorted(OUTPUT_FILES + EXPLORATORY_FILES)
    res = CliRunner().invoke(stats_command, [*common, "--out", str(tmp_path / "bad"), "--exploratory", "{not json"])
    assert res.exit_code != 0 and "--exploratory: not JSON" in str(res.exception)


def test_the_unbundle_config_checks_and_lists_the_registered_arms(tmp_path):
    """config/unbundle.yaml is an overlay: read over config/config.yaml, as the workflow reads it."""
    config = load_config(ROOT / "config" / "unbundle.yaml")  # the schema, the arms (registered), the block
    assert config["design"]["arms"] == [
        "indirect",
        "social",
        "social+map",
        "social+referral",
        "social-3",
        "social+named",
    ]
    assert config["design"]["budget"] == 300 and config["models"]  # from config/config.yaml
    spec = spec_from_doc(config["exploratory"], tuple(config["design"]["arms"]))
    assert (spec.unbundle_from, spec.unbundle_to) == ("social", "indirect") and len(spec.contrasts) == 5
    overlay = yaml.safe_load((ROOT / "config" / "unbundle.yaml").read_text())
    overlay["exploratory"]["unbundle"]["to"] = "direct"
    (tmp_path / "config.yaml").write_text((ROOT / "config" / "config.yaml").read_text())
    (path := tmp_path / "unbundle.yaml").write_text(yaml.safe_dump(overlay))
    with pytest.raises(InputError, match=r"exploratory\.unbundle\.to: 'direct' is not an arm of design\.arms"):
        load_config(path)
