"""The CollabSim design from the workflow config's `collabsim:` section: which runs exist.

    collabsim:
      dir: config/collabsim   # one folder per task: baseline.yaml and one file per condition
      seeds: 5                # seeds first_seed .. first_seed + seeds - 1 for every condition
      first_seed: 1
      tasks: null             # null = every condition of every task; {task: [conditions]} selects
      models: null            # null = the files' models; {role or "*": entry} replaces them
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from incognita.collabsim.experiment import Experiment, condition_files, load_experiment
from incognita.collabsim.tasks import TASK_MODULES
from incognita.common.io import InputError


@dataclass(frozen=True)
class Design:
    root: Path
    seeds: tuple[int, ...]
    conditions: dict[str, tuple[str, ...]]  # task -> conditions, baseline first
    models: dict | None

    def experiment_file(self, task: str, condition: str) -> Path:
        return self.root / task / f"{condition}.yaml"

    def cells(self) -> list[tuple[str, str]]:
        return [(t, c) for t, conds in self.conditions.items() for c in conds]

    def load(self, task: str, condition: str) -> Experiment:
        return load_experiment(self.experiment_file(task, condition), self.models)


def design_from_config(config: dict) -> Design:
    section = config.get("collabsim")
    if not isinstance(section, dict):
        raise InputError("config: no collabsim section")
    root = Path(section.get("dir", "config/collabsim"))
    n, first = int(section.get("seeds", 5)), int(section.get("first_seed", 1))
    chosen = section.get("tasks")
    conditions = {}
    for task in (list(chosen) if chosen else [t for t in TASK_MODULES if (root / t).is_dir()]):
        if task not in TASK_MODULES:
            raise InputError(f"config key collabsim.tasks: unknown task {task!r} (expected one of {', '.join(TASK_MODULES)})")
        available = condition_files(root, task)
        wanted = (chosen or {}).get(task) or available
        missing = [c for c in wanted if c not in available]
        if missing:
            raise InputError(f"config key collabsim.tasks.{task}: no condition file(s) {', '.join(missing)} in {root / task}")
        conditions[task] = ("baseline", *[c for c in wanted if c != "baseline"])
    if not conditions:
        raise InputError(f"config key collabsim.dir: no task folders in {root}")
    return Design(root, tuple(range(first, first + n)), conditions, section.get("models"))


def run_dir(results: str | Path, task: str, condition: str, seed: int) -> Path:
    return Path(results) / "runs" / task / condition / f"s{seed}"
