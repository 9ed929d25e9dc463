# Helpers shared by the rule files. Config is validated here, at parse time.
import functools
import importlib
import json
import os
import re
import sys

import yaml
from pathlib import Path

# Jobs run `python -m incognita ...` (the same click CLI users call) with this checkout first
# on the import path, whether or not it is pip-installed; with --sdm conda the env provides
# the dependencies and the checkout provides the code.
sys.path.insert(0, workflow.basedir)  # parse-time imports come from this checkout too
from incognita.common.version_constants import read_constant

# Generator versions are passed as params: bumping one in the package re-runs exactly the jobs
# it affects, while ordinary code edits leave cached results alone. Read from the generating
# modules' source, not imported (incognita/common/version_constants.py says why).
CARD_BUILDER_VERSION = read_constant("incognita.access.cards.card", "BUILDER_VERSION")
GOLDEN_GENERATOR_VERSION = read_constant("incognita.access.golden.trajectory", "GENERATOR_VERSION")
EPISODE_GENERATOR_VERSION = read_constant("incognita.access.episodes.harness", "GENERATOR_VERSION")
NATIVE_GENERATOR_VERSION = read_constant("incognita.access.native.native_run", "GENERATOR_VERSION")
READER_VERSION = read_constant("incognita.access.reader.trial_reading", "READER_VERSION")
# Model and participant entries are checked before any job is planned: a bad one stops even
# a dry run with one line naming the config key and the value.
# The design (arms, models, tasks from the frozen corpus) is read and checked here too.
from incognita.access import paths
from incognita.access.arm_registry import registry_path
from incognita.access.cells import design_files, design_from_config, repaired_tasks
from incognita.access.domain import CONFIG_ROOT, LOCAL_ID, qualify, split_task
from incognita.access.episodes.scripted.entries import check_entries
from incognita.access.stats.exploratory_spec import spec_from_config
from incognita.collabsim.design import DESIGNS as COLLABSIM_DESIGNS
from incognita.collabsim.world.task import TASKS as COLLABSIM_TASKS
from incognita.access.planning.workflow_config import located
from incognita.common.io import InputError
from incognita.common.schema import validate

# The config files in the order Snakemake merged them (the Snakefile's, then each --configfile):
# an error names the one that sets its key. The schema's errors are ours, one line each, not
# Snakemake's validate(), which prints the whole schema with them.
CONFIG_FILES = [str(f) for f in workflow.configfiles if f not in workflow.overwrite_configfiles]
CONFIG_FILES += [str(f) for f in workflow.overwrite_configfiles]
try:
    validate(config, "config.schema.json", "config", sources=CONFIG_FILES)
    check_entries(config)
    DESIGN = design_from_config(config)
    FILES = design_files(config)  # each design domain's files (incognita.access.domain.DomainFiles)
    EXPLORATORY = spec_from_config(config, DESIGN.rotation)  # comparisons beyond the frozen analysis
except InputError as exc:
    raise WorkflowError(located(str(exc), CONFIG_FILES, "config")) from None
ARM_REGISTRY = registry_path(config)  # what each arm of the design is (config/arms.yaml)
ARM_PATTERNS = [re.escape(a) for a in DESIGN.episode_arms]  # the `arm` wildcard ('+' is literal)
# Model backends find the response cache and the price table through the environment, so
# moving the cache never invalidates finished episodes.
_RUNTIME_ENV = {"INCOGNITA_CACHE_DIR": (config.get("cache") or {}).get("dir"), "INCOGNITA_PRICES": config.get("prices")}
shell.prefix(
    f'export PYTHONPATH="{workflow.basedir}:$PYTHONPATH"; '
    + "".join(f'export {k}="{v}"; ' for k, v in _RUNTIME_ENV.items() if v)
)


# Memory (MB: sbatch --mem) and wall time (minutes: sbatch -t) of the task stages, one rule per
# design domain (<stage>_<domain>). A profile's set-resources names rules exactly and cannot know
# a design's domains, so these rules carry their own (every executor reads them; a profile may
# still override one by its full name). Peaks measured on the default design (bin/run,
# 2026-11-30); memory is at least three times the peak, as in profiles/slurm/config.yaml.
TASK_STAGE_RESOURCES = {
    "source": {"mem_mb": 1000, "runtime": 10},  # 33 MB, 0.2 s
    "cards": {"mem_mb": 1000, "runtime": 10},  # 39 MB, 0.9 s (every task)
    "audit": {"mem_mb": 1000, "runtime": 10},  # 33 MB, 0.7 s
    "golden": {"mem_mb": 1000, "runtime": 10},  # 163 MB, 22 s (every task)
    "golden_replay_table": {"mem_mb": 1000, "runtime": 10},  # 30 MB, 0.2 s
    "reference": {"mem_mb": 1000, "runtime": 10},  # 33 MB, 0.3 s
    "verify_locks": {"mem_mb": 1000, "runtime": 10},  # 24 MB, 0.2 s
    "idle": {"mem_mb": 2000, "runtime": 60},  # every task in every arm, natively too
    "oracle": {"mem_mb": 1000, "runtime": 30},  # 200 MB, about 15 s: the oracle on all 114 tasks
}


@functools.cache
def get_all_tasks(domain):
    """Upstream ids of every task of a domain in the pinned package, read without importing tau2 modules."""
    from incognita.access.cards.source import upstream_tasks

    return upstream_tasks(domain)


def get_repaired_tasks(domain):
    return repaired_tasks(FILES[domain].repairs)


def get_all_repairs(domain):
    """The repair overlays of a domain's tasks: editing one re-runs that domain's cards job."""
    return [str(FILES[domain].repairs / f"{t}.yaml") for t in get_repaired_tasks(domain)]


def all_cards(domain, rule_built=False, tasks=None):
    """A domain's card files: every upstream task's, or `tasks`'s."""
    ids = get_all_tasks(domain) if tasks is None else tasks
    return [str(paths.card_file(domain, t, rule_built=rule_built)) for t in ids]


def all_golden(domain, tasks=None):
    return [str(paths.golden_file(domain, t)) for t in (get_all_tasks(domain) if tasks is None else tasks)]


def get_design_tasks():
    """The design's tasks, qualified ids: every domain's frozen corpus (locks verified), or the configured subset."""
    return list(DESIGN.tasks)


def get_design_models():
    """Model names of the design: all configured models, or the selected subset."""
    return list(DESIGN.models)


@functools.cache
def _prompt_files(domain):
    from incognita.access.arm_registry import arm_registry
    from incognita.access.episodes.loop.prompts import PromptSet
    from incognita.access.reference.partition import load_partition

    partition = load_partition(FILES[domain].partition)
    prompts, registry = PromptSet(Path(config["prompts"]), FILES[domain].prompts, partition), arm_registry(ARM_REGISTRY)
    files = {str(p) for arm in get_episode_arms() for p in prompts.files_for(registry.arm(arm), partition)}
    if config["participants"].get("judge"):
        files.add(str(Path(config["prompts"]) / "judge.md"))
    return sorted(files)


def get_prompt_files(wildcards):
    """The prompt files a domain's episodes read (generic and the domain's own): editing one re-runs them."""
    return _prompt_files(wildcards.domain)


@functools.cache
def _scripted_profiles():
    return yaml.safe_load(Path(config["scripted_agents"]).read_text()) or {}


def get_model_profile(wildcards):
    """The scripted profile a model uses, as a param: editing it re-runs that model's blocks only."""
    from incognita.common.backends.entry import ModelEntry

    entry = ModelEntry.parse(config["models"][wildcards.model], f"models.{wildcards.model}")
    if entry.family != "scripted":
        return ""
    return json.dumps(_scripted_profiles().get(entry.name), sort_keys=True)


def get_model_entry(wildcards):
    """The model's config entry as one string (spec, or JSON with its settings): a param, so a
    changed setting re-runs exactly that model's jobs. Its pacing settings go apart (get_pacing)."""
    from incognita.common.backends.entry import ModelEntry

    return ModelEntry.parse(config["models"][wildcards.model], f"models.{wildcards.model}").without_pacing().param


def get_participant_entry(role):
    from incognita.common.backends.entry import ModelEntry

    entry = ModelEntry.optional(config["participants"].get(role), f"participants.{role}")
    return "none" if entry is None else entry.without_pacing().param


class NotCompared:
    """A param the job receives but Snakemake never compares with the last run's: its params
    trigger compares only values of builtin types (snakemake.persistence, UNREPRESENTABLE)."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def get_pacing(wildcards):
    """Every entry's pacing settings (rpm, tpm, max_in_flight, reserve; the workflow's forecast of
    the reserve where the entry sets none) for a job's --pacing (incognita.common.backends.entry.pacing_map):
    they change how fast its calls go, never what they return, so editing them re-runs nothing."""
    from incognita.common.backends.entry import pacing_map

    entries = [config["participants"].get(role) for role in ("customer", "service", "judge")]
    if "model" in wildcards.keys():
        entries.append(config["models"][wildcards.model])
    if "cs_model" in wildcards.keys():
        entries += list((get_collabsim_design()[0].overrides(wildcards.cs_model) or {}).values())
    return NotCompared(pacing_map(entries, _pacing_forecast()))


@functools.cache
def _pacing_forecast():
    """Pacing settings the access design's estimate chooses for its API entries: no reserve for the
    longest chains where they are a small part of the run (incognita.access.planning.cost_estimate.
    reserve_forecast); nothing to choose offline."""
    from incognita.access.planning.cost_estimate import reserve_forecast
    from incognita.common.backends.entry import calls_api

    entries = [*config["participants"].values(), *config["models"].values()]
    return reserve_forecast(config).settings() if calls_api(entries) else {}


def get_information_channel():
    """substring (upstream's check, the default) or judge (the paper's): incognita.access.episodes.loop.evaluation."""
    return (config.get("evaluation") or {}).get("information_channel", "substring")


def get_api_calls(wildcards):
    """The job's claim on the `api_calls` resource (limit set in the profile): offline
    scripted models make no API calls, so they never wait for the limit."""
    from incognita.common.backends.entry import calls_api

    return int(calls_api([config["models"][wildcards.model], *config["participants"].values()]))


def get_episode_arms():
    """The arms our own harness runs; native is in the rotation but runs in the upstream harness."""
    return list(DESIGN.episode_arms)


def get_block_outputs():
    """One block's episode records, with {model}, {domain} and {task} left as the rule's wildcards."""
    reps = range(DESIGN.repetitions)
    task = qualify("{domain}", "{task}")
    return [str(paths.episode_record(arm, "{model}", task, rep)) for arm in DESIGN.episode_arms for rep in reps]


def get_native_archived_tasks():
    """Design tasks with a repair overlay: run natively a second time without it (archive only)."""
    return list(DESIGN.unrepaired_tasks)


def get_native_outputs():
    """One model's native outputs, with {model} left as the rule's wildcard."""
    reps = range(DESIGN.repetitions)
    return [str(paths.native_result("{model}", t, r)) for t in DESIGN.tasks for r in reps] + [
        str(paths.native_result("{model}", t, r, unrepaired=True)) for t in DESIGN.unrepaired_tasks for r in reps
    ]


def design_cards(rule_built=False, tasks=None):
    """The card files of the design's tasks (or of `tasks`, qualified ids), every domain's."""
    return [
        str(paths.card_file(*split_task(t), rule_built=rule_built)) for t in (DESIGN.tasks if tasks is None else tasks)
    ]


def design_golden():
    return [str(paths.golden_file(*split_task(t))) for t in DESIGN.tasks]


def per_domain(function):
    """One file per design domain (incognita.access.paths functions of a domain)."""
    return [str(function(d)) for d in DESIGN.domains]


def get_all_native():
    return list(_all_native())


def get_all_episodes():
    return list(_all_episodes())


@functools.cache  # several rules read the same lists: spelled once per parse
def _all_native():
    return tuple(str(paths.native_result(c.model, c.task, c.rep)) for c in DESIGN.native_cells())


@functools.cache
def _all_episodes():
    return tuple(str(paths.episode_record(c.arm, c.model, c.task, c.rep)) for c in DESIGN.cells())


def get_labelled_fixtures():
    """The reader's hand-labelled validation sets, each domain's: editing a fixture re-runs the reader."""
    return sorted(
        str(p)
        for d in DESIGN.domains
        if FILES[d].reader_validation.is_dir()
        for p in FILES[d].reader_validation.iterdir()
        if p.suffix in (".yaml", ".json")
    )


def get_stats_outputs():
    """The statistics stage's files, relative to its folder: the pooled tables, and with several
    design domains each domain's own under <domain>/ (incognita.access.stats.stats_stage)."""
    from incognita.access.stats.outputs import EXPLORATORY_FILES, OUTPUT_FILES

    files = list(OUTPUT_FILES) + ([] if EXPLORATORY.empty else list(EXPLORATORY_FILES))
    if len(DESIGN.domains) == 1:
        return files
    return files + [str(paths.domain_stats_dir(d, ".") / f) for d in DESIGN.domains for f in files]


def kept_on_failure(path):
    """An output that a failed job leaves as it was: Snakemake deletes a job's outputs before it
    runs and after it fails, but backs up an update() output and restores it on failure. It backs
    up the local file, which an output under a storage provider need not have: there the outputs
    are deleted as usual."""
    return path if workflow.storage_settings.default_storage_provider else update(path)


def get_final_targets():
    """Everything: the figures pull in every stage up to them; the audit, the replay table, the
    oracle check (unless `side_checks: false`), the episode manifest and the trajectory viewer
    are side outputs that nothing downstream reads. The records and runs, and the tables built
    from them, are named too: Snakemake (since 7.7) rebuilds a missing file only for a target or
    for a job that must run (snakemake/snakemake#1978), so a record deleted to be rebuilt, with the
    files built from it present, left `bin/run` with nothing to do."""
    side_checks = per_domain(paths.audit_table) + per_domain(paths.replay_table) + per_domain(paths.oracle_table)
    collabsim = "collabsim" in config
    return (
        (side_checks if config.get("side_checks", True) else [])
        + [
            paths.EPISODE_MANIFEST,
            paths.FIGURES_DIR,
            paths.VIEWER_DIR,
            paths.TRIALS_TABLE,
            *get_all_episodes(),
            *get_all_native(),
        ]
        + ([COLLABSIM_PATHS.FIGURES_DIR, COLLABSIM_PATHS.PAPER_DIR] if collabsim else [])
        + ([COLLABSIM_PATHS.RUNS_TABLE, *get_all_collabsim_runs()] if collabsim else [])
    )


# --- CollabSim (rules/collabsim.smk) ----------------------------------------------------------
# The design and every experiment file are loaded and checked at parse time, so a bad
# condition file, model entry or missing prompt stops even a dry run with one line.
# Every CollabSim path, the runs' directories included, is spelled by incognita.collabsim.paths.
COLLABSIM_PATHS = importlib.import_module("incognita.collabsim.paths")
COLLABSIM_RESULTS = COLLABSIM_PATHS.RESULTS
COLLABSIM_GENERATOR_VERSION = read_constant("incognita.collabsim", "GENERATOR_VERSION")
COLLABSIM_FILES = COLLABSIM_PATHS.RUN_FILES
COLLABSIM_STATS = COLLABSIM_PATHS.STATS_OUTPUTS


@functools.cache
def get_collabsim_design():
    from incognita.collabsim.design import design_from_config

    if "collabsim" not in config:
        return None
    try:
        design = design_from_config(config)
        experiments = {cell: design.load(cell) for cell in design.cells()}
    except InputError as exc:
        raise WorkflowError(located(str(exc), CONFIG_FILES, "config")) from None
    return design, experiments


def _collabsim_cell(wildcards):
    cell = COLLABSIM_PATHS.Cell(wildcards.cs_task, wildcards.cs_condition, wildcards.cs_model, wildcards.cs_design)
    return get_collabsim_design()[1][cell]


def get_collabsim_inputs(wildcards):
    design = get_collabsim_design()[0]
    exp = _collabsim_cell(wildcards)
    files = [
        *exp.prompts.values(),
        exp.probe.questions,
        exp.collaboration_module,
        design.root / "scripted" / f"{exp.task}.yaml",
        design.root / "personas.yaml" if exp.personas else None,
    ]
    inputs = {"experiment": str(exp.source), "files": sorted({str(f) for f in files if f and Path(f).exists()})}
    if exp.condition != "baseline":
        inputs["baseline"] = str(design.experiment_file(exp.task, "baseline"))
    return inputs


def get_collabsim_seeds():
    return ",".join(map(str, get_collabsim_design()[0].seeds))


def get_collabsim_models(wildcards):
    """The label's model overrides as compact JSON ('none' when the files' own models are used),
    their pacing settings apart (get_pacing)."""
    from incognita.common.backends.entry import ModelEntry

    models = get_collabsim_design()[0].overrides(wildcards.cs_model)
    if not models:
        return "none"

    # Each entry as the config writes it (a string stays a string, a mapping a mapping: this param's
    # bytes decide whether the runs are up to date), less its pacing settings.
    def written(role, value):
        entry = ModelEntry.parse(value, f"collabsim.models.{wildcards.cs_model}.{role}")
        return value if isinstance(value, str) else entry.without_pacing().mapping()

    return json.dumps({k: written(k, v) for k, v in models.items()}, sort_keys=True, separators=(",", ":"))


def get_api_threads(wildcards):
    """A job that waits on an API claims no core (threads 0): its calls, not the CPU, set its
    pace, so `api_calls` alone bounds how many run at once, whatever --cores says. Offline
    jobs take one core each."""
    return 1 - get_api_calls(wildcards)


def get_collabsim_threads(wildcards):
    return 1 - get_collabsim_api_calls(wildcards)


def get_collabsim_api_calls(wildcards):
    return int(any(a.model.calls_api for a in _collabsim_cell(wildcards).agents))


def get_collabsim_run_outputs():
    """Every file of each seed's run of the job's cell (its wildcards)."""
    cell = COLLABSIM_PATHS.Cell("{cs_task}", "{cs_condition}", "{cs_model}", "{cs_design}")
    seeds = get_collabsim_design()[0].seeds
    return [str(cell.run(s).dir(COLLABSIM_RESULTS) / name) for s in seeds for name in COLLABSIM_FILES]


def get_all_collabsim_runs():
    return list(_all_collabsim_runs())


@functools.cache
def _all_collabsim_runs():
    design = get_collabsim_design()[0]
    return tuple(
        str(c.run(s).dir(COLLABSIM_RESULTS) / name)
        for c in design.cells()
        for s in design.seeds
        for name in COLLABSIM_FILES
    )


# --- Workflow files (rules/storage.smk) ---------------------------------------------------------
# The folders of the workflow's own files that rules read as inputs: the domains' config folders
# and what the config names for prompts, scripted profiles, the arm registry and CollabSim. They
# are the workflow's sources (git-tracked, shipped to every job), not data that rules make.
WORKFLOW_FILE_DIRS = sorted(
    {
        Path(p).parts[0]
        for p in (
            CONFIG_ROOT,
            config["prompts"],
            config["scripted_agents"],
            ARM_REGISTRY,
            *([get_collabsim_design()[0].root] if "collabsim" in config else []),
        )
    }
)
