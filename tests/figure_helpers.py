"""Synthetic statistics for the figures stage's tests (tests/access/figures), following the stats contract.

The synthetic CSVs are computed from simulated trials with the paper's estimator (repetition
means, per-task paired differences, t intervals, exact sign-flip tests), so their shapes and
ranges are what the statistics stage will write.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from incognita.access.figures.figure_style import MEASURES
from incognita.access.taxonomy import ALL_ARMS, FAILURE_TYPES

MODELS = ("surveyor", "prober", "hasty", "impatient")
ARMS = ALL_ARMS
N_TASKS, N_REPS = 18, 3
# per-arm success probability of each model (a weak model collapses under social access)
P_SUCCESS = {
    "direct": (0.86, 0.84, 0.80, 0.82),
    "indirect": (0.78, 0.75, 0.72, 0.74),
    "social": (0.70, 0.62, 0.45, 0.15),
    "native": (0.88, 0.84, 0.86, 0.80),
}
FAILURE_MIX = {  # share of failures per type, by arm (native trials carry no failure type)
    "direct": (0.05, 0.10, 0.10, 0.65, 0.10),
    "indirect": (0.10, 0.20, 0.15, 0.45, 0.10),
    "social": (0.12, 0.60, 0.08, 0.15, 0.05),
}


def _t_interval(d: np.ndarray) -> tuple[float, float, float]:
    mean = float(d.mean())
    half = float(sps.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))) if d.std() > 0 else 0.0
    return mean, mean - half, mean + half


SIGNS = (1 - 2 * ((np.arange(2**N_TASKS)[:, None] >> np.arange(N_TASKS)) & 1)).astype(np.float64)


def _sign_flip_p(d: np.ndarray) -> float:
    """Exact two-sided sign-flip p over all 2^18 patterns."""
    means = SIGNS @ d / len(d)
    return float(np.mean(np.abs(means) >= abs(d.mean()) - 1e-12))


def _simulate(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """arm -> (models, tasks, reps) array of 0/1 success."""
    difficulty = rng.normal(0, 1.2, N_TASKS)
    out = {}
    for arm, ps in P_SUCCESS.items():
        logit = np.log(np.array(ps) / (1 - np.array(ps)))[:, None] - difficulty[None, :]
        p = 1 / (1 + np.exp(-logit))
        out[arm] = (rng.random((len(MODELS), N_TASKS, N_REPS)) < p[:, :, None]).astype(float)
    return out


def _success_rows(S: dict, S_db: dict) -> list[dict]:
    return [
        {"arm": arm, "model": m, "n_tasks": N_TASKS, "success": S[arm][i].mean(), "db_success": S_db[arm][i].mean()}
        for arm in ARMS
        for i, m in enumerate(MODELS)
    ]


def _decision(low: float, high: float) -> str:
    if low > 0:
        return "supports the hypothesis"
    return "contrary to the hypothesis" if high < 0 else "insufficient evidence"


def _contrast_rows(S: dict, S_db: dict) -> list[dict]:
    rows = []
    for (a, b), (scope, src) in itertools.product(
        [("indirect", "social"), ("direct", "indirect"), ("native", "direct")], [("all", S), ("db_only", S_db)]
    ):
        if scope == "db_only" and "native" in (a, b):
            continue  # native has no database-only channel in the contract
        for i, m in enumerate(MODELS):
            mean, low, high = _t_interval(src[a][i] - src[b][i])
            rows.append(
                {
                    "model": m,
                    "contrast": f"{a}-{b}",
                    "scope": scope,
                    "n_tasks": N_TASKS,
                    "mean_diff": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "decision": _decision(low, high),
                }
            )
    return rows


def _separability_rows(S: dict) -> list[dict]:
    rows = []
    for arm in ARMS:
        solved = S[arm]
        informative = ~(np.all(solved == 1, axis=0) | np.all(solved == 0, axis=0))
        for subset, keep in (("all", np.ones(N_TASKS, bool)), ("discriminating", informative)):
            for i, j in itertools.combinations(range(len(MODELS)), 2):
                mean, low, high = _t_interval(solved[i, keep] - solved[j, keep])
                rows.append(
                    {
                        "arm": arm,
                        "subset": subset,
                        "model_a": MODELS[i],
                        "model_b": MODELS[j],
                        "n_tasks": int(keep.sum()),
                        "mean_diff": mean,
                        "ci_low": low,
                        "ci_high": high,
                        "excludes_zero": bool(low > 0 or high < 0),
                    }
                )
    return rows


def _interaction_rows(S: dict) -> list[dict]:
    loss = S["indirect"] - S["social"]
    rows = []
    for i, j in itertools.combinations(range(len(MODELS)), 2):
        d = loss[i] - loss[j]
        mean, low, high = _t_interval(d)
        rows.append(
            {
                "model_a": MODELS[i],
                "model_b": MODELS[j],
                "n_tasks": N_TASKS,
                "mean_delta": mean,
                "ci_low": low,
                "ci_high": high,
                "p_exact": _sign_flip_p(d),
            }
        )
    order = np.argsort([r["p_exact"] for r in rows])
    running = 0.0
    for rank, k in enumerate(order):  # Holm step-down, kept monotone
        running = max(running, min(1.0, (len(rows) - rank) * rows[k]["p_exact"]))
        rows[k]["p_holm"] = running
    return rows


def _split_half_rows(S: dict, rng: np.random.Generator, n_splits: int = 200) -> list[dict]:
    rows = []
    pairs = list(itertools.combinations(range(len(MODELS)), 2))
    for arm in ARMS:
        for kind in ("observed", "null"):
            for split in range(n_splits):
                tasks = S[arm]
                if kind == "null":  # exchange model labels within each task
                    tasks = np.stack([tasks[rng.permutation(len(MODELS)), t] for t in range(N_TASKS)], axis=1)
                half = rng.permutation(N_TASKS)[: N_TASKS // 2]
                rest = np.setdiff1d(np.arange(N_TASKS), half)
                a, b = tasks[:, half].mean(axis=1), tasks[:, rest].mean(axis=1)
                agree = sum(np.sign(a[i] - a[j]) == np.sign(b[i] - b[j]) for i, j in pairs)
                rows.append({"arm": arm, "kind": kind, "split": split, "concordance": float(agree)})
    return rows


def _composition_rows(trials: dict, rng: np.random.Generator) -> list[dict]:
    rows = []
    for arm in ARMS:
        for i, m in enumerate(MODELS):
            wins = int(trials[arm][i].sum())
            excluded = int(rng.random() < 0.3)  # an occasional run broken outside the agent
            fails = trials[arm][i].size - wins - excluded
            rows.append({"arm": arm, "model": m, "outcome": "success", "count": wins})
            rows.append({"arm": arm, "model": m, "outcome": "excluded", "count": excluded})
            if arm == "native":
                rows.append({"arm": arm, "model": m, "outcome": "failed_unlabelled", "count": fails})
                continue
            for ftype, count in zip(FAILURE_TYPES, rng.multinomial(fails, FAILURE_MIX[arm])):
                rows.append({"arm": arm, "model": m, "outcome": ftype, "count": int(count)})
    return rows


def _process_rows(rng: np.random.Generator) -> list[dict]:
    rows = []
    present = {
        "direct": {"information_acquisition", "customer_information", "service_information", "execution"},
        "indirect": {"information_acquisition", "customer_information", "service_information", "execution"},
        "social": set(MEASURES),
        "native": set(),
    }
    for arm in ARMS:
        for i, m in enumerate(MODELS):
            level = 0.9 - (0.15 * i if arm == "social" else 0.02 * i)
            for measure in MEASURES:
                mean = float(np.clip(level + rng.normal(0, 0.04), 0, 1)) if measure in present[arm] else math.nan
                rows.append(
                    {
                        "arm": arm,
                        "model": m,
                        "measure": measure,
                        "mean": mean,
                        "n": 54 if measure in present[arm] else 0,
                    }
                )
    return rows


def cost_rows(offline: bool) -> list[dict]:
    rows = []
    for arm, (a, m) in itertools.product(ARMS, enumerate(MODELS)):
        actions = {"direct": 13.0, "indirect": 14.0, "social": 24.0 + 3 * a, "native": 12.0}[arm]
        usd = 0.0 if offline else {"direct": 0.25, "indirect": 0.47, "social": 1.06, "native": 0.2}[arm] * (1 + a / 10)
        for scope, factor in (("agent", 1.0), ("episode", 2.6)):
            rows.append(
                {
                    "arm": arm,
                    "model": m,
                    "scope": scope,
                    "usd_per_episode": usd * factor,
                    "tokens_per_episode": 0 if offline else int(40000 * factor * (1 + a / 5)),
                    "actions_per_episode": actions if scope == "agent" else actions * 2.1,
                }
            )
    return rows


def _power_rows(S: dict, offline: bool) -> list[dict]:
    rows = []
    for arm in ARMS:
        means = S[arm].mean(axis=1)
        gaps = [S[arm][i] - S[arm][j] for i, j in itertools.combinations(range(len(MODELS)), 2)]
        sd = float(np.median([g.std(ddof=1) for g in gaps]))
        largest = float(means.max() - means.min())
        tasks = math.ceil(((1.959964 + 0.841621) * sd / largest) ** 2) if largest > 0 else math.nan
        usd = 0.0 if offline else {"direct": 0.252, "indirect": 0.467, "social": 1.061, "native": 0.2}[arm]
        rows.append(
            {
                "arm": arm,
                "gap_sd": sd,
                "largest_gap": largest,
                "tasks": tasks,
                "usd_per_episode": usd,
                "implied_cost_usd": tasks * len(MODELS) * N_REPS * usd,
            }
        )
    return rows


def write_synthetic_stats(out: Path, *, offline: bool = True, seed: int = 7) -> Path:
    """Write every CSV of the stats contract for 4 models x 4 arms x 18 tasks into `out`."""
    rng = np.random.default_rng(seed)
    trials = _simulate(rng)
    db_trials = {arm: np.maximum(t, rng.random(t.shape) < 0.05) for arm, t in trials.items()}
    S = {arm: t.mean(axis=2) for arm, t in trials.items()}  # repetition means per task
    S_db = {arm: t.mean(axis=2) for arm, t in db_trials.items()}
    # within-task spread of the model means, social minus indirect (the global dispersion statistic)
    stat = sum(
        ((S[arm] - S[arm].mean(axis=0)) ** 2).sum(axis=0) * sign for arm, sign in (("social", 1), ("indirect", -1))
    )
    tables = {
        "success": _success_rows(S, S_db),
        "contrasts": _contrast_rows(S, S_db),
        "separability": _separability_rows(S),
        "interactions": _interaction_rows(S),
        "dispersion": [{"n_tasks": N_TASKS, "mean_statistic": stat.mean(), "p_exact": _sign_flip_p(stat)}],
        "split_half": _split_half_rows(S, rng),
        "composition": _composition_rows(trials, rng),
        "process": _process_rows(rng),
        "cost": cost_rows(offline),
        "power": _power_rows(S, offline),
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        pd.DataFrame(rows).to_csv(out / f"{name}.csv", index=False)
    return out


def copy_with(stats_dir: Path, dest: Path, name: str, edit) -> Path:
    """Every CSV of `stats_dir` copied into `dest`, with `edit` applied to `name`.csv."""
    for src in stats_dir.glob("*.csv"):
        (dest / src.name).write_bytes(src.read_bytes())
    df = pd.read_csv(dest / f"{name}.csv")
    edit(df).to_csv(dest / f"{name}.csv", index=False)
    return dest
