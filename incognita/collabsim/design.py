"""The CollabSim design from the workflow config's `collabsim:` section: which runs exist.

    collabsim:
      dir: config/collabsim   # one folder per task: baseline.yaml and one file per condition
      seeds: 5                # seeds first_seed .. first_seed + seeds - 1 for every condition
      first_seed: 1
      tasks: null             # null = every condition of every task; {task: [conditions]} selects
      models:                 # label -> null (the files' own models) or {role or "*": entry}
        scripted: null
      labels: null            # which labels of `models` run (null = all; an overlay's models are
                              # merged into the default's, so config/collabsim/paper.yaml names its four)
      designs: [persona, theory]
      stand_ins: false        # true: every label is played by the files' scripted agents (offline)

A run is a cell (task, condition, model label, design) and a seed (incognita.collabsim.paths:
`Cell`, `RunKey`, and where each run is filed). Conditions, model labels and designs are
crossed, so the paper's model x design x condition comparisons are one config away.
With `stand_ins` the labels keep their names and their entries (which `incognita collabsim
estimate` prices), but no run calls a model: the design, its tables and figures build offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from incognita.collabsim.paths import Cell
from incognita.collabsim.world.experiment import Experiment, condition_files, load_experiment
from incognita.collabsim.world.task import TASK_MODULES
from incognita.common.io import InputError

DESIGNS = ("persona", "theory")
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Design:
    root: Path
    seeds: tuple[int, ...]
    conditions: dict[str, tuple[str, ...]]  # task -> conditions, baseline first
    models: dict[str, dict | None]  # label -> overrides, for the labels that run
    designs: tuple[str, ...]
    stand_ins: bool = False  # scripted agents play every label (`overrides` is then None)

    def overrides(self, label: str) -> dict | None:
        """The label's model entries as its runs use them: none while stand-ins play it."""
        return None if self.stand_ins else self.models[label]

    def experiment_file(self, task: str, condition: str) -> Path:
        return self.root / task / f"{condition}.yaml"

    def cells(self) -> list[Cell]:
        return [
            Cell(t, c, m, d)
            for t, conds in self.conditions.items()
            for c in conds
            for m in self.models
            for d in self.designs
        ]

    def load(self, cell: Cell) -> Experiment:
        return load_experiment(self.experiment_file(cell.task, cell.condition), self.overrides(cell.model), cell.design)


def design_from_config(config: dict) -> Design:
    section = config.get("collabsim")
    if not isinstance(section, dict):
        raise InputError("config: no collabsim section")
    root = Path(section.get("dir", "config/collabsim"))
    n, first = int(section.get("seeds", 5)), int(section.get("first_seed", 1))
    models = section.get("models") or {"scripted": None}
    bad = [m for m in models if not _LABEL.match(str(m))]
    if bad:
        raise InputError(f"config key collabsim.models: bad label(s) {bad} (letters, digits, '.', '_', '-')")
    labels = section.get("labels")
    if labels is not None:
        missing = [m for m in labels if m not in models]
        if missing:
            raise InputError(f"config key collabsim.labels: {missing} not in collabsim.models ({', '.join(models)})")
        models = {m: models[m] for m in labels}
    designs = tuple(section.get("designs") or ("persona",))
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        raise InputError(f"config key collabsim.designs: unknown design(s) {unknown} (expected {', '.join(DESIGNS)})")
    stand_ins = section.get("stand_ins", False)
    if not isinstance(stand_ins, bool):
        raise InputError(f"config key collabsim.stand_ins: expected true or false, got {stand_ins!r}")
    conditions = _conditions(section.get("tasks"), root)
    design = Design(root, tuple(range(first, first + n)), conditions, dict(models), designs, stand_ins)
    if stand_ins:  # no run reads the entries, but the estimate prices them and a later real run needs them
        task = next(iter(conditions))
        for entries in design.models.values():
            if entries:
                load_experiment(design.experiment_file(task, "baseline"), entries, designs[0])
    return design


def _conditions(chosen: dict | None, root: Path) -> dict[str, tuple[str, ...]]:
    conditions = {}
    for task in list(chosen) if chosen else [t for t in TASK_MODULES if (root / t).is_dir()]:
        if task not in TASK_MODULES:
            raise InputError(
                f"config key collabsim.tasks: unknown task {task!r} (expected one of {', '.join(TASK_MODULES)})"
            )
        available = condition_files(root, task)
        wanted = (chosen or {}).get(task) or available
        repeated = sorted({c for c in wanted if wanted.count(c) > 1})
        if repeated:
            raise InputError(f"config key collabsim.tasks.{task}: {repeated} listed more than once")
        missing = [c for c in wanted if c not in available]
        if missing:
            raise InputError(
                f"config key collabsim.tasks.{task}: no condition file(s) {', '.join(missing)} in {root / task}"
            )
        conditions[task] = ("baseline", *[c for c in wanted if c != "baseline"])
    if not conditions:
        raise InputError(f"config key collabsim.dir: no task folders in {root}")
    return conditions
