"""The figures stage's inputs (incognita.access.figures.figure_inputs): the display order of the
models, and every bad input named by file, column, row and value."""

from __future__ import annotations

import pandas as pd
import pytest
from figure_helpers import copy_with

from incognita.access.figures.figure_inputs import load_stats, model_order
from incognita.common.io import InputError


def test_model_order_follows_social_success_and_keeps_extra_models():
    success = pd.DataFrame(
        {
            "arm": ["social"] * 3 + ["direct"] * 4,
            "model": ["a", "b", "c", "a", "b", "c", "d"],
            "success": [0.2, 0.9, 0.2, 1, 1, 1, 1],
        }
    )
    assert model_order(success) == ("b", "a", "c", "d")  # tie a/c keeps file order, d has no social row
    assert model_order(success[success["arm"] == "direct"]) == ("a", "b", "c", "d")


def test_missing_column_and_bad_values_are_named(stats_dir, tmp_path):
    copy_with(stats_dir, tmp_path, "contrasts", lambda df: df.drop(columns=["ci_high"]))
    with pytest.raises(InputError, match=r"contrasts\.csv: missing column\(s\) ci_high"):
        load_stats(tmp_path)

    def corrupt(df):
        df["usd_per_episode"] = df["usd_per_episode"].astype(object)
        df.loc[3, "usd_per_episode"] = "free"
        return df

    copy_with(stats_dir, tmp_path, "cost", corrupt)
    with pytest.raises(InputError, match=r"cost\.csv: column 'usd_per_episode', row 5: 'free' is not a number"):
        load_stats(tmp_path)

    def bad_bool(df):
        df["excludes_zero"] = df["excludes_zero"].astype(object)
        df.loc[0, "excludes_zero"] = "maybe"
        return df

    copy_with(stats_dir, tmp_path, "separability", bad_bool)
    with pytest.raises(InputError, match=r"separability\.csv: column 'excludes_zero', row 2: 'maybe'"):
        load_stats(tmp_path)

    def no_arm(df):
        df.loc[2, "arm"] = None
        return df

    copy_with(stats_dir, tmp_path, "process", no_arm)
    with pytest.raises(InputError, match=r"process\.csv: column 'arm', row 4: empty"):
        load_stats(tmp_path)
