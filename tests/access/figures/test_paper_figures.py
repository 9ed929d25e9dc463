"""Figures and tables: rendered from small synthetic statistics that follow the stats contract.

The synthetic CSVs are computed from simulated trials with the paper's estimator (repetition
means, per-task paired differences, t intervals, exact sign-flip tests), so their shapes and
ranges are what the statistics stage will write.
"""

from __future__ import annotations

import itertools
import math
import re
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from incognita.access.figures import paper_figures as figures
from incognita.common.io import InputError

MODELS = ("surveyor", "prober", "hasty", "impatient")
ARMS = ("direct", "indirect", "social", "native")
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
FAILURE_TYPES = (
    "never_requested",
    "requested_not_obtained",
    "obtained_not_delivered",
    "delivered_incorrect",
    "correct_unconfirmed",
)


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
        "social": set(figures.MEASURES),
        "native": set(),
    }
    for arm in ARMS:
        for i, m in enumerate(MODELS):
            level = 0.9 - (0.15 * i if arm == "social" else 0.02 * i)
            for measure in figures.MEASURES:
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


def _cost_rows(offline: bool) -> list[dict]:
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
        "cost": _cost_rows(offline),
        "power": _power_rows(S, offline),
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        pd.DataFrame(rows).to_csv(out / f"{name}.csv", index=False)
    return out


# --- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stats_dir(tmp_path_factory) -> Path:
    return write_synthetic_stats(tmp_path_factory.mktemp("stats"))


@pytest.fixture(scope="module")
def rendered(stats_dir, tmp_path_factory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("figures")
    return out, figures.make_figures(stats_dir, out)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


# --- outputs ------------------------------------------------------------------------------


def test_every_declared_output_is_written_and_nothing_else(rendered):
    out, paths = rendered
    assert [p.name for p in paths] == figures.FIGURES
    assert sorted(p.name for p in out.iterdir()) == sorted(figures.FIGURES)  # no temp files left behind
    assert len(figures.FIGURES) == 6 * 2 + 2 * 2


@pytest.mark.parametrize("stem", figures.FIGURE_STEMS)
def test_figures_are_substantial_images(rendered, stem):
    out, _ = rendered
    width, height = _png_size(out / f"{stem}.png")
    assert width >= 1200 and height >= 500, (stem, width, height)
    assert (out / f"{stem}.png").stat().st_size > 30_000
    svg = (out / f"{stem}.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    assert f"Figure {stem[3]}." in svg  # the title is real text, so the figure names itself


def test_output_is_reproducible(stats_dir, rendered, tmp_path):
    out, _ = rendered
    with figures.matplotlib.rc_context(figures.RC):
        again = figures.save_figure(figures.fig5_native(figures.load_stats(stats_dir)), tmp_path, "fig5_native")
    for path in again:  # no date, software stamp or random id varies between runs
        assert path.read_bytes() == (out / path.name).read_bytes(), path.name


def test_absent_processes_are_drawn_as_absent_not_zero(stats_dir, rendered):
    out, _ = rendered
    stats = figures.load_stats(stats_dir)
    matrix = figures.process_matrix(stats["process"], "direct", stats.models)
    assert matrix.loc["role_identification"].isna().all()  # direct has no holder to find
    assert matrix.loc["execution"].notna().all()
    svg = (out / "fig3_breakdown.svg").read_text()
    # absent cells: 2 measures x 4 models in each centralized arm; native has none at all
    assert svg.count(f">{figures.ABSENT}<") == 2 * 4 * 2
    assert "no process measures in the statistics" in svg
    assert "Failed, no type (native harness)" in svg


def test_unknown_outcome_is_drawn_and_named(stats_dir, tmp_path):
    def rename(df):
        df.loc[df["outcome"] == "failed_unlabelled", "outcome"] = "mystery_label"
        return df

    fig = figures.fig3_breakdown(figures.load_stats(_copy_with(stats_dir, tmp_path, "composition", rename)))
    labels = [t.get_text() for t in fig.subfigs[0].legends[0].get_texts()]
    assert any("mystery_label" in lab for lab in labels) and not any("Failed, no type" in lab for lab in labels)


def test_split_half_keeps_the_null_kind(stats_dir, rendered):
    # "null" is a contract value, not a missing marker: both distributions must reach the figure
    stats = figures.load_stats(stats_dir)
    assert set(stats["split_half"]["kind"]) == {"observed", "null"}
    svg = (rendered[0] / "fig7_split_half.svg").read_text()
    assert svg.count(">null mean ") == len(ARMS) and svg.count(">observed mean ") == len(ARMS)


def test_zero_costs_render_with_a_note(rendered, stats_dir, tmp_path):
    out, _ = rendered
    assert figures.ZERO_COST_NOTE.replace("$", "") in (out / "fig6_cost.svg").read_text().replace("$", "")
    paid = tmp_path / "paid"
    paid.mkdir()
    for src in stats_dir.glob("*.csv"):
        (paid / src.name).write_bytes(src.read_bytes())
    pd.DataFrame(_cost_rows(offline=False)).to_csv(paid / "cost.csv", index=False)
    fig = figures.fig6_cost(figures.load_stats(paid))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts] + [fig.get_supxlabel()]
    assert not any("scripted (offline)" in t or "every value is 0" in t for t in texts)


def test_model_order_follows_social_success_and_keeps_extra_models():
    success = pd.DataFrame(
        {
            "arm": ["social"] * 3 + ["direct"] * 4,
            "model": ["a", "b", "c", "a", "b", "c", "d"],
            "success": [0.2, 0.9, 0.2, 1, 1, 1, 1],
        }
    )
    assert figures.model_order(success) == ("b", "a", "c", "d")  # tie a/c keeps file order, d has no social row
    assert figures.model_order(success[success["arm"] == "direct"]) == ("a", "b", "c", "d")


# --- tables -------------------------------------------------------------------------------


def test_markdown_table_renderer():
    text = figures.markdown_table(["Pair", "p"], [["a | b", "0.5"], ["c", "1"]], "lr")
    assert text == "| Pair | p |\n| :--- | ---: |\n| a \\| b | 0.5 |\n| c | 1 |\n"
    with pytest.raises(ValueError):
        figures.markdown_table(["a", "b"], [["only one"]])


def test_tables_carry_readable_headers_and_every_row(rendered, stats_dir):
    out, _ = rendered
    inter = pd.read_csv(stats_dir / "interactions.csv")
    t1 = pd.read_csv(out / "table1.csv")
    assert list(t1.columns) == list(figures.TABLE1_CSV.values())
    assert np.allclose(t1["Mean delta"], inter["mean_delta"]) and len(t1) == 6
    md = (out / "table1.md").read_text()
    first = inter.iloc[0]
    assert f"| {first.model_a} – {first.model_b} | 18 | {figures.fmt_signed(first.mean_delta)} |" in md
    assert "Global dispersion test" in md
    t2 = pd.read_csv(out / "table2.csv")
    assert list(t2["Condition"]) == [figures.ARM_LABELS[a] for a in ARMS]
    md2 = (out / "table2.md").read_text()
    assert md2.count("\n| ") == 2 + len(ARMS) and "| Socially distributed | " in md2
    assert t1["Tasks"].dtype == np.int64 and "18.0" not in (out / "table1.csv").read_text()


def test_number_formats():
    assert figures.fmt_signed(0.333) == "+0.333" and figures.fmt_signed(-0.0372) == "−0.037"
    assert figures.fmt_p(0.0058594) == "0.00586" and figures.fmt_p(1e-7) == "<0.00001"
    assert figures.fmt_usd(1395.2) == "$1,395" and figures.fmt_usd(float("nan")) == "—"


# --- input errors -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(figures.STATS_INPUTS))
def test_missing_input_csv_names_the_file(stats_dir, tmp_path, name):
    for src in stats_dir.glob("*.csv"):
        if src.stem != name:
            (tmp_path / src.name).write_bytes(src.read_bytes())
    with pytest.raises(InputError, match=re.escape(str(tmp_path / f"{name}.csv")) + ".*not found"):
        figures.make_figures(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing is drawn before every input is checked


def _copy_with(stats_dir: Path, dest: Path, name: str, edit) -> Path:
    for src in stats_dir.glob("*.csv"):
        (dest / src.name).write_bytes(src.read_bytes())
    df = pd.read_csv(dest / f"{name}.csv")
    edit(df).to_csv(dest / f"{name}.csv", index=False)
    return dest


def test_missing_column_and_bad_values_are_named(stats_dir, tmp_path):
    _copy_with(stats_dir, tmp_path, "contrasts", lambda df: df.drop(columns=["ci_high"]))
    with pytest.raises(InputError, match=r"contrasts\.csv: missing column\(s\) ci_high"):
        figures.load_stats(tmp_path)

    def corrupt(df):
        df["usd_per_episode"] = df["usd_per_episode"].astype(object)
        df.loc[3, "usd_per_episode"] = "free"
        return df

    _copy_with(stats_dir, tmp_path, "cost", corrupt)
    with pytest.raises(InputError, match=r"cost\.csv: column 'usd_per_episode', row 5: 'free' is not a number"):
        figures.load_stats(tmp_path)

    def bad_bool(df):
        df["excludes_zero"] = df["excludes_zero"].astype(object)
        df.loc[0, "excludes_zero"] = "maybe"
        return df

    _copy_with(stats_dir, tmp_path, "separability", bad_bool)
    with pytest.raises(InputError, match=r"separability\.csv: column 'excludes_zero', row 2: 'maybe'"):
        figures.load_stats(tmp_path)

    def no_arm(df):
        df.loc[2, "arm"] = None
        return df

    _copy_with(stats_dir, tmp_path, "process", no_arm)
    with pytest.raises(InputError, match=r"process\.csv: column 'arm', row 4: empty"):
        figures.load_stats(tmp_path)


def test_decisions_are_shortened_to_their_verdict():
    long = "insufficient evidence (the interval includes zero; this is not evidence of no effect)"
    assert figures.short_decision(long) == "insufficient evidence"
    assert figures.short_decision("supports the hypothesis") == "supports the hypothesis"


def test_every_title_says_when_the_agents_are_scripted(stats_dir, tmp_path):
    """A figure of the offline default cannot pass for a result about language models."""

    def titles(directory: Path) -> list[str]:
        stats = figures.load_stats(directory)
        return [figures.FIGURE_BUILDERS[stem](stats).get_suptitle() for stem in figures.FIGURE_STEMS]

    note = "Offline scripted agents, not language models"
    for backend, expected in (("scripted", True), ("openai", False), ("openai,scripted", True)):
        out = tmp_path / backend
        out.mkdir()
        for src in stats_dir.glob("*.csv"):
            (out / src.name).write_bytes(src.read_bytes())
        success = pd.read_csv(out / "success.csv").assign(agent_backend=backend)
        success.to_csv(out / "success.csv", index=False)
        assert all((note in t) == expected for t in titles(out)), backend
