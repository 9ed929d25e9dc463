"""Domains as strata: the pooled statistics of a design of several domains, and each domain's own.

The hand-derived cases: six per-task differences, three per domain, whose domains sit on either
side of the pooled mean. Pooled without strata their spread is mostly the gap between the two
domains; with the domain as a stratum only the spread inside each domain is noise.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from incognita.access.freeze import freeze
from incognita.access.stats.estimator import Stratified, paired, strata_label, stratified
from incognita.access.stats.interpretation import parse_interpretation
from incognita.access.stats.outputs import OUTPUT_FILES
from incognita.access.stats.signflip import signflip_p
from incognita.access.stats.splithalf import halves, split_half
from incognita.access.stats.stats_stage import build_tables, run_stats, split_domains
from incognita.access.stats.synthetic import synthetic_trials
from incognita.common.io import InputError

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "config" / "domains" / "retail" / "interpretation.yaml"
T_975_4 = 2.7764451051977987  # t quantile 0.975 on 4 degrees of freedom (tables)
T_975_5 = 2.5705818366147395  # ... on 5


def _diffs(retail: list[float], mock: list[float]) -> pd.Series:
    tasks = [f"retail/{i}" for i in range(len(retail))] + [f"mock/t{i}" for i in range(len(mock))]
    return pd.Series(retail + mock, index=tasks, dtype=float)


def test_stratified_interval_derived_by_hand():
    # retail differences 0.7, 0.9, 0.5 (mean 0.7); mock -0.1, 0.1, -0.3 (mean -0.1); pooled mean 0.3.
    d = _diffs([0.7, 0.9, 0.5], [-0.1, 0.1, -0.3])
    p = stratified(d)
    # Within-domain deviations 0, +-0.2 in each domain: SS = 4 x 0.04 = 0.16 on 6 - 2 = 4 df, SD 0.2;
    # half-width t(4) x 0.2 / sqrt(6) = 0.22669.
    assert isinstance(p, Stratified) and p.strata == "mock=3;retail=3"
    assert p.n_tasks == 6 and p.mean_diff == pytest.approx(0.3)
    assert p.sd == pytest.approx(0.2)
    half = T_975_4 * 0.2 / np.sqrt(6)
    assert (p.ci_low, p.ci_high) == pytest.approx((0.3 - half, 0.3 + half))
    assert p.excludes_zero  # 0.0733 .. 0.5267
    # Unstratified: deviations from 0.3 are +-0.4, +-0.6, +-0.2: SS 1.12 on 5 df, SD sqrt(0.224);
    # half-width t(5) x 0.47329 / sqrt(6) = 0.49669: the interval crosses zero.
    flat = paired(d.to_numpy())
    assert flat.sd == pytest.approx(np.sqrt(0.224))
    assert flat.ci_high - flat.mean_diff == pytest.approx(T_975_5 * np.sqrt(0.224) / np.sqrt(6))
    assert flat.mean_diff == p.mean_diff and not flat.excludes_zero


def test_the_stratum_changes_nothing_where_the_domains_agree_in_mean():
    # Both domains centred on 0.3: the within-domain SS is the whole SS, only a degree of freedom goes.
    d = _diffs([0.5, 0.1, 0.3], [0.4, 0.2, 0.3])
    p, flat = stratified(d), paired(d.to_numpy())
    assert p.sd == pytest.approx(flat.sd * np.sqrt(5 / 4))
    assert p.mean_diff == flat.mean_diff


def test_one_domain_is_exactly_the_papers_interval():
    d = pd.Series([0.5, -1 / 3, 2 / 3, 0.0], index=["retail/1", "retail/2", "retail/3", "retail/4"])
    assert stratified(d) == paired(d.to_numpy()) and type(stratified(d)) is not Stratified
    unqualified = pd.Series([0.5, 0.0], index=["0", "1"])  # a synthetic table's ids: one stratum
    assert stratified(unqualified) == paired(unqualified.to_numpy())
    # Every domain with one task: a mean, no interval (no degree of freedom within a domain).
    lone = stratified(_diffs([0.5], [0.0]))
    assert lone.mean_diff == 0.25 and np.isnan(lone.ci_low) and lone.strata == "mock=1;retail=1"


def test_sign_flip_is_the_same_with_strata():
    """Flipping each task's sign is within its domain already: the exact p has nothing to stratify."""
    d = _diffs([0.7, 0.9, 0.5], [-0.1, 0.1, -0.3])
    # 2^6 = 64 patterns; |sum| >= 1.8 for the observed 0.7+0.9+0.5-0.1+0.1-0.3 = 1.8.
    patterns = np.array([[1 - 2 * ((k >> i) & 1) for i in range(6)] for k in range(64)])
    sums = np.abs(patterns @ d.to_numpy())
    assert signflip_p(d.to_numpy()) == pytest.approx((sums >= 1.8 - 1e-9).mean())


def test_split_halves_keep_each_domain_in_proportion():
    rng = np.random.default_rng(3)
    draws = rng.random((500, 7))
    strata = ["retail"] * 4 + ["mock"] * 3
    in_a = halves(draws, strata)
    # 7 // 2 = 3 in half A: 4 // 2 = 2 retail, 3 // 2 = 1 mock, and 3 = 2 + 1 already.
    assert (in_a[:, :4].sum(axis=1) == 2).all() and (in_a[:, 4:].sum(axis=1) == 1).all()
    # Odd domains of 3 and 3: 1 + 1 = 2 of 3, so mock (first by name) gives one more.
    in_a = halves(rng.random((200, 6)), ["retail"] * 3 + ["mock"] * 3)
    assert (in_a[:, 3:].sum(axis=1) == 2).all() and (in_a[:, :3].sum(axis=1) == 1).all()
    # One domain: the split as before (a random floor(n/2)-subset from the same draws).
    assert (halves(draws, ["retail"] * 7) == (np.argsort(draws, axis=1) < 3)).all()
    assert (halves(draws) == (np.argsort(draws, axis=1) < 3)).all()


def test_split_half_with_strata_differs_from_an_unstratified_split():
    rng = np.random.default_rng(5)
    m = rng.random((8, 3))
    strata = ["retail"] * 4 + ["mock"] * 4
    plain, by_domain = split_half(m, 300, 7), split_half(m, 300, 7, strata)
    assert plain.n_tasks == by_domain.n_tasks == 8
    assert not np.array_equal(plain.observed, by_domain.observed)
    assert np.array_equal(split_half(m, 300, 7, ["retail"] * 8).observed, plain.observed)


# --- the tables -----------------------------------------------------------------------------------


def _two_domains(trials: pd.DataFrame) -> pd.DataFrame:
    """The synthetic tasks 0-17 as retail/0-8 and mock/t9-t17."""
    out = trials.copy()
    n = out["task"].astype(int)
    out["task"] = np.where(n < 9, "retail/" + out["task"].astype(str), "mock/t" + out["task"].astype(str))
    return out


@pytest.fixture(scope="module")
def synth() -> pd.DataFrame:
    return synthetic_trials(seed=11)


@pytest.fixture()
def locked(tmp_path) -> tuple[Path, Path]:
    table, locks = tmp_path / "interpretation.yaml", tmp_path / "locks.yaml"
    shutil.copy(TABLE, table)
    freeze(locks, names=["interpretation"], extra={"interpretation": str(table)}, today="2026-08-20")
    return table, locks


def test_pooled_tables_take_the_domain_as_a_stratum_where_it_matters(synth):
    interp = parse_interpretation(TABLE)
    flat = build_tables(synth, interp, splits=200)
    pooled = build_tables(_two_domains(synth), interp, splits=200)
    # Point estimates do not see the stratum: a task weighs the same pooled or not.
    for name, value in (("success", "success"), ("contrasts", "mean_diff"), ("interactions", "mean_delta")):
        assert np.allclose(pooled[name][value], flat[name][value], equal_nan=True), name
        assert "strata" not in flat[name].columns and set(pooled[name]["strata"]) == {"mock=9;retail=9"}, name
    assert np.array_equal(pooled["interactions"]["p_exact"], flat["interactions"]["p_exact"])
    # The intervals do: their SD is the within-domain one, on 16 degrees of freedom instead of 17.
    diff = pooled["contrasts"]["ci_high"] - flat["contrasts"]["ci_high"]
    assert (diff.abs() > 1e-9).any()
    # Split-half: halves drawn within domains, so the observed concordances change.
    assert not pooled["split_half"]["concordance"].equals(flat["split_half"]["concordance"])
    assert (pooled["split_half_summary"]["strata"] == "mock=9;retail=9").all()
    assert (pooled["power"]["strata"] == "mock=9;retail=9").all()
    # Per-episode tables (composition, cost, audits) pool trials and have no stratum to take.
    assert pooled["composition"].equals(flat["composition"])


def test_run_stats_writes_each_domains_tables_beside_the_pooled_ones(synth, locked, tmp_path):
    trials = _two_domains(synth)
    out = tmp_path / "stats"
    paths = run_stats(trials, [locked], out, splits=100, domains=["retail", "mock"])
    names = {str(p.relative_to(out)) for p in paths}
    assert names == set(OUTPUT_FILES) | {f"{d}/{f}" for d in ("retail", "mock") for f in OUTPUT_FILES}
    # A domain's tables are those of its trials alone.
    alone = tmp_path / "retail-alone"
    run_stats(trials[trials["task"].str.startswith("retail/")], [locked], alone, splits=100)
    for name in ("success", "contrasts", "interactions", "split_half_summary", "power"):
        assert (out / "retail" / f"{name}.csv").read_bytes() == (alone / f"{name}.csv").read_bytes(), name
    # Its Markdown links open the viewer on that domain's trials.
    assert "../../viewer/index.html#trials?domain=retail&arm=" in (out / "retail" / "success.md").read_text()
    assert "../viewer/index.html#trials?arm=" in (out / "success.md").read_text()
    # One domain: the pooled tables only, as before.
    one = run_stats(trials[trials["task"].str.startswith("mock/")], [locked], tmp_path / "one", splits=100)
    assert sorted(p.name for p in one) == sorted(OUTPUT_FILES)


def test_a_trials_table_must_match_the_design_domains(synth):
    trials = _two_domains(synth)
    with pytest.raises(InputError, match="task 'mock/t9' is of no design domain \\(retail\\)"):
        split_domains(trials, ["retail"])
    with pytest.raises(InputError, match="design domain\\(s\\) airline have no trials"):
        split_domains(trials, ["retail", "mock", "airline"])
    assert list(split_domains(trials)) == ["mock", "retail"]


def test_strata_label():
    assert strata_label(["retail/1", "mock/a", "retail/2"]) == "mock=1;retail=2"
    assert strata_label(["retail/1", "retail/2"]) == ""
