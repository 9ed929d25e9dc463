"""An arm that exists only as an entry of the arm registry runs through every stage of the
workflow: episodes, the coordination reference (re-frozen, as adding an arm requires), the
reader, the statistics, the figures and the viewer."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import yaml
from workflow_helpers import add_task_stages, copy_workflow, snakemake

from incognita.common.io import read_json


def incognita(wf, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "incognita", *args], cwd=wf, capture_output=True, text=True)
    assert proc.returncode == 0, f"incognita {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_a_registered_arm_runs_through_every_stage(tmp_path, task_stages):
    wf = copy_workflow(tmp_path / "wf")
    add_task_stages(wf, task_stages)
    registry = yaml.safe_load((wf / "config/arms.yaml").read_text())
    # The social desks, with the agent told what each does: one component of the bundle changed.
    registry["arms"]["social_told"] = {
        "holders": "social",
        "declared": True,
        "prompts": {"agent": "agent/mediated_map.md", "service": "service/desk.md"},
    }
    (wf / "config/arms.yaml").write_text(yaml.safe_dump(registry, sort_keys=False))
    # A new arm is a new projection of the frozen reference: rebuilt, then re-frozen on purpose.
    incognita(wf, "reference", "--domain", "retail", "--no-verify")
    frozen = incognita(wf, "freeze", "--domain", "retail", "--bump", "--only", "coordination")
    assert re.search(r"coordination v\d+: bumped", frozen)
    config = yaml.safe_load((wf / "config/smoke.yaml").read_text())
    config["design"].update(arms=["social", "social_told"], tasks=["retail/11", "retail/46"])
    config["domains"] = ["retail"]  # the design's tasks are retail's: every design domain needs trials
    (wf / "config/told.yaml").write_text(yaml.safe_dump(config))

    snakemake(wf, "results/figures", "results/viewer", "--configfile", "config/told.yaml")

    trials = pd.read_parquet(wf / "results/trials.parquet")
    assert list(dict.fromkeys(trials["arm"])) == ["social", "social_told"]  # the registry's order
    assert len(trials) == 2 * 2 * 2 and not trials["excluded"].any()
    told, social = trials[trials["arm"] == "social_told"], trials[trials["arm"] == "social"]
    # Holders declared: no discovery to measure, so role identification is absent, never zero.
    assert told["role_identification"].isna().all() and social["role_identification"].notna().all()

    # Told what each desk does, the surveying agent asks none of them what it handles.
    def remit_questions(arm: str) -> int:
        events = [
            e
            for p in (wf / "results/episodes" / arm / "surveyor").glob("*/*/r0.json")  # <domain>/<id>/r0.json
            for e in read_json(p)["events"]
        ]
        return sum(e["type"] == "message" and e["sender"] == "agent" and "#remit" in e["text"] for e in events)

    assert remit_questions("social") >= 6 and remit_questions("social_told") == 0
    success = pd.read_csv(wf / "results/stats/success.csv")
    assert set(success["arm"]) == {"social", "social_told"}
    assert (wf / "results/figures/fig2_success.png").stat().st_size > 0
    index = (wf / "results/viewer/data/index.js").read_text()
    names = json.loads(index[index.index("{") : index.rindex("}") + 1])["taxonomy"]
    assert names["arms"][-1] == "social_told"
