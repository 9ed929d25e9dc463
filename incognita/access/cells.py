"""The access family's design from the workflow config: its domains, arms, models, tasks and cells.

    domains: [retail]   # the benchmark domains whose frozen corpora the design runs (incognita.access.domain)
    design:
      arms: [direct, indirect, social, native]  # the Latin square's base order
      repetitions: 3
      seed: 20260820
      budget: 300
      tasks: null     # null = every domain's whole frozen corpus; a list of qualified ids selects some
      models: null    # null = every key of `models`; a list selects some of them
    native:
      archive_unrepaired: true  # repaired tasks also run natively without their overlay

A cell is (arm, model, task, repetition), its task a qualified id (`retail/46`). Our harness
runs the cells of `direct`, `indirect` and `social` (incognita.access.episodes.harness) and
writes one episode record per cell; the upstream harness runs the `native` cells
(incognita.access.native) and writes one result per cell, plus an archived run of each
repaired task without its overlay (never pooled). `design_from_config` is the one place the
config's design is read and checked, each error naming its config key; where each record lives
is incognita.access.paths. Read by the workflow (rules/common.smk), the cost estimate, the
statistics' model order, the harness, the run archive and the viewer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from incognita.access.domain import DomainFiles, check_domain, domain_files, qualify, split_task
from incognita.access.paths import episode_record, native_result
from incognita.access.taxonomy import NATIVE
from incognita.common.io import InputError, read_yaml


@dataclass(frozen=True)
class Cell:
    arm: str
    model: str  # a key of the config's models
    task: str  # a qualified id: <domain>/<upstream id>
    rep: int


@dataclass(frozen=True)
class AccessDesign:
    domains: tuple[str, ...]
    rotation: tuple[str, ...]  # design.arms as configured: the Latin square's base order, native included
    models: tuple[str, ...]
    tasks: tuple[
        str, ...
    ]  # qualified ids, domain by domain in corpus order: a task's index is its Latin-square position
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

    def tasks_of(self, domain: str) -> tuple[str, ...]:
        """The design's tasks of one domain, as upstream ids."""
        return tuple(local for d, local in map(split_task, self.tasks) if d == domain)

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
    """The design of a schema-checked config. Each domain's corpus is read with its lock verified."""
    d = config["design"]
    domains = design_domains(config)
    tasks = design_tasks(config, domains)
    return AccessDesign(
        domains=domains,
        rotation=design_arms(config),
        models=design_models(config),
        tasks=tasks,
        repetitions=int(d["repetitions"]),
        seed=int(d["seed"]),
        budget=int(d["budget"]),
        unrepaired_tasks=_unrepaired(config, tasks),
    )


def design_domains(config: dict) -> tuple[str, ...]:
    """`domains`: registered domain names, each once."""
    domains = tuple(config["domains"])
    for name in domains:
        check_domain(name, "config key domains")
    duplicated = sorted({d for d in domains if domains.count(d) > 1})
    if duplicated:
        raise InputError(f"config key domains: {duplicated} listed more than once")
    return domains


def design_files(config: dict) -> dict[str, DomainFiles]:
    """Each design domain's files (incognita.access.domain.DomainFiles), in the design's order."""
    return {name: domain_files(name) for name in design_domains(config)}


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


def design_tasks(config: dict, domains: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Every design domain's frozen corpus (each lock verified), as qualified ids, or the
    `design.tasks` subset of them."""
    corpus: list[str] = []
    for name in domains if domains is not None else design_domains(config):
        files = domain_files(name)
        corpus += [qualify(name, str(t)) for t in load_corpus(files.corpus, locks=files.locks)["tasks"]]
    chosen = config["design"].get("tasks")
    if chosen is None:
        return tuple(corpus)
    for task in chosen:
        split_task(str(task), "config key design.tasks")
    outside = [t for t in chosen if str(t) not in corpus]
    if outside:
        raise InputError(f"config key design.tasks: {outside} are not in the design domains' frozen corpora")
    repeated = sorted({str(t) for t in chosen if list(map(str, chosen)).count(str(t)) > 1})
    if repeated:
        raise InputError(f"config key design.tasks: {repeated} listed more than once")
    return tuple(str(t) for t in chosen)


def load_corpus(path: str | Path, *, locks: str | Path | None = None, verify: bool = True) -> dict:
    """Read a domain's frozen corpus, refusing it unless it matches its lock in `locks`."""
    if verify:
        from incognita.access.freeze import verify_lock

        if locks is None:
            raise ValueError("load_corpus: verify needs the domain's locks file")
        verify_lock("corpus", path, locks_path=locks)
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise InputError(f"{path}: tasks: missing; not a corpus file")
    return doc


def repaired_tasks(repairs_dir: str | Path) -> list[str]:
    """Upstream ids with a repair overlay in a domain's repairs folder (incognita.access.cards.repairs), in id order."""
    from incognita.access.domain import id_order

    return sorted((p.stem for p in Path(repairs_dir).glob("*.yaml")), key=id_order)


def _unrepaired(config: dict, tasks: tuple[str, ...]) -> tuple[str, ...]:
    """The design's repaired tasks when native.archive_unrepaired is set."""
    if not config["native"]["archive_unrepaired"]:
        return ()
    repaired = {qualify(d, t) for d in design_domains(config) for t in repaired_tasks(domain_files(d).repairs)}
    return tuple(t for t in tasks if t in repaired)


def record_path(cell: Cell, episodes: str | Path | None = None, native: str | Path | None = None) -> Path:
    """The record of a cell: its native result for the native arm, else its episode record."""
    if cell.arm == NATIVE:
        return native_result(cell.model, cell.task, cell.rep, *([native] if native else []))
    return episode_record(cell.arm, cell.model, cell.task, cell.rep, *([episodes] if episodes else []))
