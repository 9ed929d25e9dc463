"""Helpers for tests that run the workflow: a copy of it in a temporary directory, Snakemake
as a subprocess, its dry-run job table, and the network guard (tests/netguard)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def copy_workflow(dest: Path) -> Path:
    """The workflow's files copied to `dest`, the package's bytecode with them (bin/_venv.sh
    compiles the checkout's): with PYTHONDONTWRITEBYTECODE set, every job of a run in the copy
    would otherwise compile the modules it imports again. Copied with their times, the .pyc files
    stay valid for the copied sources; a stale one is ignored by Python."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "rules", "config", "incognita", "profiles", "envs", "report"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name)
        else:
            shutil.copy2(src, dest / name)
    return dest


# The stages every access-family run starts from (source, the cards and golden trajectories of
# every upstream task, the coordination reference and its lock check), for each domain of the
# default design (config/config.yaml: retail's 114 tasks and airline's 50): under a minute of CPU,
# the same bytes for every test. Tests whose subject is a later stage take them from one build per
# test session (the `task_stages` fixture, tests/conftest.py) instead of building them again; the
# smoke design's end-to-end test (tests/test_workflow.py) builds them through Snakemake.
# The steps are the CLI commands of each domain's rules (rules/source.smk, cards.smk, golden.smk
# and reference.smk: source_<domain>, cards_<domain>, golden_<domain>, reference_<domain> and
# verify_locks_<domain>).
TASK_STAGE_DIRS = ("data/source", "results/cards", "results/golden", "results/reference")


def task_stage_domains() -> tuple[str, ...]:
    """The default design's domains: a workflow copy plans the task stages of each."""
    from incognita.common.io import read_yaml

    return tuple(read_yaml(ROOT / "config" / "config.yaml")["domains"])


def task_stage_steps(domain: str) -> tuple[tuple[str, ...], ...]:
    cards, golden = f"results/cards/{domain}", f"results/golden/{domain}"
    return (
        ("source", "--domain", domain, "--out", f"data/source/{domain}", "--version", "26.3"),
        ("cards", "--domain", domain, "--version", "26.3", "all"),
        ("golden", "--domain", domain, "--cards-dir", cards, "--out-dir", golden),
        ("reference", "--domain", domain, "--out", f"results/reference/{domain}/coordination.json"),
    )


def build_task_stages(dest: Path) -> Path:
    """A workflow copy with the task stages of every default domain built by the CLI commands the
    rules run (batch forms: five processes a domain instead of Snakemake's jobs)."""
    from incognita.access.paths import locks_verified

    copy_workflow(dest)
    for domain in task_stage_domains():
        for step in task_stage_steps(domain):
            proc = subprocess.run([sys.executable, "-m", "incognita", *step], cwd=dest, capture_output=True, text=True)
            assert proc.returncode == 0, f"incognita {step[0]} ({domain}) failed:\n{proc.stdout}\n{proc.stderr}"
        proc = subprocess.run(
            [sys.executable, "-m", "incognita", "verify-locks", "--locks", f"config/domains/{domain}/locks.yaml"],
            cwd=dest,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        (dest / locks_verified(domain)).write_text(proc.stdout)
    return dest


SMOKE_NET_LOG = "smoke.net.log"


def build_smoke(dest: Path) -> Path:
    """A workflow copy with the smoke design built through every stage by Snakemake, with the
    network guard on (its log, if any connection was attempted: `dest / SMOKE_NET_LOG`)."""
    copy_workflow(dest)
    snakemake(dest, "--configfile", "config/smoke.yaml", env=guarded_env(dest / SMOKE_NET_LOG))
    return dest


# A design of two domains (tests/test_domains_workflow.py): the smoke design's two retail tasks and
# the mock domain's two corpus tasks, through the statistics, the figures and the viewer.
TWO_DOMAINS_CONFIG = "config/retail_mock.yaml"  # not the shipped config/two_domains.yaml (retail, airline)
TWO_DOMAINS = """domains: [retail, mock]
design:
  tasks: [retail/11, retail/46, mock/update_task_with_initialization_actions, mock/update_task_with_message_history]
"""
TWO_DOMAINS_TARGETS = ("results/figures", "results/viewer")


def build_two_domains(dest: Path, stages: Path) -> Path:
    """A workflow copy with retail's task stages copied in and the two-domain design built by
    Snakemake from there (mock's task stages included), the network guard on."""
    copy_workflow(dest)
    add_task_stages(dest, stages)
    (dest / TWO_DOMAINS_CONFIG).write_text(TWO_DOMAINS)
    env = guarded_env(dest / SMOKE_NET_LOG)
    snakemake(dest, *TWO_DOMAINS_TARGETS, "--configfile", "config/smoke.yaml", TWO_DOMAINS_CONFIG, env=env)
    return dest


def add_task_stages(wf: Path, stages: Path, dirs: tuple[str, ...] = TASK_STAGE_DIRS) -> None:
    """Copy built task stages into a workflow copy, modification times included: Snakemake then
    takes them as built (they are newer than the copied config and older than anything a run
    writes), and a run plans only the stages after them."""
    for rel in dirs:
        shutil.copytree(stages / rel, wf / rel, dirs_exist_ok=True)


NETGUARD = ROOT / "tests" / "netguard"


def guarded_env(log: Path) -> dict:
    """The environment with the network guard (tests/netguard/sitecustomize.py) in every Python
    process: outbound attempts are refused and written to `log`."""
    path = os.pathsep.join(p for p in (str(NETGUARD), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "INCOGNITA_NETGUARD_LOG": str(log)}


def snakemake(workdir: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*SNAKEMAKE, "--cores", "2", *args], cwd=workdir, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Parse the 'Job stats' table of a run into {rule: count} (a dry run prints it on stdout, a
    real run on stderr)."""
    lines = (proc.stdout + proc.stderr).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Job stats"))
    jobs = {}
    for line in lines[start + 3 :]:
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        jobs[parts[0]] = int(parts[1])
    return jobs


def stable_episode(doc: dict) -> dict:
    """An episode record without what differs between two runs of one cell: wall time and the
    usage counters that say whether a call came from the cache."""
    doc = json.loads(json.dumps(doc))
    doc.pop("wall_time_s", None)
    for usage in doc["usage"].values():
        usage.pop("cache_hits"), usage.pop("cache_misses")
    return doc


def stable_native(doc: dict) -> dict:
    """A native result without what differs between two runs of one cell: the harness's run
    id, times, durations, and the cache hit and miss counters."""
    doc = json.loads(json.dumps(doc))
    doc.pop("timestamp", None)
    sim = doc["simulations"][0]
    for key in ("id", "start_time", "end_time", "duration", "timestamp"):
        sim.pop(key, None)
    for m in sim["messages"]:
        m.pop("timestamp", None)
    for usage in sim["reward_info"]["info"]["incognita"].get("usage", {}).values():
        usage.pop("cache_hits"), usage.pop("cache_misses")
    return doc


# Scripted participants injecting every fault but the refusal inside the remit (which by design the
# audit sees only where it cost a needed read), often enough that each occurs in a few episodes
# (the participant audit's validation tests, retail's and the airline's).
FAULTY_SERVICE = {
    "spec": "scripted:desk",
    "faults": {
        "misreport": 0.5,
        "invent_value": 0.3,
        "claim_change": 0.5,
        "refer_elsewhere": 0.5,
        "name_tool": 0.3,
        "format_list": 0.3,
    },
}
FAULTY_CUSTOMER = {"spec": "scripted:customer", "faults": {"invent_value": 0.3, "bypass_gate": 0.3}}


def scripted_harness(source_dir: Path, arms, models: dict, repetitions: int = 1, **settings):
    """Our harness of the retail domain with the shipped prompts, partition and scripted
    population (seed 20260820, budget 300): what the harness tests build. `settings` override
    HarnessSettings fields."""
    from incognita.access.episodes.harness import Harness, HarnessSettings

    design = HarnessSettings(
        **{
            "arms": tuple(arms),
            "models": models,
            "repetitions": repetitions,
            "seed": 20260820,
            "budget": 300,
            "customer": "scripted:customer",
            "service": "scripted:desk",
            "prompts_dir": str(ROOT / "config/prompts"),
            "scripted_agents": str(ROOT / "config/scripted_agents.yaml"),
            **settings,
        }
    )
    return Harness(design, retail_inputs(source_dir))


def retail_inputs(source_dir: Path, **paths: str):
    """What a harness of the retail domain reads: the extracted database and the shipped holder
    maps, vocabulary and prompts of config/domains/retail/ (`paths` override them)."""
    from incognita.access.episodes.harness import DomainInputs

    retail = ROOT / "config/domains/retail"
    shipped = {
        "db": str(source_dir / "db.json"),
        "partition": str(retail / "partition.yaml"),
        "vocabulary": str(retail / "vocabulary.yaml"),
        "prompts": str(retail / "prompts"),
    }
    return DomainInputs.of("retail", **{**shipped, **paths})


def local_model_config(wf: Path, base_url: str, native: dict | None = None, **design) -> Path:
    """config/local.yaml in a workflow copy with a test server's base URL in every entry (and
    `design` keys replaced, `native` keys too, `domains` those of its tasks), written beside it;
    returns its path."""
    import yaml

    cfg = yaml.safe_load((wf / "config" / "local.yaml").read_text())
    for entry in (*cfg["models"].values(), cfg["participants"]["customer"], cfg["participants"]["service"]):
        entry["base_url"] = base_url
    cfg["design"].update(design)
    cfg["native"].update(native or {})
    # The tasks' own domains: a default design of more domains would build their task stages too.
    cfg["domains"] = sorted({task.split("/")[0] for task in cfg["design"]["tasks"]})
    path = wf / "config" / "local.test.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def default_domains(dest: Path, domains: list[str]) -> Path:
    """The shipped config folder copied under `dest`, its default design running `domains`: a
    check that a test's own design does not inherit the default's domains. Returns `dest`."""
    import yaml

    shutil.copytree(ROOT / "config", dest / "config")
    base = dest / "config" / "config.yaml"
    base.write_text(yaml.safe_dump({**yaml.safe_load(base.read_text()), "domains": domains}, sort_keys=False))
    return dest


def design_domains(config: Path) -> tuple[str, ...]:
    """The domains of the design a config file (an overlay of config.yaml beside it) gives the workflow."""
    from incognita.access.cells import design_from_config
    from incognita.access.planning.workflow_config import load_config

    return design_from_config(load_config(config)).domains


def local_model_records(wf: Path, model: str, task: str = "retail/11") -> dict[str, dict]:
    """The episode and native records of one model on one task (a qualified id; repetition 0), by relative path."""
    files = [
        *(wf / "results" / "episodes").glob(f"*/{model}/{task}/r0.json"),
        *(wf / "results" / "native").glob(f"{model}/{task}/r0.json"),
    ]
    return {str(p.relative_to(wf)): json.loads(p.read_text()) for p in files}


def twin_entry(base_url: str, model: str, key_env: str) -> dict:
    """A model entry answered by a loopback's scripted twins: it names its cell and sends its seed
    (a twin must see every call of its cell), greedy, unpaced (the loopback here sets no limits)."""
    return {
        "spec": f"openai:{model}",
        "base_url": base_url,
        "api_key_env": key_env,
        "temperature": 0,
        "timeout": 10,
        "send_cell": True,
        "send_seed": True,
        "rpm": None,
        "tpm": None,
    }
