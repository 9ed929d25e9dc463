"""A design of several domains: each domain's Figures 2-7 and Tables 1-2, the pooled ones, and
Figure 9 setting the domains side by side (incognita.access.figures.domain_figures)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from incognita.access.figures.domain_figures import fig9_domains
from incognita.access.figures.figure_inputs import load_stats
from incognita.access.figures.paper_figures import FIGURES, make_figures
from incognita.access.freeze import freeze
from incognita.access.stats.stats_stage import run_stats
from incognita.access.stats.synthetic import synthetic_trials

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "config" / "domains" / "retail" / "interpretation.yaml"


@pytest.fixture(scope="module")
def two_domain_stats(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("domain-stats")
    table, locks = tmp / "interpretation.yaml", tmp / "locks.yaml"
    shutil.copy(TABLE, table)
    freeze(locks, names=["interpretation"], extra={"interpretation": str(table)}, today="2026-08-20")
    trials = synthetic_trials(seed=4)
    n = trials["task"].astype(int)
    trials["task"] = np.where(n < 12, "retail/" + trials["task"], "mock/t" + trials["task"])
    # mock runs no native arm: its panel says so instead of drawing a zero.
    trials = trials[~((trials["arm"] == "native") & trials["task"].str.startswith("mock/"))]
    run_stats(trials, [(table, locks)], tmp / "stats", splits=50, domains=["retail", "mock"])
    return tmp / "stats"


def test_each_domain_gets_its_figures_and_figure_9_sets_them_side_by_side(two_domain_stats, tmp_path):
    out = tmp_path / "figures"
    written = {str(p.relative_to(out)) for p in make_figures(two_domain_stats, out, ["retail", "mock"])}
    assert written == (
        set(FIGURES)
        | {f"{d}/{name}" for d in ("retail", "mock") for name in FIGURES}
        | {"fig9_domains.png", "fig9_domains.svg"}
    )
    # Every title names its tasks.
    assert "[domain mock]" in (out / "mock" / "fig2_success.svg").read_text()
    assert "[pooled over retail, mock, domain as stratum]" in (out / "fig2_success.svg").read_text()


def test_figure_9_has_a_panel_per_domain_and_the_pooled_tasks(two_domain_stats):
    pooled = load_stats(two_domain_stats, "pooled")
    domains = {d: load_stats(two_domain_stats / d, f"domain {d}") for d in ("retail", "mock")}
    fig = fig9_domains(pooled, domains)
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == [
        "domain retail (12 tasks)",
        "domain mock (6 tasks)",
        "every domain's tasks pooled (18 tasks)",
    ]
    # One bar per (arm, model) a domain ran, at that domain's own success.
    success = pd.read_csv(two_domain_stats / "mock" / "success.csv")
    heights = sorted(round(b.get_height(), 9) for b in axes[1].patches if np.isfinite(b.get_height()))
    assert heights == sorted(round(v, 9) for v in success["success"])
    assert any(t.get_text() == "not run" for t in axes[1].texts)  # mock has no native arm
    assert not any(t.get_text() == "not run" for t in axes[0].texts)
    with pytest.raises(ValueError, match="several domains"):
        fig9_domains(pooled, {"retail": domains["retail"]})


def test_one_domain_draws_the_figures_once_and_no_figure_9(two_domain_stats, tmp_path):
    out = tmp_path / "one"
    written = [p.name for p in make_figures(two_domain_stats / "retail", out, ["retail"])]
    assert written == FIGURES and not (out / "fig9_domains.png").exists()
    assert "[domain" not in (out / "fig2_success.svg").read_text()
