"""The paper's estimator: repetitions averaged within a task, then tasks averaged.

Comparisons are paired per-task differences with a two-sided t interval on those differences;
no interval is ever put on an endpoint, because task difficulty cancels only inside a paired
difference. A task missing on either side of a comparison is left out of it, and every
comparison reports how many tasks it used.
"""

from __future__ import annotations

import pandas as pd

from incognita.access.taxonomy import ALL_ARMS, COUNT_MEASURES, FAILURE_TYPES, NATIVE, PROCESS_MEASURES  # noqa: F401 (re-exported)
from incognita.common.intervals import Paired, paired
from incognita.common.intervals import snap as _snap
from incognita.common.io import InputError

ARMS = ALL_ARMS
REQUIRED_COLUMNS = (
    "arm",
    "model",
    "task",
    "rep",
    "excluded",
    "success",
    "database_only_success",
    "failure_type",
    "failure_type_reads_credited",
    *PROCESS_MEASURES,
    *COUNT_MEASURES,
    "tokens_agent",
    "tokens_episode",
    "cost_agent_usd",
    "cost_episode_usd",
)


def validate_trials(trials: pd.DataFrame, source: str = "trials") -> pd.DataFrame:
    """Check the contract columns and values; return the table with `task` as str."""
    missing = [c for c in REQUIRED_COLUMNS if c not in trials.columns]
    if missing:
        raise InputError(f"{source}: missing column(s) {', '.join(missing)}")
    # Any arm of the registry the reader read (incognita.access.arm_registry); only a missing name is wrong.
    if trials["arm"].isna().any() or (trials["arm"].astype(str).str.strip() == "").any():
        raise InputError(f"{source}: arm: empty value(s)")
    scored = trials[~trials["excluded"].astype(bool)]
    bad = scored["success"].dropna()
    bad = bad[~bad.isin([0.0, 1.0])]
    if len(bad):
        raise InputError(f"{source}: success: expected 0/1 on scored trials, found {bad.iloc[0]!r}")
    if scored["success"].isna().any():
        row = scored[scored["success"].isna()].iloc[0]
        raise InputError(
            f"{source}: success: NaN on a trial that is not excluded "
            f"(arm={row['arm']}, model={row['model']}, task={row['task']}, rep={row['rep']})"
        )
    dup = trials.duplicated(["arm", "model", "task", "rep"])
    if dup.any():
        row = trials[dup].iloc[0]
        raise InputError(
            f"{source}: duplicate trial arm={row['arm']}, model={row['model']}, task={row['task']}, rep={row['rep']}"
        )
    out = trials.copy()
    out["task"] = out["task"].astype(str)
    out["excluded"] = out["excluded"].astype(bool)
    return out


def scored(trials: pd.DataFrame) -> pd.DataFrame:
    """Trials that are scored: excluded ones (error set) never enter an average."""
    return trials[~trials["excluded"]]


def task_means(trials: pd.DataFrame, column: str) -> pd.Series:
    """Mean of `column` over the scored repetitions of each (arm, model, task); NaN values skipped.

    A (arm, model, task) with no usable repetition is absent from the result (NaN once pivoted).
    """
    values = scored(trials)[["arm", "model", "task", column]].dropna(subset=[column])
    return values.groupby(["arm", "model", "task"], sort=False)[column].mean().astype(float)


def task_matrix(means: pd.Series, arm: str, models: list[str]) -> pd.DataFrame:
    """Task x model matrix of one arm's task means (rows: tasks, sorted; columns: `models`)."""
    if arm not in means.index.get_level_values("arm"):
        return pd.DataFrame(columns=models, dtype=float)
    wide = means.xs(arm, level="arm").unstack("model")
    return wide.reindex(columns=models).sort_index()


def cell_mean(column: pd.Series) -> float:
    """Average of task means over the tasks present (the cell summary)."""
    col = column.dropna()
    return _snap(col.mean()) if len(col) else float("nan")


def paired_columns(a: pd.Series, b: pd.Series, confidence: float = 0.95) -> Paired:
    """Paired comparison a - b over the tasks present on both sides."""
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1).dropna()
    return paired((joined["a"] - joined["b"]).to_numpy(), confidence)


def model_order(trials: pd.DataFrame, models: list[str] | None = None) -> list[str]:
    """The models in the given order, or in order of first appearance in the table."""
    present = list(dict.fromkeys(trials["model"].astype(str)))
    if models is None:
        return present
    unknown = [m for m in models if m not in present]
    if unknown:
        raise InputError(f"trials: model(s) {', '.join(unknown)} requested but absent from the table")
    return list(models) + [m for m in present if m not in models]


def arms_present(trials: pd.DataFrame) -> list[str]:
    """Arms with at least one trial: the paper's conditions in the canonical order, then any
    other registered arm in the table's order (the reader's: the registry's), then native."""
    found = list(dict.fromkeys(trials["arm"].astype(str)))
    ours = [a for a in ARMS if a in found and a != NATIVE] + [a for a in found if a not in ARMS]
    return ours + [NATIVE] * (NATIVE in found)
