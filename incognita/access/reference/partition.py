"""The tool partition: holder maps, each placing every retail tool with exactly one holder.

`config/partition.yaml` is the single source of who holds what; an arm of the arm registry
(incognita.access.arm_registry) names the map it uses, or has the agent hold every tool
(the direct arm). The paper's maps: `indirect`, where one declared participant (Vega) holds
all fifteen tools, and `social`, where six desks split them. This module loads and checks
that file and answers `holder(tool, map)`.

It also carries the decorrelation check: the desk names are alphabetical (Aster..Fenn), so
an agent could try them in list order; the check measures how far that order agrees with
orders in which an agent might expect capabilities to come (docs/partition.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from incognita.access.arm_registry import is_holder_name
from incognita.common.io import InputError, read_yaml, sha256_file, sha256_obj

DEFAULT_PATH = "config/partition.yaml"

DIRECT_EXECUTOR = "agent"
INDIRECT_HOLDER = "Vega"
SOCIAL_DESKS = ("Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn")
# The six desks' holder map: a key of the partition file (holder_maps.social), which the social
# arm's registry entry names; a config value, not the arm (tests/access/test_taxonomy.py).
DESK_MAP = "social"

# The fifteen tools of the tau2 retail toolkit (tests check this against the package).
RETAIL_TOOLS = (
    "calculate",
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "find_user_id_by_name_zip",
    "find_user_id_by_email",
    "get_order_details",
    "get_product_details",
    "get_user_details",
    "list_all_product_types",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
    "transfer_to_human_agents",
)


@dataclass(frozen=True)
class Partition:
    """A validated partition. `holders[map][tool]` is the participant that executes `tool`."""

    path: str
    version: int
    sha256: str
    tools: tuple[str, ...]
    holders: dict[str, dict[str, str]]

    @property
    def content_sha256(self) -> str:
        """Hash of what the file means (version and holders), blind to comments and layout."""
        return sha256_obj({"version": self.version, "holders": self.holders})

    def holder(self, tool: str, holder_map: str) -> str:
        if holder_map not in self.holders:
            raise InputError(f"{self.path}: no holder map {holder_map!r} (it has {', '.join(self.holders)})")
        if tool not in self.tools:
            raise InputError(f"{self.path}: unknown tool {tool!r} (not one of the {len(self.tools)} retail tools)")
        return self.holders[holder_map][tool]

    def desks(self, holder_map: str = DESK_MAP) -> tuple[str, ...]:
        """The map's holders, in alphabetical order (the order an agent is offered them)."""
        return tuple(sorted(set(self.holders[holder_map].values())))

    def tools_of(self, desk: str, holder_map: str = DESK_MAP) -> tuple[str, ...]:
        return tuple(t for t in self.tools if self.holders[holder_map][t] == desk)


def _fail(path: Path, key: str, message: str) -> InputError:
    return InputError(f"{path}: {key}: {message}")


def _tool_list(path: Path, key: str, value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise _fail(path, key, "expected a list of tool names")
    for tool in value:
        if tool not in RETAIL_TOOLS:
            raise _fail(path, key, f"unknown tool {tool!r}")
    return value


def load_partition(path: str | Path = DEFAULT_PATH) -> Partition:
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
    dupes = sorted({t for t in tools if tools.count(t) > 1})
    if dupes:
        raise _fail(path, "tools", f"listed more than once: {', '.join(dupes)}")
    missing = [t for t in RETAIL_TOOLS if t not in tools]
    if missing:
        raise _fail(path, "tools", f"missing retail tool(s): {', '.join(missing)}")

    maps = doc.get("holder_maps")
    if not isinstance(maps, dict) or not maps:
        raise _fail(path, "holder_maps", "expected a mapping of map names to {holders: {holder: [tools]}}")
    holders: dict[str, dict[str, str]] = {}
    for name, block in maps.items():
        key = f"holder_maps.{name}"
        if not isinstance(block, dict) or set(block) != {"holders"} or not isinstance(block["holders"], dict):
            raise _fail(path, key, "expected a mapping with one key, holders: {holder: [tools]}")
        table: dict[str, str] = {}
        for desk, desk_tools in block["holders"].items():
            dkey = f"{key}.holders.{desk}"
            if not is_holder_name(desk):
                raise _fail(path, dkey, "a holder's name is one capitalised word (it is whom the agent writes to)")
            if not _tool_list(path, dkey, desk_tools):
                raise _fail(path, dkey, "holds no tool")
            for tool in desk_tools:
                if tool in table:
                    raise _fail(path, dkey, f"tool {tool!r} is already held by {table[tool]} (each tool exactly once)")
                table[tool] = desk
        unplaced = [t for t in RETAIL_TOOLS if t not in table]
        if unplaced:
            raise _fail(path, f"{key}.holders", f"tool(s) held by no desk: {', '.join(unplaced)}")
        holders[name] = {t: table[t] for t in RETAIL_TOOLS}

    return Partition(
        path=str(path),
        version=version,
        sha256=sha256_file(path),
        tools=RETAIL_TOOLS,
        holders=holders,
    )


@lru_cache(maxsize=8)
def _cached(path: str) -> Partition:
    return load_partition(path)


def holder(tool: str, holder_map: str, path: str | Path = DEFAULT_PATH) -> str:
    """Who holds `tool` in `holder_map`: 'Vega' (indirect) or a desk (social)."""
    return _cached(str(path)).holder(tool, holder_map)


# --------------------------------------------------------------------------- decorrelation

# Orders in which an agent might expect service capabilities to come, each as a list of
# functional roles. The social desks are offered to the agent in alphabetical order, so the
# check is whether alphabetical rank predicts the position of a desk's role in such an order.
ROLE_OF_DESK = {
    "Elara": "identity",
    "Aster": "account",
    "Dorian": "orders",
    "Cygnus": "catalog",
    "Fenn": "pending",
    "Boreal": "returns",
}
GUESSABLE_ORDERS = {
    # The order a customer-service conversation usually runs in; it is also the order in
    # which the all-roles description (Vega, direct arm) lists the capabilities.
    "workflow": ["identity", "account", "orders", "catalog", "pending", "returns"],
    # The same, worked backwards from the goal.
    "workflow_reversed": ["returns", "pending", "catalog", "orders", "account", "identity"],
}


def _spearman(xs: list[int], ys: list[int]) -> float:
    n = len(xs)
    d2 = sum((x - y) ** 2 for x, y in zip(xs, ys))
    return 1.0 - 6.0 * d2 / (n * (n * n - 1))


def tool_name_order(partition: Partition) -> list[str]:
    """Roles in order of each desk's first tool in the alphabetical tool listing."""
    seen: list[str] = []
    for tool in sorted(partition.tools):
        desk = partition.holders[DESK_MAP][tool]
        if ROLE_OF_DESK[desk] not in seen:
            seen.append(ROLE_OF_DESK[desk])
    return seen


def decorrelation_report(partition: Partition, orders: dict[str, list[str]] | None = None) -> list[dict]:
    """Spearman correlation between alphabetical desk rank and each guessable role order.

    The p-value is exact: the share of the 720 permutations of six ranks whose |rho| is at
    least the observed one.
    """
    orders = dict(GUESSABLE_ORDERS if orders is None else orders)
    orders.setdefault("tool_names", tool_name_order(partition))
    desk_of_role = {role: desk for desk, role in ROLE_OF_DESK.items()}
    alpha_rank = {desk: i + 1 for i, desk in enumerate(sorted(SOCIAL_DESKS))}
    n = len(SOCIAL_DESKS)
    null = [_spearman(list(range(1, n + 1)), list(p)) for p in itertools.permutations(range(1, n + 1))]
    rows = []
    for name, roles in orders.items():
        ranks = [alpha_rank[desk_of_role[r]] for r in roles]
        rho = _spearman(list(range(1, n + 1)), ranks)
        p = sum(1 for r in null if abs(r) >= abs(rho) - 1e-12) / len(null)
        rows.append(
            {
                "order": name,
                "roles": roles,
                "desks": [desk_of_role[r] for r in roles],
                "rho": round(rho, 4),
                "p_exact": round(p, 4),
            }
        )
    return rows


def validate_against_tau2(tool_names: Iterable[str]) -> list[str]:
    """Differences between RETAIL_TOOLS and a toolkit's tool names (empty when they agree)."""
    names = set(tool_names)
    out = [f"missing here: {t}" for t in sorted(names - set(RETAIL_TOOLS))]
    out += [f"not in toolkit: {t}" for t in sorted(set(RETAIL_TOOLS) - names)]
    return out
