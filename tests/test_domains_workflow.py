"""A design of two domains through the workflow: retail's two smoke tasks and mock's two corpus
tasks, every arm, two scripted models, one repetition, built by Snakemake up to the figures and
the viewer (the session's build, tests/conftest.py `two_domain_build`). Checks each domain's own
statistics and figures, the pooled ones with their strata, Figure 9, and the viewer's domains."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from workflow_helpers import SMOKE_NET_LOG

from incognita.access.figures.paper_figures import FIGURES
from incognita.access.stats.outputs import OUTPUT_FILES

DOMAINS = ("retail", "mock")
TASKS = {
    "retail/11",
    "retail/46",
    "mock/update_task_with_initialization_actions",
    "mock/update_task_with_message_history",
}
STRATA = "mock=2;retail=2"


@pytest.fixture(scope="module")
def wf(two_domain_build):
    net_log = two_domain_build / SMOKE_NET_LOG
    assert not net_log.exists(), f"outbound connections attempted offline:\n{net_log.read_text()}"
    return two_domain_build


@pytest.fixture(scope="module")
def trials(wf) -> pd.DataFrame:
    return pd.read_parquet(wf / "results" / "trials.parquet")


def test_the_trials_cover_both_domains(trials):
    assert set(trials["task"]) == TASKS
    assert set(trials["arm"]) == {"direct", "indirect", "social", "native"} and not trials["excluded"].any()
    assert len(trials) == 4 * 2 * 4  # tasks x models x arms, one repetition


def test_each_domain_has_its_own_tables_and_the_pooled_ones_name_their_strata(wf, trials):
    stats = wf / "results" / "stats"
    assert all((stats / name).is_file() for name in OUTPUT_FILES)
    for domain in DOMAINS:
        assert all((stats / domain / name).is_file() for name in OUTPUT_FILES), domain
        own = pd.read_csv(stats / domain / "success.csv")
        assert "strata" not in own.columns and (own["n_tasks"] == 2).all()
        mine = trials[trials["task"].str.startswith(f"{domain}/")]
        wanted = mine.groupby(["arm", "model"])["success"].mean()  # one repetition: task means are trials
        got = own.set_index(["arm", "model"])["success"]
        assert np.allclose(got.sort_index(), wanted.reindex(got.index).sort_index())
    pooled = pd.read_csv(stats / "success.csv")
    assert (pooled["strata"] == STRATA).all() and (pooled["n_tasks"] == 4).all()
    contrasts = pd.read_csv(stats / "contrasts.csv")
    assert (contrasts.loc[contrasts["n_tasks"] == 4, "strata"] == STRATA).all()


def test_pooled_contrasts_are_blocked_by_domain(wf, trials):
    """Recomputed from the trials table: per-task differences, their mean over the four tasks, and
    the SD from each task's deviation from its own domain's mean on 4 - 2 = 2 degrees of freedom."""
    contrasts = pd.read_csv(wf / "results" / "stats" / "contrasts.csv")
    success = trials.set_index(["arm", "model", "task"])["success"]
    checked = 0
    for row in contrasts[(contrasts["scope"] == "all") & (contrasts["n_tasks"] == 4)].itertuples():
        a, b = row.contrast.split("-")
        d = pd.Series({t: success[(a, row.model, t)] - success[(b, row.model, t)] for t in sorted(TASKS)})
        domain = d.index.str.split("/").str[0]
        within = d - d.groupby(domain).transform("mean")
        sd = np.sqrt((within**2).sum() / 2)
        half = sps.t.ppf(0.975, 2) * sd / 2
        assert row.mean_diff == pytest.approx(d.mean(), abs=1e-9)
        assert (row.ci_low, row.ci_high) == pytest.approx((d.mean() - half, d.mean() + half), abs=1e-9)
        checked += 1
    assert checked >= 6  # three contrasts x two models


def test_figures_per_domain_pooled_and_side_by_side(wf):
    figures = wf / "results" / "figures"
    assert all((figures / name).is_file() for name in FIGURES)
    for domain in DOMAINS:
        assert all((figures / domain / name).is_file() for name in FIGURES), domain
        assert f"[domain {domain}]" in (figures / domain / "fig2_success.svg").read_text()
    assert (figures / "fig9_domains.png").stat().st_size > 0 and (figures / "fig9_domains.svg").is_file()
    svg = (figures / "fig9_domains.svg").read_text()
    assert "domain retail (2 tasks)" in svg and "domain mock (2 tasks)" in svg
    assert "not drawn" not in (wf / "logs" / "figures.log").read_text()


def test_the_viewer_lists_both_domains(wf):
    text = (wf / "results" / "viewer" / "data" / "index.js").read_text()
    index = json.loads(text[len('viewerData("index",') : -len(");\n")])
    names = [c["name"] for c in index["trials"]["columns"]]
    domains = {row[names.index("domain")] for row in index["trials"]["rows"]}
    assert domains == set(DOMAINS) and "domain" in index["trials"]["shown"]
    assert set(index["tasks"]) == TASKS
