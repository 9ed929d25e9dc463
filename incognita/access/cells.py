"""The access family's design from the workflow config, and where each of its records lives.

    design:
      arms: [direct, indirect, social, native]  # the Latin square's base order
      repetitions: 3
      seed: 20260820
      budget: 300
      tasks: null     # null = the whole frozen corpus (corpus.file); a list selects a subset of it
      models: null    # null = every key of `models`; a list selects some of them
    native:
      archive_unrepaired: true  # repaired tasks also run natively without their overlay

A cell is (arm, model, task, repetition). Our harness runs the cells of `direct`, `indirect`
and `social` (incognita.access.episodes.harness) and writes one episode record per cell; the
upstream harness runs the `native` cells (incognita.access.native) and writes one result per
cell, plus an archived run of each repaired task without its overlay (never pooled).
`design_from_config` is the one place the config's design is read and checked, each error
naming its config key; `episode_record` and `native_result` are the one place a record path
is spelled. Read by the workflow (rules/common.smk), the cost estimate, the statistics' model
order, the harness, the run archive and the viewer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from incognita.access.selection.corpus import load_corpus
from incognita.access.taxonomy import NATIVE
from incognita.common.io import InputError

# Where the stages write, relative to the workflow's directory (the commands' defaults).
CARDS_DIR = "results/cards"
GOLDEN_DIR = "results/golden"
COORDINATION_REFERENCE = "results/reference/coordination.json"
EPISODES_DIR = "results/episodes"
NATIVE_DIR = "results/native"
TRIALS_TABLE = "results/trials.parquet"


@dataclass(frozen=True)
class Cell:
    arm: str
    model: str  # a key of the config's models
    task: str
    rep: int


@dataclass(frozen=True)
class AccessDesign:
    rotation: tuple[str, ...]  # design.arms as configured: the Latin square's base order, native included
    models: tuple[str, ...]
    tasks: tuple[str, ...]  # in corpus order: a task's index is its Latin-square position
    repetitions: int
    seed: int
    budget: int
    unrepaired_tasks: tuple[str, ...]  # run natively a second time without their repair overlay

    @property
    def episode_arms(self) -> tuple[str, ...]:
        """The arms our harness runs; native keeps its place in the rotation but runs upstream."""
        return tuple(a for a in self.rotation if a != NATIVE)

    @property
    def native(self) -> bool:
        return NATIVE in self.rotation

    def cells(self) -> list[Cell]:
        """The episode cells, arm by arm (the order of the workflow's episode list)."""
        return [
            Cell(a, m, t, r)
            for a in self.episode_arms
            for m in self.models
            for t in self.tasks
            for r in range(self.repetitions)
        ]

    def native_cells(self) -> list[Cell]:
        if not self.native:
            return []
        return [Cell(NATIVE, m, t, r) for m in self.models for t in self.tasks for r in range(self.repetitions)]


def design_from_config(config: dict) -> AccessDesign:
    """The design of a schema-checked config. The corpus file is read with its lock verified."""
    d, tasks = config["design"], design_tasks(config)
    return AccessDesign(
        rotation=design_arms(config),
        models=design_models(config),
        tasks=tasks,
        repetitions=int(d["repetitions"]),
        seed=int(d["seed"]),
        budget=int(d["budget"]),
        unrepaired_tasks=_unrepaired(config, tasks),
    )


def design_arms(config: dict) -> tuple[str, ...]:
    """`design.arms`: arms of the arm registry (incognita.access.arm_registry), and native."""
    from incognita.access.arm_registry import arm_registry, registry_path

    arms, registry = tuple(config["design"]["arms"]), arm_registry(registry_path(config))
    unknown = [a for a in arms if a not in registry.names and a != NATIVE]
    if unknown:
        raise InputError(
            f"config key design.arms: unknown arm(s) {unknown} (registered in {registry.path}: "
            f"{', '.join(registry.names)}; and {NATIVE}, the upstream harness)"
        )
    duplicated = sorted({a for a in arms if arms.count(a) > 1})
    if duplicated:
        raise InputError(f"config key design.arms: {duplicated} listed more than once")
    return arms


def design_models(config: dict) -> tuple[str, ...]:
    """`design.models`, or every key of `models` when it is null."""
    models = list(config.get("models") or {})
    chosen = (config.get("design") or {}).get("models")
    if chosen is None:
        return tuple(models)
    unknown = [m for m in chosen if m not in models]
    if unknown:
        raise InputError(f"config key design.models: {unknown} are not keys of models ({', '.join(models)})")
    return tuple(str(m) for m in chosen)


def design_tasks(config: dict) -> tuple[str, ...]:
    """The frozen corpus (lock verified), or the `design.tasks` subset of it."""
    path = config["corpus"]["file"]
    corpus = [str(t) for t in load_corpus(path)["tasks"]]
    chosen = config["design"].get("tasks")
    if chosen is None:
        return tuple(corpus)
    outside = [t for t in chosen if str(t) not in corpus]
    if outside:
        raise InputError(f"config key design.tasks: {outside} are not in the frozen corpus {path}")
    return tuple(str(t) for t in chosen)


def repaired_tasks(repairs_dir: str | Path) -> list[str]:
    """Tasks with a repair overlay (incognita.access.cards.repairs), in numeric order."""
    return sorted((p.stem for p in Path(repairs_dir).glob("*.yaml")), key=int)


def _unrepaired(config: dict, tasks: tuple[str, ...]) -> tuple[str, ...]:
    """The design's repaired tasks when native.archive_unrepaired is set."""
    if not config["native"]["archive_unrepaired"]:
        return ()
    repaired = set(repaired_tasks(config["cards"]["repairs_dir"]))
    return tuple(t for t in tasks if t in repaired)


# --------------------------------------------------------------------------- record paths
# Model and task may be Snakemake wildcards ("{model}"): the workflow builds its patterns here.


def episode_record(arm: str, model: str, task: str, rep: int | str, root: str | Path = EPISODES_DIR) -> Path:
    return Path(root) / arm / model / str(task) / f"r{rep}.json"


def native_result(
    model: str, task: str, rep: int | str, root: str | Path = NATIVE_DIR, *, unrepaired: bool = False
) -> Path:
    """A native result; `unrepaired`: the archived run of a repaired task without its overlay."""
    base = Path(root) / "archive" / "unrepaired" if unrepaired else Path(root)
    return base / model / str(task) / f"r{rep}.json"


def record_path(cell: Cell, episodes: str | Path = EPISODES_DIR, native: str | Path = NATIVE_DIR) -> Path:
    """The record of a cell: its native result for the native arm, else its episode record."""
    if cell.arm == NATIVE:
        return native_result(cell.model, cell.task, cell.rep, native)
    return episode_record(cell.arm, cell.model, cell.task, cell.rep, episodes)


def episode_records(root: str | Path = EPISODES_DIR) -> list[Path]:
    """Every episode record under `root`, sorted."""
    return sorted(Path(root).glob("*/*/*/r*.json"))
