"""The CollabSim paper's own results layout, from the table stage's three tables
(`runs.parquet`, `probes.parquet`, `convergence.parquet`), under `results/collabsim/paper/`:

- `results_<task>.csv` / `.md`: the main results table of each task (the paper's Section 4.3
  tables): one row per model label and agent design, one column per condition and metric (the
  metrics Section 4.2 names for the task, then probe confidence; mean over seeds), conditions
  in the paper's order;
- `results_<task>_more.csv` / `.md`: the task's other metrics, which the paper does not report,
  in the same layout;
- `alignment_by_question.csv` / `.md` (its Table 3): per task, mean alignment on Q1 task state,
  Q2 partner intent and Q3 own plan, then the task's mean and SD over runs;
- `figure3_confidence.png` / `.svg`: probe confidence over task progress, one line per condition,
  one panel per task (models and designs pooled, as the paper's Figure 3);
- `figure4_group_size.png` / `.svg`: alignment against group size in Shape Factory and DayTrader,
  one line per model label (its Figure 4), at the group sizes the runs have (GROUP_SIZES_NOTE).

Alignment of a run on a question is the mean, over its probe points, of the teammates' pairwise
SBERT similarity (`convergence.parquet`). Every table and figure says which population made it:
"scripted stand-ins" when every run's agents were scripted.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import fill

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from incognita.collabsim.metrics import communication_metrics  # noqa: E402
from incognita.collabsim.paths import KEY_FIELDS  # noqa: E402
from incognita.collabsim.world.task import task_class  # noqa: E402
from incognita.common.io import InputError, atomic_write, atomic_write_text  # noqa: E402
from incognita.common.plotting import RC, save_figure  # noqa: E402
from incognita.common.tables import to_markdown  # noqa: E402

QUESTIONS = {"situation": "Q1 task state", "partners": "Q2 partner intent", "plan": "Q3 own plan"}
GROUP_SIZE_TASKS = ("shape_factory", "daytrader")
PROGRESS_BINS = 10
# Each task's columns in the main table: the metrics Section 4.2 names for it, in its order (the
# outcome, then the process metrics), as (our metric, the paper's name), then probe confidence
# (each run's mean over its probe answers; Sec. 4.2 "the probing dimension"). `messages` and
# `average_message_words` are every run's communication counts (incognita.collabsim.metrics).
CONFIDENCE = ("confidence", "probing confidence")
PAPER_METRICS = {
    "shape_factory": (
        ("average_wealth", "average accumulated wealth"),
        ("trade_accept_rate", "trade accept rate"),
        ("order_fulfillment_rate", "order fulfillment rate"),
        ("message_trade_ratio", "message-trade ratio"),
        CONFIDENCE,
    ),
    "daytrader": (
        ("average_wealth", "average wealth"),
        ("cooperation_rate", "cooperation rate"),
        ("average_pool", "average group pool size"),
        ("messages", "total messages"),
        CONFIDENCE,
    ),
    "hidden_profile": (
        ("final_accuracy", "final vote accuracy"),
        ("vote_change_rate", "vote change rate"),
        ("mention_rate", "mention rate of the key candidate"),
        ("average_message_words", "average message length (words)"),
        CONFIDENCE,
    ),
    "map_task": (
        ("route_score", "route drawing accuracy"),
        ("communication_efficiency", "communication efficiency"),
        ("revision_rate", "drawing revision rate"),
        ("messages", "total messages"),
        CONFIDENCE,
    ),
}
# The paper's order of conditions (Sec. 4.1 names the variables C.B., G.S. and I.V. in this
# order): the baseline first, then each variable's conditions, group sizes from small to large.
VARIABLE_ORDER = ("baseline", "communication_bandwidth", "group_size", "information_visibility", "agent_design")
GROUP_SIZES_NOTE = (
    "Shape Factory's sizes are Appendix 9.1's 6/8/10, not the 4/8/10 of Sections 3.2 and 4.1: the "
    "appendix gives the setup that was run (a baseline of 6 traders and 3 shapes), and only 6 agents "
    "let each of the 3 specialties be held by two agents as Section 3.4 requires (8 and 10 do the same "
    "with 4 and 5 shapes)."
)


def population(runs: pd.DataFrame) -> str:
    """Who played the runs, for captions: the scripted labels are named when only some are."""
    scripted = sorted(set(runs.loc[runs["scripted"].astype(bool), "model"]))
    if len(scripted) == runs["model"].nunique():
        return "Population: scripted stand-ins for every label (offline; no model was called)."
    if scripted:
        return f"Population: real models, except the scripted labels {', '.join(scripted)}."
    return "Population: real models."


def paper_metrics(task: str) -> list[str]:
    """The main table's metrics of a task (PAPER_METRICS)."""
    if task not in PAPER_METRICS:
        raise InputError(f"task {task!r}: no paper metrics listed (incognita/collabsim/paper_outputs.py)")
    return [m for m, _ in PAPER_METRICS[task]]


def more_metrics(task: str) -> list[str]:
    """The run's metrics that the paper does not report for the task (the second table): the
    task's own, then the communication counts every run has (their names: those of an empty log)."""
    main = set(paper_metrics(task))
    return [m for m in (*task_class(task).METRICS, *communication_metrics([])) if m not in main]


def condition_order(part: pd.DataFrame) -> list[str]:
    """The conditions of one task's runs in the paper's order (VARIABLE_ORDER; group sizes by size)."""
    rank = {v: i for i, v in enumerate(VARIABLE_ORDER)}
    first = part.drop_duplicates("condition")
    keys = first.assign(rank=first["variable"].map(lambda v: rank.get(v, len(rank))))
    return list(keys.sort_values(["rank", "n_agents", "condition"], kind="stable")["condition"])


def results_table(runs: pd.DataFrame, task: str, metrics: list[str] | None = None) -> pd.DataFrame:
    """Rows model x design; columns `<condition>: <metric>`, means over seeds, conditions in the
    paper's order. `metrics` defaults to the paper's for the task (PAPER_METRICS)."""
    part = runs[runs["task"] == task]
    metrics = paper_metrics(task) if metrics is None else metrics
    missing = [m for m in metrics if m not in part.columns]
    if missing:
        raise InputError(f"runs table: no column {', '.join(missing)} for task {task} (rebuild the table stage)")
    means = part.groupby(["model", "design", "condition"], sort=False)[metrics].mean()
    wide = means.unstack("condition")
    conditions = condition_order(part)
    columns = [(m, c) for c in conditions for m in metrics]
    wide = wide.reindex(columns=pd.MultiIndex.from_tuples(columns))
    wide.columns = [f"{c}: {m}" for m, c in columns]
    return wide.reset_index()


def run_alignment(convergence: pd.DataFrame) -> pd.DataFrame:
    """One row per run and question: the mean similarity over the run's probe points."""
    keys = [*KEY_FIELDS, "question"]
    return convergence.groupby(keys, as_index=False)["similarity"].mean().rename(columns={"similarity": "alignment"})


def alignment_by_question(convergence: pd.DataFrame) -> pd.DataFrame:
    columns = ["task", *QUESTIONS.values(), "mean", "sd", "runs"]
    if convergence.empty:  # probing off, or no step with two teammates' answers
        return pd.DataFrame(columns=columns)
    per_run = run_alignment(convergence)
    rows = []
    for task, part in per_run.groupby("task", sort=False):
        row = {"task": task}
        for question, label in QUESTIONS.items():
            values = part.loc[part["question"] == question, "alignment"]
            row[label] = values.mean() if len(values) else np.nan
        overall = part.groupby([k for k in KEY_FIELDS if k != "task"])["alignment"].mean()
        row["mean"], row["sd"], row["runs"] = overall.mean(), overall.std(ddof=1), len(overall)
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def figure3(probes: pd.DataFrame, note: str, runs: pd.DataFrame | None = None):
    """`runs` (the runs table) puts each panel's conditions in the paper's order (condition_order)."""
    tasks = list(dict.fromkeys(probes.loc[probes["confidence"].notna(), "task"])) if len(probes) else []
    if not tasks:  # probing off in every run
        return None
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 2.9), squeeze=False, layout="constrained")
        for ax, task in zip(axes[0], tasks):
            part = probes[(probes["task"] == task) & probes["confidence"].notna()].copy()
            part["bin"] = np.minimum((part["progress"] * PROGRESS_BINS).astype(int), PROGRESS_BINS - 1)
            order = list(dict.fromkeys(part["condition"]))
            if runs is not None:
                order = [c for c in condition_order(runs[runs["task"] == task]) if c in set(order)]
            for condition in order:
                line = part[part["condition"] == condition].groupby("bin")["confidence"].mean()
                ax.plot((line.index + 0.5) / PROGRESS_BINS * 100, line.values, marker="o", ms=3, label=condition)
            ax.set_title(task.replace("_", " "))
            ax.set_xlabel("task progress (%)")
            ax.set_xlim(0, 100)
            ax.legend(fontsize=7)
        axes[0][0].set_ylabel("probe confidence")
        fig.suptitle(f"Probe confidence over task progress, one line per condition.\n{note}", fontsize=9)
    return fig


def figure4(runs: pd.DataFrame, convergence: pd.DataFrame, note: str):
    if convergence.empty:
        return None
    per_run = run_alignment(convergence)
    overall = per_run.groupby(list(KEY_FIELDS), as_index=False)["alignment"].mean()
    sizes = runs[[*KEY_FIELDS, "n_agents", "variable"]]
    data = overall.merge(sizes, on=list(KEY_FIELDS))
    data = data[data["variable"].isin(["baseline", "group_size"])]
    tasks = [t for t in GROUP_SIZE_TASKS if t in set(data["task"])]
    if not tasks:
        return None
    sizes = "; ".join(
        f"{t.replace('_', ' ')} {'/'.join(str(n) for n in sorted(set(data.loc[data['task'] == t, 'n_agents'])))}"
        for t in tasks
    )
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, len(tasks), figsize=(3.6 * len(tasks), 2.9), squeeze=False, layout="constrained")
        for ax, task in zip(axes[0], tasks):
            for model, rows in data[data["task"] == task].groupby("model", sort=False):
                line = rows.groupby("n_agents")["alignment"].mean()
                ax.plot(line.index, line.values, marker="o", ms=4, label=model)
            ax.set_title(task.replace("_", " "))
            ax.set_xlabel("group size (agents)")
            ax.legend(fontsize=7)
        axes[0][0].set_ylabel("alignment (mean SBERT similarity)")
        why = f"\n{fill(GROUP_SIZES_NOTE, 110)}" if "shape_factory" in tasks else ""
        fig.suptitle(
            f"Alignment against group size, one line per model. Group sizes: {sizes}.{why}\n{note}", fontsize=8
        )
    return fig


def write_paper_outputs(runs_path: Path, probes_path: Path, convergence_path: Path, out_dir: Path) -> list[Path]:
    try:
        runs, probes, convergence = (pd.read_parquet(p) for p in (runs_path, probes_path, convergence_path))
    except FileNotFoundError as exc:
        raise InputError(f"{exc.filename}: missing (run the collabsim table stage first)") from None
    if runs.empty:
        raise InputError(f"{runs_path}: no runs")
    note = population(runs)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []

    def table(df: pd.DataFrame, stem: str, title: str) -> None:
        atomic_write(out_dir / f"{stem}.csv", lambda tmp: df.to_csv(tmp, index=False))
        atomic_write_text(out_dir / f"{stem}.md", f"**{title}** {note}\n\n{to_markdown(df)}\n")
        written.extend([out_dir / f"{stem}.csv", out_dir / f"{stem}.md"])

    for task in dict.fromkeys(runs["task"]):
        names = "; ".join(f"`{m}`: {name}" for m, name in PAPER_METRICS.get(task, ()))
        table(
            results_table(runs, task),
            f"results_{task}",
            f"CollabSim {task}: the paper's metrics of the task (Section 4.2) in each condition, mean over "
            f"seeds, per model label and agent design; conditions in the paper's order (baseline first). "
            f"Columns: {names} (each run's mean over its probe answers).",
        )
        table(
            results_table(runs, task, more_metrics(task)),
            f"results_{task}_more",
            f"CollabSim {task}: the task's other metrics, which the paper does not report "
            f'(docs/collabsim.md, "The four tasks"), in the layout of `results_{task}`.',
        )
    table(
        alignment_by_question(convergence),
        "alignment_by_question",
        "CollabSim alignment by probing question (mean over runs; mean and SD over runs of each run's "
        "alignment averaged over the three questions).",
    )
    # Drawn and saved under RC: its svg.hashsalt makes marker ids, and so the bytes, repeatable.
    with plt.rc_context(RC):
        for stem, fig in (
            ("figure3_confidence", figure3(probes, note, runs)),
            ("figure4_group_size", figure4(runs, convergence, note)),
        ):
            if fig is not None:
                written += save_figure(fig, out_dir, stem)
                plt.close(fig)
    return written
