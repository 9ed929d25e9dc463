"""Every table of the statistics stage, each built from the validated trials table.

Success and comparisons follow the estimator in `estimator` (task means, paired t
intervals); per-episode quantities (process measures, counts, cost) are averaged over the
scored trials, by arm and model. The native anchor appears in every per-arm panel
(success, separability, split-half, power, composition, cost) and in the `native-direct`
contrast, never in the cross-condition interaction.

Tasks of several domains are pooled with the domain as a stratum (estimator.stratified;
docs/statistics.md, "Several domains"): each row whose tasks span several domains gets a
`strata` column (tasks per domain), which a table of one domain never has.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from incognita.access import taxonomy
from incognita.access.stats.estimator import (
    FAILURE_TYPES,
    NATIVE,
    Paired,
    Stratified,
    cell_mean,
    domain_of,
    paired_columns,
    scored,
    strata_column,
    stratified,
    task_matrix,
)
from incognita.access.stats.interpretation import Interpretation, decide
from incognita.access.stats.power import required_tasks, resolvable_gap
from incognita.access.stats.signflip import holm, signflip_p
from incognita.access.stats.splithalf import split_half

SUCCESS = "success"
DB_SUCCESS = "database_only_success"
SCOPES = {"all": SUCCESS, "db_only": DB_SUCCESS}


def _interval(p: Paired) -> dict:
    return {"n_tasks": p.n_tasks, "mean_diff": p.mean_diff, "ci_low": p.ci_low, "ci_high": p.ci_high}


def _strata(p: Paired) -> dict:
    """The `strata` column of a comparison that pooled several domains (none otherwise)."""
    return {"strata": p.strata} if isinstance(p, Stratified) else {}


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """A table with named columns (it stays a table without rows), `strata` last when a row has it."""
    return pd.DataFrame(rows, columns=columns + ["strata"] * any("strata" in r for r in rows))


def _pairs(models: list[str]) -> list[tuple[str, str]]:
    return list(combinations(models, 2))


# --- success and the pre-specified contrasts ---------------------------------------------------


def success_table(
    trials: pd.DataFrame, means: dict[str, pd.Series], arms: list[str], models: list[str], interp: Interpretation
) -> pd.DataFrame:
    """Task-level success per cell, with the floor/ceiling check of the interpretation table."""
    rows = []
    for arm in arms:
        ok = task_matrix(means["all"], arm, models)
        db = task_matrix(means["db_only"], arm, models)
        for model in models:
            cell = trials[(trials["arm"] == arm) & (trials["model"] == model)]
            if cell.empty:
                continue
            tasks = ok[model].dropna()
            success = cell_mean(tasks)
            rows.append(
                {
                    "arm": arm,
                    "model": model,
                    "n_tasks": len(tasks),
                    SUCCESS: success,
                    "db_success": cell_mean(db[model]),
                    "n_trials": int((~cell["excluded"]).sum()),
                    "n_excluded": int(cell["excluded"].sum()),
                    "tasks_at_floor": int((tasks <= interp.floor).sum()),
                    "tasks_at_ceiling": int((tasks >= interp.ceiling).sum()),
                    "on_bound": bool(len(tasks) and interp.on_bound(success)),
                    "agent_backend": backends(cell),
                    **strata_column(tasks.index),
                }
            )
    return pd.DataFrame(rows)


def backends(trials: pd.DataFrame) -> str:
    """The evaluated agents' backend families in these trials (`scripted`, `openai`), comma-joined;
    `unknown` for a table from before the reader recorded them."""
    if "agent_backend" not in trials.columns:
        return "unknown"
    return ",".join(sorted(set(trials["agent_backend"].fillna("unknown").astype(str)))) or "unknown"


def contrasts_table(means: dict[str, pd.Series], models: list[str], interp: Interpretation) -> pd.DataFrame:
    """Every pre-specified contrast per model, on all channels and on database checks alone."""
    rows = []
    for scope, series in means.items():
        for contrast in interp.contrasts:
            a = task_matrix(series, contrast.minuend, models)
            b = task_matrix(series, contrast.subtrahend, models)
            for model in models:
                p = paired_columns(a[model], b[model], interp.confidence)
                bound = interp.on_bound(cell_mean(a[model])) or interp.on_bound(cell_mean(b[model]))
                rows.append(
                    {
                        "model": model,
                        "contrast": contrast.name,
                        "scope": scope,
                        **_interval(p),
                        "decision": decide(interp, contrast, p.ci_low, p.ci_high, bound),
                        "role": "primary" if contrast == interp.primary else "supporting",
                        "excludes_zero": p.excludes_zero,
                        "on_bound": bound,
                        **_strata(p),
                    }
                )
    return pd.DataFrame(rows)


# --- separability ------------------------------------------------------------------------------


def discriminating(matrix: pd.DataFrame) -> pd.DataFrame:
    """Tasks that not every model solves and not every model fails (models present on the task)."""
    lo, hi = matrix.min(axis=1), matrix.max(axis=1)
    keep = ~((lo >= 1.0) | (hi <= 0.0)) & matrix.notna().any(axis=1)
    return matrix[keep]


def separability_tables(
    means: pd.Series, arms: list[str], models: list[str], confidence: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model pair in every arm, on all tasks and on discriminating tasks; and a summary."""
    rows, summary = [], []
    for arm in arms:
        full = task_matrix(means, arm, models)
        for subset, m in (("all", full), ("discriminating", discriminating(full))):
            pair_rows = []
            for a, b in _pairs(models):
                p = paired_columns(m[a], m[b], confidence)
                pair_rows.append(
                    {
                        "arm": arm,
                        "subset": subset,
                        "model_a": a,
                        "model_b": b,
                        **_interval(p),
                        "excludes_zero": p.excludes_zero,
                        **_strata(p),
                    }
                )
            rows += pair_rows
            summary.append(_separability_summary(arm, subset, m, models, pair_rows))
    # Named columns: a design with one model has no pairs, and its table is still a table.
    columns = ["arm", "subset", "model_a", "model_b", "n_tasks", "mean_diff", "ci_low", "ci_high", "excludes_zero"]
    return _frame(rows, columns), pd.DataFrame(summary)


def _separability_summary(arm: str, subset: str, m: pd.DataFrame, models: list[str], pair_rows: list[dict]) -> dict:
    success = {model: cell_mean(m[model]) for model in models}
    valid = {k: v for k, v in success.items() if not np.isnan(v)}
    best = max(valid, key=valid.get) if valid else ""
    worst = min(valid, key=valid.get) if valid else ""
    return {
        "arm": arm,
        "subset": subset,
        "n_tasks": int(m.notna().any(axis=1).sum()),
        "pairs": len(pair_rows),
        "pairs_excluding_zero": sum(r["excludes_zero"] for r in pair_rows),
        "spread": (valid[best] - valid[worst]) if valid else float("nan"),
        "best": best,
        "worst": worst,
    }


# --- interactions (Table 1) and the global dispersion test (Appendix B.1) -----------------------


def _loss(means: pd.Series, interp: Interpretation, models: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Task x model matrices of the primary contrast's two arms, on their common tasks."""
    a = task_matrix(means, interp.primary.minuend, models)
    b = task_matrix(means, interp.primary.subtrahend, models)
    common = a.index.intersection(b.index)
    return a.loc[common], b.loc[common]


def interactions_table(means: pd.Series, models: list[str], interp: Interpretation) -> pd.DataFrame:
    """Per model pair: the difference-in-differences of the primary contrast, exact p and Holm."""
    a, b = _loss(means, interp, models)
    loss = a - b
    rows = []
    for ma, mb in _pairs(models):
        delta = (loss[ma] - loss[mb]).dropna()
        p = stratified(delta, interp.confidence)
        rows.append(
            {
                "model_a": ma,
                "model_b": mb,
                "n_tasks": p.n_tasks,
                "mean_delta": p.mean_diff,
                "ci_low": p.ci_low,
                "ci_high": p.ci_high,
                # Flipping each task's sign is already within its domain: the stratum leaves the
                # 2^n patterns, and so the exact p, as they are.
                "p_exact": signflip_p(delta.to_numpy()),
                **_strata(p),
            }
        )
    out = _frame(rows, ["model_a", "model_b", "n_tasks", "mean_delta", "ci_low", "ci_high", "p_exact"])
    out["p_holm"] = holm(out["p_exact"].to_numpy()) if len(out) else []
    return out


def dispersion_table(means: pd.Series, models: list[str], interp: Interpretation) -> pd.DataFrame:
    """Per task, between-model sum of squares under the second arm minus under the first; exact p."""
    a, b = _loss(means, interp, models)
    complete = a.notna().all(axis=1) & b.notna().all(axis=1)
    tasks = a.index[complete.to_numpy()]
    a, b = a[complete].to_numpy(), b[complete].to_numpy()

    def ss(x: np.ndarray) -> np.ndarray:
        return ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)

    stat = ss(b) - ss(a) if len(a) else np.zeros(0)
    return pd.DataFrame(
        [
            {
                "n_tasks": len(stat),
                "mean_statistic": float(stat.mean()) if len(stat) else float("nan"),
                "p_exact": signflip_p(stat),
                "arm_first": interp.primary.minuend,
                "arm_second": interp.primary.subtrahend,
                **strata_column(tasks),
            }
        ]
    )


# --- split-half concordance ----------------------------------------------------------------------


def split_half_tables(
    means: pd.Series, arms: list[str], models: list[str], splits: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    long, summary = [], []
    for arm in arms:
        m = task_matrix(means, arm, models)
        strata = [domain_of(t) for t in m.index]
        res = split_half(m.to_numpy(), splits, seed, strata if len(set(strata)) > 1 else None)
        for kind, values in (("observed", res.observed), ("null", res.null)):
            long.append(
                pd.DataFrame(
                    {"arm": arm, "kind": kind, "split": np.arange(len(values)), "concordance": values.astype(float)}
                )
            )
        summary.append(
            {
                "arm": arm,
                "n_tasks": res.n_tasks,
                "pairs": res.n_pairs,
                "splits": len(res.observed),
                "observed_mean": res.observed_mean,
                "null_mean": res.null_mean,
                "null_reach": res.null_reach,
                **strata_column(m.dropna().index),
            }
        )
    cols = ["arm", "kind", "split", "concordance"]
    return (pd.concat(long, ignore_index=True) if long else pd.DataFrame(columns=cols)), pd.DataFrame(summary)


# --- composition, process, counts, cost -----------------------------------------------------------

OUTCOMES = taxonomy.OUTCOMES  # success, the five failure types, failed_unlabelled, excluded


def _outcomes(trials: pd.DataFrame) -> pd.Series:
    label = trials["failure_type"].astype(object)
    labelled = label.isin(FAILURE_TYPES).to_numpy()
    out = np.select(
        [trials["excluded"].to_numpy(), (trials[SUCCESS] == 1.0).to_numpy(), labelled],
        [taxonomy.EXCLUDED, taxonomy.SUCCESS, label.where(labelled, "").to_numpy()],
        taxonomy.FAILED_UNLABELLED,
    )
    return pd.Series(out, index=trials.index)


def composition_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    """Trial counts per outcome; `failed_unlabelled` holds failures without a label (the native anchor)."""
    counts = trials.assign(outcome=_outcomes(trials)).groupby(["arm", "model", "outcome"]).size()
    cells = set(zip(trials["arm"], trials["model"]))
    rows = [
        {"arm": arm, "model": model, "outcome": o, "count": int(counts.get((arm, model, o), 0))}
        for arm in arms
        for model in models
        if (arm, model) in cells
        for o in OUTCOMES
    ]
    return pd.DataFrame(rows)


def measures_table(trials: pd.DataFrame, arms: list[str], models: list[str], measures: tuple[str, ...]) -> pd.DataFrame:
    """Mean of each measure over the scored trials that have it; NaN (n = 0) where the arm lacks it."""
    rows = []
    for arm, model, cell in _cells(scored(trials), arms, models):
        for measure in measures:
            values = pd.to_numeric(cell[measure], errors="coerce").dropna()
            rows.append(
                {
                    "arm": arm,
                    "model": model,
                    "measure": measure,
                    "mean": float(values.mean()) if len(values) else float("nan"),
                    "n": len(values),
                }
            )
    return pd.DataFrame(rows)


def _cells(s: pd.DataFrame, arms: list[str], models: list[str]):
    """(arm, model, trials) for every arm x model cell that has trials, in table order."""
    for arm in arms:
        for model in models:
            cell = s[(s["arm"] == arm) & (s["model"] == model)]
            if not cell.empty:
                yield arm, model, cell


def cost_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    """Dollars, tokens and agent actions per scored episode, for the agent alone and the whole episode."""
    rows = []
    for arm, model, cell in _cells(scored(trials), arms, models):
        for scope in ("agent", "episode"):
            rows.append(
                {
                    "arm": arm,
                    "model": model,
                    "scope": scope,
                    "usd_per_episode": float(cell[f"cost_{scope}_usd"].astype(float).mean()),
                    "tokens_per_episode": float(cell[f"tokens_{scope}"].astype(float).mean()),
                    "actions_per_episode": float(cell["agent_actions"].astype(float).mean()),
                    "episodes": len(cell),
                }
            )
    return pd.DataFrame(rows)


# --- corpus-size extrapolation (Table 2) ---------------------------------------------------------


def power_table(
    trials: pd.DataFrame, means: pd.Series, arms: list[str], models: list[str], alpha: float = 0.05, power: float = 0.8
) -> pd.DataFrame:
    """Per arm: median SD of the pairwise task gaps, the largest gap, the tasks to resolve it, the cost."""
    s = scored(trials)
    rows = []
    for arm in arms:
        m = task_matrix(means, arm, models)
        pairs = [paired_columns(m[a], m[b]) for a, b in _pairs(models)]
        sds = [p.sd for p in pairs if not np.isnan(p.sd)]
        gaps = [abs(p.mean_diff) for p in pairs if not np.isnan(p.mean_diff)]
        gap_sd = float(np.median(sds)) if sds else float("nan")
        largest = max(gaps) if gaps else float("nan")
        tasks = required_tasks(gap_sd, largest, alpha, power) if gap_sd > 0 and largest > 0 else pd.NA
        cell = s[s["arm"] == arm]
        usd = float(cell["cost_episode_usd"].astype(float).mean()) if len(cell) else float("nan")
        n_models = int(cell["model"].nunique())
        n_reps = int(cell.groupby(["model", "task"])["rep"].nunique().max()) if len(cell) else 0
        implied = tasks * n_models * n_reps * usd if tasks is not pd.NA else float("nan")
        rows.append(
            {
                "arm": arm,
                "gap_sd": gap_sd,
                "largest_gap": largest,
                "tasks": tasks,
                "usd_per_episode": usd,
                "implied_cost_usd": implied,
                "models": n_models,
                "repetitions": n_reps,
                "n_tasks": int(m.notna().any(axis=1).sum()),
                "resolvable_gap": resolvable_gap(gap_sd, int(m.notna().any(axis=1).sum()), alpha, power),
                **strata_column(m.index[m.notna().any(axis=1)]),
            }
        )
    out = pd.DataFrame(rows)
    if len(out):
        out["tasks"] = out["tasks"].astype("Int64")
    return out


# --- the non-reference-reads audit (Appendix B.2) ------------------------------------------------

AUDITED = taxonomy.REQUESTED_NOT_OBTAINED


def audit_reads_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    """Trials labelled requested-not-obtained: how many hold accepted non-reference reads, and how
    many labels would change (and to what) if those reads were credited for every missing item."""
    s = scored(trials)
    rows = []
    for arm in [a for a in arms if a != NATIVE]:
        labelled = s[(s["arm"] == arm) & (s["failure_type"] == AUDITED).fillna(False).astype(bool)]
        for model in [*models, "all"]:
            sub = labelled if model == "all" else labelled[labelled["model"] == model]
            if model != "all" and not ((s["arm"] == arm) & (s["model"] == model)).any():
                continue
            rows.append(_audit_row(arm, model, sub))
    return pd.DataFrame(rows)


def _audit_row(arm: str, model: str, sub: pd.DataFrame) -> dict:
    reads = pd.to_numeric(sub["non_reference_reads"], errors="coerce").fillna(0)
    credited = sub["failure_type_reads_credited"].where(sub["failure_type_reads_credited"].notna(), AUDITED)
    changed = credited[credited != AUDITED]
    row = {
        "arm": arm,
        "model": model,
        AUDITED: len(sub),
        "with_non_reference_reads": int((reads > 0).sum()),
        "non_reference_reads": int(reads.sum()),
        "labels_changed": len(changed),
    }
    for label in FAILURE_TYPES:
        if label != AUDITED:
            row[f"to_{label}"] = int((changed == label).sum())
    # The stricter check: only a read that returned exactly a value the consuming calls take.
    column = sub.get("failure_type_exact_credited", pd.Series(AUDITED, index=sub.index))
    row["labels_changed_exact"] = int((column.where(column.notna(), AUDITED) != AUDITED).sum())
    return row


def _counts(df: pd.DataFrame, column: str) -> pd.Series:
    """A count column of the reader's (0 where a table from an older reader lacks it)."""
    values = df[column] if column in df.columns else pd.Series(0, index=df.index)
    return pd.to_numeric(values, errors="coerce").fillna(0)


def acquisition_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    """Section 6.2's breakdown: requested-not-obtained trials by the kind of fact that is missing
    (customer only, service only, both), and failed trials in which the gate was asked for a
    needed field and did not release it."""
    s = scored(trials)
    rows = []
    for arm in [a for a in arms if a != NATIVE]:
        for model in [*models, "all"]:
            sub = s[s["arm"] == arm] if model == "all" else s[(s["arm"] == arm) & (s["model"] == model)]
            if sub.empty:
                continue
            failed = sub[sub["failure_type"].notna()]
            rno = failed[failed["failure_type"] == AUDITED]
            cust, serv = _counts(rno, "missing_customer_facts") > 0, _counts(rno, "missing_service_facts") > 0
            withheld = _counts(failed, "gate_withheld_facts")
            rows.append(
                {
                    "arm": arm,
                    "model": model,
                    "failed": len(failed),
                    AUDITED: len(rno),
                    "customer_only": int((cust & ~serv).sum()),
                    "service_only": int((serv & ~cust).sum()),
                    "both": int((cust & serv).sum()),
                    "failed_with_gate_withheld": int((withheld > 0).sum()),
                }
            )
    return pd.DataFrame(rows)


def audit_approach_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    """Failed trials whose label differs when "approached" means a request for the missing fact
    itself (the gate asked for its token, its holder proposed its read) instead of contact with
    its source (docs/reader.md): how many, and from which label to which."""
    s = scored(trials)
    if "failure_type_request_based" not in s.columns:
        s = s.assign(failure_type_request_based=s["failure_type"])
    rows = []
    for arm in [a for a in arms if a != NATIVE]:
        failed = s[(s["arm"] == arm) & s["failure_type"].notna()]
        for model in [*models, "all"]:
            if model != "all" and not ((s["arm"] == arm) & (s["model"] == model)).any():
                continue
            sub = failed if model == "all" else failed[failed["model"] == model]
            moved = sub[sub["failure_type"] != sub["failure_type_request_based"]]
            row = {"arm": arm, "model": model, "failed": len(sub), "labels_changed": len(moved)}
            for a in FAILURE_TYPES:
                for b in FAILURE_TYPES:
                    if a != b:
                        row[f"{a}_to_{b}"] = int(
                            ((moved["failure_type"] == a) & (moved["failure_type_request_based"] == b)).sum()
                        )
            rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    moves = [c for c in out.columns if "_to_" in c]
    return out.drop(columns=[c for c in moves if out[c].sum() == 0])  # only the moves that occur


def information_channel_table(trials: pd.DataFrame, arms: list[str], models: list[str]) -> pd.DataFrame:
    """Appendix B.2's second audit, for whichever information channel ran (`communicate`, the
    substring check, or `nl`, the judge): per arm and model (and `all`), the trials where that
    channel is operative, how many pass the database check, and how many of those the
    channel turns into failures. The database-only recomputation is `scope = db_only` in
    contrasts.csv."""
    s = scored(trials)
    rows = []
    for arm in arms:
        for model in [*models, "all"]:
            sub = s[s["arm"] == arm] if model == "all" else s[(s["arm"] == arm) & (s["model"] == model)]
            if sub.empty:
                continue
            info = pd.concat(
                [sub.get(c, pd.Series(float("nan"), index=sub.index)) for c in ("channel_communicate", "channel_nl")],
                axis=1,
            )
            operative = info.notna().any(axis=1)
            passed = info.where(info.notna(), 1.0).min(axis=1) >= 1.0
            db = sub["channel_db"] == 1.0
            channels = [
                c.removeprefix("channel_")
                for c in ("channel_communicate", "channel_nl")
                if c in sub.columns and sub[c].notna().any()
            ]
            rows.append(
                {
                    "arm": arm,
                    "model": model,
                    "channel": ",".join(channels) or "none",
                    "trials": len(sub),
                    "channel_operative": int(operative.sum()),
                    "db_pass": int((db & operative).sum()),
                    "db_pass_channel_fail": int((db & operative & ~passed).sum()),
                }
            )
    return pd.DataFrame(rows)
