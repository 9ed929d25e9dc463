"""Tables 1 and 2 as CSV and Markdown: the model-by-condition interactions with the global
dispersion test, and the post hoc corpus size and implied cost per condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from incognita.access.figures.figure_inputs import Stats
from incognita.access.figures.figure_style import arm_label, fmt_count, fmt_p, fmt_signed, fmt_usd
from incognita.common.io import atomic_write_text

# --- Tables 1 and 2 ------------------------------------------------------------------------


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None) -> str:
    """GitHub-style pipe table; `align` is one letter per column (l, r, c)."""
    align = align or "l" * len(header)
    if len(align) != len(header) or any(len(r) != len(header) for r in rows):
        raise ValueError("markdown_table: every row and the alignment need one entry per header column")

    def cell(v: object) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    rule = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(rule[a] for a in align) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


TABLE1_CSV = {
    "model_a": "Model A",
    "model_b": "Model B",
    "n_tasks": "Tasks",
    "mean_delta": "Mean delta",
    "ci_low": "95% interval low",
    "ci_high": "95% interval high",
    "p_exact": "Exact p",
    "p_holm": "Holm p",
}
TABLE2_CSV = {
    "arm": "Condition",
    "gap_sd": "Gap SD",
    "largest_gap": "Largest gap",
    "tasks": "Tasks",
    "usd_per_episode": "USD per episode",
    "implied_cost_usd": "Implied cost (USD)",
}


def table1_markdown(stats: Stats) -> str:
    inter = stats["interactions"]
    rows = [
        [
            f"{r.model_a} – {r.model_b}",
            fmt_count(r.n_tasks),
            fmt_signed(r.mean_delta),
            f"[{fmt_signed(r.ci_low)}, {fmt_signed(r.ci_high)}]",
            fmt_p(r.p_exact),
            fmt_p(r.p_holm),
        ]
        for r in inter.itertuples()
    ]
    text = (
        "# Table 1. Model-by-condition interactions (exploratory)\n\n"
        "Each row compares how much success two models lose from centralized indirect to socially "
        "distributed access, task by task: Δ = (indirect − social) of the first model minus the same for "
        "the second. Positive: the first model loses more. Interval: two-sided 95% t interval over tasks. "
        "p: exact task-blocked sign-flip test; Holm: adjusted over the rows of this table.\n\n"
    )
    text += markdown_table(["Model pair", "Tasks", "Mean Δ", "95% interval", "Exact p", "Holm p"], rows, "lrrcrr")
    for r in stats["dispersion"].itertuples():
        text += (
            f"\nGlobal dispersion test: per task, the sum of squared deviations of the model means under "
            f"socially distributed access minus the same under centralized indirect access; mean over "
            f"{fmt_count(r.n_tasks)} tasks {fmt_signed(r.mean_statistic, 4)} (positive: the models spread "
            f"further apart), exact sign-flip p = {fmt_p(r.p_exact)}.\n"
        )
    return text


def table2_markdown(stats: Stats) -> str:
    power = stats["power"]
    order = {a: i for i, a in enumerate(stats.arms)}
    power = power.sort_values("arm", key=lambda s: s.map(lambda a: order.get(a, len(order))), kind="stable")
    rows = [
        [
            arm_label(r.arm),
            f"{r.gap_sd:.3f}",
            f"{r.largest_gap:.3f}",
            fmt_count(r.tasks),
            fmt_usd(r.usd_per_episode, 3),
            fmt_usd(r.implied_cost_usd),
        ]
        for r in power.itertuples()
    ]
    text = (
        "# Table 2. Tasks needed to resolve each condition's largest observed model gap (post hoc)\n\n"
        "Plug-in paired-t calculation: the median SD of the condition's task-level pairwise gaps, its "
        "largest observed gap, 80% power at two-sided α = 0.05, no multiplicity adjustment. Implied cost "
        "= tasks × models × repetitions × USD per episode, online episode costs only.\n\n"
    )
    return text + markdown_table(
        ["Condition", "Gap SD", "Largest gap", "Tasks", "$/episode", "Implied cost"], rows, "lrrrrr"
    )


COUNT_COLUMNS = ("n_tasks", "tasks")


def _table_csv(df: pd.DataFrame, names: dict[str, str]) -> str:
    out = df[list(names)].copy()
    for col in out.columns:
        if col in COUNT_COLUMNS:
            out[col] = out[col].round().astype("Int64")  # counts stay integers; NaN stays empty
        elif pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].round(6)
    out = out.rename(columns=names)
    if "Condition" in out.columns:
        out["Condition"] = out["Condition"].map(arm_label)
    return out.to_csv(index=False, lineterminator="\n")


def write_tables(stats: Stats, out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    outputs = {
        "table1.csv": _table_csv(stats["interactions"], TABLE1_CSV),
        "table1.md": table1_markdown(stats),
        "table2.csv": _table_csv(stats["power"], TABLE2_CSV),
        "table2.md": table2_markdown(stats),
    }
    for name, text in outputs.items():
        atomic_write_text(out_dir / name, text)
    return [out_dir / name for name in outputs]
