"""The airline domain's classes in the pinned tau2 package: `FlightDB`, `AirlineTools` and its
environment constructor (incognita.access.domain.Upstream)."""

from __future__ import annotations

import functools
from typing import Any

from incognita.access.golden.upstream_replay import import_quietly


def classes() -> tuple[type, type]:
    def load():
        from tau2.domains.airline.data_model import FlightDB
        from tau2.domains.airline.tools import AirlineTools

        return FlightDB, AirlineTools

    return import_quietly(load)


def environment(db: Any = None, solo_mode: bool = False) -> Any:
    from tau2.domains.airline.environment import get_environment

    return get_environment(db=db, solo_mode=solo_mode)


@functools.cache
def airports() -> tuple[tuple[str, str], ...]:
    """(IATA code, city) of every airport upstream's `list_all_airports` returns: the tool's own
    list, which needs no database (the card rules find the customer's words for an airport by it)."""
    _, tools = classes()
    return tuple((a.iata, a.city) for a in tools(None).list_all_airports())
