"""The runs table, the condition and design effects and the figures on small hand-made inputs."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from scipy import stats as sps

from incognita.collabsim.condition_figures import make_figures
from incognita.collabsim.condition_stats import (
    design_effects_table,
    effects_table,
    run_stats,
    summary_table,
)
from incognita.collabsim.table import build_tables
from incognita.common.io import InputError


def runs(variable: str, design: str = "persona", shift: float = 0.0) -> pd.DataFrame:
    key = {"task": "daytrader", "model": "scripted", "design": design}
    rows = [
        {**key, "condition": "baseline", "variable": "baseline", "seed": s, "cooperation_rate": v + shift}
        for s, v in zip((1, 2, 3), (1.0, 2.0, 3.0))
    ]
    rows += [
        {**key, "condition": "other", "variable": variable, "seed": s, "cooperation_rate": v + shift}
        for s, v in zip((1, 2, 3), (2.0, 4.0, 6.0))
    ]
    return pd.DataFrame(rows)


def test_paired_by_seed_is_a_t_interval_on_the_per_seed_differences():
    row = effects_table(runs("communication_bandwidth")).set_index("metric").loc["cooperation_rate"]
    # differences 1, 2, 3: mean 2, sd 1, half-width t(0.975, 2) / sqrt(3)
    half = 4.302652729911275 / math.sqrt(3)
    assert row["interval"] == "paired_by_seed" and row["n"] == 3
    assert row["diff"] == pytest.approx(2) and row["ci_low"] == pytest.approx(2 - half)
    assert row["ci_high"] == pytest.approx(2 + half) and not row["excludes_zero"]  # -0.48 .. 4.48


def test_group_size_uses_welch():
    row = effects_table(runs("group_size")).set_index("metric").loc["cooperation_rate"]
    # variances 4 and 1 over 3 runs each: se^2 = 5/3, Welch df = (5/3)^2 / ((4/3)^2/2 + (1/3)^2/2) = 50/17
    se, df = math.sqrt(5 / 3), 50 / 17
    half = sps.t.ppf(0.975, df) * se
    assert row["interval"] == "welch" and row["diff"] == pytest.approx(2)
    assert row["ci_low"] == pytest.approx(2 - half) and row["ci_high"] == pytest.approx(2 + half)


def test_summary_is_the_mean_with_its_t_interval():
    s = summary_table(runs("communication_bandwidth"))
    base = s[(s.condition == "baseline") & (s.metric == "cooperation_rate")].iloc[0]
    assert base["mean"] == 2 and base["sd"] == 1
    assert base["ci_high"] == pytest.approx(2 + 4.302652729911275 / math.sqrt(3))


def test_a_task_without_baseline_runs_is_an_error():
    df = runs("group_size")
    with pytest.raises(InputError, match="no baseline"):
        effects_table(df[df.condition != "baseline"])


def test_design_effects_pair_theory_with_persona_by_seed():
    # theory = persona + 0.5 + (0, 0.1, 0.2) by seed on the baseline; the other condition +0.5 flat
    persona = runs("communication_bandwidth")
    theory = runs("communication_bandwidth", design="theory", shift=0.5)
    theory.loc[theory.condition == "baseline", "cooperation_rate"] += [0.0, 0.1, 0.2]
    d = design_effects_table(pd.concat([persona, theory])).set_index("condition")
    base = d.loc["baseline"]
    half = 4.302652729911275 * 0.1 / math.sqrt(3)  # differences 0.5, 0.6, 0.7: sd 0.1
    assert base["diff"] == pytest.approx(0.6) and base["ci_low"] == pytest.approx(0.6 - half)
    assert d.loc["other", "diff"] == pytest.approx(0.5) and d.loc["other", "interval"] == "paired_by_seed"
    assert design_effects_table(persona).empty  # one design: nothing to compare


def write_run(path, seed, condition="baseline", variable="baseline", rate=0.5):
    path.mkdir(parents=True)
    manifest = {
        "task": "daytrader",
        "condition": condition,
        "variable": variable,
        "model": "scripted",
        "design": "persona",
        "seed": seed,
        "personas": {"A": "p01"},
        "roles": {"A": "player", "B": "player"},
        "models": {"A": "scripted:default", "B": "scripted:default"},
        "config_hash": "h",
        "generator_version": 1,
        "steps": 3,
        "events": 9,
        "state_hash": "s",
        "usage": {"A": {"calls": 3, "cost_usd": 0.0}, "B": {"calls": 3, "cost_usd": 0.0}},
    }
    (path / "manifest.json").write_text(json.dumps(manifest))
    (path / "metrics.json").write_text(json.dumps({"cooperation_rate": rate, "average_pool": None}))
    answers = [{"id": "plan", "answer": "pool", "confidence": 0.8, "fields": {}}]
    events = [
        {"id": 0, "step": 0, "t": 0, "kind": "run_start", "actor": "system", "visibility": "all", "payload": {}},
        {
            "id": 1,
            "step": 1,
            "t": 10,
            "kind": "probe",
            "actor": "A",
            "visibility": [],
            "payload": {"probe": 1, "trigger": "action", "answers": answers, "truth": None},
        },
        {
            "id": 2,
            "step": 1,
            "t": 10,
            "kind": "probe_error",
            "actor": "B",
            "visibility": [],
            "payload": {"probe": 2, "trigger": "action", "question": None, "reason": "not JSON", "raw": "x"},
        },
        {
            "id": 3,
            "step": 2,
            "t": 20,
            "kind": "run_end",
            "actor": "system",
            "visibility": "all",
            "payload": {"final_state": {}},
        },
    ]
    (path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


class NoEmbeddings:
    def embed(self, texts):
        import numpy as np

        return np.ones((len(texts), 2)) / np.sqrt(2)


def test_the_tables_have_one_row_per_run_and_per_answer(tmp_path):
    for seed in (2, 1):
        write_run(tmp_path / f"s{seed}", seed)
    df, probes, conv = build_tables([tmp_path / "s2", tmp_path / "s1"], NoEmbeddings())
    assert list(df["seed"]) == [1, 2] and df["calls"].tolist() == [6, 6] and df["scripted"].all()
    assert df["average_pool"].isna().all() and df["n_agents"].tolist() == [2, 2]
    assert df["probe_answers"].tolist() == [1.0, 1.0] and df["probe_errors"].tolist() == [1.0, 1.0]
    assert df["confidence"].tolist() == [0.8, 0.8] and df["personas"].tolist() == ["A:p01", "A:p01"]
    assert len(probes) == 4 and probes["valid"].sum() == 2 and conv.empty  # one answering agent per step


def test_a_damaged_run_stops_the_table_naming_the_file(tmp_path):
    write_run(tmp_path / "s1", 1)
    (tmp_path / "s1" / "metrics.json").write_text('{"cooperation_rate": 0.')
    with pytest.raises(InputError, match=r"s1/metrics.json: damaged"):
        build_tables([tmp_path / "s1"], NoEmbeddings())
    (tmp_path / "s1" / "manifest.json").unlink()
    with pytest.raises(InputError, match=r"s1/manifest.json: missing"):
        build_tables([tmp_path / "s1"], NoEmbeddings())
    write_run(tmp_path / "s2", 2)
    (tmp_path / "s2" / "events.jsonl").write_text('{"kind": "run_start"}\n{"kind": "probe", "pay')
    with pytest.raises(InputError, match=r"s2/events.jsonl:2: not a JSON event"):
        build_tables([tmp_path / "s2"], NoEmbeddings())


def test_figures_for_each_task_and_the_probe_and_design_figures(tmp_path):
    df = pd.concat([runs("communication_bandwidth"), runs("communication_bandwidth", "theory", 0.5)])
    df["scripted"] = True
    df.to_parquet(tmp_path / "runs.parquet")
    empty = pd.DataFrame(
        columns=["task", "condition", "model", "design", "seed", "progress", "valid", "confidence", "similarity"]
    )
    run_stats(df, empty, empty, tmp_path / "stats")
    paths = make_figures(tmp_path / "stats", tmp_path / "runs.parquet", tmp_path / "fig")
    assert sorted(p.name for p in paths) == sorted(
        f"{n}.{e}"
        for n in ("daytrader", "confidence_time", "convergence_time", "design_effects")
        for e in ("png", "svg")
    )
    again = make_figures(tmp_path / "stats", tmp_path / "runs.parquet", tmp_path / "fig2")
    assert (tmp_path / "fig/daytrader.svg").read_bytes() == (tmp_path / "fig2/daytrader.svg").read_bytes()
    assert len(again) == len(paths)
