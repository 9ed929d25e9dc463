"""A seeded synthetic trials table in the shape of results/trials.parquet, for tests and benchmarks.

Success follows a logistic model of model ability per arm against task difficulty: the two
centralized arms and the native anchor give the models near-equal abilities, the social arm
spreads them apart, so the table has the structure the statistics are meant to detect. Failure
labels, process measures, counts and usage are drawn to match the contract's types and
missingness rules (NaN where an arm lacks a process; no labels in the native arm).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from incognita.access.stats.estimator import ARMS, FAILURE_TYPES, PROCESS_MEASURES
from incognita.access.taxonomy import (
    DIRECT,
    INDIRECT,
    NATIVE,
    NEVER_REQUESTED,
    OBTAINED_NOT_DELIVERED,
    REQUESTED_NOT_OBTAINED,
    SOCIAL,
)

DEFAULT_MODELS = ("m1", "m2", "m3", "m4")
# Ability of each model (in order) per arm, on the logit scale.
ABILITY = {
    DIRECT: (2.4, 2.6, 2.7, 2.7),
    INDIRECT: (2.0, 2.3, 2.4, 2.4),
    SOCIAL: (-1.2, 0.6, 1.6, 1.7),
    NATIVE: (2.5, 2.6, 2.8, 2.7),
}
# Failure-type mix of failed trials (order of FAILURE_TYPES) per Incognita arm.
FAILURE_MIX = {
    DIRECT: (0.05, 0.05, 0.15, 0.65, 0.10),
    INDIRECT: (0.10, 0.15, 0.15, 0.50, 0.10),
    SOCIAL: (0.10, 0.60, 0.10, 0.15, 0.05),
}
# Processes an arm does not contain (NaN there, never 0).
ABSENT = {DIRECT: ("role_identification", "holder_contacted"), NATIVE: PROCESS_MEASURES}


def synthetic_trials(
    seed: int = 0,
    n_tasks: int = 18,
    models: tuple[str, ...] = DEFAULT_MODELS,
    reps: int = 3,
    arms: tuple[str, ...] = ARMS,
    excluded_rate: float = 0.01,
    usd_per_1k_tokens: float = 0.0,
) -> pd.DataFrame:
    """One row per trial (arms x models x tasks x reps), deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    tasks = [str(t) for t in range(n_tasks)]
    difficulty = rng.normal(-0.3, 1.6, n_tasks)
    grid = pd.MultiIndex.from_product([arms, models, tasks, range(reps)], names=["arm", "model", "task", "rep"])
    df = grid.to_frame(index=False)
    n = len(df)
    ability = np.array([ABILITY[a][list(models).index(m) % 4] for a, m in zip(df["arm"], df["model"])])
    p = 1.0 / (1.0 + np.exp(-(ability - difficulty[df["task"].astype(int)])))
    success = (rng.random(n) < p).astype(float)
    excluded = rng.random(n) < excluded_rate
    df["seed"] = rng.integers(0, 2**48, n)
    df["schedule_position"] = pd.array(rng.integers(0, len(arms), n), dtype="Int64")
    df["error"] = pd.Series(np.where(excluded, "api_error", None), dtype=object)
    df["excluded"] = excluded
    df["termination"] = np.where(excluded, "error", "final")
    df["success"] = np.where(excluded, np.nan, success)
    judge_fail = (success == 1.0) & (rng.random(n) < 0.04)  # db passes, another channel fails
    db_only = np.where(judge_fail, 1.0, success)
    df["success"] = np.where(judge_fail, 0.0, df["success"])
    df["database_only_success"] = np.where(excluded, np.nan, db_only)
    df["channel_db"] = df["database_only_success"]
    df["channel_communicate"] = np.nan
    df["channel_nl"] = np.nan
    _labels(df, rng)
    _process(df, rng)
    _counts_and_usage(df, rng, usd_per_1k_tokens)
    return df


def _labels(df: pd.DataFrame, rng: np.random.Generator) -> None:
    failed = (df["success"] == 0.0) & ~df["excluded"] & (df["arm"] != NATIVE)
    label = pd.Series(pd.NA, index=df.index, dtype=object)
    for arm, mix in FAILURE_MIX.items():
        idx = df.index[failed & (df["arm"] == arm)]
        label[idx] = rng.choice(FAILURE_TYPES, size=len(idx), p=mix)
    df["failure_type"] = label
    df["injected_failure"] = label.where(rng.random(len(df)) < 0.5, pd.NA)
    reads = rng.poisson(np.where(df["arm"] == SOCIAL, 0.4, 0.1))
    reads = np.where(df["arm"] == NATIVE, 0, reads)
    df["non_reference_reads"] = reads
    credited = label.copy()
    movable = (label == REQUESTED_NOT_OBTAINED).fillna(False).to_numpy() & (reads > 0)
    credited[movable] = rng.choice(
        [OBTAINED_NOT_DELIVERED, NEVER_REQUESTED, REQUESTED_NOT_OBTAINED],
        size=int(movable.sum()),
        p=[0.4, 0.4, 0.2],
    )
    df["failure_type_reads_credited"] = credited


def _process(df: pd.DataFrame, rng: np.random.Generator) -> None:
    base = np.where(df["success"] == 1.0, 0.95, 0.5)
    for measure in PROCESS_MEASURES:
        values = np.clip(base + rng.normal(0, 0.1, len(df)), 0, 1)
        absent = np.array([measure in ABSENT.get(a, ()) for a in df["arm"]]) | df["excluded"].to_numpy()
        df[measure] = np.where(absent, np.nan, values)


def _counts_and_usage(df: pd.DataFrame, rng: np.random.Generator, usd_per_1k_tokens: float) -> None:
    social = (df["arm"] == SOCIAL).to_numpy()
    n = len(df)
    df["agent_actions"] = rng.poisson(np.where(social, 26.0, 14.0))
    df["messages"] = rng.poisson(np.where(social, 20.0, 9.0))
    df["unanswerable_questions"] = np.where(
        df["arm"].isin([DIRECT, NATIVE]), 0, rng.poisson(np.where(social, 6.0, 1.5))
    )
    df["tokens_agent"] = rng.integers(5_000, 40_000, n) * np.where(social, 2, 1)
    df["tokens_episode"] = df["tokens_agent"] + rng.integers(2_000, 20_000, n)
    df["cost_agent_usd"] = df["tokens_agent"] / 1000 * usd_per_1k_tokens
    df["cost_episode_usd"] = df["tokens_episode"] / 1000 * usd_per_1k_tokens
    df["cache_hits"] = 0
    df["cache_misses"] = 0
