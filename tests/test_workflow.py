"""The Snakemake workflow: lint, dry runs, config validation, and what re-runs after an edit.

Each test works on a copy of the workflow in a temporary directory, so it never touches the
checkout's results/.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import SMOKE_NET_LOG, copy_workflow, guarded_env, planned_jobs, snakemake

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("compare_trees", ROOT / "bench" / "compare_trees.py")
compare_trees = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_trees)


@pytest.fixture(scope="module")
def workflow(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("wf"))


def test_lint_is_clean(workflow):
    proc = snakemake(workflow, "--lint")
    assert "Congratulations, your workflow is in a good condition" in proc.stdout + proc.stderr


def test_dry_run_lists_every_stage(workflow):
    jobs = planned_jobs(snakemake(workflow, "-n"))
    # The task stages are one rule per design domain (<stage>_<domain>): the default's, retail and airline.
    for domain in ("retail", "airline"):
        assert jobs[f"source_{domain}"] == 1 and jobs[f"cards_{domain}"] == 1 and jobs[f"golden_{domain}"] == 1
        assert jobs[f"audit_{domain}"] == 1 and jobs[f"oracle_{domain}"] == 1
        assert jobs[f"golden_replay_table_{domain}"] == 1
        assert jobs[f"reference_{domain}"] == 1 and jobs[f"verify_locks_{domain}"] == 1
    assert jobs["stats"] == 1 and jobs["figures"] == 1


def test_the_smoke_design_leaves_the_all_task_checks_out(workflow):
    jobs = planned_jobs(snakemake(workflow, "-n", "--configfile", "config/smoke.yaml"))
    for domain in ("retail", "airline"):  # the smoke design has a task of each
        assert (
            jobs[f"cards_{domain}"] == 1 and jobs[f"golden_{domain}"] == 1 and jobs[f"reference_{domain}"] == 1
        )  # the lock covers every task
        assert not {f"audit_{domain}", f"oracle_{domain}", f"golden_replay_table_{domain}"} & set(jobs)


def test_broken_config_names_the_key(workflow, tmp_path):
    bad = tmp_path / "bad.yaml"
    text = (workflow / "config" / "config.yaml").read_text().replace('version: "26.3"', "version: 26.3")
    bad.write_text(text)
    proc = snakemake(workflow, "-n", "--configfile", str(bad), check=False)
    assert proc.returncode != 0
    assert f"{bad}: source.version: 26.3 is not of type 'string'" in proc.stdout + proc.stderr


def test_a_misspelt_key_stops_a_dry_run_with_one_line_naming_file_key_and_spelling(workflow, tmp_path):
    """Snakemake's own validate() printed the whole schema (218 lines) with a message naming
    neither the key nor its spelling."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("models:\n  surveyor:\n    spec: scripted:surveyor\n    temprature: 1\n")
    proc = snakemake(workflow, "-n", "--configfile", str(bad), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"{bad}: models.surveyor.temprature: unknown key (did you mean 'temperature'?)" in out
    assert "additionalProperties" not in out and len(out.splitlines()) < 15, out


def test_a_repeated_task_stops_a_dry_run_naming_it_and_its_file(workflow, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("design:\n  tasks: [retail/11, retail/46, retail/11]\n")
    proc = snakemake(workflow, "-n", "--configfile", str(bad), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"{bad}: config key design.tasks: ['retail/11'] listed more than once" in out
    assert "Duplicate output" not in out and "Job stats" not in out


@pytest.mark.parametrize(
    "overlay, line",
    [
        ("models:\n  foo: foo:bar\n", "config key models.foo: unknown backend family 'foo' in 'foo:bar'"),
        ("models:\n  x: scripted:nosuch\n", "config key models.x: unknown scripted profile 'nosuch'"),
        ("participants:\n  customer: scripted:desk\n", "config key participants.customer: unknown scripted profile"),
    ],
)
def test_a_bad_model_entry_stops_a_dry_run_with_one_line(workflow, tmp_path, overlay, line):
    bad = tmp_path / "bad.yaml"
    bad.write_text(overlay)
    proc = snakemake(workflow, "-n", "--configfile", str(bad), check=False)
    assert proc.returncode != 0
    assert line in proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout  # stopped before any job was planned


@pytest.mark.parametrize(
    "overlay, line",
    [
        (
            "design:\n  arms: [direct, tools]\n",
            "config key design.arms: unknown arm(s) ['tools'] (registered in config/arms.yaml: direct,",
        ),
        ("design:\n  models: [nosuch]\n", "config key design.models: ['nosuch'] are not keys of models"),
        (
            "design:\n  tasks: ['retail/5']\n",
            "config key design.tasks: ['retail/5'] are not in the design domains' frozen corpora",
        ),
        ("domains: [retail, telecom]\n", "config key domains: unknown domain 'telecom'"),
    ],
)
def test_a_bad_design_stops_a_dry_run_with_one_line(workflow, tmp_path, overlay, line):
    """The design is read by incognita.access.cells at parse time; the schema leaves arm names to it."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(overlay)
    proc = snakemake(workflow, "-n", "--configfile", str(bad), check=False)
    assert proc.returncode != 0
    assert line in proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout and "ValidationError" not in proc.stdout + proc.stderr


def test_editing_one_overlay_rebuilds_the_cards_and_changes_only_that_card(tmp_path):
    """The cards job builds every task in one process; an edited overlay re-runs it, and the
    rewritten cards of the other tasks keep their bytes."""
    wf = copy_workflow(tmp_path)
    targets = ["results/cards/retail/46.json", "results/cards/retail/2.json"]
    snakemake(wf, *targets)
    unchanged = snakemake(wf, "-n", *targets)
    assert "Nothing to be done" in unchanged.stdout + unchanged.stderr
    before = {p.name: p.read_bytes() for p in (wf / "results" / "cards" / "retail").glob("*.json")}
    overlay = wf / "config" / "domains" / "retail" / "repairs" / "46.yaml"
    overlay.write_text(overlay.read_text().replace("Return the air purifier", "Please return the air purifier"))
    proc = snakemake(wf, "-n", *targets)
    assert planned_jobs(proc) == {"cards_retail": 1}
    snakemake(wf, *targets)
    after = {p.name: p.read_bytes() for p in (wf / "results" / "cards" / "retail").glob("*.json")}
    assert len(before) == len(after) == 114
    assert [name for name in before if before[name] != after[name]] == ["46.json"]
    assert "Please return the air purifier" in after["46.json"].decode()


def test_the_network_guard_catches_an_outbound_connection(tmp_path):
    """The guard the smoke test relies on does record (and refuse) an attempt, in a child process."""
    log = tmp_path / "net.log"
    code = "import socket\ntry:\n    socket.create_connection(('example.org', 80), timeout=1)\nexcept OSError as e:\n    print(e)"
    proc = subprocess.run([sys.executable, "-c", code], env=guarded_env(log), capture_output=True, text=True)
    assert "network guard" in proc.stdout
    assert "example.org" in log.read_text()


def test_smoke_profile_end_to_end(smoke_build, tmp_path):
    """The 24-trial smoke design (two retail tasks, one airline task) through every stage up to the
    figures, with every outbound
    connection refused and recorded (none may be attempted; the session's build, tests/conftest.py);
    then the rerun guarantees."""
    import pandas as pd

    wf = smoke_build
    net_log = wf / SMOKE_NET_LOG
    assert not net_log.exists(), f"outbound connections attempted offline:\n{net_log.read_text()}"
    native_logs = "".join(p.read_text() for p in (wf / "logs" / "native").rglob("*.log"))
    assert native_logs
    assert "connect" not in native_logs.lower() and "github" not in native_logs.lower()
    trials = pd.read_parquet(wf / "results" / "trials.parquet")
    assert len(trials) == 24
    assert set(trials["arm"]) == {"direct", "indirect", "social", "native"}
    assert set(trials["model"]) == {"surveyor", "impatient"}
    assert set(trials["task"]) == {"retail/11", "retail/46", "airline/19"}
    assert not trials["excluded"].any()
    assert (trials.groupby("arm").size() == 6).all()
    # The airline task is a single cancellation: the surveyor solves it in every arm (the impatient
    # profile gives up on the desks in the social arm).
    airline = trials[trials["task"] == "airline/19"].set_index(["arm", "model"])["success"]
    assert airline.xs("surveyor", level="model").all() and len(airline) == 8
    figures = {p.name for p in (wf / "results" / "figures").iterdir()}
    assert {"fig2_success.png", "fig5_native.svg", "table1.md", "table2.csv"} <= figures
    # Two domains: each one's statistics and figures, and Figure 9 side by side.
    assert {"fig9_domains.png", "retail", "airline"} <= figures
    assert all((wf / "results" / "stats" / d / "success.csv").is_file() for d in ("retail", "airline"))
    runs = pd.read_parquet(wf / "results" / "collabsim" / "runs.parquet")
    assert sorted(set(zip(runs["task"], runs["condition"]))) == [
        ("daytrader", "baseline"),
        ("daytrader", "communication_bandwidth"),
    ]
    assert len(runs) == 8 and runs["scripted"].all() and set(runs["design"]) == {"persona", "theory"}
    assert (runs["probe_answers"] > 0).all() and runs["convergence"].notna().all()
    assert {p.name for p in (wf / "results" / "collabsim" / "figures").glob("[!.]*")} == {
        f"{n}.{e}"
        for n in ("daytrader", "confidence_time", "convergence_time", "design_effects")
        for e in ("png", "svg")
    }
    archived = list((wf / "results" / "native" / "archive").rglob("r0.json"))
    assert len(archived) == 4  # both retail smoke tasks are repaired (airline's is not): their unrepaired runs apart

    unchanged = snakemake(wf, "-n", "--configfile", "config/smoke.yaml")
    assert "Nothing to be done" in unchanged.stdout + unchanged.stderr

    wf = shutil.copytree(smoke_build, tmp_path / "wf", symlinks=True)  # an edit, in a copy: others read the build
    profiles = wf / "config" / "scripted_agents.yaml"
    text = profiles.read_text()
    profiles.write_text(
        text.replace("impatient:\n  discovery: probe\n  patience: 1", "impatient:\n  discovery: probe\n  patience: 2")
    )
    proc = snakemake(wf, "-n", "--configfile", "config/smoke.yaml")
    assert planned_jobs(proc) == {
        "episodes": 3,
        "native": 1,
        "episodes_done": 1,
        "trials": 1,
        "stats": 1,
        "figures": 1,
        "viewer": 1,
        "all": 1,
    }  # CollabSim untouched
    assert "model=impatient" in proc.stdout and "model=surveyor" not in proc.stdout


def test_a_deleted_record_and_trials_table_are_rebuilt_by_the_default_target(smoke_build, tmp_path):
    """docs/reliability.md's recovery by hand: delete a record (and the trials table) and run the
    default target. Snakemake rebuilds a deleted file only where a target or a job that runs needs
    it (snakemake/snakemake#1978), so the default target names the records and the table: before,
    the run found "Nothing to be done" and both stayed missing."""
    import pandas as pd

    wf = shutil.copytree(smoke_build, tmp_path / "wf", symlinks=True)
    record = wf / "results" / "episodes" / "social" / "surveyor" / "retail" / "11" / "r0.json"
    before = shutil.copy2(record, tmp_path / "r0.json")
    record.unlink()
    rebuilt = {"episodes": 1, "episodes_done": 1, "trials": 1, "stats": 1, "figures": 1, "viewer": 1, "all": 1}
    assert planned_jobs(snakemake(wf, "-n", "--configfile", "config/smoke.yaml")) == rebuilt
    (wf / "results" / "trials.parquet").unlink()
    assert planned_jobs(snakemake(wf, "-n", "--configfile", "config/smoke.yaml")) == rebuilt
    snakemake(wf, "--configfile", "config/smoke.yaml")
    assert compare_trees.same(before, record)  # scripted agents: the same record, but for its wall times
    assert len(pd.read_parquet(wf / "results" / "trials.parquet")) == 24
    (wf / "results" / "collabsim" / "runs.parquet").unlink()
    assert planned_jobs(snakemake(wf, "-n", "--configfile", "config/smoke.yaml"))["collabsim_table"] == 1


def test_a_damaged_record_stops_the_reader_and_leaves_the_last_trials_table(smoke_build, tmp_path):
    """The reader stops on a damaged record (exit 2, one line naming it); Snakemake would delete
    the job's outputs, so they are update() outputs, restored when the job fails."""
    wf = shutil.copytree(smoke_build, tmp_path / "wf", symlinks=True)
    tables = {name: (wf / "results" / name).read_bytes() for name in ("trials.parquet", "trials.csv")}
    record = wf / "results" / "episodes" / "social" / "surveyor" / "retail" / "11" / "r0.json"
    record.write_text(record.read_text()[:100])  # truncated, and newer than the table
    proc = snakemake(wf, "results/trials.parquet", "--configfile", "config/smoke.yaml", check=False)
    assert proc.returncode != 0
    assert "Restored previous version of results/trials.parquet" in proc.stdout + proc.stderr
    assert f"error: {record.relative_to(wf)}" in (wf / "logs" / "trials.log").read_text()
    assert {name: (wf / "results" / name).read_bytes() for name in tables} == tables
