"""The trials table's contract (incognita.access.reader.trial_contract): column order and dtypes,
rows built elsewhere (native trials) checked before they join, and the written table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from incognita.access.reader import trial_contract
from incognita.access.reader.trials_builder import build_trials
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "reader"
EPISODES = sorted(FIX.glob("*.json"))


def _native_row(**extra) -> dict:
    return {
        "arm": "native",
        "model": "handmade",
        "task": "retail/901",
        "rep": 0,
        "seed": 7,
        "excluded": False,
        "termination": "user_stop",
        "success": 1.0,
        "agent_actions": 5,
        "messages": 3,
        "overlay_version": 0,
        "card_sha256": "0" * 64,  # the fixtures' card (incognita.access.episodes.run_archive: one card per task)
        **extra,
    }


def test_build_trials(locked):
    ref, locks = locked
    df = build_trials(EPISODES, {"retail": (ref, locks)}, [_native_row()])
    assert len(df) == len(EPISODES) + 1
    assert list(df.columns[: len(trial_contract.CONTRACT_COLUMNS)]) == list(trial_contract.CONTRACT_COLUMNS)
    assert df.columns[-1] == "overlay_version"  # a builder's own column is carried along
    assert list(df["arm"].unique()) == ["direct", "indirect", "social", "native"]
    native = df[df.arm == "native"].iloc[0]
    assert pd.isna(native.failure_type) and pd.isna(native.execution) and pd.isna(native.tokens_agent)
    assert native.agent_actions == 5 and native.overlay_version == 0
    assert df.loc[df.arm != "native", "overlay_version"].isna().all()
    assert str(df["rep"].dtype) == "Int64" and str(df["failure_type"].dtype) == "string"


@pytest.mark.parametrize(
    "row, message",
    [
        ({"arm": "native", "model": "m", "task": "retail/901"}, "missing column"),
        (_native_row(arm="social"), "read from episode records"),
        (_native_row(failure_type="never_requested"), "failure_type: the reader defines"),
        (_native_row(execution=1.0), "execution: the reader defines"),
    ],
)
def test_extra_rows_are_checked(locked, row, message):
    ref, locks = locked
    with pytest.raises(InputError, match=message):
        build_trials(EPISODES[:1], {"retail": (ref, locks)}, [row])


def test_write_trials_round_trip(locked, tmp_path):
    ref, locks = locked
    df = build_trials(EPISODES, {"retail": (ref, locks)})
    out = tmp_path / "out"
    trial_contract.write_trials(df, out / "trials.parquet", out / "trials.csv")
    back = pd.read_parquet(out / "trials.parquet")
    pd.testing.assert_frame_equal(back, df)
    assert len(pd.read_csv(out / "trials.csv")) == len(df)
    assert sorted(p.name for p in out.iterdir()) == ["trials.csv", "trials.parquet"]  # no temp files left
    with pytest.raises(InputError, match="missing contract column"):
        trial_contract.write_trials(df.drop(columns=["success"]), out / "x.parquet")
