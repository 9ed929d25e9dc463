"""The figures stage's inputs: the statistics stage's CSVs, read and checked against their contract.

`load_stats(stats_dir)` reads every `results/stats/*.csv` the figures use (`STATS_INPUTS`,
documented in docs/figures.md), checks columns, numbers, keys and booleans before anything is
drawn, and orders models (by socially distributed success) and arms (incognita.access.figures.figure_style)
for display. Every figure and table module draws from the `Stats` it returns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from incognita.access.figures.figure_style import ARM_ORDER
from incognita.access.taxonomy import SOCIAL
from incognita.common.io import InputError

# --- the input contract ------------------------------------------------------------------

# file stem -> (required columns, columns that must be numeric)
STATS_INPUTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "success": (("arm", "model", "n_tasks", "success", "db_success"), ("n_tasks", "success", "db_success")),
    "contrasts": (
        ("model", "contrast", "scope", "n_tasks", "mean_diff", "ci_low", "ci_high", "decision"),
        ("n_tasks", "mean_diff", "ci_low", "ci_high"),
    ),
    "separability": (
        ("arm", "subset", "model_a", "model_b", "n_tasks", "mean_diff", "ci_low", "ci_high", "excludes_zero"),
        ("n_tasks", "mean_diff", "ci_low", "ci_high"),
    ),
    "interactions": (
        ("model_a", "model_b", "n_tasks", "mean_delta", "ci_low", "ci_high", "p_exact", "p_holm"),
        ("n_tasks", "mean_delta", "ci_low", "ci_high", "p_exact", "p_holm"),
    ),
    "dispersion": (("n_tasks", "mean_statistic", "p_exact"), ("n_tasks", "mean_statistic", "p_exact")),
    "split_half": (("arm", "kind", "split", "concordance"), ("split", "concordance")),
    "composition": (("arm", "model", "outcome", "count"), ("count",)),
    "process": (("arm", "model", "measure", "mean", "n"), ("mean", "n")),
    "cost": (
        ("arm", "model", "scope", "usd_per_episode", "tokens_per_episode", "actions_per_episode"),
        ("usd_per_episode", "tokens_per_episode", "actions_per_episode"),
    ),
    "power": (
        ("arm", "gap_sd", "largest_gap", "tasks", "usd_per_episode", "implied_cost_usd"),
        ("gap_sd", "largest_gap", "tasks", "usd_per_episode", "implied_cost_usd"),
    ),
}

MISSING = ("", "nan", "NaN", "NA", "<NA>")
KEY_COLUMNS = ("arm", "model", "model_a", "model_b", "outcome", "measure", "scope", "kind", "contrast", "subset")


@dataclass(frozen=True)
class Stats:
    """The statistics stage's tables, validated, plus the display order of arms and models."""

    tables: dict[str, pd.DataFrame]
    models: tuple[str, ...]
    arms: tuple[str, ...]
    scope: str = ""  # in a design of several domains: which tasks ("domain retail", "pooled ...")

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]


# --- reading -----------------------------------------------------------------------------


def read_stats_table(path: Path, columns: Sequence[str], numeric: Sequence[str]) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(f"{path}: file not found (written by the statistics stage)")
    try:
        # Only these spellings mean missing: the contract's own values include "null" (split_half kind).
        df = pd.read_csv(path, keep_default_na=False, na_values=list(MISSING))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable CSV ({exc})") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(map(str, df.columns))}")
    for col in numeric:
        converted = pd.to_numeric(df[col], errors="coerce")
        bad = df[col][converted.isna() & df[col].notna()]
        if len(bad):
            row = bad.index[0]
            raise InputError(f"{path}: column {col!r}, row {row + 2}: {bad.iloc[0]!r} is not a number")
        df[col] = converted.astype(float)
    for col in KEY_COLUMNS:
        if col in df.columns:
            empty = df[col].isna()
            if empty.any():
                raise InputError(f"{path}: column {col!r}, row {int(empty.to_numpy().argmax()) + 2}: empty")
            df[col] = df[col].astype(str)
    return df


def _as_bool(series: pd.Series, path: Path, col: str) -> pd.Series:
    mapping = {"true": True, "false": False, "1": True, "0": False, "1.0": True, "0.0": False}
    text = series.astype(str).str.strip().str.lower()
    bad = text[~text.isin(list(mapping))]
    if len(bad):
        raise InputError(f"{path}: column {col!r}, row {bad.index[0] + 2}: {series[bad.index[0]]!r} is not a boolean")
    return text.map(mapping).astype(bool)


def ordered(found: Sequence[str], preferred: Sequence[str]) -> tuple[str, ...]:
    """Preferred names first (in their order), then the rest in order of first appearance."""
    seen = list(dict.fromkeys(found))
    return tuple([x for x in preferred if x in seen] + [x for x in seen if x not in preferred])


def model_order(success: pd.DataFrame) -> tuple[str, ...]:
    """Models by descending socially distributed success (the arm that separates them).

    Ties, and every model when there is no social arm, keep their order in success.csv.
    """
    first = list(dict.fromkeys(success["model"]))
    social = success[success["arm"] == SOCIAL].set_index("model")["success"]
    if social.empty:
        return tuple(first)
    return tuple(sorted(first, key=lambda m: (-social.get(m, -math.inf), first.index(m))))


def load_stats(stats_dir: Path, scope: str = "") -> Stats:
    """Read and check every CSV the figures use; all problems surface before any drawing.
    `scope` names the tasks in every title (a design of several domains)."""
    stats_dir = Path(stats_dir)
    tables = {
        name: read_stats_table(stats_dir / f"{name}.csv", cols, num) for name, (cols, num) in STATS_INPUTS.items()
    }
    sep = tables["separability"]
    sep["excludes_zero"] = _as_bool(sep["excludes_zero"], stats_dir / "separability.csv", "excludes_zero")
    if tables["success"].empty:
        raise InputError(f"{stats_dir / 'success.csv'}: no rows; the figures need at least one arm and model")
    models = list(model_order(tables["success"]))
    for name in ("composition", "process", "cost", "contrasts"):
        models += [m for m in dict.fromkeys(tables[name]["model"]) if m not in models]
    arms = ordered(
        [a for name in ("success", "composition", "cost", "separability") for a in tables[name]["arm"]], ARM_ORDER
    )
    return Stats(tables=tables, models=tuple(models), arms=arms, scope=scope)
