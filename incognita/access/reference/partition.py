"""The tool partition: holder maps, each placing every tool of a domain with exactly one holder.

A domain's `partition.yaml` (config/domains/<name>/partition.yaml) is the single source of who
holds which of its tools; an arm of the arm registry (incognita.access.arm_registry) names the
map it uses, or has the agent hold every tool (the direct arm). The paper's maps: `indirect`,
where one declared participant (Vega) holds every tool, and `social`, where role-isolated desks
split them (retail: six desks, fifteen tools). This module loads and checks such a file (its
`tools` list is the domain's toolkit, which `validate_against_tau2` checks against upstream's)
and answers `holder(tool, map)`. A file may also give a map's holders descriptive names
(`names`), which an arm may show the agent instead of the map's own (`names: <naming>`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from incognita.access.arm_registry import is_holder_name
from incognita.common.io import InputError, read_yaml, sha256_file, sha256_obj

# The desks' holder map: a key of a domain's partition file (holder_maps.social), which the social
# arm's registry entry names; a config value, not the arm (tests/access/test_taxonomy.py).
DESK_MAP = "social"


@dataclass(frozen=True)
class Partition:
    """A validated partition. `holders[map][tool]` is the participant that executes `tool`."""

    path: str
    version: int
    sha256: str
    tools: tuple[str, ...]
    holders: dict[str, dict[str, str]]
    namings: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # map -> naming -> {holder: shown}

    @property
    def content_sha256(self) -> str:
        """Hash of what the file means (version and holders), blind to comments and layout."""
        return sha256_obj({"version": self.version, "holders": self.holders})

    def holder(self, tool: str, holder_map: str) -> str:
        if holder_map not in self.holders:
            raise InputError(f"{self.path}: no holder map {holder_map!r} (it has {', '.join(self.holders)})")
        if tool not in self.tools:
            raise InputError(f"{self.path}: unknown tool {tool!r} (not one of its {len(self.tools)} tools)")
        return self.holders[holder_map][tool]

    def desks(self, holder_map: str = DESK_MAP) -> tuple[str, ...]:
        """The map's holders, in alphabetical order (the order an agent is offered them)."""
        return tuple(sorted(set(self.holders[holder_map].values())))

    def tools_of(self, desk: str, holder_map: str = DESK_MAP) -> tuple[str, ...]:
        return tuple(t for t in self.tools if self.holders[holder_map][t] == desk)


def _fail(path: Path, key: str, message: str) -> InputError:
    return InputError(f"{path}: {key}: {message}")


def _tool_list(path: Path, key: str, value, known: list[str] | None = None) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise _fail(path, key, "expected a list of tool names")
    for tool in value:
        if known is not None and tool not in known:
            raise _fail(path, key, f"unknown tool {tool!r} (not in the file's tools)")
    return value


def _namings(path: Path, key: str, block, holders: set[str]) -> dict[str, dict[str, str]]:
    """A map's `names`: naming -> {holder: the name the agent sees it by}."""
    if not isinstance(block, dict) or not block:
        raise _fail(path, key, "expected a mapping of naming -> {holder: shown name}")
    out = {}
    for naming, names in block.items():
        nkey = f"{key}.{naming}"
        if not isinstance(names, dict) or not all(is_holder_name(k) and is_holder_name(v) for k, v in names.items()):
            raise _fail(path, nkey, "expected a mapping of holder names to one capitalised word each")
        unknown = sorted(set(names) - holders)
        if unknown:
            raise _fail(path, nkey, f"{', '.join(unknown)} hold(s) nothing in this map")
        if len(set(names.values())) != len(names):
            raise _fail(path, nkey, "two holders would be shown by the same name")
        out[str(naming)] = dict(names)
    return out


def load_partition(path: str | Path) -> Partition:
    """Read and validate the partition file; every problem is an InputError naming file and key."""
    path = Path(path)
    doc = read_yaml(path)
    if not isinstance(doc, dict):
        raise _fail(path, "<top level>", "expected a mapping")
    unknown_top = set(doc) - {"version", "tools", "holder_maps"}
    if unknown_top:
        raise _fail(path, sorted(unknown_top)[0], "unknown key")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(path, "version", "expected a positive integer")

    tools = _tool_list(path, "tools", doc.get("tools"))
    if not tools:
        raise _fail(path, "tools", "expected the domain's tools, one name each")
    dupes = sorted({t for t in tools if tools.count(t) > 1})
    if dupes:
        raise _fail(path, "tools", f"listed more than once: {', '.join(dupes)}")

    maps = doc.get("holder_maps")
    if not isinstance(maps, dict) or not maps:
        raise _fail(path, "holder_maps", "expected a mapping of map names to {holders: {holder: [tools]}}")
    holders: dict[str, dict[str, str]] = {}
    namings: dict[str, dict[str, dict[str, str]]] = {}
    for name, block in maps.items():
        key = f"holder_maps.{name}"
        if (
            not isinstance(block, dict)
            or not {"holders"} <= set(block) <= {"holders", "names"}
            or not isinstance(block["holders"], dict)
        ):
            raise _fail(path, key, "expected a mapping with holders: {holder: [tools]} (and optionally names)")
        table: dict[str, str] = {}
        for desk, desk_tools in block["holders"].items():
            dkey = f"{key}.holders.{desk}"
            if not is_holder_name(desk):
                raise _fail(path, dkey, "a holder's name is one capitalised word (it is whom the agent writes to)")
            if not _tool_list(path, dkey, desk_tools, tools):
                raise _fail(path, dkey, "holds no tool")
            for tool in desk_tools:
                if tool in table:
                    raise _fail(path, dkey, f"tool {tool!r} is already held by {table[tool]} (each tool exactly once)")
                table[tool] = desk
        unplaced = [t for t in tools if t not in table]
        if unplaced:
            raise _fail(path, f"{key}.holders", f"tool(s) held by no desk: {', '.join(unplaced)}")
        holders[name] = {t: table[t] for t in tools}
        if "names" in block:
            namings[name] = _namings(path, f"{key}.names", block["names"], set(table.values()))

    return Partition(
        path=str(path),
        version=version,
        sha256=sha256_file(path),
        tools=tuple(tools),
        holders=holders,
        namings=namings,
    )


def validate_against_tau2(partition: Partition, tool_names: Iterable[str]) -> list[str]:
    """Differences between a partition's tools and its domain's toolkit (empty when they agree)."""
    names = set(tool_names)
    out = [f"missing here: {t}" for t in sorted(names - set(partition.tools))]
    out += [f"not in toolkit: {t}" for t in sorted(set(partition.tools) - names)]
    return out
