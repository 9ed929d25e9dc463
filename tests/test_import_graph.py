"""The package's import structure: no cycle between modules or between folders, the family
boundaries, and each family's stage order, as docs/architecture.md draws them.

The graph is read from the source with `ast`, not by importing: every `import` and `from ...
import` naming an `incognita` module counts, at module level or inside a function (a lazy
import that closes a loop is still a loop a reader has to untangle). A package's implicit
import of its parent `__init__` is not an edge. At folder level a module stands for the package
it is in (a package's own modules are one room, each subpackage another).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "incognita"

# Which top-level parts of the package may import which (besides themselves).
ALLOWED = {
    "common": {"incognita"},
    "access": {"common", "incognita"},
    "collabsim": {"common", "incognita"},
    "viewer": {"common", "access", "collabsim", "incognita"},
    "cli": {"common", "access", "collabsim", "viewer", "incognita"},
    "__main__": {"cli"},
    "incognita": set(),
}


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _resolve(target: str, names: dict[str, Path]) -> str | None:
    while target and target not in names:
        target = target.rpartition(".")[0]
    return target or None


def import_graph() -> dict[str, set[str]]:
    names = module_names()
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import: resolve against this module's package
                    package = name if is_package else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        package = package.rpartition(".")[0]
                    base = f"{package}.{base}" if base else package
                # `from pkg import sub` imports the submodule when there is one
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in names else base for alias in node.names]
            for target in targets:
                if target == "incognita" or target.startswith("incognita."):
                    resolved = _resolve(target, names)
                    if resolved and resolved != name:
                        graph[name].add(resolved)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def room(module: str, names: dict[str, Path]) -> str:
    """The folder a module is in: a package stands for itself, a module for its package."""
    return module if names[module].name == "__init__.py" else module.rpartition(".")[0]


def folder_graph() -> dict[str, set[str]]:
    names = module_names()
    out: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        for target in targets:
            a, b = room(module, names), room(target, names)
            if a != b and b != "incognita":  # the top package holds no code of its own
                out.setdefault(a, set()).add(b)
            out.setdefault(a, set())
    return out


# Each family's rooms in the order data flows (docs/architecture.md, "Package layout"): a room
# may import only rooms before it in its family's order. A folder not listed takes the place of
# the nearest listed folder above it, but never that of the family's top folder, whose entry
# stands for its own modules only: a new subpackage must be placed on purpose.
#
# ACCESS: the domain packages come after the generic stages they build on (card, golden,
# scripted and audit types); the stages reach a domain only through the registry
# (incognita.access.domain.get_domain), by name, never by an import.
ACCESS_ORDER = (
    "incognita.access",  # the ground floor: names, domains' registry, paths, design, arms, locks
    "incognita.access.cards",
    "incognita.access.golden",
    "incognita.access.reference",
    "incognita.access.episodes.loop",
    "incognita.access.episodes.scripted",
    "incognita.access.episodes",
    "incognita.access.native",
    "incognita.access.selection",
    "incognita.access.reader",
    "incognita.access.domains",  # and every domain package below it
    "incognita.access.stats",
    "incognita.access.figures",
    "incognita.access.planning",
)


# COLLABSIM: the ground floor (world/: experiment files, agents, the task interface and registry,
# the event log, what agents are shown and asked) first; the paradigms build on it, the scripted
# policies on both (a policy may use its paradigm's geometry); the family's own modules (design,
# engine, agents, run, the analysis, commands) last. The ground floor reaches a paradigm only
# through the registry (incognita.collabsim.world.task.task_class), by name, never by an import.
COLLABSIM_ORDER = (
    "incognita.collabsim.world",
    "incognita.collabsim.tasks",
    "incognita.collabsim.policies",
    "incognita.collabsim",  # the family's own modules
)

# family's top folder -> its stage order
STAGE_ORDERS = {"incognita.access": ACCESS_ORDER, "incognita.collabsim": COLLABSIM_ORDER}


def family(folder: str) -> str | None:
    """The top folder of the family a folder is in (a key of STAGE_ORDERS), or None."""
    return next((top for top in STAGE_ORDERS if folder == top or folder.startswith(top + ".")), None)


def stage_rank(folder: str) -> int | None:
    """A folder's place in its family's stage order: its own entry, else that of the nearest listed
    folder above it other than the family's top folder; None when it has no family or no place."""
    top = family(folder)
    if top is None:
        return None
    order = STAGE_ORDERS[top]
    matches = [name for name in order if folder == name or (name != top and folder.startswith(name + "."))]
    return order.index(max(matches, key=len)) if matches else None


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "incognita"


def test_the_cycle_finder_finds_a_cycle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"b"}}) == []


def test_the_graph_sees_lazy_and_submodule_imports():
    graph = import_graph()
    # cli.py imports each package's commands through importlib (names in a tuple), so the
    # graph must at least see the top-level import of `incognita.common.io` there
    assert "incognita.common.io" in graph["incognita.cli"]
    assert "incognita.access.arm_registry" in graph["incognita.access.reference.coordination"]
    assert "incognita.access.arm_registry" in graph["incognita.access.cells"]  # inside design_arms


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_import_cycle_between_folders():
    found = cycles(folder_graph())
    assert not found, "folder-level import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize("top", sorted(STAGE_ORDERS))
def test_every_folder_has_its_place_in_its_familys_stage_order(top):
    folders = {f for f in folder_graph() if family(f) == top}
    assert not [f for f in sorted(folders) if stage_rank(f) is None], f"add them to the stage order of {top}"


def test_no_import_against_the_stage_order():
    wrong = sorted(
        f"{a} (stage {stage_rank(a)}) imports {b} (stage {stage_rank(b)})"
        for a, targets in folder_graph().items()
        for b in targets
        if family(a) is not None
        and family(a) == family(b)
        and stage_rank(a) is not None
        and stage_rank(b) is not None
        and stage_rank(b) > stage_rank(a)
    )
    assert not wrong, "\n".join(wrong)


def test_the_stages_reach_a_domain_only_through_the_registry():
    domains = "incognita.access.domains."
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        if not module.startswith(domains)
        for target in targets
        if target.startswith(domains)
    )
    assert not wrong, "\n".join(wrong)


def test_the_folder_checks_find_what_they_check():
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert stage_rank("incognita.access.domains.retail.scripted") == ACCESS_ORDER.index("incognita.access.domains")
    assert stage_rank("incognita.access.episodes.loop") < stage_rank("incognita.access.episodes")
    assert stage_rank("incognita.collabsim.world") < stage_rank("incognita.collabsim.tasks")
    assert stage_rank("incognita.collabsim.policies") < stage_rank("incognita.collabsim")
    # an unlisted subpackage is not taken for its family's own modules, and no other family's folder counts
    assert stage_rank("incognita.collabsim.unplaced") is None and stage_rank("incognita.access.unplaced") is None
    assert stage_rank("incognita.common") is None and family("incognita.collabsimulation") is None


@pytest.mark.parametrize("family", sorted(ALLOWED))
def test_family_boundaries(family):
    graph = import_graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if part(module) == family
        for target in targets
        if part(target) != family and part(target) not in ALLOWED[family]
    )
    assert not wrong, "\n".join(wrong)


def test_every_commands_module_is_assembled_by_the_cli():
    from incognita.cli import COMMAND_MODULES

    on_disk = sorted(name for name in module_names() if name.endswith(".commands"))
    assert sorted(COMMAND_MODULES) == on_disk


def test_the_core_never_imports_its_backends():
    """`incognita.common` and `incognita.common.backends` depend one way: the backends import the
    core (io, cache, pacing, prices, progress, usage), never the reverse, so the two folders form
    no cycle either (docs/architecture.md)."""
    graph = import_graph()
    backends = "incognita.common.backends"
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if module.startswith("incognita.common.") and not module.startswith(backends)
        for target in targets
        if target == backends or target.startswith(backends + ".")
    )
    assert not wrong, "\n".join(wrong)
