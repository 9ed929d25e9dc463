"""The paper's estimator: repetitions averaged within a task, then tasks averaged.

Comparisons are paired per-task differences with a two-sided t interval on those differences;
no interval is ever put on an endpoint, because task difficulty cancels only inside a paired
difference. A task missing on either side of a comparison is left out of it, and every
comparison reports how many tasks it used.

Tasks of several domains pooled in one comparison are strata (`stratified`): the point estimate
is still the mean over tasks, and its interval takes its variance from within each domain, since
each domain contributes a fixed number of tasks and a gap between domains is not sampling noise.
Tasks of one domain give exactly the paper's interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from incognita.access.domain import SEPARATOR
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
    """Paired comparison a - b over the tasks present on both sides (domains as strata)."""
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1).dropna()
    return stratified(joined["a"] - joined["b"], confidence)


# --- domains as strata -----------------------------------------------------------------------------


def domain_of(task: str) -> str:
    """The domain of a qualified task id (`retail/46` -> `retail`); "" for an unqualified id (a
    synthetic table's), which makes one stratum."""
    domain, sep, _ = str(task).partition(SEPARATOR)
    return domain if sep else ""


def strata_label(tasks) -> str:
    """Tasks per domain, `mock=2;retail=18`; "" when the tasks are of one domain (no stratum)."""
    counts = pd.Series([domain_of(t) for t in tasks], dtype=object).value_counts()
    return ";".join(f"{d}={counts[d]}" for d in sorted(counts.index)) if len(counts) > 1 else ""


def strata_column(tasks) -> dict:
    """`{"strata": label}` for a row whose tasks span several domains, {} otherwise: a table of one
    domain keeps its columns, and a pooled one says which strata entered each row."""
    label = strata_label(tasks)
    return {"strata": label} if label else {}


@dataclass(frozen=True)
class Stratified(Paired):
    """A paired comparison over tasks of several domains; `strata`: tasks per domain."""

    strata: str = ""


def stratified(diffs: pd.Series, confidence: float = 0.95) -> Paired:
    """Paired comparison of per-task differences indexed by task id, each domain a stratum.

    One domain: exactly `paired` (the paper's interval). Several: the mean over all tasks (each
    task weighs the same, as in a cell mean), with the interval of a blocked design: the SD is
    pooled from the deviations of each task from its own domain's mean, on n - h degrees of
    freedom (h domains), and the half-width is t * SD / sqrt(n). With a common within-domain
    variance s^2 the task mean sum_h (n_h / n) mean_h has variance s^2 / n exactly, so the
    interval is the paired t interval with the between-domain spread taken out. No interval when
    n - h < 1 (every domain with one task).
    """
    d = diffs.dropna()
    domains = np.array([domain_of(t) for t in d.index], dtype=object)
    if len(set(domains)) <= 1:
        return paired(d.to_numpy(), confidence)
    values = d.to_numpy(dtype=float)
    n, h = len(values), len(set(domains))
    label = strata_label(d.index)
    mean = _snap(values.mean())
    if n - h < 1:
        return Stratified(n, mean, float("nan"), float("nan"), float("nan"), label)
    within = values - pd.Series(values).groupby(domains).transform("mean").to_numpy()
    sd = _snap(np.sqrt((within**2).sum() / (n - h)))
    half = float(sps.t.ppf(0.5 + confidence / 2, n - h)) * sd / np.sqrt(n)
    return Stratified(n, mean, mean - half, mean + half, sd, label)


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
