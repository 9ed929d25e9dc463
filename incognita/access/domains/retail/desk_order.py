"""The retail desks' names against the orders an agent might expect their capabilities in.

The six desks of retail's social map are named alphabetically (Aster..Fenn) and offered to the
agent in that order, so an agent could try them in list order; this check measures how far that
order agrees with orders in which an agent might expect capabilities to come (docs/partition.md).
It reads retail's map (config/domains/retail/partition.yaml) and knows what each desk does.
"""

from __future__ import annotations

import itertools

from incognita.access.reference.partition import DESK_MAP, Partition

SOCIAL_DESKS = ("Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn")

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
