"""CollabSim through Snakemake: the rules build its figures, and an edited condition file
re-runs only that condition's runs (and what is computed from all runs)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from workflow_helpers import copy_workflow, planned_jobs, snakemake  # noqa: E402

DESIGN = "collabsim:\n  seeds: 2\n  designs: [persona, theory]\n  tasks:\n    daytrader: null\n"


def test_editing_one_condition_reruns_only_its_runs(tmp_path):
    wf = copy_workflow(tmp_path / "wf")
    (wf / "design.yaml").write_text(DESIGN)
    args = ("results/collabsim/figures", "--configfile", "design.yaml")  # --configfile takes several values
    snakemake(wf, *args)
    assert (wf / "results/collabsim/runs/daytrader/group_size_9/scripted/theory/s2/events.jsonl").exists()
    assert "Nothing to be done" in snakemake(wf, "-n", *args).stdout

    cond = wf / "config/collabsim/daytrader/communication_bandwidth.yaml"
    cond.write_text(cond.read_text().replace("min_actions_between: 5", "min_actions_between: 4"))
    proc = snakemake(wf, "-n", *args)
    # its two designs (persona, theory) and what is computed from all runs
    assert planned_jobs(proc) == {
        "collabsim_run": 2,
        "collabsim_table": 1,
        "collabsim_stats": 1,
        "collabsim_figures": 1,
    }
    assert "cs_condition=communication_bandwidth" in proc.stdout and "cs_condition=baseline" not in proc.stdout


def test_a_bad_condition_file_stops_a_dry_run_with_one_line(tmp_path):
    wf = copy_workflow(tmp_path / "wf")
    (wf / "design.yaml").write_text(DESIGN)
    cond = wf / "config/collabsim/daytrader/group_size_6.yaml"
    cond.write_text(cond.read_text().replace("agents.0.count: 6", "agents.0.model: 'llama:big'"))
    proc = snakemake(wf, "-n", "results/collabsim/figures", "--configfile", "design.yaml", check=False)
    assert proc.returncode != 0
    assert "group_size_6.yaml: agent A model: unknown backend family 'llama'" in proc.stderr + proc.stdout
