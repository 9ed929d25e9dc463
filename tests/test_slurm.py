"""The workflow on a real SLURM scheduler: a one-node cluster on this machine (bin/slurm-local)
runs the smoke design through the SLURM workflow profile (profiles/slurm). Every job must have
been a SLURM job, its outputs must equal those of the same jobs run locally, and an unchanged
rerun must submit nothing.

What runs where, and why. Under SLURM each job costs a submission, two Snakemake start-ups
(the plugin's job step re-parses the workflow, then runs the rule in a nested `srun`) and the
wait for the plugin's next status check, several seconds on top of the job itself. The source,
cards and golden stages (every task, which the reference needs) come from the test session's
build of them (the `task_stages` fixture). Then one task's card and golden trajectory are
removed, and the SLURM run rebuilds them and everything after them: the cards and golden jobs
(one each for all tasks), reference and lock check (these four as the profile's `task_stages`
job group, one SLURM job), episodes, native, episode table, reader, statistics, figures and
viewer (the last four as the `analysis` group) and the whole CollabSim branch (its table,
statistics and figures as the `collabsim_analysis` group). The files the SLURM jobs wrote are
compared with the smoke design built locally from nothing, without groups (the test session's
`smoke_build`, which the smoke design's end-to-end test checks too; docs/scale-out.md, "The test").

Skipped, with the reason printed, when the machine cannot run the cluster (not root, no apt-get,
the packages do not install, its ports or /etc/slurm/slurm.conf are taken: bin/slurm-local's
exit code 3) or the plugin is not installed. Any other failure to start the cluster fails.
"""

from __future__ import annotations

import importlib.util
import time
from collections import Counter

import pytest
import yaml
from slurm_cluster import (
    ClusterUnavailable,
    all_steps_done,
    cluster_running,
    differing,
    rule_of,
    rules_in_log,
    run_id,
    slurm_jobs,
    snakemake_slurm,
    snapshot,
    start_cluster,
    stop_cluster,
    submitted_job_ids,
    written_since,
)
from workflow_helpers import ROOT, add_task_stages, copy_workflow, guarded_env, planned_jobs, snakemake

SMOKE = ("--configfile", "config/smoke.yaml")
REBUILT_TASK = "46"  # a retail task: its card and golden trajectory are rebuilt under SLURM


def _say(request, line: str) -> None:
    """Print past pytest's capture, so that a skip's reason shows in a plain `bin/test` run."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(line)


def _skip(request, reason: str):
    _say(request, f"tests/test_slurm.py skipped: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory, task_stages, smoke_build):
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        _skip(request, "snakemake-executor-plugin-slurm is not installed (pip install -e '.[test]')")
    was_running = cluster_running()
    times = {}
    t0 = time.monotonic()
    try:
        start_cluster()
    except ClusterUnavailable as exc:
        _skip(request, f"no local SLURM cluster: {exc}")
    times["cluster start"] = time.monotonic() - t0
    try:
        base = tmp_path_factory.mktemp("slurm")
        wf = copy_workflow(base / "slurm")
        t = time.monotonic()
        add_task_stages(wf, task_stages, ("data/source", "results/cards", "results/golden"))
        for path in (
            f"results/cards/retail/{REBUILT_TASK}.json",
            f"results/cards/retail/v1/{REBUILT_TASK}.json",
            f"results/golden/retail/{REBUILT_TASK}.json",
        ):
            (wf / path).unlink()
        times["task stages"] = time.monotonic() - t
        before = snapshot(wf)

        net_log = base / "net.log"
        t = time.monotonic()
        slurm = snakemake_slurm(wf, *SMOKE, env=guarded_env(net_log))
        times["SLURM run"] = time.monotonic() - t

        jobs_before_rerun = {j["id"] for j in slurm_jobs()}
        t = time.monotonic()
        rerun = snakemake_slurm(wf, *SMOKE)
        times["unchanged rerun"] = time.monotonic() - t
        jobs_after_rerun = {j["id"] for j in slurm_jobs()}
        times["total"] = time.monotonic() - t0
        print("\n" + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()))
        yield {
            "wf": wf,
            "built_locally": smoke_build,
            "before": before,
            "net_log": net_log,
            "slurm": slurm,
            "jobs": slurm_jobs(run_id(slurm)),
            "rerun": rerun,
            "jobs_before_rerun": jobs_before_rerun,
            "jobs_after_rerun": jobs_after_rerun,
        }
    finally:
        if not was_running:
            stop_cluster()


def test_every_job_ran_as_a_slurm_job(runs):
    """Every planned job ran inside a SLURM job: a rule of a job group of the profile inside its
    group's SLURM job, any other rule in a SLURM job of its own."""
    jobs_planned = planned_jobs(runs["slurm"])
    jobs_planned.pop("all", None)  # the target rule has no command: Snakemake finishes it itself
    assert jobs_planned["cards_retail"] == 1 and jobs_planned["golden_retail"] == 1 and jobs_planned["episodes"] == 6
    profile_groups = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())["groups"]
    # The task stages (<stage>_<domain>) set their group in the rules; the profile names the rest.
    # The smoke design has a task of each default domain (retail, airline).
    stages = ("source", "cards", "audit", "golden", "golden_replay_table", "reference", "verify_locks")
    grouped = {f"{stage}_{domain}" for stage in stages for domain in ("retail", "airline")}
    groups = {r: "task_stages" if r in grouped else profile_groups.get(r) for r in jobs_planned}
    groups = {r: g for r, g in groups.items() if g}
    jobs = runs["jobs"]
    assert {j["state"] for j in jobs} == {"COMPLETED"}
    # Each job wrote to the log file the profile names (SLURM fills in %j, its id), and in it
    # Snakemake, started by the job, ran that job's rules to the end.
    submitted = submitted_job_ids(runs["slurm"])
    assert set(submitted) == {j["id"] for j in jobs}
    logdir = runs["wf"] / "logs" / "slurm"
    comment_by_id = {j["id"]: j["comment"] for j in jobs}
    ran: Counter = Counter()
    for job_id, log in submitted.items():
        assert log.is_relative_to(logdir) and log.name == f"{job_id}.log"
        text = log.read_text()
        rules = rules_in_log(text)
        if log.relative_to(logdir).parts[0].startswith("group_"):
            assert len({groups.get(rule) for rule in rules} - {None}) == 1 and all(r in groups for r in rules), log
        else:
            assert rules == {rule_of(comment_by_id[job_id])} and not rules & groups.keys(), log
        assert all_steps_done(text, len(rules)), log
        ran.update(rules)
    assert dict(ran) == jobs_planned, "the rules SLURM's jobs ran differ from the planned jobs"
    assert {"task_stages", "analysis", "collabsim_analysis"} <= {groups[r] for r in jobs_planned if r in groups}, (
        "the smoke design exercises every job group"
    )
    assert not runs["net_log"].exists(), f"outbound connections attempted:\n{runs['net_log'].read_text()}"


def test_outputs_equal_a_local_run(runs):
    """Every file the SLURM jobs wrote is a file of the smoke design built locally from nothing (the
    session's build) and equals it, and the SLURM run wrote every file of that build it was not given."""
    wf, local = runs["wf"], runs["built_locally"]
    by_slurm = written_since(wf, runs["before"])
    built_locally = set(snapshot(local))
    assert by_slurm <= built_locally, f"written only under SLURM: {sorted(by_slurm - built_locally)[:10]}"
    missing = built_locally - set(runs["before"]) - by_slurm
    assert not missing, f"built locally, not under SLURM: {sorted(missing)[:10]}"
    assert {
        "results/trials.parquet",
        "results/reference/retail/coordination.json",
        f"results/golden/retail/{REBUILT_TASK}.json",
        "results/collabsim/runs.parquet",
    } <= by_slurm
    assert differing(wf, local, by_slurm) == []


def test_an_unchanged_rerun_submits_nothing(runs):
    out = runs["rerun"].stdout + runs["rerun"].stderr
    assert "Nothing to be done" in out
    assert not submitted_job_ids(runs["rerun"])
    assert runs["jobs_after_rerun"] == runs["jobs_before_rerun"]


def test_jobs_get_the_profile_resources(runs):
    """SLURM granted each episode and native job the memory and time the profile sets, and the
    job's benchmark shows it needed less."""
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())

    def first_attempt(value):
        return eval(str(value), {"attempt": 1})  # the profile may scale a value with `attempt`

    for rule, bench_dir in (("episodes", "benchmarks/episodes"), ("native", "benchmarks/native")):
        mem_mb = first_attempt(profile["set-resources"][rule]["mem_mb"])
        runtime = first_attempt(profile["set-resources"][rule]["runtime"])
        jobs = [j for j in runs["jobs"] if j["comment"].startswith(f"rule_{rule}_wildcards_")]
        assert jobs and {j["memory"] for j in jobs} == {f"{mem_mb}M"}
        hours, minutes = divmod(runtime, 60)
        assert {j["limit"] for j in jobs} == {f"{hours}:{minutes:02d}:00" if hours else f"{minutes}:00"}
        for bench in (runs["wf"] / bench_dir).rglob("*.tsv"):
            header, values = bench.read_text().splitlines()[:2]
            row = dict(zip(header.split("\t"), values.split("\t")))
            assert float(row["max_rss"]) < mem_mb and float(row["s"]) < runtime * 60, bench


def test_the_profile_sizes_every_rule(tmp_path):
    """A rule without its size would be submitted with Snakemake's defaults (no wall time, a
    memory guessed from its input size): every rule but the target has one, from the profile or,
    for the task stages (one rule per design domain, which the profile cannot name), its own. Each
    job of a dry run over every rule (the side checks included) shows the resources it gets."""
    wf = copy_workflow(tmp_path)
    rules = set(snakemake(wf, "--list-rules", "--configfile", "config/smoke.yaml").stdout.split()) - {"all"}
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    by_profile = {rule for rule, res in profile["set-resources"].items() if {"mem_mb", "runtime"} <= set(res)}
    side_checks = [  # the smoke design leaves them out of its target (side_checks: false); both its domains'
        path
        for domain in ("retail", "airline")
        for path in (
            f"results/reference/{domain}/idle.tsv",
            f"results/reference/{domain}/oracle.tsv",
            f"results/audit/{domain}/cards.tsv",
            f"results/golden/{domain}/replay.tsv",
        )
    ]
    plan = snakemake(wf, "all", *side_checks, "-n", "--forceall", "--configfile", "config/smoke.yaml").stdout
    own, rule = set(), None
    for line in plan.splitlines():
        line = line.strip()
        if line.startswith("rule ") and line.endswith(":"):
            rule = line[len("rule ") : -1]
        elif (
            line.startswith("resources:")
            and rule
            and {"mem_mb=", "runtime="} <= {k for k in ("mem_mb=", "runtime=") if k in line}
        ):
            own.add(rule)
    assert rules - by_profile - own == set(), (
        "rules without mem_mb and runtime (profiles/slurm/config.yaml or the rule)"
    )
    assert by_profile - rules == set(), "profiles/slurm/config.yaml sizes rules the workflow does not have"
    assert not own & by_profile, "a rule sized both in the profile and by itself"
    assert {r for r in own if not r.endswith(("_retail", "_airline"))} == set(), (
        "only the per-domain task stages size themselves"
    )
