"""Figures and tables of the results, drawn only from the statistics stage's CSVs.

`make_figures(stats_dir, out_dir)` reads `results/stats/*.csv` (the contract is in
docs/figures.md) and writes Figures 2-7 as PNG + SVG and Tables 1-2 as CSV + Markdown.
Matplotlib is used through `Figure` objects, never pyplot, so no global backend or figure
registry is touched and rendering is the same on a headless machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import StrMethodFormatter
from matplotlib.transforms import blended_transform_factory

from incognita.access.taxonomy import HARNESS_ARMS
from incognita.common.io import InputError, atomic_write_text
from incognita.common.plotting import FIGURE_FORMATS, RC, save_figure
from incognita.access.stats.report import scripted_population

# --- vocabulary shown on the figures -------------------------------------------------------

ARM_LABELS = {
    "direct": "Centralized (direct)",
    "indirect": "Centralized (indirect)",
    "social": "Socially distributed",
    "native": "Native anchor",
}
ARM_ORDER = tuple(ARM_LABELS)
CONDITIONS = HARNESS_ARMS  # the three Incognita conditions (native is an anchor)

OUTCOMES = {  # composition order: success, then the failure chain from first to last stage
    "success": ("Success", "#1b7837"),
    "never_requested": ("1 Never requested", "#b2182b"),
    "requested_not_obtained": ("2 Requested, not obtained", "#ef8a62"),
    "obtained_not_delivered": ("3 Obtained, not delivered", "#fddbc7"),
    "delivered_incorrect": ("4 Delivered, incorrect", "#67a9cf"),
    "correct_unconfirmed": ("5 Correct, unconfirmed", "#2166ac"),
    "failed_unlabelled": ("Failed, no type (native harness)", "#9e9ac8"),
    "excluded": ("Excluded (broke outside the agent)", "#bdbdbd"),
}
OTHER_OUTCOME = ("Other / unlabelled", "#f0e442")

MEASURES = {  # the coordination chain in the order an agent meets it
    "holder_contacted": "Holder contacted",
    "role_identification": "Role identification",
    "information_acquisition": "Information acquisition",
    "customer_information": "  customer facts",
    "service_information": "  service facts",
    "execution": "Execution / assignment",
}

CONTRASTS = {
    "indirect-social": ("Indirect − social (primary)", "#0072B2"),
    "direct-indirect": ("Direct − indirect", "#E69F00"),
    "native-direct": ("Native − direct", "#009E73"),
}

# Okabe-Ito: distinguishable for the common colour-vision deficiencies.
MODEL_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")

ZERO_COST_NOTE = "All costs are $0: scripted (offline) backends make no paid calls."
ABSENT = "absent"

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

FIGURE_STEMS = ("fig2_success", "fig3_breakdown", "fig4_separability", "fig5_native", "fig6_cost", "fig7_split_half")
TABLE_STEMS = ("table1", "table2")
FIGURES: list[str] = [f"{stem}.{ext}" for stem in FIGURE_STEMS for ext in FIGURE_FORMATS] + [
    f"{stem}.{ext}" for stem in TABLE_STEMS for ext in ("csv", "md")
]

MISSING = ("", "nan", "NaN", "NA", "<NA>")
KEY_COLUMNS = ("arm", "model", "model_a", "model_b", "outcome", "measure", "scope", "kind", "contrast", "subset")


@dataclass(frozen=True)
class Stats:
    """The statistics stage's tables, validated, plus the display order of arms and models."""

    tables: dict[str, pd.DataFrame]
    models: tuple[str, ...]
    arms: tuple[str, ...]

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]


# --- reading -----------------------------------------------------------------------------


def _read_table(path: Path, columns: Sequence[str], numeric: Sequence[str]) -> pd.DataFrame:
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


def _ordered(found: Sequence[str], preferred: Sequence[str]) -> tuple[str, ...]:
    """Preferred names first (in their order), then the rest in order of first appearance."""
    seen = list(dict.fromkeys(found))
    return tuple([x for x in preferred if x in seen] + [x for x in seen if x not in preferred])


def model_order(success: pd.DataFrame) -> tuple[str, ...]:
    """Models by descending socially distributed success (the arm that separates them).

    Ties, and every model when there is no social arm, keep their order in success.csv.
    """
    first = list(dict.fromkeys(success["model"]))
    social = success[success["arm"] == "social"].set_index("model")["success"]
    if social.empty:
        return tuple(first)
    return tuple(sorted(first, key=lambda m: (-social.get(m, -math.inf), first.index(m))))


def load_stats(stats_dir: Path) -> Stats:
    """Read and check every CSV the figures use; all problems surface before any drawing."""
    stats_dir = Path(stats_dir)
    tables = {name: _read_table(stats_dir / f"{name}.csv", cols, num) for name, (cols, num) in STATS_INPUTS.items()}
    sep = tables["separability"]
    sep["excludes_zero"] = _as_bool(sep["excludes_zero"], stats_dir / "separability.csv", "excludes_zero")
    if tables["success"].empty:
        raise InputError(f"{stats_dir / 'success.csv'}: no rows; the figures need at least one arm and model")
    models = list(model_order(tables["success"]))
    for name in ("composition", "process", "cost", "contrasts"):
        models += [m for m in dict.fromkeys(tables[name]["model"]) if m not in models]
    arms = _ordered(
        [a for name in ("success", "composition", "cost", "separability") for a in tables[name]["arm"]], ARM_ORDER
    )
    return Stats(tables=tables, models=tuple(models), arms=arms)


# --- small drawing helpers -----------------------------------------------------------------


def _figure(size: tuple[float, float]) -> Figure:
    """A figure whose constrained layout leaves a margin at the edges for outside labels."""
    return Figure(figsize=size, layout=ConstrainedLayoutEngine(w_pad=0.12, h_pad=0.1))


def _suptitle(fig: Figure, stats: Stats, title: str, **kwargs) -> None:
    """The figure's title; when any evaluated agent is scripted, a second line says so, so that a
    figure taken out of its report cannot be mistaken for a result about language models."""
    if scripted_population(stats["success"]):
        title += "\nOffline scripted agents, not language models: this tests the pipeline, not any model."
    fig.suptitle(title, **kwargs)


def arm_label(arm: str) -> str:
    return ARM_LABELS.get(arm, arm)


def arm_tick(arm: str) -> str:
    """Two-line label for crowded category axes."""
    return arm_label(arm).replace(" (", "\n(").replace("Socially ", "Socially\n").replace("Native ", "Native\n")


def model_color(stats: Stats, model: str) -> str:
    return MODEL_COLORS[stats.models.index(model) % len(MODEL_COLORS)]


def _no_data(ax: Axes, what: str) -> None:
    ax.text(
        0.5,
        0.5,
        f"no {what} in the statistics",
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="0.4",
        style="italic",
    )
    ax.set_xticks([])
    ax.set_yticks([])


def _interval_rows(ax: Axes, y: np.ndarray, df: pd.DataFrame, color: str, filled: bool) -> None:
    """Point estimate with its 95% interval, one horizontal line per row; hollow for a secondary variant."""
    ax.hlines(y, df["ci_low"], df["ci_high"], color=color, lw=2 if filled else 1.2, alpha=1 if filled else 0.7)
    ax.plot(df["mean_diff"], y, "o", color=color, mfc=color if filled else "white", ms=6 if filled else 5, ls="none")


def _zero_line(ax: Axes) -> None:
    ax.axvline(0, color="0.3", lw=0.9, ls="--", zorder=0)


def _model_legend(stats: Stats, models: Sequence[str]) -> list[Line2D]:
    return [Line2D([], [], color=model_color(stats, m), marker="o", lw=2, label=m) for m in models]


# --- Figure 2: success and the paired differences ------------------------------------------------


def fig2_success(stats: Stats) -> Figure:
    fig = _figure((14, 5.6))
    ax_s, ax_d = fig.subplots(1, 2, width_ratios=[1, 1.25])
    _suptitle(
        fig,
        stats,
        "Figure 2. Task success by model and access condition, and the paired differences between "
        "neighbouring conditions",
        fontweight="bold",
    )
    _success_slopes(stats, ax_s)
    _contrast_forest(stats, ax_d, ("indirect-social", "direct-indirect"))
    ax_d.set_title("B. Paired differences per model (per-task differences, 95% t interval)")
    return fig


def _success_slopes(stats: Stats, ax: Axes) -> None:
    succ = stats["success"]
    arms = [a for a in CONDITIONS if a in set(succ["arm"])] or list(_ordered(succ["arm"], ARM_ORDER))
    table = succ.pivot_table(index="model", columns="arm", values="success", aggfunc="first")
    x = np.arange(len(arms))
    for m in [m for m in stats.models if m in table.index]:
        ax.plot(x, table.loc[m].reindex(arms).to_numpy(), "-o", color=model_color(stats, m), lw=2, ms=7, label=m)
    ax.set_xticks(x, [arm_tick(a) for a in arms])
    ax.set_xlim(-0.3, len(arms) - 0.7)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("Task success rate (mean over tasks of repetition means)")
    ax.set_xlabel("Access condition")
    ax.set_title("A. Success per model (no error bars: see B)")
    ax.grid(axis="y", color="0.9")
    ax.legend(title="Evaluated model", loc="best", frameon=True, framealpha=0.9)


def _contrast_forest(stats: Stats, ax: Axes, contrasts: Sequence[str]) -> None:
    con = stats["contrasts"]
    con = con[con["contrast"].isin(contrasts)]
    models = [m for m in stats.models if m in set(con["model"])]
    if not models:
        _no_data(ax, " / ".join(contrasts) + " contrasts")
        return
    step = 0.8 / max(len(contrasts), 1)
    handles, db_drawn = [], False
    for k, name in enumerate(contrasts):
        label, color = CONTRASTS.get(name, (name, "0.3"))
        drawn = False
        for scope, filled, shift in (("all", True, -step * 0.18), ("db_only", False, step * 0.22)):
            part = con[(con["contrast"] == name) & (con["scope"] == scope)].set_index("model").reindex(models)
            y = np.arange(len(models)) + (k - (len(contrasts) - 1) / 2) * step + shift
            ok = part["mean_diff"].notna().to_numpy()
            if ok.any():
                _interval_rows(ax, y[ok], part[ok], color, filled)
                drawn = True
                db_drawn |= not filled
                if filled:
                    _annotate_intervals(ax, y[ok], part[ok], color)
        if drawn:
            handles.append(Line2D([], [], color=color, marker="o", lw=2, label=label))
    if db_drawn:
        handles.append(
            Line2D([], [], color="0.4", marker="o", mfc="white", lw=1.2, label="same contrast, database checks only")
        )
    _zero_line(ax)
    ax.set_yticks(np.arange(len(models)), models)
    ax.set_ylim(len(models) - 0.5, -0.5)
    ax.set_ylabel("Evaluated model")
    ax.set_xlabel("Difference in task success rate (positive: the first condition succeeds more)")
    ax.grid(axis="x", color="0.9")
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=len(handles), frameon=False, fontsize=8
    )


def short_decision(text: str) -> str:
    """The head of a decision ("insufficient evidence (the interval ...)" -> "insufficient evidence").

    The full wording stays in contrasts.csv and primary.md; the figure has room for the verdict only.
    """
    return str(text).split(" (")[0].split(";")[0].strip()


def _annotate_intervals(ax: Axes, y: np.ndarray, df: pd.DataFrame, color: str) -> None:
    """Estimate, interval and the frozen table's decision, printed right of the plot area."""
    where = blended_transform_factory(ax.transAxes, ax.transData)
    for yi, r in zip(y, df.itertuples()):
        decision = "" if pd.isna(r.decision) else f"  {short_decision(r.decision)}"
        ax.text(
            1.02,
            yi,
            f"{fmt_signed(r.mean_diff, 2)} [{fmt_signed(r.ci_low, 2)}, {fmt_signed(r.ci_high, 2)}]{decision}",
            transform=where,
            va="center",
            fontsize=7.5,
            color=color,
        )


# --- Figure 3: outcome composition and process completion ---------------------------------------


def fig3_breakdown(stats: Stats) -> Figure:
    comp, proc = stats["composition"], stats["process"]
    arms = list(_ordered(list(comp["arm"]) + list(proc["arm"]), stats.arms)) or list(stats.arms)
    fig = _figure((3.4 * len(arms) + 3.2, 10.5))
    _suptitle(
        fig,
        stats,
        "Figure 3. Where the trajectories break: the outcome of every trial and the completion of the "
        "coordination processes",
        fontweight="bold",
    )
    sub_top, sub_bottom = fig.subfigures(2, 1, height_ratios=[1.25, 1])
    top_axes = sub_top.subplots(1, len(arms), squeeze=False, sharey=True)[0]
    sub_top.suptitle(
        "A. Outcome of every trial: success, failure type 1-5 (the stage where the trajectory stopped), or excluded",
        fontsize=10,
    )
    top = max(comp.groupby(["arm", "model"])["count"].sum().max() if len(comp) else 1, 1)
    for i, arm in enumerate(arms):
        _composition_panel(stats, top_axes[i], arm, top, first=i == 0)
    sub_top.legend(
        handles=_outcome_legend(set(comp["outcome"])), title="Outcome", loc="outside right center", frameon=False
    )
    bottom_axes = sub_bottom.subplots(1, len(arms), squeeze=False)[0]
    sub_bottom.suptitle(
        "B. Process completion: mean share of the required items a trial satisfied "
        "(grey 'absent': the condition does not contain that process)",
        fontsize=10,
    )
    images = [_process_panel(stats, bottom_axes[i], arm, first=i == 0) for i, arm in enumerate(arms)]
    image = next((im for im in images if im is not None), None)
    if image is not None:
        sub_bottom.colorbar(image, ax=list(bottom_axes), label="Mean completion (0-1)", shrink=0.9)
    return fig


def _outcome_legend(present: set[str]) -> list[Patch]:
    """Success and the five types always; the native and excluded rows and any unknown label only when present."""
    handles = [
        Patch(color=c, label=lab)
        for key, (lab, c) in OUTCOMES.items()
        if key in present or key not in ("failed_unlabelled", "excluded")
    ]
    extra = sorted(present - set(OUTCOMES))
    if extra:
        handles.append(Patch(color=OTHER_OUTCOME[1], label=f"{OTHER_OUTCOME[0]}:\n{', '.join(extra)}"))
    return handles


def _composition_panel(stats: Stats, ax: Axes, arm: str, top: float, first: bool) -> None:
    comp = stats["composition"]
    part = comp[comp["arm"] == arm]
    models = [m for m in stats.models if m in set(part["model"])]
    ax.set_title(arm_label(arm))
    if not models:
        _no_data(ax, "outcome counts")
        return
    counts = part.pivot_table(index="model", columns="outcome", values="count", aggfunc="sum").reindex(models)
    counts = counts.fillna(0)
    x = np.arange(len(models))
    bottom = np.zeros(len(models))
    for outcome in list(OUTCOMES) + sorted(set(counts.columns) - set(OUTCOMES)):
        if outcome not in counts.columns:
            continue
        vals = counts[outcome].to_numpy()
        color = OUTCOMES.get(outcome, OTHER_OUTCOME)[1]
        ax.bar(
            x,
            vals,
            bottom=bottom,
            color=color,
            width=0.75,
            edgecolor="white",
            lw=0.5,
            hatch="//" if outcome == "excluded" else None,
        )
        for xi, v, b in zip(x, vals, bottom):
            if v >= 0.06 * top:  # label only segments tall enough to hold the number
                ax.text(
                    xi,
                    b + v / 2,
                    f"{v:.0f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if outcome in ("success", "never_requested", "correct_unconfirmed") else "black",
                )
        bottom += vals
    ax.set_xticks(x, models, rotation=30, ha="right")
    ax.set_ylim(0, top * 1.04)
    if first:
        ax.set_ylabel("Trials (count)")
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)


def process_matrix(process: pd.DataFrame, arm: str, models: Sequence[str]) -> pd.DataFrame:
    """Measures (rows) x models (columns) for one arm; NaN where the arm lacks the process."""
    part = process[process["arm"] == arm]
    table = part.pivot_table(index="measure", columns="model", values="mean", aggfunc="first", dropna=False)
    measures = _ordered(list(part["measure"]), list(MEASURES))
    return table.reindex(index=list(measures), columns=[m for m in models if m in set(part["model"])])


def _process_panel(stats: Stats, ax: Axes, arm: str, first: bool) -> AxesImage | None:
    proc = stats["process"]
    all_measures = _ordered(list(proc["measure"]), list(MEASURES))
    matrix = process_matrix(proc, arm, stats.models).reindex(index=list(all_measures))
    ax.set_title(arm_label(arm))
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    if matrix.empty or matrix.isna().all().all():
        _no_data(ax, "process measures")
        return None
    values = matrix.to_numpy(dtype=float)
    cmap = matplotlib.colormaps["YlGnBu"].with_extremes(bad="#f2f2f2")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (r, c), v in np.ndenumerate(values):
        text = ABSENT if np.isnan(v) else f"{v:.2f}"
        ax.text(
            c,
            r,
            text,
            ha="center",
            va="center",
            fontsize=7.5,
            color="0.45" if np.isnan(v) else ("white" if v > 0.6 else "black"),
            style="italic" if np.isnan(v) else "normal",
        )
    ax.set_xticks(np.arange(len(matrix.columns)), matrix.columns, rotation=30, ha="right")
    ax.set_yticks(np.arange(len(matrix.index)), [MEASURES.get(m, m) for m in matrix.index] if first else [])
    ax.tick_params(length=0)
    return image


# --- Figure 4: every model pair per arm ----------------------------------------------------


def fig4_separability(stats: Stats) -> Figure:
    sep = stats["separability"]
    arms = list(_ordered(sep["arm"], stats.arms))
    pairs = list(dict.fromkeys(zip(sep["model_a"], sep["model_b"])))
    fig = _figure((3.4 * max(len(arms), 1) + 3.4, 1.6 + 0.45 * max(len(pairs), 4)))
    axes = fig.subplots(1, max(len(arms), 1), squeeze=False, sharex=True)[0]
    _suptitle(
        fig,
        stats,
        "Figure 4. Does each condition separate the models? Every model pair, per-task paired "
        "difference in success with its 95% t interval",
        fontweight="bold",
    )
    if not arms:
        _no_data(axes[0], "model pairs")
        return fig
    for i, arm in enumerate(arms):
        _pair_panel(sep[sep["arm"] == arm], axes[i], arm, pairs, first=i == 0)
    handles = [
        Line2D([], [], color="#D55E00", marker="o", lw=2, label="interval excludes zero"),
        Line2D([], [], color="0.55", marker="o", lw=2, label="interval includes zero"),
        Line2D(
            [],
            [],
            color="0.4",
            marker="o",
            mfc="white",
            lw=1.2,
            label="discriminating tasks only\n(drops tasks all models solve or all fail)",
        ),
    ]
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    return fig


def _pair_panel(part: pd.DataFrame, ax: Axes, arm: str, pairs: list[tuple[str, str]], first: bool) -> None:
    y_of = {p: i for i, p in enumerate(pairs)}
    counts = []
    for subset, filled, shift in (("all", True, -0.13), ("discriminating", False, 0.13)):
        rows = part[part["subset"] == subset]
        if rows.empty:
            continue
        y = np.array([y_of[(a, b)] for a, b in zip(rows["model_a"], rows["model_b"])]) + shift
        for excl, color in ((True, "#D55E00"), (False, "0.55")):
            sel = (rows["excludes_zero"] == excl).to_numpy()
            if sel.any():
                _interval_rows(ax, y[sel], rows[sel], color, filled)
        n = int(rows["n_tasks"].max()) if rows["n_tasks"].notna().any() else 0
        counts.append(
            f"{int(rows['excludes_zero'].sum())} of {len(rows)} separate on {n} {subset} tasks".replace(
                " all tasks", " tasks"
            )
        )
    _zero_line(ax)
    ax.set_yticks(np.arange(len(pairs)), [f"{a} − {b}" for a, b in pairs] if first else [])
    ax.set_ylim(len(pairs) - 0.5, -0.5)
    ax.set_title(arm_label(arm) + "\n" + "\n".join(counts), fontsize=9)
    ax.set_xlabel("Success difference,\nfirst − second model")
    if first:
        ax.set_ylabel("Model pair")
    ax.grid(axis="x", color="0.9")


# --- Figure 5: the native anchor ---------------------------------------------------------------


def fig5_native(stats: Stats) -> Figure:
    fig = _figure((13, 2.4 + 0.6 * max(len(stats.models), 3)))
    ax_s, ax_d = fig.subplots(1, 2, width_ratios=[1, 1.2])
    _suptitle(
        fig,
        stats,
        "Figure 5. The native anchor: the unmodified upstream harness against centralized direct access, per model",
        fontweight="bold",
    )
    succ = stats["success"]
    table = succ.pivot_table(index="model", columns="arm", values="success", aggfunc="first")
    models = [m for m in stats.models if m in table.index]
    y = np.arange(len(models))
    # the two settings sit slightly apart so equal values stay visible
    for arm, marker, color, dy in (("direct", "s", "#E69F00", -0.12), ("native", "D", "#009E73", 0.12)):
        if arm in table.columns:
            ax_s.plot(table[arm].reindex(models), y + dy, marker, color=color, ms=8, ls="none", label=arm_label(arm))
            for yi, v in zip(y + dy, table[arm].reindex(models)):
                if np.isfinite(v):
                    ax_s.annotate(
                        f"{v:.2f}",
                        (v, yi),
                        xytext=(-8, 0),
                        textcoords="offset points",
                        ha="right",
                        va="center",
                        fontsize=7.5,
                        color=color,
                    )
    ax_s.set_yticks(y, models)
    ax_s.set_ylim(len(models) - 0.5, -0.5)
    ax_s.set_xlim(-0.02, 1.02)
    ax_s.set_xlabel("Task success rate (mean over tasks of repetition means)")
    ax_s.set_ylabel("Evaluated model")
    ax_s.set_title("A. Success in each setting")
    ax_s.grid(axis="x", color="0.9")
    ax_s.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2, frameon=False, fontsize=8)
    _contrast_forest(stats, ax_d, ("native-direct",))
    ax_d.set_title("B. Native − direct, per-task paired difference (95% t interval)")
    ax_d.set_ylabel("")
    return fig


# --- Figure 6: cost in both scopes ---------------------------------------------------------------

COST_METRICS = (
    ("usd_per_episode", "Cost per episode (USD)"),
    ("tokens_per_episode", "Tokens per episode"),
    ("actions_per_episode", "Actions per episode"),
)
COST_SCOPES = (("agent", "evaluated agent only"), ("episode", "whole episode, every participant"))


def fig6_cost(stats: Stats) -> Figure:
    cost = stats["cost"]
    fig = _figure((14, 7.5))
    axes = fig.subplots(len(COST_SCOPES), len(COST_METRICS), squeeze=False)
    _suptitle(
        fig, stats, "Figure 6. What an episode costs, by access condition and model, in two scopes", fontweight="bold"
    )
    arms = list(_ordered(cost["arm"], stats.arms))
    models = [m for m in stats.models if m in set(cost["model"])]
    for r, (scope, scope_text) in enumerate(COST_SCOPES):
        for c, (col, label) in enumerate(COST_METRICS):
            ax = axes[r, c]
            _cost_panel(stats, ax, cost[cost["scope"] == scope], col, arms, models)
            ax.set_title(f"{label}\n{scope_text}")
            ax.set_ylabel(label)
    if len(cost) and (cost["usd_per_episode"].fillna(0) == 0).all():
        note = ZERO_COST_NOTE
        if (cost["tokens_per_episode"].fillna(0) == 0).all():
            note += " They use no model tokens either."
        # supxlabel, unlike a free text, gets its own room from the constrained layout
        fig.supxlabel(note, fontsize=10, style="italic", bbox={"boxstyle": "round", "fc": "#fff7d6", "ec": "#c9a400"})
    fig.legend(handles=_model_legend(stats, models), title="Evaluated model", loc="outside right center", frameon=False)
    return fig


def _cost_panel(stats: Stats, ax: Axes, part: pd.DataFrame, col: str, arms: list[str], models: list[str]) -> None:
    if part.empty:
        _no_data(ax, "rows for this scope")
        return
    table = part.pivot_table(index="arm", columns="model", values=col, aggfunc="first").reindex(
        index=arms, columns=models
    )
    width = 0.8 / max(len(models), 1)
    x = np.arange(len(arms))
    for j, m in enumerate(models):
        ax.bar(
            x + (j - (len(models) - 1) / 2) * width,
            table[m].fillna(0).to_numpy(),
            width=width * 0.95,
            color=model_color(stats, m),
            label=m,
        )
    ax.set_xticks(x, [arm_tick(a) for a in arms], fontsize=8)
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.2f}" if col == "usd_per_episode" else "{x:,.0f}"))
    peak = np.nanmax(table.to_numpy(dtype=float)) if table.notna().any().any() else 0
    if not peak > 0:
        ax.set_ylim(0, 1)  # all zero: keep a visible axis instead of a collapsed one
        ax.set_yticks([0])
        ax.text(
            0.5, 0.5, "every value is 0", transform=ax.transAxes, ha="center", color="0.35", style="italic", fontsize=10
        )
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)


# --- Figure 7: split-half reproducibility -------------------------------------------------------


def fig7_split_half(stats: Stats) -> Figure:
    sh = stats["split_half"]
    arms = list(_ordered(sh["arm"], stats.arms))
    n = max(len(arms), 1)
    cols = min(n, 2)
    rows = math.ceil(n / cols)
    fig = _figure((11, 1.6 + 3.4 * rows))
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    _suptitle(
        fig,
        stats,
        "Figure 7. Split-half reproducibility: how often two random halves of the tasks order the "
        "model pairs the same way",
        fontweight="bold",
    )
    k = len(stats.models) * (len(stats.models) - 1) // 2
    for ax, arm in zip(axes, arms):
        _split_panel(ax, sh[sh["arm"] == arm], arm, k)
    for ax in axes[len(arms) :]:
        ax.set_visible(False)
    if not arms:
        axes[0].set_visible(True)
        _no_data(axes[0], "split-half draws")
    handles = [Patch(color=c, alpha=0.8, label=lab) for lab, c in SPLIT_KINDS.values()]
    handles.append(Line2D([], [], color="0.3", ls="--", lw=2, label="mean of each distribution"))
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    return fig


def _split_panel(ax: Axes, part: pd.DataFrame, arm: str, k: int) -> None:
    obs = part[part["kind"] == "observed"]["concordance"].dropna().to_numpy()
    null = part[part["kind"] == "null"]["concordance"].dropna().to_numpy()
    both = np.concatenate([obs, null]) if len(obs) + len(null) else np.array([0.0])
    bins = _concordance_bins(both)
    peak = 0.0
    lines = []
    centers, width = (bins[:-1] + bins[1:]) / 2, np.diff(bins)
    for kind, data, side in (("null", null, -1), ("observed", obs, 1)):
        color = SPLIT_KINDS[kind][1]
        if len(data):
            shares = np.histogram(data, bins=bins)[0] / len(data)
            # the two distributions side by side within each bin, so neither hides the other
            ax.bar(centers + side * width * 0.2, shares, width=width * 0.4, color=color, alpha=0.8)
            peak = max(peak, float(shares.max()))
            ax.axvline(data.mean(), color=color, lw=2, ls="--")
            lines.append(f"{kind} mean {data.mean():.2f} ({len(data)} splits)")
    if len(obs) and len(null):
        lines.append(f"null splits reaching the observed mean: {np.mean(null >= obs.mean() - 1e-12):.1%}")
    ax.text(
        0.02,
        0.97,
        "\n".join(lines) or "no draws",
        transform=ax.transAxes,
        va="top",
        fontsize=8,
        bbox={"fc": "white", "ec": "0.8", "alpha": 0.9},
    )
    ax.set_ylim(0, max(peak, 0.01) * 1.45)  # headroom keeps the summary box clear of the bars
    ax.set_title(arm_label(arm))
    unit = "share of the pairwise orderings" if both.max() <= 1 else f"pairwise orderings, of {k}"
    ax.set_xlabel(f"Model-pair orderings on which the two halves agree ({unit})")
    ax.set_ylabel("Share of splits")
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)


SPLIT_KINDS = {
    "null": ("null: model labels exchanged within each task", "0.55"),
    "observed": ("observed: random halves of the real tasks", "#0072B2"),
}


def _concordance_bins(values: np.ndarray) -> np.ndarray:
    """One bar per attainable value when the statistic is discrete, otherwise 30 even bins."""
    distinct = np.unique(values)
    if len(distinct) <= 30:
        step = np.min(np.diff(distinct)) if len(distinct) > 1 else 1.0
        return np.arange(distinct.min() - step / 2, distinct.max() + step, step)
    return np.linspace(values.min(), values.max(), 31)


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


def fmt_signed(x: float, digits: int = 3) -> str:
    return "—" if not np.isfinite(x) else f"{x:+.{digits}f}".replace("-", "−")


def fmt_p(p: float) -> str:
    if not np.isfinite(p):
        return "—"
    return "<0.00001" if p < 0.00001 else f"{p:.5f}"


def fmt_usd(x: float, digits: int = 0) -> str:
    return "—" if not np.isfinite(x) else f"${x:,.{digits}f}"


def fmt_count(x: float) -> str:
    return "—" if not np.isfinite(x) else f"{x:,.0f}"


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


# --- writing -------------------------------------------------------------------------------

FIGURE_BUILDERS: dict[str, Callable[[Stats], Figure]] = {
    "fig2_success": fig2_success,
    "fig3_breakdown": fig3_breakdown,
    "fig4_separability": fig4_separability,
    "fig5_native": fig5_native,
    "fig6_cost": fig6_cost,
    "fig7_split_half": fig7_split_half,
}


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


def make_figures(stats_dir: Path, out_dir: Path) -> list[Path]:
    """Render every figure and table of `FIGURES` from `stats_dir` into `out_dir`; returns the paths."""
    stats = load_stats(Path(stats_dir))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with matplotlib.rc_context(RC):
        for stem in FIGURE_STEMS:
            written += save_figure(FIGURE_BUILDERS[stem](stats), out_dir, stem)
    written += write_tables(stats, out_dir)
    assert [p.name for p in written] == FIGURES, "FIGURES and the writers disagree"
    return written
