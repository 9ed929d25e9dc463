"""The access conditions as data: one entry of the arm registry (config/arms.yaml) per arm.

Who reads it: the workflow config check (`cells.design_arms`: every arm a design lists is
registered), the harness and the access loopback twins (who executes the tools, whom the agent
may write to, which prompt files each participant reads) and, through its context, the
scripted agent (does it hold the tools; does it know who does).

The invariant: an arm behaves as its entry says, and no stage branches on an arm's name. The
paper's three conditions are three entries; `native` is not an entry (the upstream harness
runs it, with none of these choices).

The mechanism: a frozen `Arm` per entry, checked when the file is read, each error naming the
file and key; the holder map an entry names is looked up in the partition file when an arm is
bound to it (`Arm.owners`), so an entry naming a map the partition lacks fails before a cell
runs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from incognita.common.io import InputError, read_yaml

DEFAULT_PATH = "config/arms.yaml"
CONFIG_KEY = "arm_registry"  # the workflow config's key for the registry file (optional; DEFAULT_PATH)
AGENT_HOLDS = "agent"  # `holders: agent`: the evaluated agent calls every tool itself
_FIELDS = {"holders", "declared", "prompts"}
_OPTIONAL = {"names": None, "referral": False}  # optional fields and their defaults
_PROMPT_FIELDS = {"agent", "service"}
DEFAULT_CONDUCT = "service/conduct.md"  # prompts.conduct when an entry gives none


@dataclass(frozen=True)
class Arm:
    name: str
    holders: str  # AGENT_HOLDS, or the name of a holder map of the partition file
    declared: bool  # the agent knows who holds which tool
    agent_prompt: str  # a template under the prompts directory
    service_prompt: str | None  # every holder's template; None when the agent holds the tools
    source: str  # the registry file, for errors
    conduct_prompt: str = DEFAULT_CONDUCT  # every holder's conduct block
    # A naming of the holder map in the domain's partition file (its map's `names.<naming>`:
    # holder -> the name the agent sees it by), or None: the holders' own names.
    names: str | None = None
    referral: bool = False  # a holder asked for another's work names that holder (and only that)

    @property
    def agent_executes(self) -> bool:
        return self.holders == AGENT_HOLDS

    def owners(self, partition) -> dict[str, frozenset[str]]:
        """Who executes which tools under this arm: {"agent": every tool}, or each holder of the
        named map with its tools, holders in alphabetical order (the order the agent sees them)."""
        if self.agent_executes:
            return {AGENT_HOLDS: frozenset(partition.tools)}
        table = partition.holders.get(self.holders)
        if table is None:
            raise InputError(
                f"{self.source}: arms.{self.name}.holders: {self.holders!r} is not a holder map of "
                f"{partition.path} (it has {', '.join(sorted(partition.holders))})"
            )
        shown = self.shown_names(partition)
        held = {shown.get(h, h): frozenset(t for t, who in table.items() if who == h) for h in set(table.values())}
        return {h: held[h] for h in sorted(held)}

    def shown_names(self, partition) -> dict[str, str]:
        """The map's holder -> the name the agent sees it by (the arm's naming in the partition file)."""
        if self.names is None:
            return {}
        naming = partition.namings.get(self.holders, {}).get(self.names)
        if naming is None:
            raise InputError(
                f"{self.source}: arms.{self.name}.names: {self.names!r} is not a naming of map {self.holders!r} "
                f"of {partition.path} (holder_maps.{self.holders}.names: "
                f"{', '.join(partition.namings.get(self.holders, {})) or 'none'})"
            )
        return dict(naming)

    def prompt_name(self, holder: str, partition) -> str:
        """The holder's name in the partition (its role file's name) for the name the agent sees."""
        return {shown: own for own, shown in self.shown_names(partition).items()}.get(holder, holder)

    def holder_of(self, partition) -> dict[str, str]:
        """tool -> who executes it under this arm (the agent itself when it holds the tools), in the
        partition's tool order."""
        who = {tool: holder for holder, tools in self.owners(partition).items() for tool in tools}
        return {tool: who[tool] for tool in partition.tools}


@dataclass(frozen=True)
class ArmRegistry:
    path: str
    arms: dict[str, Arm]  # in file order

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.arms)

    def arm(self, name: str) -> Arm:
        if name not in self.arms:
            raise InputError(f"{self.path}: no arm {name!r} (registered: {', '.join(self.arms)})")
        return self.arms[name]


def _fail(path: Path, key: str, message: str) -> InputError:
    return InputError(f"{path}: {key}: {message}")


def _text(path: Path, key: str, value, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, key, f"expected a file name{' or null' if optional else ''}, got {value!r}")
    return value


def _entry(path: Path, name: str, doc) -> Arm:
    key = f"arms.{name}"
    if not isinstance(doc, dict):
        raise _fail(path, key, f"expected a mapping with {', '.join(sorted(_FIELDS))}")
    unknown, missing = sorted(set(doc) - _FIELDS - set(_OPTIONAL)), sorted(_FIELDS - set(doc))
    if unknown:
        known = ", ".join(sorted(_FIELDS | set(_OPTIONAL)))
        raise _fail(path, f"{key}.{unknown[0]}", f"unknown field (expected {known})")
    if missing:
        raise _fail(path, f"{key}.{missing[0]}", "missing")
    holders = _text(path, f"{key}.holders", doc["holders"])
    if not isinstance(doc["declared"], bool):
        raise _fail(path, f"{key}.declared", f"expected true or false, got {doc['declared']!r}")
    prompts = doc["prompts"]
    if not isinstance(prompts, dict) or not _PROMPT_FIELDS <= set(prompts) <= _PROMPT_FIELDS | {"conduct"}:
        raise _fail(
            path,
            f"{key}.prompts",
            f"expected a mapping with {', '.join(sorted(_PROMPT_FIELDS))} (and optionally conduct)",
        )
    service = _text(path, f"{key}.prompts.service", prompts["service"], optional=True)
    conduct = _text(path, f"{key}.prompts.conduct", prompts.get("conduct", DEFAULT_CONDUCT))
    names = doc.get("names")
    if names is not None and not (isinstance(names, str) and names.replace("_", "").isalnum()):
        raise _fail(path, f"{key}.names", f"expected the name of a naming of the holder map, got {names!r}")
    referral = doc.get("referral", False)
    if not isinstance(referral, bool):
        raise _fail(path, f"{key}.referral", f"expected true or false, got {referral!r}")
    if (holders == AGENT_HOLDS) != (service is None):
        raise _fail(
            path,
            f"{key}.prompts.service",
            "null exactly when the agent holds the tools (holders: agent): other holders need a template",
        )
    if holders == AGENT_HOLDS and not doc["declared"]:
        raise _fail(path, f"{key}.declared", "an agent that holds the tools knows it: expected true")
    if holders == AGENT_HOLDS and (names or referral):
        raise _fail(
            path, f"{key}.{'names' if names else 'referral'}", "there are no holders when the agent holds the tools"
        )
    return Arm(
        name=name,
        holders=holders,
        declared=doc["declared"],
        agent_prompt=_text(path, f"{key}.prompts.agent", prompts["agent"]),
        service_prompt=service,
        source=str(path),
        conduct_prompt=conduct,
        names=names,
        referral=referral,
    )


def is_holder_name(name) -> bool:
    """A holder's name is one capitalised word: whom the agent writes to, and never `agent`."""
    return isinstance(name, str) and name.isalpha() and name[0].isupper()


def load_arm_registry(path: str | Path = DEFAULT_PATH) -> ArmRegistry:
    """Read and check the registry; every problem is an InputError naming the file and key."""
    path = Path(path)
    doc = read_yaml(path)
    if not isinstance(doc, dict) or set(doc) != {"version", "arms"}:
        raise _fail(path, "<top level>", "expected a mapping with exactly version and arms")
    if not isinstance(doc["version"], int) or isinstance(doc["version"], bool) or doc["version"] < 1:
        raise _fail(path, "version", f"expected a positive integer, got {doc['version']!r}")
    if not isinstance(doc["arms"], dict) or not doc["arms"]:
        raise _fail(path, "arms", "expected a non-empty mapping of arm names to entries")
    from incognita.access.taxonomy import NATIVE

    arms = {}
    for name, entry in doc["arms"].items():
        if not isinstance(name, str) or not name.replace("_", "").replace("+", "").replace("-", "").isalnum():
            raise _fail(path, f"arms.{name}", "an arm's name is letters, digits, '_', '-' and '+'")
        if name == NATIVE:
            raise _fail(path, f"arms.{name}", "reserved for the upstream harness's runs, which are not configured here")
        arms[name] = _entry(path, name, entry)
    return ArmRegistry(path=str(path), arms=arms)


@functools.lru_cache(maxsize=8)
def _cached(path: str, _mtime_ns: int) -> ArmRegistry:
    return load_arm_registry(path)


def arm_registry(path: str | Path = DEFAULT_PATH) -> ArmRegistry:
    """The registry at `path`, read once per process and file version."""
    try:
        mtime = Path(path).stat().st_mtime_ns
    except FileNotFoundError:
        raise InputError(f"{path}: arm registry not found") from None
    return _cached(str(path), mtime)


def registry_path(config: dict) -> str:
    """The registry file a workflow config names (`arm_registry`), else DEFAULT_PATH."""
    return str(config.get(CONFIG_KEY) or DEFAULT_PATH)
