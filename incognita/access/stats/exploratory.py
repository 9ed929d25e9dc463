"""Comparisons beyond the frozen pre-specified analysis: exploratory contrasts, and the
unbundling of the social arm (issue #28).

Who writes the spec: the workflow config's optional `exploratory` block, checked at the
workflow's parse (incognita.access.stats.exploratory_spec, errors name the key) and passed to
`incognita stats` as JSON (`--exploratory`). Who reads the tables: the figures (fig8_unbundle) and readers of
results/stats/. The invariant: nothing here is a decision. The pre-specified contrasts and
their wording stay those of each domain's interpretation.yaml (frozen); every row here is labelled
exploratory, an interval without a verdict.

    exploratory:
      contrasts: [[social+map, social], ...]   # minuend, subtrahend: per-task paired differences
      unbundle: {from: social, to: indirect}   # every other arm of the design placed between them

Unbundling, per model and arm X (every arm of the design but `from`, `to` and native): the
paired difference X - from with its interval, the gap to - from with its interval, and the
share of the gap X recovers, (X - from) / (to - from) at the point estimates, with the
difference's interval divided by the gap's point estimate (so it ignores the gap's own
uncertainty, which the gap's interval beside it shows). No share where the gap is zero.
"""

from __future__ import annotations

import math

import pandas as pd

from incognita.access.stats.estimator import NATIVE, cell_mean, paired_columns, task_matrix
from incognita.access.stats.exploratory_spec import ExploratorySpec

LABEL = "exploratory"  # every row of both tables says so


def _share(value: float, gap: float) -> float:
    """`value` as a share of the gap; NaN where there is no gap to recover."""
    return value / gap if math.isfinite(gap) and abs(gap) > 1e-12 else float("nan")


def _row(model: str, a: pd.Series, b: pd.Series, confidence: float) -> dict:
    p = paired_columns(a, b, confidence)
    return {"n_tasks": p.n_tasks, "mean_diff": p.mean_diff, "ci_low": p.ci_low, "ci_high": p.ci_high}


def exploratory_table(means: dict[str, pd.Series], models: list[str], confidence: float, spec: ExploratorySpec):
    """Each configured contrast per model and scope, as the pre-specified ones are computed."""
    rows = []
    for scope, series in means.items():
        for minuend, subtrahend in spec.contrasts:
            a, b = task_matrix(series, minuend, models), task_matrix(series, subtrahend, models)
            for model in models:
                rows.append(
                    {
                        "model": model,
                        "minuend": minuend,
                        "subtrahend": subtrahend,
                        "scope": scope,
                        **_row(model, a[model], b[model], confidence),
                        "label": LABEL,
                    }
                )
    return pd.DataFrame(
        rows, columns=["model", "minuend", "subtrahend", "scope", "n_tasks", "mean_diff", "ci_low", "ci_high", "label"]
    )


def unbundling_table(
    means: pd.Series, arms: list[str], models: list[str], confidence: float, spec: ExploratorySpec
) -> pd.DataFrame:
    """Each arm placed between `from` and `to`, per model (see the module docstring)."""
    columns = [
        "model", "arm", "from_arm", "to_arm", "success", "from_success", "to_success", "n_tasks", "diff", "diff_low", "diff_high",
        "gap", "gap_low", "gap_high", "recovered", "recovered_low", "recovered_high", "label",
    ]  # fmt: skip
    if spec.unbundle_from is None:
        return pd.DataFrame(columns=columns)
    low, high = task_matrix(means, spec.unbundle_from, models), task_matrix(means, spec.unbundle_to, models)
    placed = [a for a in arms if a not in (spec.unbundle_from, spec.unbundle_to, NATIVE)]
    rows = []
    for arm in placed:
        x = task_matrix(means, arm, models)
        for model in models:
            d, g = _row(model, x[model], low[model], confidence), _row(model, high[model], low[model], confidence)
            gap = g["mean_diff"]
            lo, hi = sorted((_share(d["ci_low"], gap), _share(d["ci_high"], gap)))
            rows.append(
                {
                    "model": model,
                    "arm": arm,
                    "from_arm": spec.unbundle_from,
                    "to_arm": spec.unbundle_to,
                    "success": cell_mean(x[model]),
                    "from_success": cell_mean(low[model]),
                    "to_success": cell_mean(high[model]),
                    "n_tasks": d["n_tasks"],
                    "diff": d["mean_diff"],
                    "diff_low": d["ci_low"],
                    "diff_high": d["ci_high"],
                    "gap": gap,
                    "gap_low": g["ci_low"],
                    "gap_high": g["ci_high"],
                    "recovered": _share(d["mean_diff"], gap),
                    "recovered_low": lo,
                    "recovered_high": hi,
                    "label": LABEL,
                }
            )
    return pd.DataFrame(rows, columns=columns)
