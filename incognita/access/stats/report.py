"""The pre-specified analysis in words (`primary.md`), followed by the post-hoc diagnostics,
each marked as such. Every number comes from the tables written beside it."""

from __future__ import annotations

import math

import pandas as pd

from incognita.access.stats.interpretation import Interpretation
from incognita.common.tables import to_markdown


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:+.3f}"


def _interval_rows(rows: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": rows["model"],
            "tasks": rows["n_tasks"],
            "mean": rows["mean_diff"],
            "interval": [f"[{_fmt(lo)}, {_fmt(hi)}]" for lo, hi in zip(rows["ci_low"], rows["ci_high"])],
            "decision": rows["decision"],
        }
    )


def _group(rows: pd.DataFrame, decision: str) -> list[str]:
    return list(rows.loc[rows["decision"] == decision, "model"])


SCRIPTED_NOTE = (
    "These numbers come from offline scripted agents (`scripted:` profiles), not from language "
    "models: they test the pipeline and the reader, and say nothing about any model."
)


def scripted_population(success: pd.DataFrame) -> bool:
    """Whether any evaluated agent in the success table is a scripted (offline) one."""
    column = success.get("agent_backend")
    return column is not None and any("scripted" in str(v).split(",") for v in column)


def population_section(success: pd.DataFrame) -> list[str]:
    if not scripted_population(success):
        return []
    scripted = sorted(set(success.loc[success["agent_backend"].astype(str).str.contains("scripted"), "model"]))
    return [f"> **Offline scripted population.** {SCRIPTED_NOTE} Scripted models: {', '.join(scripted)}.", ""]


def _primary_section(interp: Interpretation, rows: pd.DataFrame) -> list[str]:
    d = interp.decisions
    sign = "positive" if interp.direction > 0 else "negative"
    out = [
        f"## Primary contrast: {interp.primary.name}",
        (
            f"Per model, task-level success under `{interp.primary.minuend}` minus under "
            f"`{interp.primary.subtrahend}`; the hypothesis predicts a {sign} difference."
        ),
        "",
        to_markdown(_interval_rows(rows)),
    ]
    for key in ("supports", "opposes", "insufficient", "floor_ceiling", "unavailable"):
        models = _group(rows, d[key])
        if models:
            out.append(f"- {d[key]}: {', '.join(models)} ({len(models)} of {len(rows)})")
    out.append("")
    return out


def _bounds_section(interp: Interpretation, success: pd.DataFrame) -> list[str]:
    out = [
        "## Floor and ceiling check",
        f"A cell is on the floor at success <= {interp.floor:g} and on the ceiling at >= {interp.ceiling:g}.",
    ]
    on = success[success["on_bound"]]
    if on.empty:
        out.append("No cell sits on the floor or the ceiling.")
    else:
        cells = ", ".join(f"{r.arm}/{r.model} ({r.success:.3f})" for r in on.itertuples())
        out.append(f"Cells on a bound: {cells}.")
    per_arm = success.groupby("arm", sort=False)[["tasks_at_floor", "tasks_at_ceiling"]].sum()
    parts = [
        f"{arm}: {int(r.tasks_at_floor)} at the floor, {int(r.tasks_at_ceiling)} at the ceiling"
        for arm, r in per_arm.iterrows()
    ]
    out += ["Individual task means on a bound (summed over models): " + "; ".join(parts) + ".", ""]
    return out


def _supporting_section(interp: Interpretation, contrasts: pd.DataFrame) -> list[str]:
    out = []
    for c in interp.supporting:
        rows = contrasts[(contrasts["contrast"] == c.name) & (contrasts["scope"] == "all")]
        have = rows.dropna(subset=["mean_diff"])
        out += [f"## Supporting contrast: {c.name}" + (f" ({c.reads_as})" if c.reads_as else "")]
        if have.empty:
            out += ["Not available: no model has scored trials in both arms.", ""]
            continue
        out += [
            (
                f"Means range from {_fmt(have['mean_diff'].min())} to {_fmt(have['mean_diff'].max())}; "
                f"{int(have['excludes_zero'].sum())} of {len(have)} intervals exclude zero."
            ),
            "",
            to_markdown(_interval_rows(rows)),
            "",
        ]
    return out


def _sensitivity_section(contrasts: pd.DataFrame) -> list[str]:
    keys = ["contrast", "model"]
    joined = contrasts[contrasts["scope"] == "all"].merge(
        contrasts[contrasts["scope"] == "db_only"], on=keys, suffixes=("", "_db")
    )
    joined = joined.dropna(subset=["mean_diff", "mean_diff_db"])
    changed = joined[joined["excludes_zero"] != joined["excludes_zero_db"]]
    out = [
        "## Database-only sensitivity (Appendix B.2)",
        "The same contrasts recomputed from the database check alone (scope `db_only` in contrasts.csv).",
    ]
    if joined.empty:
        out.append("Not available: no contrast has database-only scores on both sides.")
    elif changed.empty:
        out.append(f"No zero-crossing decision changes ({len(joined)} contrast-model pairs compared).")
    else:
        items = ", ".join(f"{r.contrast} {r.model}" for r in changed.itertuples())
        out.append(f"Zero-crossing decisions that change: {items} ({len(changed)} of {len(joined)}).")
    out.append("")
    return out


def _posthoc_section(
    sep_summary: pd.DataFrame, interactions: pd.DataFrame, dispersion: pd.DataFrame, split_summary: pd.DataFrame
) -> list[str]:
    out = ["## Diagnostics chosen after the data were seen (not pre-specified)"]
    for r in sep_summary.itertuples():
        out.append(
            f"- Separability, {r.arm} ({r.subset}, {r.n_tasks} tasks): {r.pairs_excluding_zero} of {r.pairs} "
            f"pairs exclude zero (no multiplicity correction), best-to-worst spread {r.spread:.3f}."
        )
    if len(dispersion):
        r = dispersion.iloc[0]
        out.append(
            f"- Between-model dispersion, {r['arm_second']} minus {r['arm_first']}: task mean "
            f"{_fmt(r['mean_statistic'])}, exact sign-flip p = {r['p_exact']:.5f} ({r['n_tasks']} tasks)."
        )
    sig = interactions[interactions["p_holm"] < 0.05]
    out.append(
        f"- Interactions: {len(sig)} of {len(interactions)} model pairs have Holm-adjusted p < 0.05"
        + (
            ": "
            + ", ".join(
                f"{r.model_a} vs {r.model_b} ({_fmt(r.mean_delta)}, p_holm {r.p_holm:.5f})" for r in sig.itertuples()
            )
            if len(sig)
            else ""
        )
        + "."
    )
    for r in split_summary.itertuples():
        out.append(
            f"- Split-half, {r.arm}: {r.observed_mean:.2f} of {r.pairs} orderings agree against a null of "
            f"{r.null_mean:.2f}; {100 * r.null_reach:.1f}% of null splits reach the observed value."
        )
    return out + [""]


def primary_markdown(
    interp: Interpretation,
    success: pd.DataFrame,
    contrasts: pd.DataFrame,
    sep_summary: pd.DataFrame,
    interactions: pd.DataFrame,
    dispersion: pd.DataFrame,
    split_summary: pd.DataFrame,
) -> str:
    primary = contrasts[(contrasts["contrast"] == interp.primary.name) & (contrasts["scope"] == "all")]
    lock = (
        f"version {interp.lock_version}, sha256 {interp.sha256[:12]}"
        if interp.sha256
        else f"version {interp.version}, not lock-checked"
    )
    head = [
        "# Pre-specified analysis",
        "",
        (
            f"Interpretation table {lock}. Intervals are two-sided {100 * interp.confidence:g}% t intervals on the "
            "per-task paired differences (repetitions averaged within a task first). An interval that includes "
            "zero is insufficient evidence, never evidence that there is no effect."
        ),
        "",
    ]
    lines = (
        head
        + population_section(success)
        + _primary_section(interp, primary)
        + _bounds_section(interp, success)
        + _supporting_section(interp, contrasts)
        + _sensitivity_section(contrasts)
        + _posthoc_section(sep_summary, interactions, dispersion, split_summary)
    )
    return "\n".join(lines)
