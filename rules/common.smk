# Helpers shared by the rule files. Config is validated here, at parse time.
import importlib
import json
import os
import sys
from pathlib import Path

from snakemake.utils import validate

validate(config, schema="../incognita/schemas/config.schema.json")

SOURCE_DIR = config["source"]["dir"]
# Generator versions are passed as params: bumping one in the package re-runs exactly the jobs
# it affects, while ordinary code edits leave cached results alone.
CARD_BUILDER_VERSION = importlib.import_module("incognita.cards").BUILDER_VERSION
GOLDEN_GENERATOR_VERSION = importlib.import_module("incognita.golden").GENERATOR_VERSION
REPAIRS_DIR = config["cards"]["repairs_dir"]

# Jobs run `python -m incognita ...` (the same click CLI users call) with this checkout first
# on the import path, whether or not it is pip-installed; with --sdm conda the env provides
# the dependencies and the checkout provides the code.
sys.path.insert(0, workflow.basedir)  # parse-time imports come from this checkout too
shell.prefix(f'export PYTHONPATH="{workflow.basedir}:$PYTHONPATH"; ')

def get_all_tasks():
    """Task ids of the pinned package's retail split, read without importing tau2 modules."""
    from incognita.source import upstream_dir

    with open(upstream_dir(config["source"]["domain"]) / "tasks.json") as fh:
        return [str(t["id"]) for t in json.load(fh)]


def get_repaired_tasks():
    return sorted((p.stem for p in Path(REPAIRS_DIR).glob("*.yaml")), key=int)


def get_repair(wildcards):
    """The task's repair overlay, if it has one: editing it re-runs only this task's card."""
    path = Path(REPAIRS_DIR) / f"{wildcards.task}.yaml"
    return [str(path)] if path.exists() else []


def get_final_targets():
    targets = ["results/audit/cards.tsv", "results/golden/replay.tsv"]
    return targets
