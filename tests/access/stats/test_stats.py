"""Statistics stage: estimator, decisions, tables, the interpretation lock and run_stats outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from incognita.access.freeze import LockError, freeze
from incognita.access.stats.estimator import paired, task_means, validate_trials
from incognita.access.stats.interpretation import (
    decide,
    load_design_interpretation,
    load_interpretation,
    parse_interpretation,
)
from incognita.access.stats.outputs import OUTPUT_FILES
from incognita.access.stats.paper_tables import discriminating
from incognita.access.stats.signflip import signflip_p
from incognita.access.stats.splithalf import split_half
from incognita.access.stats.stats_stage import build_tables, run_stats
from incognita.access.stats.synthetic import synthetic_trials
from incognita.common.io import InputError
from incognita.common.tables import to_markdown

ROOT = Path(__file__).resolve().parents[3]
RETAIL = ROOT / "config" / "domains" / "retail"
TABLE = RETAIL / "interpretation.yaml"  # retail's, the design's one domain

# The figures read these columns (the data contract); extra columns are allowed.
CONTRACT = {
    "success": ["arm", "model", "n_tasks", "success", "db_success"],
    "contrasts": ["model", "contrast", "scope", "n_tasks", "mean_diff", "ci_low", "ci_high", "decision"],
    "separability": [
        "arm",
        "subset",
        "model_a",
        "model_b",
        "n_tasks",
        "mean_diff",
        "ci_low",
        "ci_high",
        "excludes_zero",
    ],
    "interactions": ["model_a", "model_b", "n_tasks", "mean_delta", "ci_low", "ci_high", "p_exact", "p_holm"],
    "dispersion": ["n_tasks", "mean_statistic", "p_exact"],
    "split_half": ["arm", "kind", "split", "concordance"],
    "composition": ["arm", "model", "outcome", "count"],
    "process": ["arm", "model", "measure", "mean", "n"],
    "cost": ["arm", "model", "scope", "usd_per_episode", "tokens_per_episode", "actions_per_episode"],
    "power": ["arm", "gap_sd", "largest_gap", "tasks", "usd_per_episode", "implied_cost_usd"],
}


@pytest.fixture(scope="module")
def interp():
    return parse_interpretation(TABLE)


@pytest.fixture(scope="module")
def synth() -> pd.DataFrame:
    return synthetic_trials(seed=11, usd_per_1k_tokens=0.01)


@pytest.fixture(scope="module")
def tables(synth, interp):
    return build_tables(synth, interp, splits=400)


@pytest.fixture()
def locked(tmp_path) -> tuple[Path, Path]:
    """A copy of the interpretation table frozen in a scratch locks file."""
    table, locks = tmp_path / "interpretation.yaml", tmp_path / "locks.yaml"
    shutil.copy(TABLE, table)
    freeze(locks, names=["interpretation"], extra={"interpretation": str(table)}, today="2026-08-20")
    return table, locks


def _trials(rows: list[tuple]) -> pd.DataFrame:
    """A minimal contract table from (arm, model, task, rep, success[, excluded]) tuples."""
    base = synthetic_trials(seed=0, n_tasks=1, models=("x",), reps=1, arms=("direct",)).iloc[0]
    out = []
    for r in rows:
        arm, model, task, rep, success = r[:5]
        excluded = r[5] if len(r) > 5 else False
        row = base.copy()
        row[["arm", "model", "task", "rep", "excluded"]] = [arm, model, str(task), rep, excluded]
        row["success"] = row["database_only_success"] = np.nan if excluded else success
        row["failure_type"] = pd.NA if success == 1 or excluded else "delivered_incorrect"
        out.append(row)
    return pd.DataFrame(out).reset_index(drop=True)


# --- estimator ---------------------------------------------------------------------------------


def test_repetitions_are_averaged_within_a_task_first():
    # task 0: reps 1,1,0 (2/3); task 1: one scored rep 0 and one excluded. Task-level mean = 1/3;
    # the pooled trial mean would be 2/4 = 0.5.
    t = validate_trials(
        _trials(
            [
                ("direct", "a", 0, 0, 1.0),
                ("direct", "a", 0, 1, 1.0),
                ("direct", "a", 0, 2, 0.0),
                ("direct", "a", 1, 0, 0.0),
                ("direct", "a", 1, 1, 0.0, True),
            ]
        )
    )
    m = task_means(t, "success")
    assert m[("direct", "a", "0")] == pytest.approx(2 / 3) and m[("direct", "a", "1")] == 0.0
    interp = parse_interpretation(TABLE)
    success = build_tables(t, interp, splits=10)["success"].iloc[0]
    assert success["success"] == pytest.approx(1 / 3)
    assert (success["n_trials"], success["n_excluded"]) == (4, 1)


def test_paired_interval_is_the_one_sample_t_interval():
    d = np.array([1, 2 / 3, 0, 1 / 3, 1, 0, -1 / 3, 2 / 3, 1 / 3, 1])
    p = paired(d)
    ci = stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert (p.n_tasks, p.mean_diff) == (10, pytest.approx(d.mean()))
    assert (p.ci_low, p.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert p.excludes_zero
    assert paired(np.array([1 / 3, -1 / 3, 2 / 3, -2 / 3])).crosses_zero


def test_identical_models_do_not_exclude_zero_through_float_residue():
    d = np.array([0.0, 0.0, 2 / 3, 1.0, -1.0, -2 / 3])
    assert d.mean() != 0.0  # float residue of an exact zero
    p = paired(d)
    assert p.mean_diff == 0.0 and not p.excludes_zero
    assert not paired(np.zeros(5)).excludes_zero


def test_comparison_uses_only_tasks_present_on_both_sides(interp):
    rows = [(arm, "a", task, 0, 1.0) for arm in ("indirect", "social") for task in range(4)]
    rows += [("social", "a", 4, 0, 0.0)]  # task 4 only under social
    rows += [("indirect", "a", 5, 0, 1.0, True)]  # task 5: its only trial is excluded
    rows += [("social", "a", 5, 0, 0.0)]
    c = build_tables(_trials(rows), interp, splits=10)["contrasts"]
    row = c[(c["contrast"] == "indirect-social") & (c["scope"] == "all")].iloc[0]
    assert row["n_tasks"] == 4 and row["mean_diff"] == 0.0


def test_validation_names_the_problem(synth):
    with pytest.raises(InputError, match="missing column.*cost_episode_usd"):
        validate_trials(synth.drop(columns=["cost_episode_usd"]))
    with pytest.raises(InputError, match="arm: empty value"):
        validate_trials(synth.assign(arm=synth["arm"].replace("direct", " ")))
    with pytest.raises(InputError, match="duplicate trial"):
        validate_trials(pd.concat([synth, synth.iloc[:1]]))
    bad = synth.copy()
    bad.loc[bad.index[~bad["excluded"]][0], "success"] = np.nan
    with pytest.raises(InputError, match="success: NaN on a trial that is not excluded"):
        validate_trials(bad)


def test_reader_dtypes_are_accepted(synth, interp, tables):
    # the reader writes nullable dtypes: 'string' with <NA> and Int64
    t = synth.copy()
    for col in (
        "arm",
        "model",
        "task",
        "error",
        "termination",
        "failure_type",
        "failure_type_reads_credited",
        "injected_failure",
    ):
        t[col] = pd.array([None if pd.isna(v) else str(v) for v in t[col]], dtype="string")
    for col in (
        "rep",
        "seed",
        "agent_actions",
        "messages",
        "unanswerable_questions",
        "non_reference_reads",
        "tokens_agent",
        "tokens_episode",
        "cache_hits",
        "cache_misses",
    ):
        t[col] = t[col].astype("Int64")
    out = build_tables(t, interp, splits=400)
    for name in ("success", "contrasts", "composition", "audit_reads", "power", "cost", "process"):
        pd.testing.assert_frame_equal(out[name], tables[name], check_dtype=False)


# --- the interpretation table -------------------------------------------------------------------


def test_repository_table_matches_its_lock():
    interp = load_interpretation(TABLE, RETAIL / "locks.yaml")
    assert interp.primary.name == "indirect-social" and interp.direction == 1
    assert [c.name for c in interp.supporting] == ["direct-indirect", "native-direct"]


def test_changed_table_is_refused(locked, synth, tmp_path):
    table, locks = locked
    assert load_interpretation(table, locks).lock_version == 1
    table.write_text(table.read_text().replace("direction: positive", "direction: negative"))
    with pytest.raises(LockError, match="changed since it was frozen"):
        run_stats(synth, [(table, locks)], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_unfrozen_table_is_refused(tmp_path, synth):
    (tmp_path / "locks.yaml").write_text("artifacts: {}\n")
    with pytest.raises(LockError, match="has not been frozen"):
        run_stats(synth, [(TABLE, tmp_path / "locks.yaml")], tmp_path / "out")


def test_the_domains_of_a_design_pool_under_one_table(locked, tmp_path):
    """Each domain's table is checked against its own lock; the pooled analysis needs them equal."""
    table, locks = locked
    assert load_design_interpretation([(table, locks), (TABLE, RETAIL / "locks.yaml")]).sha256 == (
        load_interpretation(TABLE, RETAIL / "locks.yaml").sha256
    )
    other, other_locks = tmp_path / "other" / "interpretation.yaml", tmp_path / "other" / "locks.yaml"
    other.parent.mkdir()
    other.write_text(table.read_text().replace("direction: positive", "direction: negative"))
    freeze(other_locks, names=["interpretation"], extra={"interpretation": str(other)}, today="2026-08-20")
    with pytest.raises(InputError, match="interpretation tables must be the same"):
        load_design_interpretation([(table, locks), (other, other_locks)])
    with pytest.raises(InputError, match="no interpretation table given"):
        load_design_interpretation([])


def test_the_default_domains_tables_are_locked_and_pool(monkeypatch):
    """The default design's domains (retail, airline) each freeze the one pre-specified analysis:
    the stats stage takes the design's table from both, each against its own lock."""
    from incognita.access.cells import design_files
    from incognita.common.io import read_yaml

    monkeypatch.chdir(ROOT)  # the domains' folders are relative paths
    files = design_files(read_yaml(ROOT / "config" / "config.yaml"))
    assert list(files) == ["retail", "airline"]
    interp = load_design_interpretation([(f.interpretation, f.locks) for f in files.values()])
    assert interp.sha256 == load_interpretation(TABLE, RETAIL / "locks.yaml").sha256
    assert interp.primary.name == "indirect-social" and interp.direction > 0


def test_bad_table_is_named(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(TABLE.read_text().replace("contrast: indirect-social", "contrast: indirect-remote"))
    with pytest.raises(InputError, match="primary.contrast: 'indirect-remote'"):
        parse_interpretation(path)
    path.write_text(TABLE.read_text().replace("floor: 0.0", "floor: 1.0"))
    with pytest.raises(InputError, match="floor"):
        parse_interpretation(path)


def test_decisions(interp):
    primary, support = interp.primary, interp.supporting[0]
    d = interp.decisions
    assert decide(interp, primary, 0.1, 0.5, False) == d["supports"]
    assert decide(interp, primary, -0.5, -0.1, False) == d["opposes"]
    assert decide(interp, primary, -0.1, 0.5, False) == d["insufficient"]
    assert d["insufficient"].startswith("insufficient evidence")
    assert decide(interp, primary, 0.1, 0.5, True) == d["floor_ceiling"]
    assert decide(interp, primary, float("nan"), float("nan"), False) == d["unavailable"]
    assert decide(interp, support, -0.1, 0.2, False) == d["supporting_includes_zero"]
    assert decide(interp, support, 0.05, 0.2, False) == d["supporting_excludes_zero"]


def test_cell_on_a_bound_changes_the_decision(interp):
    # model a: always succeeds under indirect (ceiling), fails often under social
    rows = [("indirect", "a", t, r, 1.0) for t in range(6) for r in range(2)]
    rows += [("social", "a", t, r, float(t % 3 == 0)) for t in range(6) for r in range(2)]
    out = build_tables(_trials(rows), interp, splits=10)
    c = out["contrasts"]
    row = c[(c["contrast"] == "indirect-social") & (c["scope"] == "all")].iloc[0]
    assert row["decision"] == interp.decisions["floor_ceiling"] and row["on_bound"]
    assert "indirect/a (1.000)" in out["primary"]


def test_missing_native_arm_is_unavailable(interp):
    t = synthetic_trials(seed=2, arms=("direct", "indirect", "social"), n_tasks=6, reps=2)
    c = build_tables(t, interp, splits=10)["contrasts"]
    nd = c[c["contrast"] == "native-direct"]
    assert len(nd) == 8 and (nd["n_tasks"] == 0).all()
    assert (nd["decision"] == interp.decisions["unavailable"]).all()


# --- separability, interactions, dispersion -------------------------------------------------------


def test_discriminating_drops_all_solved_and_all_failed_tasks():
    m = pd.DataFrame({"a": [1.0, 0.0, 1.0, 2 / 3], "b": [1.0, 0.0, 0.0, 1.0]}, index=list("wxyz"))
    assert list(discriminating(m).index) == ["y", "z"]


def test_interactions_are_differences_of_the_primary_contrast(tables, synth, interp):
    means = task_means(validate_trials(synth), "success")
    ind, soc = means.xs("indirect").unstack("model"), means.xs("social").unstack("model")
    delta = ((ind["m1"] - soc["m1"]) - (ind["m2"] - soc["m2"])).dropna()
    row = tables["interactions"].iloc[0]
    assert (row["model_a"], row["model_b"]) == ("m1", "m2")
    assert row["mean_delta"] == pytest.approx(delta.mean())
    assert row["p_exact"] == pytest.approx(signflip_p(delta.to_numpy()))
    assert (tables["interactions"]["p_holm"] >= tables["interactions"]["p_exact"]).all()
    assert len(tables["interactions"]) == 6


def test_dispersion_statistic_by_hand(interp):
    # one task: indirect means (1, 1) -> SS 0; social (1, 0) -> SS 0.5; statistic +0.5
    # another:  indirect (1, 0) -> 0.5;      social (0, 0) -> 0;   statistic -0.5
    # third:    indirect (1, 1) -> 0;        social (1, 0) -> 0.5; statistic +0.5
    rows = [
        ("indirect", "a", 0, 0, 1.0),
        ("indirect", "b", 0, 0, 1.0),
        ("social", "a", 0, 0, 1.0),
        ("social", "b", 0, 0, 0.0),
        ("indirect", "a", 1, 0, 1.0),
        ("indirect", "b", 1, 0, 0.0),
        ("social", "a", 1, 0, 0.0),
        ("social", "b", 1, 0, 0.0),
        ("indirect", "a", 2, 0, 1.0),
        ("indirect", "b", 2, 0, 1.0),
        ("social", "a", 2, 0, 1.0),
        ("social", "b", 2, 0, 0.0),
    ]
    disp = build_tables(_trials(rows), interp, splits=10)["dispersion"].iloc[0]
    assert disp["n_tasks"] == 3 and disp["mean_statistic"] == pytest.approx(0.5 / 3)
    assert disp["p_exact"] == pytest.approx(signflip_p([0.5, -0.5, 0.5]))  # = 6/8


def test_social_arm_separates_more_than_centralized(tables):
    summary = tables["separability_summary"].set_index(["arm", "subset"])
    assert (
        summary.loc[("social", "all"), "pairs_excluding_zero"]
        > summary.loc[("indirect", "all"), "pairs_excluding_zero"]
    )
    assert summary.loc[("social", "all"), "spread"] == pytest.approx(
        tables["power"].set_index("arm").loc["social", "largest_gap"]
    )


# --- split-half ---------------------------------------------------------------------------------


def test_split_half_is_seeded_and_detects_a_stable_ordering():
    rng = np.random.default_rng(0)
    # four models with well separated abilities on every task: halves agree on all six pairs
    m = np.clip(np.array([0.1, 0.4, 0.7, 1.0]) + rng.normal(0, 0.05, (18, 4)), 0, 1)
    a, b = split_half(m, 500, seed=1), split_half(m, 500, seed=1)
    assert np.array_equal(a.observed, b.observed) and np.array_equal(a.null, b.null)
    assert a.observed_mean == 6.0 and a.null_mean < 4.0 and a.null_reach < 0.05
    assert not np.array_equal(a.null, split_half(m, 500, seed=2).null)


def test_split_half_ties_do_not_count_as_agreement():
    m = np.ones((10, 3))  # every model solves every task: no ordering at all
    res = split_half(m, 50, seed=0)
    assert res.observed_mean == 0.0 and res.null_mean == 0.0 and res.n_pairs == 3


def test_split_half_table_shape(tables):
    sh = tables["split_half"]
    assert set(sh["kind"]) == {"observed", "null"}
    assert len(sh) == 4 * 2 * 400 and sh["concordance"].between(0, 6).all()


# --- composition, audit, cost, power -------------------------------------------------------------


def test_composition_counts_every_trial_once(tables, synth):
    comp = tables["composition"]
    assert comp["count"].sum() == len(synth)
    native = comp[comp["arm"] == "native"].groupby("outcome")["count"].sum()
    assert native["failed_unlabelled"] > 0 and native[["never_requested", "delivered_incorrect"]].sum() == 0
    excl = comp[comp["outcome"] == "excluded"]["count"].sum()
    assert excl == synth["excluded"].sum()


def test_process_is_nan_where_the_arm_lacks_it(tables):
    p = tables["process"].set_index(["arm", "model", "measure"])
    assert np.isnan(p.loc[("direct", "m1", "holder_contacted"), "mean"])
    assert p.loc[("direct", "m1", "holder_contacted"), "n"] == 0
    assert p.loc[("social", "m1", "holder_contacted"), "n"] > 0
    assert p.loc[("native", "m2", "execution"), "n"] == 0


def test_audit_counts_label_changes(tables, synth):
    audit = tables["audit_reads"].set_index(["arm", "model"])
    s = synth[(synth["arm"] == "social") & ~synth["excluded"] & (synth["failure_type"] == "requested_not_obtained")]
    row = audit.loc[("social", "all")]
    assert row["requested_not_obtained"] == len(s)
    assert row["with_non_reference_reads"] == int((s["non_reference_reads"] > 0).sum())
    moved = s[s["failure_type_reads_credited"] != "requested_not_obtained"]
    assert row["labels_changed"] == len(moved) > 0
    assert row["to_never_requested"] + row["to_obtained_not_delivered"] == len(moved)
    assert "native" not in audit.index.get_level_values("arm")


def test_acquisition_breakdown_and_approach_audit_on_a_small_table():
    from incognita.access.stats import paper_tables as T

    rows = [  # arm, failure type, missing customer, missing service, gate withheld, request-based label
        ("social", "requested_not_obtained", 1, 0, 1, "never_requested"),
        ("social", "requested_not_obtained", 0, 2, 0, "requested_not_obtained"),
        ("social", "requested_not_obtained", 1, 1, 0, "requested_not_obtained"),
        ("social", "never_requested", 2, 0, 0, "never_requested"),
        ("social", None, 0, 0, 0, None),
    ]
    df = pd.DataFrame(
        [
            {
                "arm": a,
                "model": "m",
                "task": str(i),
                "rep": 0,
                "excluded": False,
                "success": float(ft is None),
                "failure_type": ft,
                "missing_customer_facts": c,
                "missing_service_facts": sv,
                "gate_withheld_facts": w,
                "failure_type_request_based": rb,
            }
            for i, (a, ft, c, sv, w, rb) in enumerate(rows)
        ]
    )
    acq = T.acquisition_table(df, ["social"], ["m"]).set_index("model").loc["all"]
    assert (acq["failed"], acq["requested_not_obtained"]) == (4, 3)
    assert (acq["customer_only"], acq["service_only"], acq["both"], acq["failed_with_gate_withheld"]) == (1, 1, 1, 1)
    audit = T.audit_approach_table(df, ["social"], ["m"]).set_index("model").loc["all"]
    assert audit["labels_changed"] == 1 and audit["requested_not_obtained_to_never_requested"] == 1


def test_power_and_cost_tables(tables, synth):
    power = tables["power"].set_index("arm")
    social = power.loc["social"]
    scored = synth[~synth["excluded"] & (synth["arm"] == "social")]
    assert social["usd_per_episode"] == pytest.approx(scored["cost_episode_usd"].mean())
    assert social["implied_cost_usd"] == pytest.approx(social["tasks"] * 4 * 3 * social["usd_per_episode"])
    sep = tables["separability"]
    cost = tables["cost"].set_index(["arm", "model", "scope"])
    agent, episode = cost.loc[("social", "m1", "agent")], cost.loc[("social", "m1", "episode")]
    assert episode["usd_per_episode"] > agent["usd_per_episode"] > 0
    assert len(sep[(sep["arm"] == "social") & (sep["subset"] == "all")]) == 6


# --- run_stats and the files it writes ------------------------------------------------------------


def test_run_stats_writes_the_contract(locked, synth, tmp_path):
    table, locks = locked
    out = tmp_path / "stats"
    paths = run_stats(synth, [(table, locks)], out, splits=200)
    names = {p.name for p in paths}
    for name, columns in CONTRACT.items():
        assert f"{name}.csv" in names and f"{name}.md" in names
        df = pd.read_csv(out / f"{name}.csv")
        assert list(df.columns[: len(columns)]) == columns, name  # contract columns first, in order
    assert {"audit_reads.csv", "primary.md"} <= names
    assert sorted(names) == sorted(OUTPUT_FILES)  # the workflow declares exactly what is written
    contrasts = pd.read_csv(out / "contrasts.csv")
    assert set(contrasts["scope"]) == {"all", "db_only"}
    assert set(contrasts["contrast"]) == {"indirect-social", "direct-indirect", "native-direct"}
    crossing = contrasts[(contrasts["ci_low"] <= 0) & (contrasts["ci_high"] >= 0)]
    assert crossing["decision"].str.startswith("insufficient evidence").all()
    primary = (out / "primary.md").read_text()
    assert "version 1, sha256" in primary and "not pre-specified" in primary
    assert not list(out.glob(".*.tmp"))


def test_run_stats_is_deterministic(locked, synth, tmp_path):
    table, locks = locked
    run_stats(synth, [(table, locks)], tmp_path / "a", splits=100)
    run_stats(synth, [(table, locks)], tmp_path / "b", splits=100)
    for path in sorted((tmp_path / "a").iterdir()):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name


def test_markdown_renderer():
    df = pd.DataFrame(
        {"name": ["a|b", "c"], "x": [0.123456, np.nan], "p_exact": [0.0012345, 1.0], "ok": [True, False], "n": [3, 4]}
    )
    md = to_markdown(df).splitlines()
    assert md[0] == "| name | x | p_exact | ok | n |"
    assert md[1] == "| --- | ---: | ---: | --- | ---: |"
    assert md[2] == "| a\\|b | 0.123 | 0.00123 | yes | 3 |"
    assert md[3] == "| c |  | 1.00000 | no | 4 |"


def test_stats_command_end_to_end(locked, synth, tmp_path):
    from click.testing import CliRunner

    from incognita.access.stats.commands import stats_command

    table, locks = locked
    trials = tmp_path / "trials.parquet"
    synth.to_parquet(trials)
    config = tmp_path / "config.yaml"
    config.write_text("models: {m4: scripted:a, m3: scripted:b, m2: scripted:c, m1: scripted:d}\n")
    out = tmp_path / "stats"
    res = CliRunner().invoke(
        stats_command,
        [
            "--trials",
            str(trials),
            "--interpretation",
            str(table),
            "--locks",
            str(locks),
            "--config",
            str(config),
            "--out",
            str(out),
            "--splits",
            "50",
        ],
    )
    assert res.exit_code == 0, res.output
    assert f"{len(OUTPUT_FILES)} files from 864 trials" in res.output
    assert list(pd.read_csv(out / "success.csv")["model"][:4]) == ["m4", "m3", "m2", "m1"]
    res = CliRunner().invoke(stats_command, ["--trials", str(tmp_path / "none.parquet"), "--out", str(out)])
    assert res.exit_code != 0 and "trials table not found" in str(res.exception)
    unpaired = ["--trials", str(trials), "--interpretation", str(table), "--config", str(config), "--out", str(out)]
    res = CliRunner().invoke(stats_command, unpaired)
    assert res.exit_code == 2 and "1 --interpretation but 0 --locks" in res.output
    # A config whose design lacks one of the table's arms: a table from another design, refused.
    config.write_text(config.read_text() + "design: {arms: [direct, indirect, social]}\n")
    res = CliRunner().invoke(stats_command, ["--trials", str(trials), "--config", str(config), "--out", str(out)])
    assert res.exit_code != 0 and "trials: arm: native not in" in str(res.exception)
    assert "design.arms (direct, indirect, social)" in str(res.exception)


def test_primary_report_says_when_the_agents_are_scripted():
    from incognita.access.stats.report import population_section

    success = pd.DataFrame({"arm": ["direct", "direct"], "model": ["a", "b"], "agent_backend": ["scripted", "openai"]})
    lines = population_section(success)
    assert "offline scripted agents" in lines[0] and "Scripted models: a." in lines[0]
    assert population_section(success.assign(agent_backend="openai")) == []
    assert population_section(success.drop(columns="agent_backend")) == []  # older tables: nothing claimed


def test_information_channel_audit_counts_database_passes_the_channel_fails():
    from incognita.access.stats import paper_tables as T

    nan = float("nan")
    rows = [  # db, communicate, nl
        (1.0, 1.0, nan),
        (1.0, 0.0, nan),
        (0.0, 0.0, nan),
        (1.0, nan, nan),
        (1.0, nan, 0.0),
    ]
    df = pd.DataFrame(
        [
            {
                "arm": "social",
                "model": "m",
                "task": str(i),
                "rep": 0,
                "excluded": False,
                "success": float(db == 1.0 and (c != 0.0) and (n != 0.0)),
                "channel_db": db,
                "channel_communicate": c,
                "channel_nl": n,
            }
            for i, (db, c, n) in enumerate(rows)
        ]
    )
    row = T.information_channel_table(df, ["social"], ["m"]).set_index("model").loc["all"]
    assert row["channel"] == "communicate,nl" and row["trials"] == 5 and row["channel_operative"] == 4
    assert (row["db_pass"], row["db_pass_channel_fail"]) == (3, 2)
